"""Which rows the PR gate measures: the rows of its selection (the pr tier, or asv's
``--bench``) that the change from the base to the head can reach, or all of them under
``--all`` (tools/_lib/reach/selection.py; docs/explanation/continuous.md, "What a change
can reach")."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tools._lib.asv.matrix import default_release
from tools._lib.asv.run import ensure_environment, split_bench_selection
from tools._lib.asv.suites import discovered, tier_rows
from tools._lib.measure.host_floors import DEPTHS_CHECKED
from tools._lib.reach import selection as chosen
from tools._lib.reach.changes import touched
from tools._lib.reach.reach_map import reach_at, traced_rows
from tools._lib.verdict.gate import DEFAULT_TIERS
from tools._lib.verdict.row import Because, RowSelection

# A reason's rows are listed in the report up to this many; beyond, their number.
LISTED_ROWS = 200
# The time the gate's alternation may take where it measures the timed rows deeply: a
# selection small enough to fit is measured in a depth the floors were checked at
# (DEPTHS_CHECKED) and judged at its floors there; a larger one as the whole tier is.
DEPTH_BUDGET_MINUTES = 3.0
# One round of one row: ROW_SECONDS of blocks and both sides' setup (the pr tier's rows:
# 3 to 5 s a round on a 2-core AMD EPYC, the gate's "remeasure: round" lines).
ROUND_SECONDS = 4.5


def candidate_rows(repo: Path, asv_args: list[str]) -> list[str]:
    """The rows the gate would measure whatever the change: asv's ``--bench`` choice, or
    the pr tier's rows."""
    regexes, _ = split_bench_selection(asv_args)
    if not regexes:
        return tier_rows(repo, DEFAULT_TIERS)
    every = [row for _, rows in discovered(repo).values() for row in rows]
    return chosen.candidates_of(every, regexes)


def gate_selection(
    repo: Path, base: str, head: str, asv_args: list[str], every: bool, reach_file: Path | None
) -> chosen.Selection:
    """The rows to measure and why (``every``: all the candidates, ``--all``)."""
    candidates = candidate_rows(repo, asv_args)
    if every:
        return chosen.everything(candidates, "--all: every row of the selection")
    what = touched(repo, base, head)
    if not chosen.needs_map(what):
        return chosen.select(what, candidates, {}, None)
    twins, traced = traced_rows(repo, candidates)
    python = ensure_environment(repo, [default_release(repo)])[0].python
    mapped = reach_at(repo, base, traced, python, reach_file)
    return chosen.select(what, candidates, twins, mapped.reach, mapped.source)


def is_timed_label(label: str) -> bool:
    """A row the alternation measures, by its label: a time or a track, not a count."""
    method = label.split("(", 1)[0].rsplit(".", 1)[-1]
    return method.startswith(("time_", "track_")) and method != "track_instructions"


def depth_for(rows: Sequence[str], budget_minutes: float) -> int | None:
    """The rounds every timed row of ``rows`` gets within the budget: the deepest checked
    depth that fits; None (the alternation's own rounds) where none does."""
    timed = sum(is_timed_label(row) for row in rows)
    fitting = [
        depth
        for depth in DEPTHS_CHECKED
        if timed and timed * depth * ROUND_SECONDS <= budget_minutes * 60
    ]
    return max(fitting, default=None)


def measured_args(asv_args: list[str], selection: chosen.Selection) -> list[str]:
    """asv's arguments for exactly the selected rows."""
    _, rest = split_bench_selection(asv_args)
    return [*rest, "--bench", chosen.bench_regex(selection.rows)]


def row_selection(selection: chosen.Selection) -> RowSelection:
    """The selection as the gate's report carries it."""
    return RowSelection(
        candidates=len(selection.candidates),
        selected=len(selection.rows),
        source=selection.source,
        because=tuple(
            Because(
                change=one.touched.name,
                why=one.why,
                every=bool(one.rows) and len(one.rows) == len(selection.candidates),
                rows=one.rows[:LISTED_ROWS] if len(one.rows) != len(selection.candidates) else (),
            )
            for one in selection.chosen
        )
        + (
            (Because("(rows the map lacks)", chosen.NOT_MAPPED, False, selection.unmapped),)
            if selection.unmapped
            else ()
        ),
    )
