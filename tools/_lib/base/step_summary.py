"""The GitHub Actions step summary: Markdown a workflow run shows on its page."""

from __future__ import annotations

import os


def append_step_summary(markdown: str) -> bool:
    """Append to the Actions step summary; False when not running in Actions."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as out:
            out.write(markdown + "\n")
    return bool(summary)


def write_summary(markdown: str) -> None:
    """To the Actions step summary when there is one, else to stdout."""
    if not append_step_summary(markdown):
        print(markdown)
