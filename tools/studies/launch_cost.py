#!/usr/bin/env python
"""Measure what asv pays to start benchmark processes, and its share of a real run.

asv runs every benchmark parameter combination (and every round of a time
benchmark) in its own process. With ``launch_method: spawn`` each process is a
fresh interpreter that imports torch; with ``forkserver`` one server imports the
suites once and forks. This script times a suite of no-op benchmarks (which import
torch, like the real suites) under both methods, derives the cost of one process
from two suite sizes, and, given a result file of a real run, reports the share of
that run's benchmarking time spent starting processes.

    python -m tools.studies.launch_cost [--results .asv/results/MACHINE/COMMIT-ENV.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools._lib.asv.suites import REPO_ROOT

NOOP_SUITE = """
import torch  # the real suites import torch; so must the probe


class Noop:
    params = [list(range({count}))]
    param_names = ["index"]
    rounds = 1
    repeat = 1
    number = 1
    warmup_time = 0.0

    def time_noop(self, index):
        pass
"""


def run_noop_suite(count: int, launch_method: str, workdir: Path) -> float:
    """Wall seconds for `asv run` of `count` no-op processes in this interpreter."""
    suite = workdir / f"noop_{launch_method}_{count}"
    suite.mkdir()
    (suite / "__init__.py").write_text("")
    (suite / "bench_noop.py").write_text(NOOP_SUITE.format(count=count))
    config = {
        "version": 1,
        "project": "tensorops",
        "repo": str(REPO_ROOT),
        "branches": ["main"],
        "benchmark_dir": str(suite),
        "results_dir": str(workdir / "results"),
        "html_dir": str(workdir / "html"),
        "env_dir": str(workdir / "env"),
        "environment_type": "virtualenv",
    }
    config_path = suite / "asv.conf.json"
    config_path.write_text(json.dumps(config))
    command = [
        sys.executable,
        "-m",
        "asv",
        "run",
        "--config",
        str(config_path),
        "-E",
        f"existing:{sys.executable}",
        "--launch-method",
        launch_method,
        "--quick",
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"asv run failed under {launch_method}:\n{done.stdout}\n{done.stderr}")
    return elapsed


def process_count(results: dict, time_rounds: int = 2) -> int:
    """Processes asv started for a result file: one per combination and round.

    asv gives time benchmarks ``rounds`` processes each (2 unless a suite sets it)
    and every other benchmark type one.
    """
    columns = results["result_columns"]
    total = 0
    for name, row in results["results"].items():
        combinations = len(dict(zip(columns, row, strict=False))["result"])
        is_time = name.rsplit(".", 1)[-1].startswith("time_")
        total += combinations * (time_rounds if is_time else 1)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, help="a result file of a full asv run")
    parser.add_argument("--small", type=int, default=10)
    parser.add_argument("--large", type=int, default=60)
    args = parser.parse_args()
    if args.large <= args.small:
        parser.error("--large must exceed --small")
    per_process, fixed = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for method in ("spawn", "forkserver"):
            small = run_noop_suite(args.small, method, Path(tmp))
            large = run_noop_suite(args.large, method, Path(tmp))
            per_process[method] = (large - small) / (args.large - args.small)
            fixed[method] = small - args.small * per_process[method]
            print(
                f"{method:>10}: {per_process[method] * 1e3:7.1f} ms per benchmark process, "
                f"{fixed[method]:5.2f} s fixed per run ({args.small} no-ops: {small:.2f} s, "
                f"{args.large}: {large:.2f} s)"
            )
    ratio = per_process["spawn"] / per_process["forkserver"]
    print(f"spawn / forkserver, per process: {ratio:.1f}x")
    if args.results:
        results = json.loads(args.results.read_text())
        processes = process_count(results)
        measured = sum(
            dict(zip(results["result_columns"], row, strict=False))["duration"] or 0.0
            for row in results["results"].values()
        )
        launching = processes * per_process["forkserver"] + fixed["forkserver"]
        print(
            f"the run: {processes} benchmark processes, {measured:.1f} s benchmarking "
            f"(forkserver, the configured method)"
        )
        print(
            f"starting processes under forkserver: {launching:.1f} s = "
            f"{100 * launching / measured:.1f}% of the run"
        )
        extra = processes * (per_process["spawn"] - per_process["forkserver"])
        print(
            f"under spawn the same run would spend {extra:.0f} s more "
            f"(about {measured + extra:.0f} s in all)"
        )


if __name__ == "__main__":
    main()
