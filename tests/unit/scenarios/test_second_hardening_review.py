"""The loop as an attacker and an unlucky operator would meet it, one test per finding of the
second hardening review, each against real git remotes, the GitHub stand-in or a file-size
limit (a full disk): text from commits and profilers never steers or pings, one machine's
records never erase another's, a bad file never blocks a night for good, a token never
reaches a log line or a command line."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support import REPO_ROOT
from tests.support.gate_verdict import verdict
from tests.support.github_standin import github_standin
from tests.support.project_repo import ProjectRepo, isolated_env
from tests.support.results_world import World, make_outbox, new_result, nightly, refused
from tools._lib.base.cli import ExternalFailure
from tools._lib.base.git import git, subject_and_author
from tools._lib.store import branch
from tools._lib.store.branch import ResultsBranch
from tools._lib.store.outbox import Outbox
from tools._lib.triage.record import Finding, Regression, State, Step

MARKER = "<!-- tensorops-regression: {} -->"
ROW = "bench_a.A.time_x('cpu',)"


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path)


def report(tmp_path: Path, regressions: list[dict], name: str = "report.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"version": 1, "machine": "m1", "regressions": regressions}))
    return path


def regression(key: str, body: str, state: str = "open") -> dict:
    return {
        "key": key,
        "state": state,
        "title": f"1.50x slower: {key}",
        "body": body,
        "resolution": "Back within its threshold." if state == "resolved" else "",
    }


def file_issues(tmp_path: Path, standin, *reports: Path):
    runner = ProjectRepo(REPO_ROOT, {**isolated_env(tmp_path / "home"), **standin.env()})
    return runner.tool("file_issues", *map(str, reports), timeout=60)


# 1 ------------------------------------------------------------------------------------


def test_1_a_marker_in_a_body_cannot_steer_another_regressions_issue(tmp_path):
    """A commit subject that carries another regression's marker is copied into the body;
    the issue is still keyed by its own marker, the body's last line."""
    with github_standin() as standin:
        first = regression("m1|a|1..2", "a regression")
        hostile = regression("m1|b|3..4", f"subject: {MARKER.format('m1|a|1..2')} @team #1")
        for _ in range(2):  # two nights: nothing filed twice, nothing written over
            done = file_issues(tmp_path, standin, report(tmp_path, [first, hostile]))
            assert done.returncode == 0, done.stderr
        assert len(standin.issues) == 2
        bodies = {issue["title"]: issue["body"] for issue in standin.issues.values()}
        assert bodies[first["title"]].rstrip().endswith(MARKER.format("m1|a|1..2"))
        assert bodies[hostile["title"]].rstrip().endswith(MARKER.format("m1|b|3..4"))


def test_1_outside_text_reaches_an_issue_as_data(tmp_path):
    """A subject and an author go into the issue as code spans: no marker, mention, link
    or HTML of theirs is read as such."""
    from tools._lib.triage.issue_text import issue_body

    repo = ProjectRepo(tmp_path / "repo", isolated_env(tmp_path / "home"))
    repo.path.mkdir()
    repo.git("init", "-q", "-b", "main")
    repo.commit("first")
    subject = f"{MARKER.format('k')} @team #1 <img src=x> `tick`"
    guilty = repo.commit(subject)
    step = Step(
        "m1",
        "bench_a.A.time_x",
        "('cpu',)",
        "seconds",
        repo.git("rev-parse", "HEAD~1"),
        guilty,
        1.0,
        2.0,
        0.1,
    )
    record = Regression(
        step, Finding.CONFIRMED, "measured again", step.good, guilty, 0, 1.0, 2.0, "| `aten::x` |"
    )
    body = issue_body(repo.path, record, "")
    (line,) = [line for line in body.splitlines() if line.startswith("- subject:")]
    # Fenced by more backticks than it holds, and padded: it ends with a backtick, which
    # CommonMark would otherwise read as part of the fence.
    assert line == f"- subject: `` {subject} ``"
    assert "<!--" not in body.replace(line, "")


# 2 ------------------------------------------------------------------------------------


def test_2_a_replayed_old_outbox_never_overwrites_newer_files(world):
    """An outbox pushed again after newer results landed (a re-run push job) leaves the
    newer triage records and benchmark descriptions as they are."""
    base = world.tip()
    old = make_outbox(
        world,
        base,
        {
            "triage/m1.json": '{"records": ["old"]}',
            "benchmarks.json": json.dumps({"b.B.time_x": {"v": "old"}}),
        },
    )
    assert world.repo.tool("push_results", str(old)).returncode == 0
    newer = Outbox(world.root / "newer")
    newer.start("m1", world.tip())
    newer.add(
        {
            "triage/m1.json": b'{"records": ["new"]}',
            "benchmarks.json": json.dumps({"b.B.time_x": {"v": "new"}}).encode(),
        }
    )
    assert world.repo.tool("push_results", str(newer.path)).returncode == 0
    again = world.repo.tool("push_results", str(old))
    assert again.returncode == 0, again.stderr
    tip = world.tip()
    assert json.loads(git("show", f"{tip}:triage/m1.json", cwd=world.remote)) == {
        "records": ["new"]
    }
    described = json.loads(git("show", f"{tip}:benchmarks.json", cwd=world.remote))
    assert described["b.B.time_x"] == {"v": "new"}


def test_2_each_machine_keeps_its_own_triage_file(tmp_path):
    from tools._lib.triage.records import TriageStore

    class Branch:
        saved: list[str] = []

        def save(self, message, outbox):
            self.saved.append(message)

    step = Step("m1", "b.B.time_x", "('cpu',)", "seconds", "a" * 40, "b" * 40, 1.0, 2.0, 0.1)
    for machine in ("m1", "gpu"):
        store = TriageStore(tmp_path, machine, Branch(), None)
        store.keep(Regression(step, Finding.DISMISSED, "noise"), f"{machine}: triage")
    folder = tmp_path / ".asv" / "results" / "triage"
    assert sorted(path.name for path in folder.iterdir()) == ["gpu.json", "m1.json"]
    assert len(TriageStore(tmp_path, "m1", Branch(), None).records) == 1


# 3 ------------------------------------------------------------------------------------


def test_3_a_night_whose_benchmark_failed_is_still_triaged(tmp_path):
    """The nightly's status 1 (a benchmark failed, results saved) leaves the job going: the
    triage step runs, and the job fails at its end; any other failure stops it."""
    job = yaml.safe_load((REPO_ROOT / ".github/workflows/nightly.yml").read_text())["jobs"]
    steps = job["benchmark"]["steps"]
    (index,) = [i for i, s in enumerate(steps) if "-m tools.nightly" in s.get("run", "")]
    triage = next(s for s in steps[index:] if "-m tools.triage" in s.get("run", ""))
    # Runs when the steps before it passed (an ``if`` without a status function keeps
    # GitHub's success() check), on the shard of the machine that triages.
    assert triage.get("if", "matrix.machine.triage") == "matrix.machine.triage"
    stub = tmp_path / ".venv" / "bin" / "python"
    stub.parent.mkdir(parents=True)
    for status, passes in ((1, True), (3, False), (0, True)):
        stub.write_text(f"#!/bin/sh\nexit {status}\n")
        stub.chmod(0o755)
        output = tmp_path / f"output-{status}"
        env = {
            "PATH": "/usr/bin:/bin",
            "GITHUB_OUTPUT": str(output),
            "MACHINE": "m",
            "TIER": "nightly",
            "MAX_COMMITS": "1",
        }
        done = subprocess.run(["bash", "-e", "-c", steps[index]["run"]], cwd=tmp_path, env=env)
        assert (done.returncode == 0) == passes, status
        if passes:
            assert output.read_text().strip() == f"status={status}"
    (last,) = [s for s in steps if s.get("if") == "steps.nightly.outputs.status == '1'"]
    assert "exit 1" in last["run"] and steps.index(last) > steps.index(triage)


# 4 ------------------------------------------------------------------------------------


def test_4_a_row_that_cannot_be_measured_again_is_not_taken_as_recovered(monkeypatch):
    from tools._lib.measure.host_floors import no_floors
    from tools._lib.triage import investigation

    step = Step("gpu", "b.B.time_x", "('cuda',)", "seconds", "a" * 40, "b" * 40, 1.0, 2.0, 0.1)
    record = Regression(step, Finding.CONFIRMED, "measured", "a" * 40, "b" * 40, 0, 1.0, 2.0)
    looks_back = ("c" * 40, 1.02)  # the newest point is back: on another machine's runner
    monkeypatch.setattr(investigation, "latest_value", lambda repo, machine, s: looks_back)
    judged = investigation.Investigation(REPO_ROOT, "gpu", "host")
    assert judged.floors == no_floors("host")
    monkeypatch.setattr(investigation, "measured_again", lambda *args: None)  # it skips here
    assert investigation.resolution_of(judged, record) is record
    assert record.state == State.OPEN


# 5 ------------------------------------------------------------------------------------


def test_5_a_commit_message_that_is_not_utf8_is_read(tmp_path):
    repo = ProjectRepo(tmp_path / "repo", isolated_env(tmp_path / "home"))
    repo.path.mkdir()
    repo.git("init", "-q", "-b", "main")
    repo.commit_bytes("caf\xe9 latin-1 \xff\n".encode("latin-1"), tmp_path / "message")
    raw = subprocess.run(["git", "log", "-1", "--format=%s"], cwd=repo.path, capture_output=True)
    with pytest.raises(UnicodeDecodeError):  # stored and shown as the bytes given
        raw.stdout.decode()
    subject, author = subject_and_author("HEAD", repo.path)
    assert subject.startswith("caf") and "latin-1" in subject and author.startswith("tests")
    assert git("log", "--format=%s", cwd=repo.path)


# 6 ------------------------------------------------------------------------------------


def test_6_a_truncated_result_file_in_an_outbox_is_refused_and_nothing_lands(world):
    box = make_outbox(world, world.tip(), new_result())
    (box / "files" / "m1" / "cccccccc-env.json").write_text('{"commit_hash": ')
    tip = world.tip()
    refused(world.repo.tool("push_results", str(box)), "cccccccc-env.json", "not a result file")
    assert world.tip() == tip


def test_6_a_full_disk_never_leaves_half_a_file_in_an_outbox(tmp_path):
    """Written beside the target and renamed: a write cut by a full disk (a file-size
    limit here) leaves no file at all, never a truncated one that would be pushed."""
    script = (
        "import resource, signal, sys\n"
        "from pathlib import Path\n"
        "from tools._lib.store.outbox import Outbox\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "box = Outbox(Path(sys.argv[1]))\n"
        "box.start('m1', '')\n"
        "try:\n"
        "    box.add({'m1/cccccccc-env.json': b'{\"commit_hash\": \"' + b'c' * 20000 + b'\"}'})\n"
        "except OSError as error:\n"
        "    print('refused:', error.errno)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "box")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "refused" in done.stdout, done.stdout + done.stderr
    written = list((tmp_path / "box" / "files").rglob("*"))
    assert [p for p in written if p.is_file()] == []


def test_6_an_outbox_holds_files_of_its_own_machine_only_and_no_links(world, tmp_path):
    box = make_outbox(
        world, world.tip(), {**new_result(), "m2/machine.json": json.dumps({"machine": "m2"})}
    )
    refused(world.repo.tool("push_results", str(box)), "m2/machine.json", "not of machine m1")
    linked = make_outbox(world, world.tip(), new_result())
    secret = tmp_path / "secret.txt"
    secret.write_text("the pushing host's file\n")
    (linked / "files" / "m1" / "dddddddd-env.json").symlink_to(secret)
    refused(world.repo.tool("push_results", str(linked)), "is a link")


# 7 ------------------------------------------------------------------------------------


def test_7_the_token_is_in_no_error_line_and_on_no_command_line(world, monkeypatch):
    token = "ghs_SECRETTOKEN1234"
    monkeypatch.setenv("GITHUB_TOKEN", token)
    world.repo.git("remote", "set-url", "origin", "https://127.0.0.1:1/o/r.git")
    seen = []
    real = branch.subprocess.run

    def recorded(command, **kwargs):
        seen.append(" ".join(map(str, command)))
        return real(command, **kwargs)

    monkeypatch.setattr("tools._lib.base.git.subprocess.run", recorded)
    with pytest.raises(ExternalFailure) as failed:
        ResultsBranch(world.repo.path).check_out()
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    assert token not in str(failed.value) and basic not in str(failed.value)
    assert seen and not [line for line in seen if token in line or basic in line]


# 8 ------------------------------------------------------------------------------------


def test_8_a_rewound_branch_is_refused_by_a_fresh_checkout(world):
    """The tip each landing saw is kept on the remote (refs/tensorops/), so an ephemeral
    runner, which never saw the branch, still refuses a force-push that dropped results."""
    first = world.tip()
    landed = make_outbox(world, first, new_result())
    assert world.repo.tool("push_results", str(landed)).returncode == 0
    world.force_push(first)  # drops what the push landed
    fresh = world.clone("ephemeral")
    box = Outbox(world.root / "late")
    box.start("m1", first)  # its run began from the rewound tip
    box.add({"m1/eeeeeeee-env.json": json.dumps({"commit_hash": "e" * 40}).encode()})
    refused(fresh.tool("push_results", str(box.path)), "rewound")
    assert world.tip() == first


# 9 ------------------------------------------------------------------------------------


def test_9_another_host_of_the_same_runner_class_is_the_same_machine(world):
    """A hosted runner's CPU model changes between nights; its architecture, core count,
    memory and OS do not: the nightly goes on, and the new CPU is recorded."""
    from tests.support.results_world import results_tree

    world.write(world.seed, results_tree(cpu="Intel(R) Xeon(R) Platinum 8370C"))
    world.seed.commit("last night's host")
    world.seed.git("push", "-q", str(world.remote), "asv-results")
    done = nightly(world.repo)
    assert "other hardware" not in done.stderr, done.stderr


# 10 -----------------------------------------------------------------------------------


def test_10_a_refused_outbox_does_not_stop_the_others(world):
    bad = make_outbox(world, world.tip(), new_result())
    (bad / "machine").write_text("../etc\n")
    good = Outbox(world.root / "good")
    good.start("m1", world.tip())
    good.add({"m1/ffffffff-env.json": json.dumps({"commit_hash": "f" * 40}).encode()})
    done = world.repo.tool("push_results", str(bad), str(good.path))
    assert done.returncode == 4
    (line,) = done.stderr.strip().splitlines()
    assert str(bad) in line
    names = git("ls-tree", "-r", "--name-only", "asv-results", cwd=world.remote)
    assert "m1/ffffffff-env.json" in names


# 11 -----------------------------------------------------------------------------------


def gate_artifact(tmp_path: Path, head: str) -> Path:
    folder = tmp_path / "artifact"
    folder.mkdir()
    (folder / "pr.json").write_text(json.dumps({"number": 7, "head_sha": head}))
    (folder / "verdict.json").write_text(json.dumps(verdict()))
    return folder


def test_11_the_gate_edits_its_own_comment_never_someone_elses(tmp_path):
    head = "a" * 40
    with github_standin() as standin:
        standin.pulls[7] = {"number": 7, "head": {"sha": head}}
        planted = standin.comment_by(7, "mallory", "<!-- tensorops-pr-gate -->\nmine now")
        runner = ProjectRepo(
            REPO_ROOT, {**isolated_env(tmp_path / "home"), **standin.env(RUN_HEAD_SHA=head)}
        )
        for _ in range(2):
            done = runner.tool("pr_comment", str(gate_artifact(tmp_path, head)), timeout=60)
            assert done.returncode == 0, done.stderr
            shutil.rmtree(tmp_path / "artifact")
        assert standin.comments[planted]["body"].endswith("mine now")
        ours = [c for c in standin.comments.values() if c["user"]["type"] == "Bot"]
        assert len(ours) == 1 and "## Benchmarks: no benchmark got slower" in ours[0]["body"]


# 12 -----------------------------------------------------------------------------------


def test_12_an_unwritable_log_folder_still_gives_one_line_and_status_3(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    script = (
        "from tools._lib.base.cli import run_main\n"
        "def broken():\n    raise KeyError('surprise')\n"
        "run_main('probe', broken)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env={"TENSOROPS_LOG_DIR": str(blocked / "logs"), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert done.returncode == 3
    (line,) = done.stderr.strip().splitlines()
    assert "unexpected error: KeyError" in line and "no traceback log" in line


def test_12_the_default_log_folder_is_this_users_own():
    from tools._lib.base.cli import log_folder

    assert log_folder().name.endswith(f"-{os.getuid()}")


# 13 -----------------------------------------------------------------------------------


def test_13_a_pr_json_that_is_not_utf8_is_bad_input(tmp_path):
    folder = tmp_path / "artifact"
    folder.mkdir()
    (folder / "pr.json").write_bytes(b'{"number": 7, "head_sha": "\xff"}')
    (folder / "summary.md").write_text("text\n")
    runner = ProjectRepo(
        REPO_ROOT,
        {
            **isolated_env(tmp_path / "home"),
            "RUN_HEAD_SHA": "a" * 40,
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_TOKEN": "t",
        },
    )
    done = runner.tool("pr_comment", str(folder), timeout=60)
    assert done.returncode == 4, done.stderr
    assert "is not the gate's artifact" in done.stderr


# 14 -----------------------------------------------------------------------------------


def test_14_a_triage_keeps_each_record_as_it_is_made_and_a_failing_step_waits(world, monkeypatch):
    from tools import triage
    from tools._lib.base.cli import ToolError

    steps = [
        Step("m1", f"b.B.time_{n}", "('cpu',)", "seconds", "a" * 40, "b" * 40, 1.0, 2.0, 0.1)
        for n in "xy"
    ]

    class Investigation:
        def __init__(self, *args):
            pass

        def detection_at(self, label):
            return 0.1

        def investigate(self, step):
            if step.benchmark.endswith("y"):
                raise ToolError("asv find exited 2")
            return Regression(step, Finding.DISMISSED, "noise")

        def unmeasured(self, step, why):
            return Regression(step, Finding.UNMEASURED, f"not measured again: {why}")

    monkeypatch.setattr(triage, "history_steps", lambda repo, machine, at: steps)
    monkeypatch.setattr(triage, "Investigation", Investigation)
    monkeypatch.setattr(triage, "this_host", lambda: "host")
    monkeypatch.chdir(world.repo.path)
    args = type(
        "Args",
        (),
        {
            "machine": "m1",
            "budget_minutes": None,
            "report": None,
            "site_url": "",
            "remote": "origin",
            "branch": "asv-results",
            "outbox": None,
            "no_fetch": False,
            "check_out": True,
        },
    )()
    assert triage.Triage(args, world.repo.path).run() == 0
    landed = json.loads(git("show", "asv-results:triage/m1.json", cwd=world.remote))
    findings = {r["step"]["benchmark"]: r["finding"] for r in landed["records"]}
    assert findings == {"b.B.time_x": "dismissed", "b.B.time_y": "unmeasured"}
    log = git("log", "--format=%s", "asv-results", cwd=world.remote).splitlines()
    assert "m1: triage of b.B.time_x('cpu',)" in log  # landed before the next step began


# 15 -----------------------------------------------------------------------------------


def test_15_a_label_made_by_hand_in_another_case_is_used(tmp_path):
    with github_standin() as standin:
        standin.labels["Performance-Regression"] = {"name": "Performance-Regression"}
        done = file_issues(tmp_path, standin, report(tmp_path, [regression("m1|a|1..2", "x")]))
        assert done.returncode == 0, done.stderr
        (issue,) = standin.issues.values()
        assert [label["name"] for label in issue["labels"]] == ["Performance-Regression"]
        assert not standin.calls("POST", r".*/labels")
