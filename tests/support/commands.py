"""Running a command as a workflow runs it, for the tests of the commands that talk to
GitHub (through the stand-in, tests/support/github_standin.py): its own process, the
workflow's variables, a step summary of its own; and the reports the filing reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import REPO_ROOT


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
