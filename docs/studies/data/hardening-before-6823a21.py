"""Findings 3, 4, 5, 7, 12 and 14 of the second hardening review, reproduced against the
tools of 6823a21 (the landing before the rework that fixed them), with the same assertions
as tests/unit/scenarios/test_second_hardening_review.py's tests of those rows, written for
that commit's module layout (tools/common.py, tools/triage.py, tools/results_branch.py).
Every test here fails at 6823a21; its counterpart in
tests/unit/scenarios/test_second_hardening_review.py passes on the current code.

    git worktree add /tmp/before 6823a21
    cd /tmp/before && PYTHONPATH=. python -m pytest -p no:cacheprovider \
        PATH/TO/hardening-before-6823a21.py

Kept as evidence for docs/studies/2026-12-02-hardening-before.md; not part of the suite
(it imports modules that no longer exist).
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path.cwd()  # the 6823a21 checkout the command runs in
IDENTITY = {
    "GIT_AUTHOR_NAME": "tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}


def sh(*args: str, cwd: Path) -> str:
    env = {**os.environ, **IDENTITY}
    return subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True).stdout.decode()


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    sh("git", "init", "-q", "-b", "main", cwd=path)
    sh("git", "commit", "-q", "--allow-empty", "-m", "root", cwd=path)
    return path


# An unexpected error inside a command, under the tools' run_main.
BROKEN = (
    "from tools.common import run_main\n"
    "def broken():\n    raise KeyError('surprise')\n"
    "run_main('probe', broken)\n"
)


def test_3_a_night_whose_benchmark_failed_is_still_triaged(tmp_path):
    steps = yaml.safe_load((ROOT / ".github/workflows/nightly.yml").read_text())["jobs"]
    steps = steps["benchmark"]["steps"]
    (index,) = [i for i, s in enumerate(steps) if "-m tools.nightly" in s.get("run", "")]
    stub = tmp_path / ".venv" / "bin" / "python"
    stub.parent.mkdir(parents=True)
    stub.write_text("#!/bin/sh\nexit 1\n")  # a benchmark failed, results saved
    stub.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "MACHINE": "m", "TIER": "nightly", "MAX_COMMITS": "1"}
    done = subprocess.run(["bash", "-e", "-c", steps[index]["run"]], cwd=tmp_path, env=env)
    assert done.returncode == 0  # else the job stops here and the triage step never runs


def test_4_a_row_that_cannot_be_measured_again_is_not_taken_as_recovered(monkeypatch, tmp_path):
    from tools import triage

    step = triage.Step("gpu", "b.B.time_x", "('cuda',)", "seconds", "a" * 40, "b" * 40, 1, 2, 0.1)
    record = {
        **{field: getattr(step, field) for field in triage.Step.__dataclass_fields__},
        "status": "confirmed",
        "state": "open",
        "guilty": "b" * 40,
        "parent": "a" * 40,
    }
    monkeypatch.setattr(triage, "latest_value", lambda repo, machine, s: ("c" * 40, 1.02))
    monkeypatch.setattr(triage, "measure_pair", lambda *args: None)  # the row skips here
    args = type(
        "Args",
        (),
        {
            "remote": "origin",
            "branch": "asv-results",
            "no_fetch": True,
            "outbox": None,
            "budget_minutes": None,
        },
    )()
    judged = triage.Triage(args, tmp_path)
    judged.state["steps"]["k"] = record
    judged.resolve()
    assert record["state"] == "open"


def test_5_a_commit_message_that_is_not_utf8_is_read(tmp_path):
    from tools.common import git

    repo = new_repo(tmp_path / "repo")
    message = tmp_path / "message"
    message.write_bytes("caf\xe9 latin-1 \xff\n".encode("latin-1"))
    sh(
        "git",
        "-c",  # an encoding git cannot convert from: log shows the message's bytes as they are
        "i18n.commitEncoding=x-unknown",
        "commit",
        "-q",
        "--allow-empty",
        "-F",
        str(message),
        cwd=repo,
    )
    raw = subprocess.run(["git", "log", "-1", "--format=%s"], cwd=repo, capture_output=True)
    with pytest.raises(UnicodeDecodeError):  # stored and shown as the bytes given
        raw.stdout.decode()
    assert git("log", "--format=%s", cwd=repo)


def test_7_the_token_is_in_no_error_line_and_on_no_command_line(monkeypatch, tmp_path):
    from tools.common import ExternalFailure
    from tools.results_branch import ResultsBranch

    token = "ghs_SECRETTOKEN1234"
    monkeypatch.setenv("GITHUB_TOKEN", token)
    repo = new_repo(tmp_path / "repo")
    sh("git", "remote", "add", "origin", "https://127.0.0.1:1/o/r.git", cwd=repo)
    seen = []
    real = subprocess.run

    def recorded(command, **kwargs):
        seen.append(" ".join(map(str, command)))
        return real(command, **kwargs)

    monkeypatch.setattr("tools.common.subprocess.run", recorded)
    with pytest.raises(ExternalFailure) as failed:
        ResultsBranch(repo).check_out()
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    assert token not in str(failed.value) and basic not in str(failed.value)
    assert seen and not [line for line in seen if token in line or basic in line]


def test_12_an_unwritable_log_folder_still_gives_one_line_and_status_3(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    done = subprocess.run(
        [sys.executable, "-c", BROKEN],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={
            "TENSOROPS_LOG_DIR": str(blocked / "logs"),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),
        },
        timeout=60,
    )
    assert done.returncode == 3
    assert len(done.stderr.strip().splitlines()) == 1


def test_12_the_default_log_folder_is_this_users_own(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", BROKEN],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    (log,) = tmp_path.glob("*/probe-*.log")
    assert log.parent.name.endswith(f"-{os.getuid()}"), done.stderr


def test_14_a_triage_keeps_each_record_as_it_is_made(monkeypatch, tmp_path):
    from tools import triage

    remote = tmp_path / "remote.git"
    sh("git", "init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    repo = new_repo(tmp_path / "repo")
    sh("git", "remote", "add", "origin", str(remote), cwd=repo)
    sh("git", "push", "-q", "origin", "main", cwd=repo)
    steps = [
        triage.Step("m1", f"b.B.time_{n}", "('cpu',)", "seconds", "a" * 40, "b" * 40, 1, 2, 0.1)
        for n in "xy"
    ]

    def handle(self, step):
        if step.benchmark.endswith("y"):
            raise RuntimeError("asv find exited 2")
        return {"status": "dismissed", "label": step.label}

    monkeypatch.setattr(triage, "published_steps", lambda repo, machine: steps)
    monkeypatch.setattr(triage.Triage, "handle", handle)
    monkeypatch.setattr(triage.Triage, "is_new", lambda self, step: True)
    for name, value in IDENTITY.items():
        monkeypatch.setenv(name, value)
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
    with pytest.raises(RuntimeError):
        triage.Triage(args, repo).run()
    landed = subprocess.run(
        ["git", "show", "asv-results:triage/state.json"], cwd=remote, capture_output=True, text=True
    )
    assert landed.returncode == 0, "nothing of the night's triage landed"
    assert "b.B.time_x" in landed.stdout
