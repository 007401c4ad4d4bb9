"""The published history's keys: every benchmark's name, params (their text form), param
names, unit and version, as asv discovers them. asv keys each graph on these, so changing
one silently starts a new history (or, for ``version``, drops the old one).

``published_benchmarks.json`` is the record; the test in test_published_history.py
compares the suites with it. After adding a benchmark on purpose, record it:

    .venv/bin/python -m tests.support.published_benchmarks
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.support import REPO_ROOT

RECORD = Path(__file__).with_name("published_benchmarks.json")


def discovered(root: Path) -> dict[str, dict]:
    from asv_runner.discovery import disc_benchmarks

    sys.path.insert(0, str(root))
    try:
        return {
            benchmark.name: {
                "params": benchmark.params,
                "param_names": benchmark.param_names,
                "unit": benchmark.unit,
                "version": benchmark.version,
            }
            for benchmark in disc_benchmarks(str(root / "benchmarks"))
        }
    finally:
        sys.path.remove(str(root))


def record(root: Path) -> dict[str, dict]:
    """Add the benchmarks the record lacks; never rewrites a recorded one."""
    recorded = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    current = discovered(root)
    added = {name: current[name] for name in sorted(set(current) - set(recorded))}
    RECORD.write_text(json.dumps({**recorded, **added}, indent=1, sort_keys=True) + "\n")
    return added


if __name__ == "__main__":
    added = record(REPO_ROOT)
    print(f"recorded {len(added)} new benchmarks in {RECORD.name}")
