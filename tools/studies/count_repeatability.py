#!/usr/bin/env python
"""Do two valgrind processes count the same commit the same? Every count twin's case
counted in one process, then again in another, with each process's wall time and the
worst relative difference between the two counts of a case.

    python -m tools.studies.count_repeatability [--processes 2] [--compiled] [--out FILE]

The working tree is counted (the suites' cases as they stand). ``--compiled`` also times
counting the compiled variants the twins leave out (each compiles inductor's code in its
child), in one more process; with ``--processes 1`` it times that against one process of
every twin, side by side, without the repeatability. Run it on an otherwise idle machine
for the times; the counts do not depend on it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tools._lib.base.cli import ArgumentParser, BadInput, run_main


def compiled_cost(count_cases) -> dict:
    """Seconds to count every compiled CPU case of the suites, in one valgrind process."""
    import itertools

    from benchmarks._harness.callgrind import CountCase
    from benchmarks._harness.tiers import declared_tier
    from benchmarks._harness.twins import count_shape, suite_classes
    from benchmarks.bench_instructions import SUITES

    cases = set()
    for suite in suite_classes(SUITES):
        if declared_tier(suite) == "weekly":
            continue
        for combination in itertools.product(*suite.params):
            named = dict(zip(suite.param_names, combination, strict=True))
            op, variant, spec = suite().resolve(named)
            if named["device"] == "cpu" and variant == "compiled":
                shape = count_shape(spec["shape"])
                cases.add(CountCase(op, variant, shape, spec["dtype"], spec["layout"]))
    started = time.monotonic()
    counted = count_cases(sorted(cases, key=lambda case: case.key))
    seconds = round(time.monotonic() - started, 1)
    shown = {
        key: value if isinstance(value, float | str) else str(value)
        for key, value in counted.items()
    }
    return {"compiled_cases": len(cases), "compiled_seconds": seconds, "compiled_counts": shown}


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--compiled", action="store_true", help="time the compiled cases too")
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    if args.processes < (1 if args.compiled else 2):
        raise BadInput("--processes must be at least 2 (1 with --compiled): a difference needs two")
    from benchmarks import bench_instructions
    from benchmarks._harness.callgrind import count_cases
    from benchmarks._harness.twins import selected_cases

    cases = selected_cases(bench_instructions.Counted.rows, None)
    runs, seconds = [], []
    for _ in range(args.processes):
        started = time.monotonic()
        runs.append(count_cases(cases))
        seconds.append(round(time.monotonic() - started, 1))
    counted = [key for key, value in runs[0].items() if isinstance(value, float)]
    spread = {
        key: max(run[key] for run in runs) / min(run[key] for run in runs) - 1 for key in counted
    }
    worst = max(spread, key=spread.get) if len(runs) > 1 else None
    figures = {
        **(compiled_cost(count_cases) if args.compiled else {}),
        "cases": len(cases),
        "counted": len(counted),
        "skipped": {key: value for key, value in runs[0].items() if isinstance(value, str)},
        "failed": {
            key: str(value)
            for key, value in runs[0].items()
            if key not in counted and not isinstance(value, str)
        },
        "seconds_per_process": seconds,
        **({"worst_case": worst, "worst_relative_difference": spread[worst]} if worst else {}),
        "counts": {key: value for key, value in runs[0].items() if key in counted},
    }
    print(json.dumps({k: v for k, v in figures.items() if k != "counts"}, indent=1))
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    run_main("count_repeatability", main)
