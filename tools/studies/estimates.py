"""Paired estimates on the same no-op samples: the median of the pairs' ratios as they
were taken; with each pair's place in the ABBA order taken out (what the comparison uses:
tools/_lib/measure/paired.Paired); and the median of the rounds' own reads (each process pair
one vote, a candidate for rows whose speed is set per process). Per estimate and run, the
time rows' no-op slowdowns (median, 95th percentile, max), then the floors each gives
(tools/_lib/measure/host_floors.py) and how often a run left out of them reads past them. Last, how
often a round's own read lies outside the pooled interval: the pooled interval counts
every pair as independent, which a round whose processes run at their own speed is not.

    python -m tools.floors --machine NAME --runs 4 --out FLOORS --samples SAMPLES
    python -m tools.studies.estimates SAMPLES [--out FILE]
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from pathlib import Path

import numpy

from tools._lib.base.cli import ArgumentParser, run_main
from tools._lib.measure.comparison import slowdown
from tools._lib.measure.no_op_floors import floor_of, read_samples
from tools._lib.measure.paired import Paired


def as_taken(paired: Paired) -> float:
    """The slowdown the plain median of the pairs' ratios reads."""
    return slowdown(1.0, statistics.median(paired.pair_ratios), paired.unit)


def is_time_label(label: str) -> bool:
    return ".time_" in label


def rounds_median(paired: Paired) -> float:
    """The median of the rounds' own slowdowns (each with its place taken out)."""
    return statistics.median(paired.round_slowdowns)


ESTIMATES = {
    "pairs as taken": as_taken,
    "place taken out": lambda p: p.slowdown,
    "rounds' median": rounds_median,
}


def rounds_outside(runs: list[dict[str, Paired]]) -> dict[str, int]:
    """Per time row, in how many runs at least one round's own read lay outside the
    pooled interval: its process pair ran at a speed the other rounds' did not."""
    found = Counter()
    for run in runs:
        for label, paired in run.items():
            low, high = paired.slowdown_interval
            if is_time_label(label) and any(not low <= s <= high for s in paired.round_slowdowns):
                found[label] += 1
    return dict(sorted(found.items()))


def quantile(values: list[float], q: float) -> float:
    """The value nearest the ``q`` quantile (numpy's "nearest" rank)."""
    return float(numpy.quantile(values, q, method="nearest"))


def one_estimate(runs: list[dict[str, Paired]], estimate) -> dict:
    """The no-op slowdowns of every time row by run, their summary, and the floors."""
    labels = sorted(set.intersection(*(set(run) for run in runs)))
    labels = [label for label in labels if is_time_label(label)]
    read = {label: [estimate(run[label]) for run in runs] for label in labels}
    per_run = []
    for number in range(len(runs)):
        values = [read[label][number] for label in labels]
        per_run.append(
            {
                "median": statistics.median(values),
                "p95": quantile(values, 0.95),
                "max": max(values),
                "above 1.05": sum(v > 1.05 for v in values),
                "above 1.15": sum(v > 1.15 for v in values),
            }
        )
    floors = sorted(floor_of(values) for values in read.values())
    held_out = 0  # rows whose read in a run passed the floor the other runs gave it
    for number in range(len(runs)):
        for values in read.values():
            others = values[:number] + values[number + 1 :]
            held_out += values[number] > floor_of(others)
    return {
        "rows": len(labels),
        "runs": per_run,
        "floors": {
            "median": statistics.median(floors),
            "at most 1.07": sum(f <= 1.07 for f in floors),
            "at most 1.10": sum(f <= 1.10 for f in floors),
            "above 1.15": sum(f > 1.15 for f in floors),
        },
        "held-out reads past their floor": held_out,
        "slowdowns": read,
    }


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", type=Path, help="a samples file of tools.floors")
    parser.add_argument("--out", type=Path, help="write every estimate's slowdowns as JSON")
    args = parser.parse_args()
    runs = read_samples(args.samples)
    found = {name: one_estimate(runs, estimate) for name, estimate in ESTIMATES.items()}
    for name, result in found.items():
        print(
            f"{name}: {result['rows']} time rows, floors {result['floors']}, "
            f"held-out reads past their floor {result['held-out reads past their floor']}"
        )
        for number, run in enumerate(result["runs"], 1):
            print(
                f"  run {number}: "
                + ", ".join(
                    f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in run.items()
                )
            )
    found["rounds outside the pooled interval"] = outside = rounds_outside(runs)
    print(
        f"rows with a round outside the pooled interval: {len(outside)} "
        f"({sum(outside.values())} row-runs of {len(runs)} runs)"
    )
    for label, count in sorted(outside.items(), key=lambda item: -item[1])[:10]:
        print(f"  {count} of {len(runs)} runs: {label}")
    if args.out:
        args.out.write_text(json.dumps(found, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    run_main("estimates", main)
