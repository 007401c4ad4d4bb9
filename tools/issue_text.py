"""The text of a regression issue, from the triage's record of a confirmed step: what got
slower, by how much, since which commit (hash, subject, author), on which machine, why
(the explanation), where to see it (the graph on the site) and how to reproduce it."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from tools.common import Row, git, row_selection


def _row(record: dict) -> Row:
    return Row(
        record["benchmark"], record["params"], record["unit"], record["before"], record["after"]
    )


def issue_title(record: dict) -> str:
    row = _row(record)
    return f"{row.slowdown:.2f}x slower: {row.label} at {record['guilty'][:8]}"


def graph_link(site_url: str, record: dict) -> str:
    query = urllib.parse.urlencode(
        {"view": "explore", "bench": record["benchmark"], "machine": record["machine"]}
    )
    return f"{site_url.rstrip('/')}/#{query}" if site_url else f"(the site) `#{query}`"


def issue_body(repo: Path, record: dict, site_url: str) -> str:
    row = _row(record)
    guilty, parent = record["guilty"], record["parent"]
    subject, author = git("log", "-1", "--format=%s%x00%an <%ae>", guilty, cwd=repo).split("\0")
    span = git("rev-list", "--count", f"{record['good']}..{record['bad']}", cwd=repo)
    found = (
        f"the history showed a step between `{record['good'][:12]}` and "
        f"`{record['bad'][:12]}` ({span} commits)"
    )
    if record.get("builds"):
        found += f"; `asv find` named the commit after building {record['builds']} commits"
    selection = row_selection(row.label)
    return "\n".join(
        [
            f"**{row.label}** is **{row.slowdown:.2f}x slower** on machine "
            f"`{record['machine']}` since commit {guilty}.",
            "",
            f"- commit: {guilty}",
            f"- subject: {subject}",
            f"- author: {author}",
            "",
            "| | commit | value |",
            "|---|---|---|",
            f"| before | `{parent[:12]}` | {row.shown(row.before)} |",
            f"| after | `{guilty[:12]}` | {row.shown(row.after)} |",
            "",
            f"Found by the nightly triage: {found}. Confirmed: {record['confirmation']}.",
            "",
            f"Graph: {graph_link(site_url, record)}",
            "",
            "### Why",
            "",
            record["explanation"],
            "",
            "### Reproduce",
            "",
            "```bash",
            f".venv/bin/python -m tools.pr_gate {parent[:12]} {guilty[:12]} "
            f'-- --bench "{selection}"',
            "```",
        ]
    )


def resolution(record: dict) -> str:
    if record.get("state") != "resolved":
        return ""
    row = Row(
        record["benchmark"], record["params"], record["unit"], record["before"], record["latest"]
    )
    return (
        f"Back within its threshold at commit {record['resolved_at']}: "
        f"{row.shown(row.after)} against {row.shown(row.before)} before the regression "
        f"({row.slowdown:.2f}x). Closed by the nightly triage."
    )
