"""The text of a regression issue, from the triage's record of a confirmed step: what got
slower, by how much, since which commit (hash, subject, author), on which machine, why
(the explanation), where to see it (the graph on the site) and how to reproduce it. What
came from outside (a subject, an author, a row's name) is shown as data (tools/_lib/base/text.py).
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from tools._lib.base.git import commit_count, subject_and_author
from tools._lib.base.text import code
from tools._lib.measure.comparison import row_selection, shown, slowdown
from tools._lib.triage.record import Regression
from tools._lib.verdict.issue_body import IssueText, body_of


def issue_title(record: Regression) -> str:
    return f"{record.slowdown:.2f}x slower: {record.step.label} at {record.guilty[:8]}"


def graph_link(site_url: str, record: Regression) -> str:
    query = urllib.parse.urlencode(
        {"view": "explore", "bench": record.step.benchmark, "machine": record.step.machine}
    )
    return f"{site_url.rstrip('/')}/#{query}" if site_url else f"(the site) `#{query}`"


def found_by(repo: Path, record: Regression) -> str:
    step = record.step
    span = commit_count(step.good, step.bad, repo)
    found = (
        f"the history showed a step between `{step.good[:12]}` and `{step.bad[:12]}` "
        f"({span} commits)"
    )
    if record.builds:
        found += f"; `asv find` named the commit after building {record.builds} commits"
    return found


def issue_body(repo: Path, record: Regression, site_url: str) -> str:
    step, unit = record.step, record.step.unit
    subject, author = subject_and_author(record.guilty, repo)
    return body_of(
        IssueText(
            lead=f"{code(step.label)} is **{record.slowdown:.2f}x slower** on machine "
            f"`{step.machine}` since commit {record.guilty}.",
            facts=(
                f"commit: {record.guilty}",
                f"subject: {code(subject)}",
                f"author: {code(author)}",
            ),
            table=(
                ("", "commit", "value"),
                ("before", f"`{record.parent[:12]}`", shown(record.before, unit)),
                ("after", f"`{record.guilty[:12]}`", shown(record.after, unit)),
            ),
            measured=f"Found by the nightly triage: {found_by(repo, record)}. "
            f"Confirmed: {record.confirmation}.",
            links=(f"Graph: {graph_link(site_url, record)}",),
            why=record.explanation,
            reproduce=f".venv/bin/python -m tools.pr_gate {record.parent[:12]} "
            f'{record.guilty[:12]} -- --bench "{row_selection(step.label)}"',
        )
    )


def resolution(record: Regression) -> str:
    if record.state != "resolved":
        return ""
    unit, now = record.step.unit, record.latest
    ratio = slowdown(record.before, now, unit)
    return (
        f"Back within its threshold at commit {record.resolved_at}: {shown(now, unit)} against "
        f"{shown(record.before, unit)} before the regression ({ratio:.2f}x). Closed by the "
        "nightly triage."
    )
