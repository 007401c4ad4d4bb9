"""The PR gate's verdict as its report (tools/_lib/verdict.py): every row's verdict, one
judgement each, from the gate's first pass, its alternation and what each commit recorded.
The step summary is that report as Markdown (tools/_lib/verdict_text.py), and so is the
pull-request comment, which the comment job builds again from the report's JSON."""

from __future__ import annotations

from collections.abc import Callable

from tools._lib.comparison import Row, Unmatched, is_count
from tools._lib.gate import Gate, Judged, Verdict, is_timed
from tools._lib.verdict import MAX_TEXT, GateReport, Judgement, RowVerdict
from tools._lib.verdict_text import markdown


def changed(slower: bool, moved: bool) -> Judgement:
    """Slower, else faster where it moved at all, else unchanged."""
    return Judgement.SLOWER if slower else Judgement.FASTER if moved else Judgement.UNCHANGED


def timed_verdict(judged: Judged, floor: float | None) -> RowVerdict:
    """A timed row as the alternation measured it, or why it could not."""
    row, paired = judged.row, judged.paired
    recorded = (row.before, row.after)
    if paired is None:
        why = judged.outcome.why[:MAX_TEXT]
        return RowVerdict(
            row.label, row.unit, Judgement.NOT_MEASURED, "paired", recorded=recorded, why=why
        )
    judgement = (
        Judgement.NOT_JUDGED if judged.threshold is None else changed(judged.slower, judged.faster)
    )
    return RowVerdict(
        row.label,
        row.unit,
        judgement,
        "paired",
        before=paired.before_value,
        after=paired.after_value,
        slowdown=paired.slowdown,
        interval=paired.slowdown_interval,
        threshold=judged.threshold,
        floor=floor,
        pairs=len(paired.before),
        rounds=len(paired.rounds) or 1,
        recorded=recorded,
    )


def asv_verdict(row: Row, factor: float) -> RowVerdict:
    """A count or a memory row, judged on asv's numbers at ``factor``."""
    return RowVerdict(
        row.label,
        row.unit,
        changed(row.slower(factor), row.changed(factor)),
        "asv",
        before=row.before,
        after=row.after,
        slowdown=row.slowdown,
        threshold=factor,
        recorded=(row.before, row.after),
    )


UNMATCHED = ((Unmatched.gone, Judgement.GONE), (Unmatched.new, Judgement.NEW))


def unmatched_verdict(unmatched: Unmatched) -> RowVerdict | None:
    """A row not measured at both commits; None for one neither could run here."""
    judgement = next((j for test, j in UNMATCHED if test.fget(unmatched)), None)
    if judgement is None and unmatched.failed:
        judgement = Judgement.FAILED
    if judgement is None:
        return None
    why = f"{unmatched.before} at the base, {unmatched.after} at the head"[:MAX_TEXT]
    return RowVerdict(unmatched.label, "", judgement, "asv", why=why)


def gate_report(gate: Gate, verdict: Verdict, names: tuple[str, str]) -> GateReport:
    judged = {one.row.label: one for one in verdict.judged}
    rows = [
        timed_verdict(judged[row.label], gate.floors.by_row.get(row.label))
        if row.label in judged
        else asv_verdict(row, gate.count_factor if is_count(row.unit) else gate.factor)
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
    )


def summary(gate: Gate, verdict: Verdict, names: tuple[str, str], why: Callable[[], str]) -> str:
    """The whole summary; ``why`` gives the grown functions of counts that rose."""
    grown = why() if verdict.status == 1 else ""
    return markdown(gate_report(gate, verdict, names), grown=grown)
