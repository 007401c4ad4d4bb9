"""The gate's verdict as data: one ``RowVerdict`` per row (what was compared, how it was
measured, the read and its interval, the threshold, one enumerated ``Judgement``) inside
the ``GateReport``; what the gate's summary and the pull-request comment are both built
from. It is written by the pull request's own workflow and read by the job that comments
as the bot, so reading it back checks every field against its schema: a number is a
finite number, a label a benchmark's label, an enum one of its values, text short and on
one line (standard library only: the comment job installs nothing)."""

from __future__ import annotations

import enum
import math
import re
from dataclasses import asdict, dataclass, fields

VERSION = 2
# A benchmark's label as asv names its row: ``module.Class.method(params)``.
LABEL = re.compile(r"[A-Za-z_][\w.]*(\([^\n\r]*\))?")
COMMIT = re.compile(r"[0-9a-f]{40}")
MACHINE = re.compile(r"[A-Za-z0-9][\w.-]*")
UNIT = re.compile(r"[\w/% ]{0,40}")
MAX_TEXT = 500  # a ref name, a host, a reason
MAX_ROWS = 100_000
MAX_REASONS = 10_000


class Judgement(enum.StrEnum):
    """What became of one row: every reader switches on this, never on text."""

    SLOWER = "slower"
    FASTER = "faster"
    UNCHANGED = "unchanged"
    NOT_JUDGED = "not judged here"  # its floor on this host is above the factor
    NOT_MEASURED = "not measured again"  # a side died, hung, skipped, gave no measurement
    GONE = "measured at the base, not at the head"
    NEW = "new at the head"
    FAILED = "failed at the base or the head, measured at neither"
    UNAVAILABLE = "n/a"  # a side cannot run it (a release lacks the op): never a change
    # The gate and the releases comparison fail on NOT_MEASURED, GONE and FAILED
    # (docs/explanation/continuous.md, "No verdict without a measurement").


FAILS = (Judgement.NOT_MEASURED, Judgement.GONE, Judgement.FAILED)
MOVED = (Judgement.SLOWER, Judgement.FASTER)


@dataclass(frozen=True)
class RowVerdict:
    """One row's verdict: ``method`` "paired" (measured again by alternation: ``before``
    and ``after`` its sides' medians, ``pairs`` in ``rounds`` process pairs) or "asv"
    (asv's first pass: counts and memory); ``threshold`` what it was judged at (None: not
    judged), ``floor`` the host's floor where it has one; ``recorded`` asv's own values at
    both commits; ``why`` what each side recorded, or why it was not measured."""

    label: str
    unit: str
    judgement: Judgement
    method: str
    before: float | None = None
    after: float | None = None
    slowdown: float | None = None
    interval: tuple[float, float] | None = None
    threshold: float | None = None
    floor: float | None = None
    pairs: int = 0
    rounds: int = 0
    recorded: tuple[float, float] | None = None
    why: str = ""


@dataclass(frozen=True)
class Because:
    """One thing the change touched (a file, or ``path: function``), why it reaches what it
    does, and the rows it selected (``every``: every row; none: no row runs it)."""

    change: str
    why: str
    every: bool
    rows: tuple[str, ...]


@dataclass(frozen=True)
class RowSelection:
    """Which rows the gate measured out of how many it could have, where the map of what
    each row reaches came from, and why (tools/_lib/reach/selection.py)."""

    candidates: int
    selected: int
    source: str
    because: tuple[Because, ...]

    @property
    def nothing(self) -> bool:
        """No row selected: the change reaches none (a comparison of every row asked for
        that had none to compare is a failure, said as such)."""
        return self.selected == 0 and not any(one.every for one in self.because)


@dataclass(frozen=True)
class GateReport:
    """The gate's verdict on a base and a head: its status, where and how it measured,
    every row's verdict, and how many rows neither commit could run here."""

    status: int
    nothing_compared: bool
    base: str
    head: str
    base_name: str
    head_name: str
    machine: str
    host: str
    floors_runs: int
    factor: float
    count_factor: float
    unavailable: int
    rows: tuple[RowVerdict, ...]
    selection: RowSelection
    depth: int | None = None  # rounds every timed row was measured in; None: as needed

    def where(self, *judgements: Judgement) -> list[RowVerdict]:
        return [row for row in self.rows if row.judgement in judgements]

    def to_json(self) -> dict:
        data = asdict(self)
        data["rows"] = [asdict(row) for row in self.rows]
        return {"version": VERSION, **data}

    @classmethod
    def from_json(cls, data) -> GateReport:
        """A report as ``to_json`` wrote it; ValueError, in one line, for anything else."""
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"not a version {VERSION} gate verdict")
        top = {f.name for f in fields(cls)}
        if set(data) != top | {"version"}:
            raise ValueError(f"its fields are {sorted(set(data) - {'version'})}, not {sorted(top)}")
        rows = listed(data, "rows", MAX_ROWS, "rows is not a list of rows")
        return cls(
            status=choice(data, "status", (0, 1, 2, 3)),
            nothing_compared=flag(data, "nothing_compared"),
            base=matching(data, "base", COMMIT),
            head=matching(data, "head", COMMIT),
            base_name=text(data, "base_name"),
            head_name=text(data, "head_name"),
            machine=matching(data, "machine", MACHINE),
            host=text(data, "host"),
            floors_runs=count(data, "floors_runs"),
            factor=number(data, "factor", above=1.0),
            count_factor=number(data, "count_factor", above=1.0),
            unavailable=count(data, "unavailable"),
            rows=tuple(row_from_json(row) for row in rows),
            selection=selection_from_json(data["selection"]),
            depth=None if data["depth"] is None else count(data, "depth"),
        )


def selection_from_json(data) -> RowSelection:
    fields_of(data, RowSelection, "selection is not the gate's row selection")
    because = listed(data, "because", MAX_REASONS, "selection.because is not a list of reasons")
    return RowSelection(
        candidates=count(data, "candidates"),
        selected=count(data, "selected"),
        source=text(data, "source"),
        because=tuple(because_from_json(one) for one in because),
    )


def because_from_json(data) -> Because:
    fields_of(data, Because, f"a reason whose fields are not a reason's: {str(data)[:80]!r}")
    rows = listed(data, "rows", MAX_ROWS, "a reason's rows are not a list of labels")
    return Because(
        change=text(data, "change"),
        why=text(data, "why"),
        every=flag(data, "every"),
        rows=tuple(matching({"row": row}, "row", LABEL) for row in rows),
    )


def row_from_json(data) -> RowVerdict:
    fields_of(data, RowVerdict, f"a row whose fields are not a row verdict's: {str(data)[:80]!r}")
    label = matching(data, "label", LABEL)
    try:
        judgement = Judgement(data["judgement"])
    except ValueError:
        raise ValueError(f"{label}: unknown judgement {str(data['judgement'])[:40]!r}") from None
    return RowVerdict(
        label=label,
        unit=matching(data, "unit", UNIT),
        judgement=judgement,
        method=choice(data, "method", ("paired", "asv")),
        before=number(data, "before", optional=True),
        after=number(data, "after", optional=True),
        slowdown=number(data, "slowdown", optional=True),
        interval=interval(data, "interval"),
        threshold=number(data, "threshold", optional=True, above=1.0),
        floor=number(data, "floor", optional=True, above=1.0),
        pairs=count(data, "pairs"),
        rounds=count(data, "rounds"),
        recorded=interval(data, "recorded"),
        why=text(data, "why"),
    )


# ---------------------------------------------------------------- the schema's fields


def fields_of(data, kind: type, said: str) -> None:
    """``data`` is an object with exactly the fields of the dataclass ``kind``; else
    ValueError ``said``."""
    if not isinstance(data, dict) or set(data) != {f.name for f in fields(kind)}:
        raise ValueError(said)


def listed(data: dict, name: str, most: int, said: str) -> list:
    """The list ``data[name]`` of at most ``most`` items; else ValueError ``said``."""
    value = data[name]
    if not isinstance(value, list) or len(value) > most:
        raise ValueError(said)
    return value


def is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def number(data: dict, name: str, optional: bool = False, above: float = 0.0) -> float | None:
    """A finite number above ``above`` (every value here is a time, rate, share, count,
    bytes or a ratio of two); None only where ``optional``."""
    value = data[name]
    if value is None and optional:
        return None
    if not is_number(value) or value <= above:
        raise ValueError(f"{name} is {str(value)[:40]!r}, not a finite number above {above:g}")
    return float(value)


def interval(data: dict, name: str) -> tuple[float, float] | None:
    value = data[name]
    if value is None:
        return None
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError(f"{name} is not two numbers")
    low, high = (number({name: part}, name) for part in value)
    return low, high


def count(data: dict, name: str) -> int:
    value = data[name]
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} is {str(value)[:40]!r}, not a count")
    return value


def flag(data: dict, name: str) -> bool:
    if not isinstance(data[name], bool):
        raise ValueError(f"{name} is not true or false")
    return data[name]


def choice(data: dict, name: str, allowed: tuple):
    value = data[name]
    if isinstance(value, bool) or value not in allowed or type(value) is not type(allowed[0]):
        raise ValueError(f"{name} is {str(value)[:40]!r}, not one of {allowed}")
    return value


def text(data: dict, name: str) -> str:
    """Outside text (a ref name, a host, a reason): shown as a code span, so it needs no
    more than to be a string of a sane length."""
    value = data[name]
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise ValueError(f"{name} is not text of at most {MAX_TEXT} characters")
    return value


def matching(data: dict, name: str, pattern: re.Pattern) -> str:
    value = data[name]
    if not isinstance(value, str) or len(value) > MAX_TEXT or not pattern.fullmatch(value):
        raise ValueError(f"{name} {str(value)[:80]!r} is not one")
    return value
