"""A row's blocks sized from the ready call (one call right after setup: the comparison as
it is, tools/_lib/measure/workers.measure_row) or from the pair of blocks not kept (``warm``,
below): no-op comparisons of the same rows both ways, run by run in turns (which goes
first alternates), in one process on one host. Run in a clone whose HEAD~1 and HEAD have
the same library and whose .asv holds the default environment (a no-op gate's clone),
with the rows one per line in LABELS; per sizing it writes the runs' pairs as
``tools.floors --samples`` does (OUT.ready.json, OUT.warm.json), so each gives floors
with ``python -m tools.floors --from-samples``, and each row's calls a block
(OUT.blocks.json). Evidence for docs/studies/2026-12-06-block-sizing-epyc.md.

    PYTHONPATH=. .venv/bin/python docs/studies/data/block-sizing.py LABELS RUNS OUT
"""

import json
import statistics
import sys
import time
from pathlib import Path

from tools._lib.base.git import resolve_commit
from tools._lib.measure import alternation, workers
from tools._lib.measure.no_op_floors import floor_of, samples_of, spread
from tools._lib.measure.workers import BLOCK_SECONDS, BLOCK_SLACK_SECONDS, SideFailed

numbers: dict[str, list[int]] = {}


def calls_per_block(seconds_a_call: float) -> int:
    return max(1, round(BLOCK_SECONDS / max(seconds_a_call, 1e-9)))


def block(row, worker, number, timeout) -> float:
    answer = row.ask(worker, timeout, block=number)
    if answer["status"] != "measured":
        raise SideFailed(f"{answer['status']} at {worker.side.name}")
    return answer["value"]


def measure_row_warm(label, pair, cpus, pairs, seconds, setup_order=()):
    """workers.measure_row, with the pair of blocks not kept timed at the ready call's
    number first and the kept blocks sized from its slower side's seconds a call."""
    row = workers.RowOnSides(pair)
    begun = time.monotonic()
    try:
        answers = workers.set_up_row(row, label, cpus, setup_order)
        set_up = time.monotonic() - begun
        ready = max(answer["seconds"] for answer in answers)
        number = calls_per_block(ready)
        timeout = number * ready * 10 + BLOCK_SLACK_SECONDS
        slowest = max(block(row, worker, number, timeout) for worker in pair)
        number = calls_per_block(slowest)
        affordable = max(2, min(pairs, int(seconds / (2 * number * slowest)) - 1))
        affordable -= affordable % 2
        numbers.setdefault(label, []).append(number)
        first, second = pair
        values = {first: [], second: []}
        for index in range(1, affordable + 1):
            for worker in (first, second) if index % 2 == 0 else (second, first):
                timeout = slowest * number * 10 + BLOCK_SLACK_SECONDS
                values[worker].append(block(row, worker, number, timeout))
        return workers.Timed(values[first], values[second], answers[0]["unit"], set_up)
    finally:
        row.end()


def measure_row_ready(label, *args, **kwargs):
    alternate = workers.alternate

    def counted(row, number, pairs, timeout):
        numbers.setdefault(label, []).append(number)
        return alternate(row, number, pairs, timeout)

    workers.alternate = counted
    try:
        return workers.measure_row(label, *args, **kwargs)
    finally:
        workers.alternate = alternate


repo, labels_file, runs, out = Path.cwd(), Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
labels = [line.strip() for line in labels_file.read_text().split("\n") if line.strip()]
sizings = {"ready": measure_row_ready, "warm": measure_row_warm}
found: dict[str, list[dict]] = {name: [] for name in sizings}
blocks: dict[str, dict[str, list[int]]] = {name: {} for name in sizings}
base, head = resolve_commit("HEAD~1", repo), resolve_commit("HEAD", repo)
with alternation.commit_library(repo, base) as old, alternation.commit_library(repo, head) as new:
    python = alternation.default_python(repo)
    sides = (workers.Side(base[:12], python, old), workers.Side(head[:12], python, new))
    for run in range(runs):
        for name in list(sizings) if run % 2 == 0 else list(sizings)[::-1]:
            numbers.clear()
            alternation.measure_row = sizings[name]
            outcomes = alternation.measure_rows(repo, sides, labels)
            found[name].append({k: o.paired for k, o in outcomes.items() if o.paired})
            for label, counts in numbers.items():
                blocks[name].setdefault(label, []).extend(counts)
            print(f"block-sizing: run {run + 1} {name} done", flush=True)
for name in sizings:
    Path(f"{out}.{name}.json").write_text(json.dumps(samples_of(found[name])))
Path(f"{out}.blocks.json").write_text(json.dumps(blocks))
for name in sizings:
    reads = sorted(spread(run[label].slowdown) for run in found[name] for label in run)
    floors = [floor_of([r[label].slowdown for r in found[name] if label in r]) for label in labels]
    print(
        f"{name}: {len(reads)} reads, p95 {reads[min(len(reads) - 1, int(0.95 * len(reads)))]:.3f}"
        f", max {reads[-1]:.3f}; floors median {statistics.median(floors):.2f}, "
        f"{sum(f <= 1.10 for f in floors)} of {len(floors)} at 1.10 or finer, "
        f"{sum(f > 1.15 for f in floors)} above 1.15"
    )
