"""The table the nightly's shards are balanced by: a benchmark's recorded duration over
its rows of the nightly tier, a setup_cache's shared by the rows that use it."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import REPO_ROOT
from tools.studies.row_seconds import per_row


def result(durations: dict, caches: dict) -> dict:
    return {
        "result_columns": ["result", "params", "version", "started_at", "duration"],
        "results": {name: [None, [], "1", 0, seconds] for name, seconds in durations.items()},
        "durations": {f"<setup_cache {key}>": s for key, s in caches.items()},
    }


def test_a_benchmarks_duration_is_spread_over_its_rows_and_a_cache_over_its_users_rows():
    rows = ["a.A.time_x(1)", "a.A.time_x(2)", "c.C.track_n(1)", "c.D.track_n(1)", "c.D.track_n(2)"]
    recorded = result(
        {"a.A.time_x": 3.0, "c.C.track_n": 0.0, "c.D.track_n": 0.3, "z.Z.t": 9}, {"m:1": 30.0}
    )
    keys = {"c.C.track_n": "m:1", "c.D.track_n": "m:1"}
    seconds = per_row(recorded, rows, keys)
    assert seconds == {"a.A.time_x": 1.5, "c.C.track_n": 10.0, "c.D.track_n": 10.15}


def test_a_file_outside_asvs_results_is_bad_input(tmp_path):
    stray = tmp_path / "stray.json"
    stray.write_text(json.dumps(result({"a.A.time_x": 1.0}, {}) | {"commit_hash": "0" * 40}))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.studies.row_seconds",
            str(stray),
            "--out",
            str(tmp_path / "t.json"),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 4 and "benchmarks.json" in done.stderr, done.stderr
    assert not (tmp_path / "t.json").exists()
