"""The PR gate's verdict as its report (tools/_lib/verdict/row.py): every row's verdict, one
judgement each, from the gate's first pass, its alternation and what each commit recorded.
The step summary is that report as Markdown (tools/_lib/verdict/markdown.py), and so is the
pull-request comment, which the comment job builds again from the report's JSON."""

from __future__ import annotations

from collections.abc import Callable

from tools._lib.measure.comparison import Unmatched
from tools._lib.verdict.gate import Gate, Verdict, is_timed
from tools._lib.verdict.judge import of_asv_row, of_judged, of_missing
from tools._lib.verdict.markdown import markdown
from tools._lib.verdict.row import (
    MAX_TEXT,
    Because,
    GateReport,
    Judgement,
    RowSelection,
    RowVerdict,
)


def unmatched_verdict(unmatched: Unmatched) -> RowVerdict | None:
    """A row not measured at both commits; None for one neither could run here."""
    if unmatched.gone:
        judgement = Judgement.GONE
    elif unmatched.new:
        judgement = Judgement.NEW
    elif unmatched.failed:
        judgement = Judgement.FAILED
    else:
        return None
    why = f"{unmatched.before} at the base, {unmatched.after} at the head"
    return of_missing(unmatched.label, judgement, why)


def gate_report(
    gate: Gate, verdict: Verdict, names: tuple[str, str], selection: RowSelection
) -> GateReport:
    judged = {one.row.label: one for one in verdict.judged}
    rows = [
        of_judged(judged[row.label], gate.floors.by_row.get(row.label))
        if row.label in judged
        else of_asv_row(row, gate.row_factor(row))
        for row in verdict.rows
        if row.label in judged or not is_timed(row)
    ]
    others = [unmatched_verdict(one) for one in verdict.unmatched]
    return GateReport(
        status=int(verdict.status),
        nothing_compared=verdict.nothing_compared,
        base=gate.base,
        head=gate.head,
        base_name=names[0][:MAX_TEXT],
        head_name=names[1][:MAX_TEXT],
        machine=gate.machine,
        host=gate.floors.host[:MAX_TEXT],
        floors_runs=gate.floors.runs,
        factor=gate.factor,
        count_factor=gate.count_factor,
        unavailable=others.count(None),
        rows=tuple(rows + [one for one in others if one is not None]),
        selection=selection,
        depth=gate.depth,
    )


def every_row_asked(rows: int) -> RowSelection:
    """The selection of a comparison that measures every row it was given (the studies'
    no-op comparisons, a gate told ``--all``)."""
    why = "every row asked for is measured"
    return RowSelection(rows, rows, "", (Because("every row", why, True, ()),))


def summary(gate: Gate, verdict: Verdict, names: tuple[str, str], why: Callable[[], str]) -> str:
    """The whole summary of a comparison of every row asked for; ``why`` gives the grown
    functions of counts that rose."""
    grown = why() if verdict.status == 1 else ""
    selection = every_row_asked(len(verdict.rows) + len(verdict.unmatched))
    return markdown(gate_report(gate, verdict, names, selection), grown=grown)
