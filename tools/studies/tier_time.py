#!/usr/bin/env python
"""Measure what one commit of a tier costs: ``asv run`` of the tier's rows (the command
the nightly and the gate run), its wall time, and asv's recorded durations per benchmark,
the one-valgrind-process ``setup_cache`` of the instruction counts included.

    python -m tools.studies.tier_time --tier pr [--commit HEAD] [--machine NAME] [--out FILE]

Run it on an otherwise idle machine: the budgets (README, "Tiers") are per commit on two
cores. It writes results under the configured results_dir like any asv run.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path

from tools._lib.asv.machines import register_machine
from tools._lib.asv.matrix import default_release
from tools._lib.asv.results import RESULTS_DIR, machine_result_files
from tools._lib.asv.run import asv
from tools._lib.asv.suites import tier_selection
from tools._lib.base.cli import ArgumentParser, ExternalFailure, run_main
from tools._lib.base.git import repo_root, resolve_commit

# The keys of asv's durations that are not benchmarks: the build, and each setup_cache.
NOT_BENCHMARKS = ("<build>", "<setup_cache")


def durations(repo: Path, machine: str, commit: str, env: str) -> dict[str, float]:
    """asv's recorded seconds of ``commit``'s results under the environment ``env``: per
    benchmark (its ``duration`` column), per ``setup_cache`` and the build (its
    ``durations``)."""
    recorded: dict[str, float] = {}
    for data in machine_result_files(repo / RESULTS_DIR, machine, env).values():
        if data["commit_hash"] != commit:
            continue
        column = data["result_columns"].index("duration")
        for name, values in data.get("results", {}).items():
            recorded[name] = values[column] or 0.0
        recorded.update(data.get("durations", {}))
    if not recorded:
        raise ExternalFailure(f"no durations recorded for {commit[:8]} on {machine}")
    return recorded


def by_suite(recorded: dict[str, float]) -> dict[str, float]:
    """Seconds per suite module (``bench_norm``), the setup_caches on their own."""
    totals: dict[str, float] = defaultdict(float)
    for name, seconds in recorded.items():
        key = name.split(" ")[0] if name.startswith(NOT_BENCHMARKS) else name.split(".")[0]
        totals[key] += seconds
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tier", action="append", choices=["pr", "nightly", "weekly"])
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--machine", default="tier-time")
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    repo = repo_root()
    commit = resolve_commit(args.commit, repo)
    chosen = args.tier or ["pr"]
    regex, names = tier_selection(repo, chosen)
    register_machine(args.machine)
    command = ["run", "--machine", args.machine, "--bench", regex, f"{commit}^!"]
    started = time.monotonic()
    done = asv(*command, cwd=repo)
    wall = time.monotonic() - started
    if done.returncode not in (0, 2):  # 2: a benchmark failed, the rest is recorded
        raise ExternalFailure(f"asv run exited {done.returncode}")
    recorded = durations(repo, args.machine, commit, default_release(repo).env_name)
    benchmarked = sum(s for n, s in recorded.items() if not n.startswith("<build>"))
    figures = {
        "tiers": chosen,
        "commit": commit,
        "benchmarks": len(names),
        "wall_seconds": round(wall, 1),
        "asv_recorded_seconds": round(benchmarked, 1),
        "build_seconds": round(recorded.get("<build>", 0.0), 1),
        "by_suite": {k: round(v, 1) for k, v in by_suite(recorded).items()},
        "asv_failed": done.returncode == 2,
    }
    text = json.dumps(figures, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    run_main("tier_time", main)
