"""Two torch releases compared at one commit, row by row, as the gate compares two commits:
asv records the tier under both releases' environments (their history, the counts, the
% of peak), every timed row is measured again by alternation with the two releases'
interpreters taking turns on one core over the same library, and judged at its floor on
this host; counts and peak memory are judged on asv's numbers. A row that one release skips
(an op or variant it lacks) is n/a, never a regression or a recovery.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from tools._lib.asv.matrix import Release
from tools._lib.asv.private import config_thresholds
from tools._lib.asv.results import RESULTS_DIR, commit_rows
from tools._lib.asv.run import asv, bench_selection
from tools._lib.asv.suites import count_twins, discovered, tier_rows, tier_selection
from tools._lib.base.cli import Status
from tools._lib.base.git import commit_library
from tools._lib.measure.alternation import Outcome, measure_rows
from tools._lib.measure.comparison import (
    FAILED,
    GAVE,
    MEASURED,
    Row,
    asv_row_factor,
    compare,
    row_selection,
    state_of,
)
from tools._lib.measure.host_floors import Floors
from tools._lib.measure.workers import Side
from tools._lib.verdict.gate import Judged, is_timed
from tools._lib.verdict.judge import of_asv_row, of_judged, of_missing
from tools._lib.verdict.row import FAILS, MOVED, Judgement, RowVerdict

PEAK_METHOD = "track_percent_of_peak"


@dataclass(frozen=True)
class Compared:
    """One row under both releases: its verdict (before is the old release, after the new),
    and what the table shows beside it."""

    verdict: RowVerdict
    twin: str = ""  # the count twin's row
    twin_slowdown: float | None = None
    peak: tuple[float, float] | None = None  # % of peak under each release
    explanation: str = ""

    @property
    def label(self) -> str:
        return self.verdict.label

    @property
    def unit(self) -> str:
        return self.verdict.unit

    @property
    def judgement(self) -> Judgement:
        return self.verdict.judgement

    @property
    def old(self) -> float | None:
        return self.verdict.before

    @property
    def new(self) -> float | None:
        return self.verdict.after

    @property
    def slowdown(self) -> float | None:
        return self.verdict.slowdown

    @property
    def interval(self) -> tuple[float, float] | None:
        return self.verdict.interval

    @property
    def threshold(self) -> float | None:
        return self.verdict.threshold

    @property
    def moved(self) -> bool:
        return self.judgement in MOVED

    @property
    def change(self) -> str:
        """What the table says of it: the judgement, or why there is none."""
        if self.judgement == Judgement.NOT_MEASURED:
            return f"{self.judgement}: {self.verdict.why}"
        return self.verdict.why or str(self.judgement)


@dataclass
class ReleaseVerdict:
    status: Status
    rows: list[Compared] = field(default_factory=list)


def peak_row(label: str) -> str:
    """The % of peak row of a timed row's class and params."""
    name, _, params = label.partition("(")
    return f"{name.rsplit('.', 1)[0]}.{PEAK_METHOD}({params}"


class ReleaseComparison:
    """One commit under two releases, on one asv machine and one host's floors."""

    def __init__(
        self,
        repo: Path,
        commit: str,
        releases: tuple[Release, Release],
        machine: str,
        factor: float,
        floors: Floors,
    ):
        self.repo, self.commit, self.releases = repo, commit, releases
        self.machine, self.factor, self.floors = machine, factor, floors
        self.regexes: list[str] = []  # the rows measured: asv's --bench regexes

    @functools.cached_property
    def regressions_thresholds(self) -> dict[str, float]:
        """asv.conf.json's: a count row's floor is among them."""
        return config_thresholds(self.repo)

    @property
    def names(self) -> tuple[str, str]:
        return tuple(f"torch {release.torch}" for release in self.releases)

    def selection(self, tiers: list[str], asv_args: list[str]) -> list[str]:
        """asv's ``--bench`` options: the caller's, or the tiers' rows and the % of peak
        rows of their timed rows (which the tables show beside them)."""
        if bench_selection(asv_args):
            return []
        rows = set(discovered_rows(self.repo))
        peaks = [peak_row(label) for label in tier_rows(self.repo, tiers) if ".time_" in label]
        chosen = [tier_selection(self.repo, tiers)[0]]
        chosen += [row_selection(peak) for peak in peaks if peak in rows]
        return [arg for regex in chosen for arg in ("--bench", regex)]

    def measure(self, tiers: list[str], asv_args: list[str]) -> int:
        """asv run of the selection at the commit under both releases; its exit status
        (0, or 2 when a benchmark failed: the rest is recorded)."""
        chosen = [*asv_args, *self.selection(tiers, asv_args)]
        self.regexes = bench_selection(chosen)
        done = asv(
            "run",
            *(arg for release in self.releases for arg in ("-E", release.env_name)),
            "--machine",
            self.machine,
            *chosen,
            f"{self.commit}^!",
            cwd=self.repo,
        )
        return done.returncode

    def selected(self, label: str) -> bool:
        """Whether this run measured the row, as asv matches ``--bench`` (a result file may
        hold rows an earlier run measured under one release only)."""
        return not self.regexes or any(re.search(regex, label) for regex in self.regexes)

    def recorded(self) -> tuple[list[Row], dict[str, tuple[Judgement, str]]]:
        """The rows asv measured under both releases, and why each other row of the run
        has no comparison (n/a under a release that skipped it, or failed there)."""
        old, new = self.releases
        results = self.repo / RESULTS_DIR
        sides = [commit_rows(results, self.machine, self.commit, r.env_name) for r in self.releases]
        rows = compare(
            results, self.machine, (self.commit, old.env_name), (self.commit, new.env_name)
        )
        rows = [row for row in rows if self.selected(row.label)]
        compared = {(row.benchmark, row.params) for row in rows}
        missing: dict[str, tuple[Judgement, str]] = {}
        for key in sorted((set(sides[0]) | set(sides[1])) - compared):
            if not self.selected(f"{key[0]}{key[1]}"):
                continue
            states = [state_of(side.get(key)) for side in sides]
            missing[f"{key[0]}{key[1]}"] = (
                missing_judgement(states),
                unavailable(states, self.names),
            )
        return rows, missing

    def alternate(self, thresholds: dict[str, float | None]) -> dict[str, Outcome]:
        """The timed rows by alternation, each by what it will be judged at: each
        release's interpreter over the commit's library."""
        with commit_library(self.repo, self.commit) as library:
            sides = tuple(
                Side(name, release.python, library)
                for name, release in zip(self.names, self.releases, strict=True)
            )
            return measure_rows(self.repo, sides, list(thresholds), thresholds)

    def decide(self, measured: int) -> ReleaseVerdict:
        """The verdict after asv's run exited ``measured``: every row compared, the % of
        peak rows shown beside their timed rows."""
        if measured not in (0, 2):
            return ReleaseVerdict(Status.EXTERNAL_FAILURE)
        rows, missing = self.recorded()
        by_label = {row.label: row for row in rows}
        chosen = [row for row in rows if PEAK_METHOD not in row.benchmark]
        timed = [row for row in chosen if is_timed(row)]
        thresholds = {row.label: self.floors.threshold(row.label, self.factor) for row in timed}
        outcomes = self.alternate(thresholds) if timed else {}
        twins = count_twins(self.repo)
        compared = []
        for row in chosen:
            if row in timed:
                one = of_judged(Judged(row, outcomes[row.label], thresholds[row.label]))
            else:
                factor = asv_row_factor(
                    self.regressions_thresholds, row.label, row.unit, self.factor
                )
                one = of_asv_row(row, factor)
            twin = by_label.get(twins.get(row.label, ""))
            peak = by_label.get(peak_row(row.label))
            compared.append(
                Compared(
                    one,
                    twin=twin.label if twin else "",
                    twin_slowdown=twin.slowdown if twin else None,
                    peak=(peak.before, peak.after) if peak else None,
                )
            )
        compared += [
            Compared(of_missing(label, *missed))
            for label, missed in missing.items()
            if PEAK_METHOD not in label
        ]
        compared.sort(key=lambda one: one.label)
        return ReleaseVerdict(status_of(measured, compared), compared)


def discovered_rows(repo: Path) -> list[str]:
    return [row for _, rows in discovered(repo).values() for row in rows]


def missing_judgement(states: list[str]) -> Judgement:
    """What a row no release pair measured is: failed where a release failed it or gave a
    value that is no measurement, else not available (skipped or absent)."""
    if any(state == FAILED or state.startswith(GAVE) for state in states):
        return Judgement.FAILED
    return Judgement.UNAVAILABLE


def unavailable(states: list[str], names: tuple[str, str]) -> str:
    """Why a row has no comparison, in the table's words: failed under a release, no
    measurement under one (a value of 0 or less, NaN or inf), or n/a (skipped or absent)."""
    pairs = list(zip(names, states, strict=True))
    failed = [name for name, state in pairs if state == FAILED]
    if failed:
        return f"failed under {' and '.join(failed)}"
    invalid = [f"{name}: it {state}" for name, state in pairs if state.startswith(GAVE)]
    if invalid:
        return f"no measurement under {' and '.join(invalid)}"
    missing = [name for name, state in pairs if state != MEASURED]
    return f"n/a under {' and '.join(missing)}"


def status_of(measured: int, rows: list[Compared]) -> Status:
    if measured == 2 or any(r.judgement in FAILS for r in rows):
        return Status.BENCHMARK_FAILED
    if any(r.judgement == Judgement.SLOWER for r in rows):
        return Status.REGRESSED
    return Status.OK
