"""The PR gate on a change no benchmark row can reach (docs, tests, a workflow): nothing
measured, exit 0 within a minute, and the files with why in the summary and the verdict.
(A change a row reaches, measured and judged: tests/integration/test_pr_gate_bisect.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.support import REPO_ROOT
from tests.support.project_repo import isolated_env
from tools._lib.verdict.markdown import NOTHING_REACHED
from tools._lib.verdict.row import GateReport


@pytest.fixture
def clone(tmp_path):
    path = tmp_path / "repo"
    env = isolated_env(tmp_path / "home")
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(path)], check=True, env=env)
    return path, env


def commit(repo, env, message: str) -> None:
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", message], cwd=repo, check=True, env=env)


def gate(repo, env, tmp_path, *extra: str):
    begun = time.monotonic()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "tools.pr_gate", "HEAD~1", "HEAD", *extra),
            *("--summary-file", str(tmp_path / "summary.md")),
            *("--verdict-file", str(tmp_path / "verdict.json")),
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, time.monotonic() - begun


def test_a_change_to_docs_tests_and_workflows_measures_nothing_and_passes(clone, tmp_path):
    repo, env = clone
    (repo / "README.md").write_text((repo / "README.md").read_text() + "\nA line.\n")
    page = repo / "docs" / "explanation" / "continuous.md"
    page.write_text(page.read_text() + "\nA line.\n")
    test = repo / "tests" / "unit" / "reach" / "test_selection.py"
    test.write_text(test.read_text() + "\n# a comment\n")
    workflow = repo / ".github" / "workflows" / "ci.yml"
    workflow.write_text(workflow.read_text() + "\n# a comment\n")
    commit(repo, env, "docs, a test, a workflow")
    done, seconds = gate(repo, env, tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert seconds <= 60, seconds
    assert f"pr_gate: {NOTHING_REACHED}" in done.stdout
    assert "asv" not in done.stdout.replace("pr_gate", "")  # asv never ran
    text = (tmp_path / "summary.md").read_text()
    assert text.startswith(f"## Benchmarks: {NOTHING_REACHED}")
    assert "Nothing measured: none of the" in text
    for path, why in (
        ("README.md", "documentation"),
        ("docs/explanation/continuous.md", "documentation"),
        ("tests/unit/reach/test_selection.py", "the tests: no benchmark row runs them"),
        (".github/workflows/ci.yml", "a workflow: no benchmark row runs it"),
    ):
        assert f"| `{path}` | `{why}` | none |" in text, path
    report = GateReport.from_json(json.loads((tmp_path / "verdict.json").read_text()))
    assert report.status == 0 and report.rows == () and report.selection.nothing
    assert report.selection.candidates > 100 and len(report.selection.because) == 4


def test_a_comment_outside_any_function_of_the_library_measures_nothing(clone, tmp_path):
    repo, env = clone
    source = repo / "src" / "tensorops" / "matmul.py"
    source.write_text("# Matrix products.\n" + source.read_text())
    commit(repo, env, "a comment at the top of a library module")
    done, _ = gate(repo, env, tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    text = (tmp_path / "summary.md").read_text()
    assert (
        "| `src/tensorops/matmul.py` | `only comments or blank lines outside functions` |" in text
    )
