"""The loop from a slowdown to a person, end to end against a local bare remote and a
local stand-in of GitHub: a 2x slowdown of one op planted at a random one of five new
commits, the nightly measuring only the first and the last commit, then the triage
confirms the step, bisects it to the planted commit and explains it, and exactly one issue
names that commit; a second triage files nothing new; a later commit that undoes the
slowdown closes the issue. A history of empty commits files nothing.

About six minutes on 2 cores (asv builds each commit it measures).
"""

from __future__ import annotations

import json
import random
import re
import subprocess

import pytest

from tests.support.github_standin import github_standin
from tests.support.project_repo import ProjectRepo, isolated_env, make_project_repo
from tools.nightly import PARTIAL_SUFFIX

pytestmark = pytest.mark.timeout(1800)

ROW = "bench_reduction.LogSumExp.time_logsumexp('cpu', 'float32', (32, 512, 768), 'functional')"
SELECTION = f"^{re.escape(ROW)}$"
MACHINE = "m1"
STORED = MACHINE + PARTIAL_SUFFIX  # a --bench selection is a partial run
SITE = "https://tensorops.github.io/tensorops/"
ORIGINAL = '    """torch.logsumexp."""\n    return torch.logsumexp(x, dim=-1)\n'
# The functional variant reduces every row twice: 2x the work, compute-bound (measured
# 1.96x here). A CI run of the earlier plant, half the rows again (1.43x here), read 1.16x
# on a busy runner, and a pair of identical commits read as much: bisect named the wrong one.
PLANTED = ORIGINAL.replace("    return", "    torch.logsumexp(x, dim=-1)\n    return")


def reduction(root) -> tuple:
    source = root / "src" / "tensorops" / "reduction.py"
    return source, source.read_text()


def plant(root) -> None:
    source, text = reduction(root)
    assert ORIGINAL in text, "logsumexp's functional variant changed; update the plant"
    source.write_text(text.replace(ORIGINAL, PLANTED))


def undo(root) -> None:
    source, text = reduction(root)
    source.write_text(text.replace(PLANTED, ORIGINAL))


def ok(done) -> None:
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-3000:]


class Loop:
    """A project repository with a bare remote, and the night's three steps."""

    def __init__(self, root, shared_asv_env):
        self.root = root
        remote = root / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
        self.repo = make_project_repo(root / "repo", isolated_env(root / "home"), shared_asv_env)
        self.repo.git("remote", "add", "origin", str(remote))
        self.repo.git("push", "-q", "origin", "main")
        self.nights = 0

    def push(self) -> None:
        self.repo.git("push", "-q", "origin", "main")

    def night(self, standin) -> tuple:
        """Nightly of the newest commit, triage, filing: what each printed."""
        self.nights += 1
        ok(
            self.repo.tool(
                "nightly", "--machine", MACHINE, "--max-commits", "1", "--", "--bench", SELECTION
            )
        )
        report = self.root / f"report-{self.nights}.json"
        triage = self.repo.tool(
            "triage", "--machine", STORED, "--report", str(report), "--site-url", SITE
        )
        (self.root / f"triage-{self.nights}.log").write_text(triage.stdout + triage.stderr)
        ok(triage)
        filer = ProjectRepo(self.repo.path, {**self.repo.env, **standin.env()})
        filed = filer.tool("file_issues", str(report))
        ok(filed)
        return triage.stdout, json.loads(report.read_text()), filed.stdout


@pytest.fixture(scope="module")
def loop(tmp_path_factory, shared_asv_env):
    return Loop(tmp_path_factory.mktemp("triage"), shared_asv_env)


@pytest.fixture(scope="module")
def standin():
    with github_standin() as running:
        yield running


@pytest.fixture(scope="module")
def planted(loop, standin):
    """The first night measures the base; five commits later, one of them planted."""
    first_night = loop.night(standin)
    position = random.randrange(1, 6)
    print(f"the slowdown is planted in new commit {position} of 5")
    commits = [
        loop.repo.commit(
            f"commit {n}" + (": logsumexp does more" if n == position else ""),
            plant if n == position else None,
        )
        for n in range(1, 6)
    ]
    loop.push()
    second_night = loop.night(standin)
    return commits[position - 1], first_night, second_night


def test_the_first_night_has_nothing_to_triage(planted, standin):
    _, (triage, report, _), _ = planted
    assert "triage: 0 new steps" in triage and report["regressions"] == []


def test_the_step_is_confirmed_bisected_to_the_planted_commit_and_filed_once(planted, standin):
    guilty, _, (triage, report, filed) = planted
    assert "triage: 1 new steps" in triage
    assert f"confirmed; guilty {guilty[:12]}" in triage
    (regression,) = report["regressions"]
    assert regression["state"] == "open" and guilty in regression["body"]
    (issue,) = standin.issues.values()
    assert issue["title"] == regression["title"] and guilty[:8] in issue["title"]
    assert re.search(r"\*\*[12]\.\d\dx slower\*\*", issue["body"]), issue["body"]
    for part in (
        f"- commit: {guilty}",
        "- subject: commit",
        "- author: tests",
        "torch.profiler",
        "| `aten::",
        "#view=explore&bench=",
        "tools.pr_gate",
        "| before |",
        "| after |",
        f"machine `{STORED}`",
    ):
        assert part in issue["body"], part
    assert "filed #" in filed
    print(issue["body"])  # the README shows a real one


def test_the_bisection_results_joined_the_machines_history(loop, planted):
    measured = loop.repo.git("ls-tree", "-r", "--name-only", "origin/asv-results", "--", STORED)
    commits = {
        name.split("/")[1][:8]
        for name in measured.splitlines()
        if name[-5:] == ".json" and not name.endswith("machine.json")
    }
    assert len(commits) > 2  # the two nightly commits and asv find's steps between them


def test_a_second_triage_with_nothing_new_files_nothing(loop, planted, standin):
    before = len(standin.calls("POST", r".*/issues"))
    loop.repo.commit("an unrelated commit")
    loop.push()
    triage, report, filed = loop.night(standin)
    assert "triage: 0 new steps" in triage
    assert [r["state"] for r in report["regressions"]] == ["open"]
    assert len(standin.calls("POST", r".*/issues")) == before == 1
    assert "nothing to file" in filed


def test_a_commit_that_undoes_the_slowdown_closes_the_issue(loop, planted, standin):
    loop.repo.commit("logsumexp does its work once again", undo)
    loop.push()
    triage, report, filed = loop.night(standin)
    assert "back within its threshold" in triage
    assert [r["state"] for r in report["regressions"]] == ["resolved"]
    (issue,) = standin.issues.values()
    assert issue["state"] == "closed" and "closed #" in filed
    (comment,) = standin.comments.values()
    assert comment["body"].startswith("Back within its threshold at commit")


def test_a_history_of_empty_commits_files_nothing(tmp_path, shared_asv_env):
    noop = Loop(tmp_path, shared_asv_env)
    with github_standin() as standin:
        noop.night(standin)
        for n in range(5):
            noop.repo.commit(f"empty {n}")
        noop.push()
        triage, report, _ = noop.night(standin)
    assert report["regressions"] == []
    assert standin.issues == {} and "confirmed" not in triage
