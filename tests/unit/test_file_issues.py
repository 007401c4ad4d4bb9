"""Filing issues from reports (tools/file_issues.py) against the GitHub stand-in: a report is
bound to the machine whose job made it, it files only that machine's regressions, and only
for a machine whose results landed on the results branch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.github_standin import github_standin
from tests.unit.test_github_tools import regression, run_tool


def machine_report(tmp_path: Path, name: str, machine: str, *keys: str, kind: str = "") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = [regression(key=key) for key in keys]
    data = {"version": 1, "machine": machine, "regressions": entries}
    path.write_text(json.dumps({**data, **({"kind": kind} if kind else {})}))
    return path


@pytest.fixture
def standin():
    with github_standin() as running:
        yield running


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
