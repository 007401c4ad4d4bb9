"""What a comparison of two torch releases says, three ways: Markdown (the step summary and
the docs: the builds side by side, what moved with why, every row), JSON (the site), and a
filing report (one issue per timed row confirmed slower, tools/file_issues.py, closed when
a later comparison against the same old release finds it no longer slower). Text from
outside (row names, operators, symbols) is shown as data (tools/_lib/base/text.py)."""

from __future__ import annotations

from collections import Counter

from tools._lib.base.text import cell, code
from tools._lib.measure.comparison import row_selection, shown
from tools._lib.verdict.issue_body import IssueText, body_of
from tools._lib.verdict.issue_report import Issue, IssueReport
from tools._lib.verdict.release_comparison import Compared, ReleaseComparison, ReleaseVerdict
from tools._lib.verdict.row import Judgement

# The build facts worth a line of the header (benchmarks/_harness/manifest.py's names).
BUILD_FACTS = (
    "torch",
    "build compiler",
    "build mkl",
    "build onednn",
    "build openmp",
    "cpu capability",
    "cuda",
    "python",
)
ISSUE_KIND = "release"


def slowdown_text(row: Compared) -> str:
    if row.slowdown is None:
        return ""
    if row.interval is None:
        return f"{row.slowdown:.3f}x"
    low, high = row.interval
    return f"{row.slowdown:.3f}x ({low:.3f}–{high:.3f})"


def value_text(value: float | None, unit: str) -> str:
    return shown(value, unit) if value is not None else ""


def peak_text(row: Compared) -> str:
    return f"{row.peak[0]:.1f} → {row.peak[1]:.1f}" if row.peak else ""


def twin_text(row: Compared) -> str:
    return f"{row.twin_slowdown:.3f}x" if row.twin_slowdown is not None else ""


def builds(facts: dict[str, dict[str, str]], names: tuple[str, str]) -> str:
    """The two releases' builds side by side, the facts that differ marked."""
    lines = [f"| | {names[0]} | {names[1]} |", "|---|---|---|"]
    for fact in BUILD_FACTS:
        old, new = (facts.get(name, {}).get(fact, "not probed") for name in names)
        mark = " (differs)" if old != new else ""
        lines.append(f"| {fact}{mark} | {cell(old)} | {cell(new)} |")
    return "\n".join(lines)


def table(rows: list[Compared], names: tuple[str, str]) -> str:
    lines = [
        f"| Change | {names[0]} | {names[1]} | Slowdown (99% interval) | Judged at "
        "| Count twin | % of peak | Benchmark (Parameter) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        at = f"{row.threshold:.2f}" if row.threshold else ""
        lines.append(
            f"| {row.change} | {value_text(row.old, row.unit)} | {value_text(row.new, row.unit)} "
            f"| {slowdown_text(row)} | {at} | {twin_text(row)} | {peak_text(row)} "
            f"| {cell(row.label)} |"
        )
    return "\n".join(lines)


# How the headline counts each judgement.
TALLIED = {Judgement.FAILED: "failed", Judgement.UNAVAILABLE: "n/a"}


def tally(verdict: ReleaseVerdict) -> str:
    counted = Counter(TALLIED.get(row.judgement, str(row.judgement)) for row in verdict.rows)
    return ", ".join(f"{number} {kind}" for kind, number in sorted(counted.items()))


def markdown(
    comparison: ReleaseComparison,
    verdict: ReleaseVerdict,
    facts: dict[str, dict[str, str]],
    host: tuple[str, str],
    command: str,
) -> str:
    """The whole comparison as Markdown."""
    names = comparison.names
    floors = comparison.floors
    source = (
        f"floors from {floors.runs} no-op comparisons on this host"
        if floors.runs
        else f"no floors for this host yet: every timed row judged at {comparison.factor}"
    )
    moved = [row for row in verdict.rows if row.moved]
    sections = [
        f"## {names[1]} against {names[0]}: {tally(verdict)}",
        f"Commit `{comparison.commit[:12]}`, machine `{comparison.machine}`, host "
        f"{code(host[0])} (L3 {host[1]}). Timed rows measured again by alternation of the "
        f"two releases' interpreters over the same library, {source}; counts at 1.01 or "
        f"their row's floor (asv.conf.json), peak memory at {comparison.factor}. A "
        f"slowdown above 1 is {names[1]} slower; for GFLOP/s, GB/s and % of peak a fall is "
        "the slowdown. n/a: a release skipped the row (an op or variant it lacks), never a "
        "regression or a recovery.",
        f"Rerun: `{command}`",
        "### The builds\n\n" + builds(facts, names),
    ]
    if moved:
        sections.append("### What moved\n\n" + table(moved, names))
        for row in moved:
            if row.explanation:
                sections.append(f"#### {code(row.label)}: {row.change}\n\n{row.explanation}")
    else:
        sections.append("### What moved\n\nNo row moved beyond its threshold.")
    sections.append("### Every row\n\n" + table(verdict.rows, names))
    return "\n\n".join(sections) + "\n"


def as_json(
    comparison: ReleaseComparison,
    verdict: ReleaseVerdict,
    facts: dict[str, dict[str, str]],
    host: tuple[str, str],
    measured: str,
) -> dict:
    """The comparison as the site reads it."""
    return {
        "version": 1,
        "machine": comparison.machine,
        "commit": comparison.commit,
        "measured": measured,
        "host": {"cpu": host[0], "l3": host[1]},
        "releases": [
            {"torch": release.torch, "env_name": release.env_name, "facts": facts.get(name, {})}
            for release, name in zip(comparison.releases, comparison.names, strict=True)
        ],
        "rows": [
            {
                "label": row.label,
                "unit": row.unit,
                "change": row.change,
                "judgement": str(row.judgement),
                "old": row.old,
                "new": row.new,
                "slowdown": row.slowdown,
                "interval": list(row.interval) if row.interval else None,
                "threshold": row.threshold,
                "twin": row.twin,
                "twin_slowdown": row.twin_slowdown,
                "peak": list(row.peak) if row.peak else None,
                "explanation": row.explanation,
            }
            for row in verdict.rows
        ],
    }


def issue_key(comparison: ReleaseComparison, row: Compared) -> str:
    return f"release|{comparison.machine}|{row.label}|{comparison.releases[0].torch}"


def issue_body(comparison: ReleaseComparison, row: Compared, host: tuple[str, str]) -> str:
    old, new = comparison.names
    low, high = row.interval or (row.slowdown, row.slowdown)
    return body_of(
        IssueText(
            lead=f"{code(row.label)} is **{row.slowdown:.2f}x slower** under {new} than under "
            f"{old} on machine `{comparison.machine}` (host {code(host[0])}, L3 {host[1]}), at "
            f"commit {comparison.commit}.",
            table=(
                ("", old, new),
                ("value", value_text(row.old, row.unit), value_text(row.new, row.unit)),
            ),
            measured="Measured by alternation of the two releases' interpreters over the same "
            f"library: {slowdown_text(row)}, judged at {row.threshold:.2f}; 99% interval "
            f"{low:.3f}–{high:.3f}. Count twin: {twin_text(row) or 'none'}.",
            why=row.explanation or "No explanation was made for this row.",
            reproduce=f".venv/bin/python -m tools.releases {comparison.releases[0].torch} "
            f"{comparison.releases[1].torch} --commit {comparison.commit[:12]} "
            f'-- --bench "{row_selection(row.label)}"',
        )
    )


def filing_report(
    comparison: ReleaseComparison, verdict: ReleaseVerdict, host: tuple[str, str]
) -> IssueReport:
    """One issue per timed row measured under both releases: open when confirmed slower,
    resolved otherwise (which closes an issue filed for it against the same old release)."""
    _, new = comparison.names
    judged = (Judgement.SLOWER, Judgement.FASTER, Judgement.UNCHANGED)
    issues = []
    for row in verdict.rows:
        if row.judgement not in judged or row.interval is None:
            continue  # counts and memory are in the table; issues are for judged timed rows
        key = issue_key(comparison, row)
        if row.judgement == Judgement.SLOWER:
            title = f"{row.slowdown:.2f}x slower under {new}: {row.label}"
            issues.append(Issue(key, "open", title, issue_body(comparison, row, host)))
        else:
            resolution = (
                f"Not slower under {new} at commit {comparison.commit[:12]}: "
                f"{slowdown_text(row)}. Closed by the releases run."
            )
            issues.append(Issue(key, "resolved", f"{row.label} under {new}", "", resolution))
    return IssueReport(ISSUE_KIND, comparison.machine, tuple(issues))
