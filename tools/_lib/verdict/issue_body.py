"""The one shape of an issue's body, whoever found the slowdown (the nightly's triage, a
torch release's comparison): what got slower and by how much, the facts of where, the
values before and after, how it was measured, why, and how to reproduce it. Each finder
gives the parts in its own words, already Markdown (outside text as code spans:
tools/_lib/base/text.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IssueText:
    lead: str  # what got slower, by how much, where
    table: tuple[tuple[str, ...], ...]  # its header first: the values before and after
    measured: str  # how it was found and measured again
    why: str  # the explanation, Markdown
    reproduce: str  # a shell command
    facts: tuple[str, ...] = ()  # lines of a list after the lead (commit, subject, author)
    links: tuple[str, ...] = ()  # lines after the measurement (the graph on the site)


def body_of(text: IssueText) -> str:
    header, *rows = text.table
    lines = [text.lead, ""]
    if text.facts:
        lines += [f"- {fact}" for fact in text.facts] + [""]
    lines += [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
        "",
        text.measured,
        "",
    ]
    for link in text.links:
        lines += [link, ""]
    lines += ["### Why", "", text.why, "", "### Reproduce", "", "```bash", text.reproduce, "```"]
    return "\n".join(lines)
