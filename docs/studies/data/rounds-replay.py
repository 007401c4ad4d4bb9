"""Round rules replayed on no-op samples of tools.floors (each row's rounds as measured):
rounds a row would take, the time rows' no-op slowdowns (p95 and max of max(r, 1/r)) and
the floors each rule gives. A rule that wants a round the samples lack stops where they
end ("ran short": its cost there is a lower bound).

    PYTHONPATH=. python docs/studies/data/rounds-replay.py SAMPLES
"""

import statistics
import sys
from pathlib import Path

from tools._lib.measure.no_op_floors import floor_of, read_samples
from tools._lib.measure.paired import Paired


def first(paired: Paired, rounds: int) -> Paired:
    sizes = paired.rounds[:rounds]
    kept = sum(sizes)
    return Paired(paired.label, paired.unit, paired.before[:kept], paired.after[:kept], sizes)


def within(limit):
    return lambda p: max(p.round_slowdowns) / min(p.round_slowdowns) <= limit


RULES = {  # name: (first rounds, most rounds, rounds agree)
    "three rounds (70ad3b7)": (3, 3, lambda p: True),
    "two rounds": (2, 2, lambda p: True),
    "two, more while undecided": (2, 5, lambda p: True),
    "two, more while rounds differ > 3%": (2, 5, within(1.03)),
    "two, more while rounds differ > 5%": (2, 5, within(1.05)),
    "two, more while rounds differ > 8%": (2, 5, within(1.08)),
}

runs = read_samples(Path(sys.argv[1]))
labels = [label for label in runs[0] if ".time_" in label]
for name, (start, most, agree) in RULES.items():
    reads, taken, short, per_row = [], [], 0, {label: [] for label in labels}
    for run in runs:
        for label in labels:
            measured, rounds = run[label], start
            paired = first(measured, rounds)
            while rounds < min(most, len(measured.rounds)) and (
                not agree(paired) or paired.undecided
            ):
                rounds += 1
                paired = first(measured, rounds)
            short += rounds == len(measured.rounds) < most and not agree(paired)
            reads.append(max(paired.slowdown, 1 / paired.slowdown))
            taken.append(rounds)
            per_row[label].append(paired.slowdown)
    reads.sort()
    floors = [floor_of(v) for v in per_row.values()]
    print(
        f"{name:36s} rounds a row {statistics.mean(taken):.2f}  p95 "
        f"{reads[round(0.95 * (len(reads) - 1))]:.3f}  max {reads[-1]:.3f}  above 1.15 "
        f"{sum(r > 1.15 for r in reads)}  floors: median {statistics.median(floors):.2f}, "
        f"at 1.15 or finer {sum(f <= 1.15 for f in floors)}/{len(floors)}  ran short {short}"
    )
