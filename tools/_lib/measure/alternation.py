"""Measure rows of two sides again by alternation: the comparison every verdict of this
project rests on (the PR gate's, the triage's confirmation, the bisect's checks, a release
against another), with the reason in one place.

asv alternates whole rounds, minutes apart, and reads the median: on a host whose speed
drifts for seconds at a time (one-sided: slower, rarely faster) a side can spend a round
slow, and a no-op reads 1.3x. Here each side is a worker process (its interpreter and its
commit's library; benchmarks/_harness/worker.py) and the two take turns on one core, a
block of calls each, in ABBA order, so both halves of a pair meet the same host, in rounds
of fresh process pairs, more where the rounds disagree; the verdict is the median of the
pooled pairs' ratios, each with its place in the ABBA order taken out
(tools/_lib/measure/paired.Paired). The evidence: docs/explanation/comparison.md. asv still
records both sides' results where a caller wants history (the gate's first pass); this
adds what asv cannot do, and writes nothing.

Nothing waits forever: a side that dies, hangs past its timeout or skips a row ends that
row with the reason (tools/_lib/measure/workers.py), and the next row starts a new worker.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tools._lib.asv.matrix import default_python
from tools._lib.base.cli import ExternalFailure
from tools._lib.base.git import commit_library
from tools._lib.measure.paired import Paired
from tools._lib.measure.workers import (
    SETUP_SECONDS,
    RowOnSides,
    Side,
    SideFailed,
    Timed,
    Worker,
    measure_row,
    timing_cpus,
)

# Every row is measured in at least FIRST_ROUNDS rounds, each by a fresh pair of worker
# processes: one process pair can be a few per cent apart on identical code for as long as
# the pair lives (where its memory landed). Two rounds that agree have met no such pair; a
# row whose rounds disagree (tools/_lib/measure/paired.Paired.rounds_disagree), is undecided,
# or is unsettled at its threshold gets one more round at a time, up to MAX_ROUNDS, and the
# median of the pooled pairs discards the stray rounds (docs/explanation/comparison.md,
# "Processes"). Most rows agree in two, so the rounds go where the host needs them.
FIRST_ROUNDS = 2
MAX_ROUNDS = 5
# A row is failed only on at least this many rounds: two process pairs can both run one
# side a few per cent slow on identical code, agree, and fail a no-op
# (docs/explanation/comparison.md, "Processes"); a third round decides, and only rows about to
# fail pay for it.
FAIL_ROUNDS = 3
PAIRS = 8  # per round
# A row's timed blocks stop at about this many seconds a round; a slow row gets fewer pairs.
ROW_SECONDS = 3.0


@dataclass(frozen=True)
class Outcome:
    """A row measured again: its pairs, or why there are none (a skip, a failure, a side
    that died or hung), in words for a verdict."""

    label: str
    paired: Paired | None = None
    why: str = ""


def one_round(
    repo: Path, sides: tuple[Side, Side], labels: Sequence[str], scratch: Path, round_: int
) -> dict[str, Timed | str]:
    """Every row timed by one fresh pair of workers: its blocks, or why not."""
    workers = tuple(Worker(repo, side, scratch / f"{side.name}-{round_}.log") for side in sides)
    # Which side starts and sets up first alternates from round to round: whatever the
    # first process of a pair gains or loses by it falls on each side alike.
    first_started = workers if round_ % 2 == 0 else workers[::-1]
    for worker in first_started:
        worker.start()
    timed: dict[str, Timed | str] = {}
    try:
        for label in labels:
            try:
                timed[label] = measure_row(
                    label, workers, timing_cpus(), PAIRS, ROW_SECONDS, setup_order=first_started
                )
            except SideFailed as failure:
                timed[label] = str(failure)
    finally:
        for worker in workers:
            worker.stop()
    return timed


def needs_more(paired: Paired, threshold: float | None) -> bool:
    """Whether a row measured in its first rounds gets another."""
    return (
        paired.rounds_disagree
        or paired.undecided
        or paired.unsettled_at(threshold)
        or (len(paired.rounds) < FAIL_ROUNDS and bool(threshold) and paired.slower(threshold))
    )


def measure_rows(
    repo: Path,
    sides: tuple[Side, Side],
    labels: Sequence[str],
    thresholds: Mapping[str, float | None] | None = None,
    rounds: int | None = None,
) -> dict[str, Outcome]:
    """Every row of ``labels`` measured on both sides by alternation, in rounds of fresh
    process pairs, by label; a row that fails in a round is not measured again after it.
    ``thresholds``: what each row will be judged at, where the caller knows (a row near it
    gets more rounds); ``rounds``: exactly this many rounds a row instead (a depth whose
    floors were checked at it: tools/_lib/measure/host_floors.Floors.threshold_at)."""
    timed: dict[str, list[Timed]] = {label: [] for label in labels}
    failed: dict[str, str] = {}
    thresholds = thresholds or {}
    with tempfile.TemporaryDirectory(prefix="remeasure-") as folder:
        for round_ in range(rounds or MAX_ROUNDS):
            wanted = [
                label
                for label in labels
                if label not in failed
                and (
                    round_ < (rounds or FIRST_ROUNDS)
                    or needs_more(Paired.of_rounds(label, timed[label]), thresholds.get(label))
                )
            ]
            if not wanted:
                break
            begun, setting_up = time.monotonic(), 0.0
            for label, measured in one_round(repo, sides, wanted, Path(folder), round_).items():
                if isinstance(measured, str):
                    failed[label] = measured
                else:
                    timed[label].append(measured)
                    setting_up += measured.setup_seconds
            print(
                f"remeasure: round {round_ + 1}: {len(wanted)} rows in "
                f"{time.monotonic() - begun:.0f} s ({setting_up:.0f} s setting them up)",
                flush=True,
            )
    outcomes = {
        label: Outcome(label, why=failed[label])
        if label in failed
        else Outcome(label, Paired.of_rounds(label, timed[label]))
        for label in labels
    }
    for outcome in outcomes.values():
        print(f"remeasure: {describe(outcome)}", flush=True)
    return outcomes


def describe(outcome: Outcome) -> str:
    if outcome.paired is None:
        return f"{outcome.label}: not measured: {outcome.why}"
    low, high = outcome.paired.slowdown_interval
    return f"{outcome.label}: {outcome.paired.slowdown:.3f}x ({low:.3f} to {high:.3f})"


def compare_commits(
    repo: Path,
    before: str,
    after: str,
    labels: Sequence[str],
    python: Path | None = None,
    thresholds: Mapping[str, float | None] | None = None,
    rounds: int | None = None,
) -> dict[str, Outcome]:
    """The rows at commit ``before`` and at ``after``, measured again by alternation
    (``rounds``: exactly that many rounds a row)."""
    interpreter = python or default_python(repo)
    with commit_library(repo, before) as old, commit_library(repo, after) as new:
        sides = (Side(before[:12], interpreter, old), Side(after[:12], interpreter, new))
        return measure_rows(repo, sides, labels, thresholds, rounds)


def measure_pair(
    repo: Path, label: str, first: str, second: str, threshold: float | None = None
) -> Paired | None:
    """One row at two commits, measured again by alternation (``threshold``: what it will
    be judged at, if known); None when it could not be (a side skipped, failed or hung:
    the log says which)."""
    return compare_commits(repo, first, second, [label], thresholds={label: threshold})[
        label
    ].paired


def profile_pair(repo: Path, before: str, after: str, label: str, calls: int) -> tuple[dict, dict]:
    """torch.profiler's operators of the row at two commits (:func:`profile_side`)."""
    python = default_python(repo)
    profiled = []
    for commit in (before, after):
        with commit_library(repo, commit) as library:
            profiled.append(profile_side(repo, Side(commit[:12], python, library), label, calls))
    return profiled[0], profiled[1]


def profile_side(repo: Path, side: Side, label: str, calls: int) -> dict[str, list[float]]:
    """torch.profiler's operators over ``calls`` calls of the row on one side (a commit's
    library, a release's interpreter), after its setup (which warms it up):
    ``{operator: [self µs, total µs, calls]}``."""
    with tempfile.TemporaryDirectory() as scratch:
        worker = Worker(repo, side, Path(scratch) / "log")
        row = RowOnSides((worker,))
        try:
            worker.send(row=label, cpus=[])
            row.ending.add(worker)
            answer = row.hear(worker, SETUP_SECONDS)
            if answer["status"] == "ready":
                answer = row.ask(worker, SETUP_SECONDS, profile=calls)
            if answer["status"] != "profiled":
                why = answer.get("reason", "its process died")
                raise ExternalFailure(f"profiling {label} at {side.name}: {why}")
            return answer["operators"]
        except SideFailed as failure:
            raise ExternalFailure(f"profiling {label} at {side.name}: {failure}") from None
        finally:
            row.end()
            worker.stop()
