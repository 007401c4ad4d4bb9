"""Text from outside the project's control (commit subjects and authors, benchmark names,
profiler operators, C++ symbols) put into Markdown as data: an inline code span that shows
it as written, so it can carry no markup, HTML, comment marker, mention or link into an
issue or a comment."""

from __future__ import annotations

import re


def code(text: str) -> str:
    """``text`` on one line as an inline code span, fenced by more backticks than it
    holds in a row (padded where it starts or ends with one, as CommonMark asks)."""
    return fenced(" ".join(str(text).split()) or " ")


def cell(text: str) -> str:
    """:func:`code` for a table cell: a ``|`` escaped, or GitHub would end the cell there
    (it reads the escape back inside the span; outside a table it would show it)."""
    return fenced(" ".join(str(text).split()).replace("|", "\\|") or " ")


def fenced(flat: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat[0] == "`" or flat[-1] == "`" else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
