#!/usr/bin/env python
"""Measure asv's per-commit overhead: checkout, uninstall, build and install of tensorops.

Runs ``asv run -v`` over a commit range with one tiny benchmark and timestamps its
log lines. For every commit after the first (whose checkout asv does before its
log says "For tensorops commit"), the overhead is the time from that line to
"Benchmarking", which asv prints once the new build is installed.

    python -m tools.studies.commit_overhead HEAD~4..HEAD [--bench REGEX] [--config asv.conf.json]

It writes results under the configured results_dir like any asv run.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time

from tools._lib.asv.run import with_environment
from tools._lib.base.git import repo_root

COMMIT_LINE = re.compile(r"For tensorops commit (\w+)")


def timed_lines(command: list[str]) -> list[tuple[float, str]]:
    started = time.perf_counter()
    lines = []
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as process:
        for line in process.stdout:
            lines.append((time.perf_counter() - started, line.rstrip()))
    if process.returncode != 0:
        tail = "\n".join(line for _, line in lines[-20:])
        raise SystemExit(f"asv run failed ({process.returncode}):\n{tail}")
    return lines


def overheads(lines: list[tuple[float, str]]) -> dict[str, float]:
    per_commit, current, began = {}, None, 0.0
    for stamp, line in lines:
        matched = COMMIT_LINE.search(line)
        if matched:
            current, began = matched.group(1), stamp
        elif current and "Benchmarking " in line:
            per_commit[current] = stamp - began
            current = None
    return per_commit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("range", help="an asv commit range, e.g. HEAD~4..HEAD")
    parser.add_argument("--bench", default=r"SplitLastDim\.time", help="a cheap benchmark regex")
    parser.add_argument("--config", default="asv.conf.json")
    args = parser.parse_args()
    run = ["run", "-v", "--quick", "--config", args.config, "-b", args.bench, args.range]
    command = [sys.executable, "-m", "asv", *with_environment(run, repo_root())]
    per_commit = overheads(timed_lines(command))
    measured = list(per_commit.items())[1:]
    if not measured:
        raise SystemExit("need at least two commits in the range that asv had not built yet")
    for commit, seconds in measured:
        print(f"{commit}: {seconds:5.2f} s checkout + build + install")
    values = [seconds for _, seconds in measured]
    print(
        f"per-commit overhead: median {statistics.median(values):.2f} s, "
        f"max {max(values):.2f} s over {len(values)} commits"
    )


if __name__ == "__main__":
    main()
