"""The gate's verdict (tools/_lib/verdict/row.py) as Markdown: the step summary and the
pull-request comment are this one text. Its words are this module's; every string the
report carries (labels, ref names, the host, reasons) goes in as a code span
(tools/_lib/base/text.py) and every number is formatted here, so a report from a pull request's
own workflow can carry no markup, mention or link into the bot's comment (standard
library only: the comment job installs nothing)."""

from __future__ import annotations

from tools._lib.base.text import cell, code
from tools._lib.verdict.row import MOVED, GateReport, Judgement, RowVerdict

VERDICTS = {
    0: "no benchmark got slower than its threshold",
    1: "performance regressed: a benchmark is slower than its threshold allows",
    2: "a benchmark failed: it raised, timed out or could not be measured (see the log)",
    3: "asv failed before giving a verdict (see the log)",
}
NOTHING_COMPARED = "no benchmark was measured at both commits"
NOTHING_REACHED = "nothing to measure: no benchmark row can reach what this change touched"
# A reason's rows shown in its table cell; the rest are in the details below it.
ROWS_IN_CELL = 3
# asv's own short units, so a value reads as asv compare shows it.
SCALES = {
    "seconds": ((1.0, "s"), (1e-3, "ms"), (1e-6, "μs"), (1e-9, "ns")),
    "bytes": ((1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")),
}


def headline(report: GateReport) -> str:
    if report.selection.nothing:
        return NOTHING_REACHED
    return NOTHING_COMPARED if report.nothing_compared else VERDICTS[report.status]


def reached(report: GateReport) -> str:
    """What the change touched, what each thing selected and why, and how many rows were
    measured of those the gate could have measured."""
    chosen = report.selection
    if chosen.nothing:
        lead = f"Nothing measured: none of the {chosen.candidates} rows can reach these changes."
    else:
        lead = f"Measured {chosen.selected} of {chosen.candidates} rows"
        lead += f" (what each row reaches: {code(chosen.source)})." if chosen.source else "."
    lines = [
        "### What this change can reach",
        "",
        lead,
        "",
        "| Changed | Why | Rows selected |",
        "|---------|-----|---------------|",
    ]
    for one in chosen.because:
        if one.every:
            rows = "every row"
        elif not one.rows:
            rows = "none"
        else:
            shown = ", ".join(cell(row) for row in one.rows[:ROWS_IN_CELL])
            more = len(one.rows) - ROWS_IN_CELL
            rows = f"{len(one.rows)}: {shown}" + (f" and {more} more" if more > 0 else "")
        lines.append(f"| {cell(one.change)} | {cell(one.why)} | {rows} |")
    listed = [one for one in chosen.because if len(one.rows) > ROWS_IN_CELL and not one.every]
    text = "\n".join(lines)
    if listed:
        text += "\n\n" + details(
            "The rows each change selected",
            "\n\n".join(
                f"{code(one.change)}:\n\n" + "\n".join(f"- {code(row)}" for row in one.rows)
                for one in listed
            ),
        )
    return text


def human(value: float | None, unit: str) -> str:
    """A value with its unit, three significant digits."""
    if value is None:
        return "n/a"
    for scale, suffix in SCALES.get(unit, ()):
        if value >= scale or scale == SCALES[unit][-1][0]:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.4g} {unit}".rstrip()


def paired_table(rows: list[RowVerdict]) -> str:
    """Timed rows as the alternation measured them: slowdown, interval, threshold, depth."""
    lines = [
        "| Change | Before | After | Slowdown (99% interval) | Judged at | Pairs (rounds) "
        "| Benchmark (Parameter) |",
        "|--------|--------|-------|-------------------------|-----------|----------------"
        "|-----------------------|",
    ]
    for row in rows:
        low, high = row.interval or (row.slowdown, row.slowdown)
        at = f"{row.threshold:.2f}" if row.threshold else "not judged"
        if row.threshold and row.floor and row.floor != row.threshold:
            at += f" (floor {row.floor:.2f}, scaled to its depth)"
        lines.append(
            f"| {row.judgement} | {human(row.before, row.unit)} | {human(row.after, row.unit)} "
            f"| {row.slowdown:.3f} ({low:.3f}–{high:.3f}) | {at} | {row.pairs} ({row.rounds}) "
            f"| {cell(row.label)} |"
        )
    return "\n".join(lines)


def asv_table(rows: list[tuple[RowVerdict, tuple[float, float]]], changes: bool) -> str:
    """Rows as asv's first pass recorded them: ``(row, (before, after))``."""
    lines = [
        "| Change | Before | After | Ratio | Benchmark (Parameter) |",
        "|--------|--------|-------|-------|-----------------------|",
    ]
    lines += [
        f"| {row.judgement if changes else ''} | {human(before, row.unit)} "
        f"| {human(after, row.unit)} | {after / before:.3f} | {cell(row.label)} |"
        for row, (before, after) in rows
    ]
    return "\n".join(lines)


def changes(report: GateReport) -> str:
    """The rows that changed beyond their threshold, both kinds; empty when none."""
    moved = report.where(*MOVED)
    paired = [row for row in moved if row.method == "paired"]
    counted = [(row, (row.before, row.after)) for row in moved if row.method == "asv"]
    parts = [paired_table(paired)] if paired else []
    parts += [asv_table(counted, changes=True)] if counted else []
    return "\n\n".join(parts)


def listed(title: str, rows: list[RowVerdict], say) -> list[str]:
    if not rows:
        return []
    return [f"### {title}\n\n" + "\n".join(f"- {code(row.label)}: {say(row)}" for row in rows)]


def exceptions(report: GateReport) -> list[str]:
    """The rows without a plain verdict: not judged here (with their floors), not measured
    again (with why), not measured at both commits (with what each recorded)."""
    sections = listed(
        f"Not judged here (host {code(report.host)}: floor above the factor {report.factor})",
        report.where(Judgement.NOT_JUDGED),
        lambda row: f"floor {row.floor:.2f} on this host; read {row.slowdown:.3f}x",
    )
    sections += listed(
        "Not measured again", report.where(Judgement.NOT_MEASURED), lambda row: code(row.why)
    )
    for judgement in (Judgement.GONE, Judgement.NEW, Judgement.FAILED):
        title = judgement.value[0].upper() + judgement.value[1:]
        sections += listed(title, report.where(judgement), lambda row: code(row.why))
    if report.unavailable:
        sections.append(
            f"{report.unavailable} rows were measured at neither commit (skipped or not run "
            "at both: not available on this machine)."
        )
    return sections


def facts(report: GateReport) -> str:
    source = (
        f"floors from {report.floors_runs} no-op comparisons on this host"
        if report.floors_runs
        else f"no floors for this host yet: every timed row judged at {report.factor}"
    )
    if report.depth:
        source += (
            f"; each in {report.depth} rounds (process pairs), judged at its floor at that depth"
        )
    return (
        f"`{report.base[:8]}` ({code(report.base_name)}) → `{report.head[:8]}` "
        f"({code(report.head_name)}), machine {code(report.machine)}, host "
        f"{code(report.host)}. Timed rows: measured again by alternation, {source}; counts "
        f"at {report.count_factor} or their row's floor, memory at {report.factor}. For "
        "GFLOP/s, GB/s and % of peak a fall is the slowdown."
    )


def markdown(report: GateReport, grown: str = "", provenance: str = "") -> str:
    """The whole text; ``grown``: the functions whose counts grew (the gate's own run has
    them); ``provenance``: what measured it (the comment says)."""
    sections = [f"## Benchmarks: {headline(report)}", facts(report)]
    sections += [provenance] if provenance else []
    sections.append(reached(report))
    compared = [row for row in report.rows if row.recorded is not None]
    if compared:
        sections.append(changes(report) or "No benchmark changed beyond its threshold.")
    sections += exceptions(report)
    if grown:
        sections.append(f"### Why the instruction counts grew\n\n{grown}")
    paired = [row for row in report.rows if row.method == "paired" and row.slowdown]
    if paired:
        sections.append(
            details("Every timed row, as the alternation measured it", paired_table(paired))
        )
    if compared:
        every = asv_table([(row, row.recorded) for row in compared], changes=False)
        sections.append(details("Every row, as asv's first pass recorded it", every))
    return "\n\n".join(sections) + "\n"


def details(summary: str, table: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{table}\n\n</details>"
