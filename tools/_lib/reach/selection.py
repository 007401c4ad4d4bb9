"""The rows a change can reach: what it touched (tools/_lib/reach/changes.py) against what
each row ran at the base (tools/_lib/reach/reach_map.py), each selected row with the
change that selected it (docs/explanation/continuous.md, "What a change can reach").

- a changed function selects the rows that ran it; one the library runs at import acts
  like module-level code;
- module-level code selects the rows that imported the module;
- anything that shapes every row selects every row; a file no row runs selects none;
- an instruction count is selected with its timed twin, whose call it counts;
- a row the map does not hold is selected, with that reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tools._lib.reach.changes import Reach, Touched
from tools._lib.reach.reach_map import ReachMap

NOT_MAPPED = "not in the map of what the rows reach at the base"


@dataclass(frozen=True)
class Chosen:
    """One thing the change touched, and the rows it selects (none, for a file no row
    runs), with why."""

    touched: Touched
    rows: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class Selection:
    """The rows to measure out of ``candidates``, in their order, and why each thing the
    change touched selected what it did; ``unmapped``: rows selected because the map lacks
    them; ``source``: where the map came from."""

    candidates: tuple[str, ...]
    rows: tuple[str, ...]
    chosen: tuple[Chosen, ...]
    unmapped: tuple[str, ...] = ()
    source: str = ""

    @property
    def everything(self) -> bool:
        return set(self.rows) == set(self.candidates)

    @property
    def not_selected(self) -> int:
        return len(self.candidates) - len(self.rows)


def needs_map(touched: Sequence[Touched]) -> bool:
    """Whether the change touches the library's code and nothing that selects every row."""
    kinds = {t.reach for t in touched}
    return Reach.EVERY_ROW not in kinds and bool(kinds & {Reach.FUNCTION, Reach.MODULE})


def everything(candidates: Sequence[str], why: str) -> Selection:
    """Every candidate, for one reason (``--all``)."""
    every = tuple(candidates)
    return Selection(every, every, (Chosen(Touched("--all", Reach.EVERY_ROW, why), every, why),))


def chosen_by(
    one: Touched, candidates: Sequence[str], traced: Mapping[str, str], reach: ReachMap | None
) -> Chosen:
    """The rows one touched thing selects, and why."""
    if one.reach == Reach.NO_ROW:
        return Chosen(one, (), one.why)
    if one.reach == Reach.EVERY_ROW:
        return Chosen(one, tuple(candidates), one.why)
    if reach is None:  # something else selects every row: no map was needed
        return Chosen(one, (), "measured with every row")

    def rows_where(ran) -> tuple[str, ...]:
        return tuple(
            row for row in candidates if traced[row] in reach.rows and ran(reach.rows[traced[row]])
        )

    if one.reach == Reach.MODULE or (one.module, one.function) in reach.at_import:
        why = one.why if one.reach == Reach.MODULE else "it runs when the library is imported"
        rows = rows_where(lambda ran: one.module in ran.modules)
        return Chosen(one, rows, f"{why}: the rows that imported it")
    rows = rows_where(lambda ran: (one.module, one.function) in ran.functions)
    return Chosen(one, rows, f"{one.why}: the rows that ran it")


def select(
    touched: Sequence[Touched],
    candidates: Sequence[str],
    twins: Mapping[str, str],
    reach: ReachMap | None,
    source: str = "",
) -> Selection:
    """The candidates the ``touched`` can reach; ``twins``: an instruction count's row and
    the timed row whose call it counts; ``reach``: the base's map (needed where
    :func:`needs_map`)."""
    traced = {row: twins.get(row, row) for row in candidates}
    chosen = tuple(chosen_by(one, candidates, traced, reach) for one in touched)
    unmapped: tuple[str, ...] = ()
    if reach is not None and needs_map(touched):
        unmapped = tuple(row for row in candidates if traced[row] not in reach.rows)
    picked = {row for c in chosen for row in c.rows} | set(unmapped)
    selected = tuple(row for row in candidates if row in picked)
    return Selection(tuple(candidates), selected, chosen, unmapped, source)


def bench_regex(rows: Sequence[str]) -> str:
    """asv's ``--bench`` for exactly ``rows``."""
    return "^(" + "|".join(re.escape(row) for row in rows) + ")$"


def candidates_of(discovered: Sequence[str], regexes: Sequence[str]) -> list[str]:
    """The rows (``name(params)``, or the name of a benchmark without params) asv's
    ``--bench`` regexes choose, as asv chooses: those one of them searches."""
    compiled = [re.compile(regex) for regex in regexes]
    return [row for row in discovered if any(c.search(row) for c in compiled)]
