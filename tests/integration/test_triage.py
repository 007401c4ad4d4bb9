"""The loop from a slowdown to a person, end to end against a local bare remote and a local
stand-in of GitHub, on the shared planted history: the nightly measures the base and the
tip, then the triage confirms the step by alternation, bisects it to the planted commit and
explains it, and exactly one issue names that commit; a second triage files nothing new;
a later commit that undoes the slowdown closes the issue; a step of no-op commits files
nothing.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.support.github_standin import github_standin
from tests.support.planted import ROW, selection, undo
from tests.support.project_repo import ProjectRepo, clone_project_repo, isolated_env
from tools.nightly import PARTIAL_SUFFIX

pytestmark = pytest.mark.timeout(1800)

MACHINE = "m1"
STORED = MACHINE + PARTIAL_SUFFIX  # a --bench selection is a partial run
SITE = "https://tensorops.github.io/tensorops/"


def ok(done) -> None:
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-3000:]


class Loop:
    """A clone of the planted history with its remote, and the night's three steps."""

    def __init__(self, root, history, shared_asv_env, machine: str = MACHINE):
        self.root, self.machine = root, machine
        self.repo = clone_project_repo(
            history.remote, root / "repo", isolated_env(root / "home"), shared_asv_env
        )
        self.nights = 0

    def night(self, standin, ref: str = "main") -> tuple:
        """Nightly of ``ref``'s newest commit, triage, filing: what each printed."""
        self.nights += 1
        ok(
            self.repo.tool(
                "nightly",
                "--machine",
                self.machine,
                "--max-commits",
                "1",
                "--ref",
                ref,
                "--",
                "--bench",
                selection(ROW),
            )
        )
        report = self.root / f"report-{self.nights}.json"
        stored = self.machine + PARTIAL_SUFFIX
        triage = self.repo.tool(
            "triage", "--machine", stored, "--report", str(report), "--site-url", SITE
        )
        (self.root / f"triage-{self.nights}.log").write_text(triage.stdout + triage.stderr)
        ok(triage)
        filer = ProjectRepo(self.repo.path, {**self.repo.env, **standin.env()})
        filed = filer.tool("file_issues", str(report))
        ok(filed)
        return triage.stdout, json.loads(report.read_text()), filed.stdout


@pytest.fixture(scope="module")
def standin():
    with github_standin() as running:
        yield running


@pytest.fixture(scope="module")
def loop(tmp_path_factory, planted_history, shared_asv_env):
    return Loop(tmp_path_factory.mktemp("triage"), planted_history, shared_asv_env)


@pytest.fixture(scope="module")
def nights(loop, standin, planted_history):
    """The first night measures the base, the second the tip, five commits later."""
    first = loop.night(standin, ref=planted_history.commits[0])
    second = loop.night(standin)
    return first, second


def test_the_first_night_has_nothing_to_triage(nights):
    (triage, report, _), _ = nights
    assert "triage: 0 new steps" in triage and report["regressions"] == []


def test_the_step_is_confirmed_bisected_to_the_planted_commit_and_filed_once(
    nights, standin, planted_history
):
    _, (triage, report, filed) = nights
    guilty = planted_history.planted
    assert "triage: 1 new steps" in triage
    assert f"confirmed; guilty {guilty[:12]}" in triage
    (regression,) = report["regressions"]
    assert regression["state"] == "open" and guilty in regression["body"]
    (issue,) = standin.issues.values()
    assert issue["title"] == regression["title"] and guilty[:8] in issue["title"]
    assert re.search(r"\*\*[12]\.\d\dx slower\*\*", issue["body"]), issue["body"]
    for part in (
        f"- commit: {guilty}",
        "- subject: `commit",
        "- author: `tests <tests@example.invalid>`",
        "measured again by alternation",
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
    print(issue["body"])  # the tutorial shows a real one


def test_the_triage_record_and_the_bisection_results_joined_the_history(loop, nights):
    branch = "origin/asv-results"
    loop.repo.git("fetch", "-q", "origin", "asv-results")
    names = loop.repo.git("ls-tree", "-r", "--name-only", branch).splitlines()
    assert f"triage/{STORED}.json" in names  # one file per machine
    measured = {
        n.split("/")[1][:8]
        for n in names
        if n.startswith(f"{STORED}/")
        and n.endswith(".json")
        and not n.endswith(("machine.json", "floors.json"))
    }
    assert len(measured) > 2  # the two nightly commits and asv find's steps between them


def test_a_second_triage_with_nothing_new_files_nothing(loop, nights, standin):
    before = len(standin.calls("POST", r".*/issues"))
    loop.repo.commit("an unrelated commit")
    loop.repo.git("push", "-q", "origin", "HEAD:main")
    triage, report, filed = loop.night(standin)
    assert "triage: 0 new steps" in triage
    assert [r["state"] for r in report["regressions"]] == ["open"]
    assert len(standin.calls("POST", r".*/issues")) == before == 1
    assert "nothing to file" in filed


def test_a_commit_that_undoes_the_slowdown_closes_the_issue(loop, nights, standin):
    loop.repo.commit("logsumexp does its work once again", undo)
    loop.repo.git("push", "-q", "origin", "HEAD:main")
    triage, report, filed = loop.night(standin)
    assert "back within its threshold" in triage
    assert [r["state"] for r in report["regressions"]] == ["resolved"]
    (issue,) = standin.issues.values()
    assert issue["state"] == "closed" and "closed #" in filed
    (comment,) = standin.comments.values()
    assert comment["body"].startswith("Back within its threshold at commit")


def test_a_step_of_no_op_commits_files_nothing(tmp_path, planted_history, shared_asv_env):
    quiet = Loop(tmp_path, planted_history, shared_asv_env, machine="m0")
    with github_standin() as standin:
        quiet.night(standin, ref=planted_history.commits[0])
        triage, report, _ = quiet.night(standin, ref=planted_history.noop)
    assert report["regressions"] == [] and standin.issues == {}
    assert "confirmed" not in triage
