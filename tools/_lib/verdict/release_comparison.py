"""Two torch releases compared at one commit, row by row, as the gate compares two commits:
asv records the tier under both releases' environments (their history, the counts, the
% of peak), every timed row is measured again by alternation with the two releases'
interpreters taking turns on one core over the same library, and judged at its floor on
this host; counts and peak memory are judged on asv's numbers. A row that one release skips
(an op or variant it lacks) is n/a, never a regression or a recovery.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tools._lib.asv_run import asv, bench_selection
from tools._lib.cli import Status
from tools._lib.comparison import (
    COUNT_FACTOR,
    FAILED,
    GAVE,
    MEASURED,
    Row,
    compare,
    is_count,
    row_selection,
    state_of,
)
from tools._lib.floors import Floors
from tools._lib.gate import Judged, is_timed
from tools._lib.releases import Release
from tools._lib.remeasure import Outcome, commit_library, measure_again
from tools._lib.results import RESULTS_DIR, commit_rows
from tools._lib.suites import count_twins, discovered, tier_rows, tier_selection
from tools._lib.workers import Side

PEAK_METHOD = "track_percent_of_peak"


@dataclass(frozen=True)
class Compared:
    """One row under both releases: its verdict (``change``), and what the table shows
    beside it."""

    label: str
    unit: str
    change: str  # slower, faster, unchanged, not judged here, n/a ..., failed ..., not measured
    old: float | None = None  # asv's values under each release
    new: float | None = None
    slowdown: float | None = None  # the alternation's for a timed row, asv's otherwise
    interval: tuple[float, float] | None = None
    threshold: float | None = None
    twin: str = ""  # the count twin's row
    twin_slowdown: float | None = None
    peak: tuple[float, float] | None = None  # % of peak under each release
    explanation: str = ""

    @property
    def moved(self) -> bool:
        return self.change in ("slower", "faster")


@dataclass
class ReleaseVerdict:
    status: Status
    rows: list[Compared] = field(default_factory=list)

    def where(self, change: str) -> list[Compared]:
        return [row for row in self.rows if row.change == change]


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

    def recorded(self) -> tuple[list[Row], dict[str, str]]:
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
        missing: dict[str, str] = {}
        for key in sorted((set(sides[0]) | set(sides[1])) - compared):
            if not self.selected(f"{key[0]}{key[1]}"):
                continue
            states = [state_of(side.get(key)) for side in sides]
            missing[f"{key[0]}{key[1]}"] = unavailable(states, self.names)
        return rows, missing

    def measure_again(self, thresholds: dict[str, float | None]) -> dict[str, Outcome]:
        """The timed rows by alternation, each by what it will be judged at: each
        release's interpreter over the commit's library."""
        with commit_library(self.repo, self.commit) as library:
            sides = tuple(
                Side(name, release.python, library)
                for name, release in zip(self.names, self.releases, strict=True)
            )
            return measure_again(self.repo, sides, list(thresholds), thresholds)

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
        outcomes = self.measure_again(thresholds) if timed else {}
        twins = count_twins(self.repo)
        compared = []
        for row in chosen:
            if row in timed:
                one = timed_verdict(Judged(row, outcomes[row.label], thresholds[row.label]))
            else:
                one = asv_verdict(row, COUNT_FACTOR if is_count(row.unit) else self.factor)
            twin = by_label.get(twins.get(row.label, ""))
            peak = by_label.get(peak_row(row.label))
            compared.append(
                Compared(
                    **one,
                    twin=twin.label if twin else "",
                    twin_slowdown=twin.slowdown if twin else None,
                    peak=(peak.before, peak.after) if peak else None,
                )
            )
        compared += [
            Compared(label, "", why) for label, why in missing.items() if PEAK_METHOD not in label
        ]
        compared.sort(key=lambda one: one.label)
        return ReleaseVerdict(status_of(measured, compared), compared)


def discovered_rows(repo: Path) -> list[str]:
    return [row for _, rows in discovered(repo).values() for row in rows]


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


def timed_verdict(judged: Judged) -> dict:
    row, paired = judged.row, judged.paired
    if paired is None:
        return {
            "label": row.label,
            "unit": row.unit,
            "change": f"not measured: {judged.outcome.why}",
        }
    change = (
        "not judged here"
        if judged.threshold is None
        else "slower"
        if judged.slower
        else "faster"
        if judged.faster
        else "unchanged"
    )
    return {
        "label": row.label,
        "unit": row.unit,
        "change": change,
        "old": paired.before_value,
        "new": paired.after_value,
        "slowdown": paired.slowdown,
        "interval": paired.slowdown_interval,
        "threshold": judged.threshold,
    }


def asv_verdict(row: Row, factor: float) -> dict:
    change = "slower" if row.slower(factor) else "faster" if row.changed(factor) else "unchanged"
    return {
        "label": row.label,
        "unit": row.unit,
        "change": change,
        "old": row.before,
        "new": row.after,
        "slowdown": row.slowdown,
        "threshold": factor,
    }


def status_of(measured: int, rows: list[Compared]) -> Status:
    failed = ("failed", "not measured", "no measurement")
    if measured == 2 or any(r.change.startswith(failed) for r in rows):
        return Status.BENCHMARK_FAILED
    if any(r.change == "slower" for r in rows):
        return Status.REGRESSED
    return Status.OK
