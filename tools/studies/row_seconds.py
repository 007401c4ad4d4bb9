#!/usr/bin/env python
"""Write the table the nightly's shards are balanced by (benchmarks/_harness/shards.py):
the seconds a row of each benchmark took in one measured nightly tier, from asv's result
file of that run.

    python -m tools.studies.row_seconds RESULT_FILE [--out benchmarks/_harness/row_seconds.json]

A benchmark's seconds are its recorded duration (every row and round of it) over its rows
in the pr and nightly tiers; a ``setup_cache``'s seconds (the instruction counts' one
valgrind process) are shared by the rows of the benchmarks that use it, by their number.
Run the tier as the nightly runs it (``python -m tools.studies.tier_time --tier pr --tier
nightly``) on the CPU whose night the shards split, otherwise idle.
"""

from __future__ import annotations

import json
import platform
from collections import Counter
from pathlib import Path

from tools._lib.asv.results import read_result_file
from tools._lib.asv.suites import tier_rows
from tools._lib.base.cli import ArgumentParser, BadInput, run_main
from tools._lib.base.git import repo_root

NIGHTLY_TIERS = ("pr", "nightly")
SETUP_CACHE = "<setup_cache "


def per_row(result: dict, rows: list[str], cache_keys: dict[str, str]) -> dict[str, float]:
    """Seconds per row of each benchmark with rows in ``rows`` that ``result`` (an asv
    result file's contents) recorded; ``cache_keys``: each benchmark's setup_cache key."""
    counted = Counter(row.split("(", 1)[0] for row in rows)
    column = result["result_columns"].index("duration")
    spent = {
        name: values[column] or 0.0
        for name, values in result.get("results", {}).items()
        if name in counted and len(values) > column
    }
    for key, seconds in result.get("durations", {}).items():
        if not key.startswith(SETUP_CACHE):
            continue
        sharing = [name for name in spent if cache_keys.get(name) == key[len(SETUP_CACHE) : -1]]
        shared_rows = sum(counted[name] for name in sharing)
        for name in sharing:
            spent[name] += seconds * counted[name] / shared_rows
    return {name: round(spent[name] / counted[name], 3) for name in sorted(spent)}


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("result", type=Path, help="asv's result file of a nightly tier run")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/_harness/row_seconds.json"))
    args = parser.parse_args()
    repo = repo_root()
    result = read_result_file(args.result)
    listed = args.result.parent.parent / "benchmarks.json"  # asv's, beside the machines
    if not listed.is_file():
        raise BadInput(f"no asv benchmarks.json at {listed}: give a file of asv's results dir")
    listing = json.loads(listed.read_text())
    cache_keys = {
        name: entry.get("setup_cache_key")
        for name, entry in listing.items()
        if isinstance(entry, dict)
    }
    seconds = per_row(result, tier_rows(repo, NIGHTLY_TIERS), cache_keys)
    if not seconds:
        raise BadInput(f"{args.result} holds no benchmark of the pr or nightly tier")
    table = {
        "what": "seconds a row of each benchmark took in one nightly tier run (asv's rounds)",
        "commit": result["commit_hash"],
        "machine": result["params"].get("machine"),
        "cpu": result["params"].get("cpu") or platform.processor(),
        "made_by": "python -m tools.studies.row_seconds",
        "seconds": seconds,
    }
    (repo / args.out).write_text(json.dumps(table, indent=1) + "\n")
    print(f"row_seconds: {len(seconds)} benchmarks, {sum(seconds.values()):.1f} s a row in all")
    return 0


if __name__ == "__main__":
    run_main("row_seconds", main)
