"""The PR gate's verdict on a base and a head commit: asv records both (its first pass), the
instruction counts and peak memory are judged on asv's numbers, and every timed row is
measured again by alternation and judged at its floor on this host.

- **First pass**: ``asv continuous --split`` of the selection, one round a side: both
  commits' results recorded as asv records them (history, ``asv compare``, the artifact),
  the counts (deterministic: each at its row's count factor, asv.conf.json's) and peak
  memory (the factor) judged by asv's rule.
- **Timed rows** (``time_``, ``track_``): both commits' libraries measured again by
  alternation (tools/_lib/measure/alternation.py); a row fails when its paired slowdown is
  above its threshold and its interval lies above 1. The threshold is the row's floor on this
  host (tools/_lib/measure/host_floors.py), or the factor where the host has none yet; a row
  whose floor is above the factor is "not judged here", and says so with its floor.

No verdict without a measurement: a row measured at the base and not at the head
(skipped, failed, not run, or a value that is no measurement) fails the gate with its
name, as does a timed row that could not be measured again, and a gate that compared no
row at all does not pass (docs/explanation/continuous.md, "No verdict without a
measurement").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from tools._lib.asv.matrix import default_release
from tools._lib.asv.private import config_thresholds
from tools._lib.asv.results import RESULTS_DIR, benchmark_units, commit_rows
from tools._lib.asv.run import asv, bench_selection
from tools._lib.asv.suites import tier_selection
from tools._lib.base.cli import Status
from tools._lib.base.git import resolve_commit
from tools._lib.measure.alternation import Outcome, compare_commits
from tools._lib.measure.comparison import (
    COUNT_FACTOR,
    Row,
    Unmatched,
    asv_row_factor,
    is_count,
    match_rows,
)
from tools._lib.measure.host_floors import Floors
from tools._lib.measure.paired import Paired

DEFAULT_FACTOR = 1.15
DEFAULT_TIERS = ("pr",)
# asv records each side once: the verdict on a timed row is the alternation's, so more
# rounds would buy only time (docs/explanation/comparison.md, "What it costs").
FIRST_PASS_ROUNDS = 1


def with_default_selection(asv_args: list[str], repo: Path) -> list[str]:
    """``asv_args`` with the gate's default ``--bench`` (the pr tier's rows) when the caller
    chose none."""
    if bench_selection(asv_args):
        return list(asv_args)
    return [*asv_args, "--bench", tier_selection(repo, DEFAULT_TIERS)[0]]


def is_timed(row: Row) -> bool:
    """A row the alternation measures: a time or a track (not a count, not memory)."""
    method = row.benchmark.rsplit(".", 1)[-1]
    return method.startswith(("time_", "track_")) and not is_count(row.unit)


@dataclass(frozen=True)
class Judged:
    """One timed row's verdict: its paired measurement (or why there is none), and the
    threshold it was judged at (None: not judged here)."""

    row: Row
    outcome: Outcome
    threshold: float | None

    @property
    def paired(self) -> Paired | None:
        return self.outcome.paired

    @property
    def slower(self) -> bool:
        return bool(self.paired and self.threshold and self.paired.slower(self.threshold))

    @property
    def faster(self) -> bool:
        return bool(self.paired and self.threshold and self.paired.faster(self.threshold))


@dataclass
class Verdict:
    """What the gate found: its status, the first pass's rows measured at both commits,
    the judged timed rows, and the rows not measured at both (what each side recorded)."""

    status: Status
    rows: list[Row] = field(default_factory=list)
    judged: list[Judged] = field(default_factory=list)
    unmatched: list[Unmatched] = field(default_factory=list)

    @property
    def nothing_compared(self) -> bool:
        """No row measured at both commits, and none lost or failed to say why."""
        lost = any(u.gone or u.failed for u in self.unmatched)
        return self.status == Status.BENCHMARK_FAILED and not self.rows and not lost

    @property
    def gone(self) -> list[Unmatched]:
        """Measured at the base, not at the head."""
        return [u for u in self.unmatched if u.gone]

    @property
    def new(self) -> list[Unmatched]:
        return [u for u in self.unmatched if u.new]

    @property
    def failed_at_both(self) -> list[Unmatched]:
        """Measured at neither commit, and failed at one of them."""
        return [u for u in self.unmatched if u.failed and not (u.gone or u.new)]

    @property
    def not_judged(self) -> list[Judged]:
        return [j for j in self.judged if j.paired and j.threshold is None]

    @property
    def not_measured(self) -> list[Judged]:
        return [j for j in self.judged if j.paired is None]


class Gate:
    """One base/head comparison on one asv machine and one host's floors."""

    # The rows this gate measures where it chose some of a benchmark's rows (asv keeps the
    # others in the result file, run at neither commit); None: every row recorded.
    measured: frozenset[str] | None = None
    # Rounds every timed row is measured in, where the gate measures few rows deeply (its
    # floors scaled to that depth: tools/_lib/measure/host_floors.Floors.threshold_at);
    # None: the alternation's own rounds.
    depth: int | None = None

    def __init__(
        self, repo: Path, base: str, head: str, factor: float, machine: str, floors: Floors
    ):
        self.repo, self.factor, self.machine, self.floors = repo, factor, machine, floors
        self.base, self.head = resolve_commit(base, repo), resolve_commit(head, repo)

    def first_pass(self, *asv_args: str, rounds: int = FIRST_PASS_ROUNDS) -> int:
        """asv continuous's exit status: 0 or 1 measured (its 1 ignores rates' direction
        and the floors), 2 a benchmark failed, anything else asv failed. More than one
        round a side are interleaved, as asv's own comparison is run."""
        interleaved = ["--interleave-rounds"] if rounds > 1 else []
        done = asv(
            "continuous",
            "--split",
            *interleaved,
            "--factor",
            str(self.factor),
            "--machine",
            self.machine,
            "-a",
            f"rounds={rounds}",
            *asv_args,
            self.base,
            self.head,
            cwd=self.repo,
        )
        return done.returncode

    @property
    def count_factor(self) -> float:
        """The counts' own factor: what a count row without a floor of its own is judged at."""
        return min(COUNT_FACTOR, self.factor)

    @functools.cached_property
    def regressions_thresholds(self) -> dict[str, float]:
        """asv.conf.json's: a count row's floor is among them."""
        return config_thresholds(self.repo)

    def row_factor(self, row: Row) -> float:
        """What a count or memory row is judged at on asv's numbers, never above the
        factor."""
        factor = asv_row_factor(self.regressions_thresholds, row.label, row.unit, self.factor)
        return min(factor, self.factor)

    def recorded(self) -> tuple[dict, dict]:
        """What asv recorded of every row at the base and at the head."""
        env, results = default_release(self.repo).env_name, self.repo / RESULTS_DIR
        return (
            commit_rows(results, self.machine, self.base, env),
            commit_rows(results, self.machine, self.head, env),
        )

    def units(self) -> dict[str, str]:
        return benchmark_units(self.repo / RESULTS_DIR)

    def rows(self) -> tuple[list[Row], list[Unmatched]]:
        """The rows measured at both commits, and the others with what each recorded."""
        rows, unmatched = match_rows(*self.recorded(), self.units())
        if self.measured is None:
            return rows, unmatched
        return (
            [row for row in rows if row.label in self.measured],
            [one for one in unmatched if one.label in self.measured],
        )

    def asv_slower(self, rows: list[Row]) -> list[Row]:
        """The counts and memory rows asv's numbers call slower."""
        return [row for row in rows if not is_timed(row) and row.slower(self.row_factor(row))]

    def alternate(self, thresholds: dict[str, float | None]) -> dict[str, Outcome]:
        """The rows of ``thresholds`` measured again, each by what it will be judged at."""
        return compare_commits(
            self.repo,
            self.base,
            self.head,
            list(thresholds),
            thresholds=thresholds,
            rounds=self.depth,
        )

    def judge(self, rows: list[Row]) -> list[Judged]:
        """Every timed row measured again by alternation and judged at its threshold."""
        thresholds = {
            row.label: self.floors.threshold_at(row.label, self.factor, self.depth)
            for row in rows
            if is_timed(row)
        }
        if not thresholds:
            return []
        outcomes = self.alternate(thresholds)
        return [
            Judged(row, outcomes[row.label], thresholds[row.label])
            for row in rows
            if row.label in thresholds
        ]

    def decide(self, first_pass: int) -> Verdict:
        """The verdict after a first pass that exited ``first_pass``."""
        if first_pass not in (0, 1, 2):
            return Verdict(Status.EXTERNAL_FAILURE)
        rows, unmatched = self.rows()
        judged = self.judge(rows)
        verdict = Verdict(Status.OK, rows, judged, unmatched)
        if first_pass == 2 or verdict.not_measured or verdict.gone or not rows:
            verdict.status = Status.BENCHMARK_FAILED
        elif self.asv_slower(rows) or any(j.slower for j in judged):
            verdict.status = Status.REGRESSED
        return verdict
