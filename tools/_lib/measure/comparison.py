"""What "slower" means, in one place: the ratio of two values of a row read the right way
round for its unit, and asv's rule for two commits' recorded results (``Row``); the paired
estimate of two sides measured by alternation builds on it (tools/_lib/measure/paired.py).

asv reads every value as lower-is-better; for rates (GFLOP/s, GB/s) and shares of the
machine's peak (% of peak) a fall is the slowdown. Instruction counts are deterministic and
are judged at their own factor.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from benchmarks._names import COUNT_UNIT
from tools._lib.asv.private import is_result_better, regressions_threshold
from tools._lib.asv.results import benchmark_units, commit_rows

# Ten no-op comparisons of a count (two builds of the same code, each counted in its own
# process) differed by at most 0.05%; a rise of more than 1% is a change in the code run,
# or in what the counting process holds before it forks (its layout), which moves a few
# rows further: those are judged at their own floors, asv.conf.json's entries for them
# (count_factor; docs/explanation/measurement.md, "Instruction counts").
COUNT_FACTOR = 1.01


def is_measurement(value) -> bool:
    """Whether a verdict may rest on ``value``: a finite number above 0. Every unit here is
    a time, a rate, a share, a count or bytes, so 0, a negative, NaN or inf is a fault of
    whatever gave it, never a reading (NaN or inf would read "not slower", 0 would divide
    by zero, a negative would read faster)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def check_measurements(label: str, *values: float) -> None:
    """ValueError, naming the row and the value, unless every value is a measurement."""
    wrong = next((value for value in values if not is_measurement(value)), None)
    if wrong is not None or not values:
        raise ValueError(f"{label}: {wrong!r} is not a finite positive number")


def higher_is_better(unit: str) -> bool:
    """Rates (GFLOP/s, GB/s) and shares of the machine's peak ("% of peak")."""
    return unit.endswith("/s") or unit.startswith("%")


def slowdown(before: float, after: float, unit: str) -> float:
    """How many times worse ``after`` is than ``before``: a time's rise, a rate's fall."""
    return before / after if higher_is_better(unit) else after / before


def is_count(unit: str) -> bool:
    return unit == COUNT_UNIT


def count_factor(thresholds: dict[str, float], label: str) -> float:
    """The factor the count row ``label`` is called slower beyond: one plus its threshold
    among asv.conf.json's ``regressions_thresholds`` (the counts' own, or the row's floor
    where a process's layout moves its count further), never below ``COUNT_FACTOR``."""
    return max(COUNT_FACTOR, 1 + regressions_threshold(thresholds, label))


def asv_row_factor(thresholds: dict[str, float], label: str, unit: str, factor: float) -> float:
    """What a count or a peak-memory row is judged at on asv's numbers: a count at its
    row's :func:`count_factor`, memory at ``factor``."""
    return count_factor(thresholds, label) if is_count(unit) else factor


def shown(value: float, unit: str) -> str:
    """A value as asv shows it, with its unit where asv's own text has none."""
    from asv.util import human_value

    text = human_value(value, unit)
    return text if unit in ("seconds", "bytes", "") else f"{text} {unit}"


def row_label(benchmark: str, params: str) -> str:
    """``name(params)``: how asv names a row, and what ``--bench`` matches."""
    return f"{benchmark}{params}"


def row_selection(label: str) -> str:
    """asv's ``--bench`` regex for exactly the row ``name(params)``: its regex characters
    escaped, and nothing else (it stays readable, and quotes well in a shell)."""
    return "^" + re.sub(r"([\\.^$*+?()\[\]{}|])", r"\\\1", label) + "$"


@dataclass(frozen=True)
class Row:
    """One row as asv recorded it at two commits: values and, for asv's test, stats and
    samples."""

    benchmark: str
    params: str  # asv's text form, "('cpu', 'float32')"; "" when not parameterized
    unit: str
    before: float
    after: float
    before_stats: tuple = (None, None)
    after_stats: tuple = (None, None)

    def __post_init__(self):
        check_measurements(self.label, self.before, self.after)

    @property
    def label(self) -> str:
        return row_label(self.benchmark, self.params)

    @property
    def ratio(self) -> float:
        return self.after / self.before

    @property
    def slowdown(self) -> float:
        return slowdown(self.before, self.after, self.unit)

    def slower(self, factor: float) -> bool:
        """Worse beyond ``factor`` and significantly so, by asv's rule (the rule of
        ``asv compare`` and ``asv continuous``), turned round for rates."""
        if higher_is_better(self.unit):
            return is_result_better(
                self.after, self.before, self.after_stats, self.before_stats, factor
            )
        return is_result_better(
            self.before, self.after, self.before_stats, self.after_stats, factor
        )

    def changed(self, factor: float) -> bool:
        """Beyond ``factor`` in either direction, significantly."""
        return is_result_better(
            self.before, self.after, self.before_stats, self.after_stats, factor
        ) or is_result_better(self.after, self.before, self.after_stats, self.before_stats, factor)


@dataclass(frozen=True)
class Unmatched:
    """A row asv recorded at either side and did not measure at both: what each side
    recorded (:func:`state_of`)."""

    label: str
    before: str
    after: str

    @property
    def gone(self) -> bool:
        """Measured before and not after: a change that lost a measurement."""
        return self.before == MEASURED and self.after != MEASURED

    @property
    def new(self) -> bool:
        return self.after == MEASURED and self.before != MEASURED

    @property
    def failed(self) -> bool:
        return FAILED in (self.before, self.after)


MEASURED, SKIPPED, FAILED, ABSENT = "measured", "skipped", "failed", "absent"
# A value that is no measurement is recorded as what it gave: "gave 0.0".
GAVE = "gave "


def state_of(recorded: tuple | None) -> str:
    """What asv recorded of a row at one side (``(value, stats, samples)``, or None where
    the side has no such row): measured, skipped (NaN: its setup said it cannot run
    there), failed (None: it raised or timed out), absent (not run), or what it gave where
    that is no measurement ("gave 0.0")."""
    if recorded is None:
        return ABSENT
    value = recorded[0]
    if value is None:
        return FAILED
    if isinstance(value, float) and math.isnan(value):
        return SKIPPED
    return MEASURED if is_measurement(value) else f"{GAVE}{value!r}"


def match_rows(old: dict, new: dict, units: dict[str, str]) -> tuple[list[Row], list[Unmatched]]:
    """Two sides' records (tools/_lib/asv/results.commit_rows) as the rows measured at both
    and the rows that were not, each with what each side recorded."""
    rows, unmatched = [], []
    for name, params in sorted(set(old) | set(new)):
        before, after = old.get((name, params)), new.get((name, params))
        states = state_of(before), state_of(after)
        if states == (MEASURED, MEASURED):
            unit = units.get(name, "")
            rows.append(Row(name, params, unit, before[0], after[0], before[1:], after[1:]))
        else:
            unmatched.append(Unmatched(row_label(name, params), *states))
    return rows, unmatched


def compare(
    results_dir: Path,
    machine: str,
    before: tuple[str, str],
    after: tuple[str, str],
    units: dict[str, str] | None = None,
) -> list[Row]:
    """Every row asv measured on both sides (a finite positive value on each); a side is a
    commit and an environment (two commits under one release, or one commit under two).
    Units come from the benchmarks.json asv writes beside the results, unless given
    (``asv find`` writes none)."""
    units = units if units is not None else benchmark_units(results_dir)
    old = commit_rows(results_dir, machine, *before)
    new = commit_rows(results_dir, machine, *after)
    return match_rows(old, new, units)[0]
