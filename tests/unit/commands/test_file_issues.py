"""Filing issues from reports (tools/file_issues.py) against the GitHub stand-in of its
REST API (tests/support/github_standin.py), reached through the workflow's own variables: a
regression filed once and updated in place, a resolved one closed, GitHub failing and a
malformed report said in one line; a report bound to the machine whose job made it files
only that machine's regressions, and only for a machine whose results landed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.commands import regression, report, run_tool
from tests.support.github_standin import TOKEN, github_standin


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


def test_the_standin_refuses_a_wrong_token(standin, tmp_path):
    done, _ = run_tool(
        "file_issues",
        str(report(tmp_path, regression())),
        env=standin.env(GITHUB_TOKEN=TOKEN + "x"),
        tmp_path=tmp_path,
    )
    assert done.returncode == 3 and "401" in done.stderr and "Bad credentials" in done.stderr


def machine_report(tmp_path: Path, name: str, machine: str, *keys: str, kind: str = "") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = [regression(key=key) for key in keys]
    data = {"version": 1, "machine": machine, "regressions": entries}
    path.write_text(json.dumps({**data, **({"kind": kind} if kind else {})}))
    return path


def file(standin, tmp_path, *args: str):
    done, _ = run_tool("file_issues", *args, env=standin.env(), tmp_path=tmp_path)
    return done


def test_a_report_bound_to_another_machine_is_refused(standin, tmp_path):
    """A job's artifact holds whatever its commits' code wrote: a file claiming to be
    another machine's report files nothing."""
    path = machine_report(tmp_path, "triage-report-m2/m2.json", "m1", "m1|bench_a.A.time_x()|a..b")
    done = file(standin, tmp_path, f"m2={path}")
    assert done.returncode == 4, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "m1" in line and "m2" in line and "machine" in line
    assert standin.issues == {}


@pytest.mark.parametrize(
    ("kind", "key"),
    [("", "m2|bench_a.A.time_x()|a..b"), ("release", "release|m2|bench_a.A.time_x()|2.13.0")],
)
def test_a_report_that_files_another_machines_regression_is_refused(standin, tmp_path, kind, key):
    path = machine_report(tmp_path, "m1.json", "m1", key, kind=kind)
    done = file(standin, tmp_path, f"m1={path}")
    assert done.returncode == 4, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "not of machine m1" in line
    assert standin.issues == {}


def test_only_the_machines_whose_results_landed_are_filed(standin, tmp_path):
    """Issues name results on the branch: a machine whose push did not land waits."""
    m1 = machine_report(tmp_path, "a/m1.json", "m1", "m1|bench_a.A.time_x()|a..b")
    m2 = machine_report(tmp_path, "b/m2.json", "m2", "m2|bench_a.A.time_x()|a..b")
    landed = tmp_path / "landed.txt"
    landed.write_text("m1\n")
    done = file(standin, tmp_path, f"m1={m1}", f"m2={m2}", "--landed", str(landed))
    assert done.returncode == 0, done.stderr
    (issue,) = standin.issues.values()
    assert (
        issue["body"].rstrip().endswith("<!-- tensorops-regression: m1|bench_a.A.time_x()|a..b -->")
    )
    assert "m2: not filed: its results did not land" in done.stdout
