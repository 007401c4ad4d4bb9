"""One row's verdict (tools/_lib/verdict/row.py) from what measured it, the same way for the
gate, the releases comparison and the triage: a paired measurement judged at its threshold,
asv's own row (a count, peak memory) judged on asv's rule, and a row one side could not
give. "Slower" is tools/_lib/measure/comparison.py's and the paired estimate's; here it
becomes the one enumerated judgement every reader switches on."""

from __future__ import annotations

from tools._lib.measure.comparison import Row
from tools._lib.measure.paired import Paired
from tools._lib.verdict.row import MAX_TEXT, Judgement, RowVerdict


def changed(slower: bool, moved: bool) -> Judgement:
    """Slower, else faster where it moved at all, else unchanged."""
    return Judgement.SLOWER if slower else Judgement.FASTER if moved else Judgement.UNCHANGED


def of_paired(
    label: str,
    unit: str,
    paired: Paired | None,
    threshold: float | None,
    why: str = "",
    floor: float | None = None,
    recorded: tuple[float, float] | None = None,
) -> RowVerdict:
    """A row measured again by alternation, judged at ``threshold`` (None: not judged
    here); ``paired`` None: not measured again, for the reason ``why``."""
    if paired is None:
        return RowVerdict(
            label, unit, Judgement.NOT_MEASURED, "paired", recorded=recorded, why=why[:MAX_TEXT]
        )
    judgement = (
        Judgement.NOT_JUDGED
        if threshold is None
        else changed(paired.slower(threshold), paired.faster(threshold))
    )
    return RowVerdict(
        label,
        unit,
        judgement,
        "paired",
        before=paired.before_value,
        after=paired.after_value,
        slowdown=paired.slowdown,
        interval=paired.slowdown_interval,
        threshold=threshold,
        floor=floor,
        pairs=len(paired.before),
        rounds=len(paired.rounds) or 1,
        recorded=recorded,
    )


def of_asv_row(row: Row, factor: float) -> RowVerdict:
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


def of_missing(label: str, judgement: Judgement, why: str, unit: str = "") -> RowVerdict:
    """A row a side could not give: gone, new, failed or not available, and why."""
    return RowVerdict(label, unit, judgement, "asv", why=why[:MAX_TEXT])


def of_judged(judged, floor: float | None = None) -> RowVerdict:
    """A timed row the gate or the releases comparison measured again
    (tools/_lib/verdict/gate.Judged), with asv's own values of it beside."""
    row = judged.row
    return of_paired(
        row.label,
        row.unit,
        judged.paired,
        judged.threshold,
        judged.outcome.why,
        floor,
        (row.before, row.after),
    )


def of_measurement(
    label: str, unit: str, measured: Paired | Row | None, threshold: float
) -> RowVerdict:
    """A row measured again for the triage or bisect: by alternation (a ``Paired``), or
    asv's row of a count (deterministic: no second measurement), or nothing (None)."""
    if isinstance(measured, Row):
        return of_asv_row(measured, threshold)
    why = "" if measured is not None else "the row gave no result at one of its commits"
    return of_paired(label, unit, measured, threshold, why)
