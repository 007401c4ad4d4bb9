"""The PR gate's summary as Markdown: the verdict, what changed and by how much, the rows not
judged on this host (with their floors), not measured again (with why) or not measured at
both commits (with what each recorded), why the counts grew, and every row asv recorded.
It goes to the step summary and the PR comment."""

from __future__ import annotations

from collections.abc import Callable

from tools._lib.comparison import Row, Unmatched, is_count, shown
from tools._lib.floors import Floors
from tools._lib.gate import Gate, Judged, Verdict, is_timed
from tools._lib.text import cell, code


def asv_table(rows: list[tuple[Row, str]]) -> str:
    """``(row, change)`` pairs as a table of asv's values."""
    lines = [
        "| Change | Before | After | Ratio | Benchmark (Parameter) |",
        "|--------|--------|-------|-------|-----------------------|",
    ]
    lines += [
        f"| {change} | {shown(row.before, row.unit)} | {shown(row.after, row.unit)} "
        f"| {row.ratio:.3f} | {cell(row.label)} |"
        for row, change in rows
    ]
    return "\n".join(lines)


def paired_table(judged: list[tuple[Judged, str]]) -> str:
    """Timed rows as the alternation measured them: slowdown, interval, threshold."""
    lines = [
        "| Change | Before | After | Slowdown (99% interval) | Judged at | Benchmark (Parameter) |",
        "|--------|--------|-------|-------------------------|-----------|-----------------------|",
    ]
    for one, change in judged:
        paired, unit = one.paired, one.row.unit
        low, high = paired.slowdown_interval
        at = f"{one.threshold:.2f}" if one.threshold else "not judged"
        lines.append(
            f"| {change} | {shown(paired.before_value, unit)} | {shown(paired.after_value, unit)} "
            f"| {paired.slowdown:.3f} ({low:.3f}–{high:.3f}) | {at} | {cell(one.row.label)} |"
        )
    return "\n".join(lines)


def changes(gate: Gate, verdict: Verdict) -> str:
    """The rows that changed beyond their threshold, both kinds; empty when none."""
    moved = [
        (j, "slower" if j.slower else "faster") for j in verdict.judged if j.slower or j.faster
    ]
    counted = [
        (row, "slower" if row in gate.asv_slower(verdict.rows) else "faster")
        for row in verdict.rows
        if not is_timed(row)
        and row.changed(gate.count_factor if is_count(row.unit) else gate.factor)
    ]
    parts = [paired_table(moved)] if moved else []
    parts += [asv_table(counted)] if counted else []
    return "\n\n".join(parts)


def exceptions(verdict: Verdict, floors: Floors, factor: float) -> list[str]:
    """The rows not judged here (with their floors) and those not measured again (with
    why)."""
    sections = []
    if verdict.not_judged:
        listed = "\n".join(
            f"- {code(j.row.label)}: floor {floors.by_row[j.row.label]:.2f} on this host; "
            f"read {j.paired.slowdown:.3f}x"
            for j in verdict.not_judged
        )
        sections.append(
            f"### Not judged here (host {code(floors.host)}: floor above the factor "
            f"{factor})\n\n{listed}"
        )
    if verdict.not_measured:
        listed = "\n".join(f"- {code(j.row.label)}: {j.outcome.why}" for j in verdict.not_measured)
        sections.append(f"### Not measured again\n\n{listed}")
    return sections + unmatched_sections(verdict)


def recorded_at(unmatched: Unmatched) -> str:
    return (
        f"- {code(unmatched.label)}: {unmatched.before} at the base, {unmatched.after} at the head"
    )


def unmatched_sections(verdict: Verdict) -> list[str]:
    """The rows not measured at both commits: gone at the head (they fail the gate), new
    at it, failed at both; rows skipped at both are the machine's n/a, counted."""
    sections = []
    for title, found in (
        ("Measured at the base, not at the head", verdict.gone),
        ("New at the head", verdict.new),
        ("Failed at the base or the head, measured at neither", verdict.failed_at_both),
    ):
        if found:
            sections.append(f"### {title}\n\n" + "\n".join(recorded_at(u) for u in found))
    listed = len(verdict.gone) + len(verdict.new) + len(verdict.failed_at_both)
    if len(verdict.unmatched) > listed:
        sections.append(
            f"{len(verdict.unmatched) - listed} rows were measured at neither commit "
            "(skipped or not run at both: not available on this machine)."
        )
    return sections


def summary(gate: Gate, verdict: Verdict, names: tuple[str, str], why: Callable[[], str]) -> str:
    """The whole summary; ``why`` gives the grown functions of counts that rose."""
    base_name, head_name = names
    floors = gate.floors
    source = (
        f"floors from {floors.runs} no-op comparisons on this host"
        if floors.runs
        else f"no floors for this host yet: every timed row judged at {gate.factor}"
    )
    sections = [
        f"## Benchmarks: {verdict.headline}",
        f"`{gate.base[:8]}` ({code(base_name)}) → `{gate.head[:8]}` ({code(head_name)}), "
        f"machine `{gate.machine}`, host `{floors.host}`. Timed rows: measured again by "
        f"alternation, {source}; counts at {gate.count_factor}, memory at {gate.factor}. "
        "For GFLOP/s, GB/s and % of peak a fall is the slowdown.",
    ]
    if verdict.rows:
        sections.append(changes(gate, verdict) or "No benchmark changed beyond its threshold.")
    sections += exceptions(verdict, floors, gate.factor)
    if verdict.rows:
        grown = why() if verdict.status == 1 else ""
        if grown:
            sections.append(f"### Why the instruction counts grew\n\n{grown}")
        every = asv_table([(row, "") for row in verdict.rows])
        sections.append(
            f"<details><summary>Every row, as asv's first pass recorded it</summary>\n\n"
            f"{every}\n\n</details>"
        )
    return "\n\n".join(sections) + "\n"
