"""Answer on the pull request: the PR gate's verdict and table as one comment, created once
and then edited in place.

    RUN_HEAD_SHA=... python -m tools.pr_comment GATE_ARTIFACT_DIR

It runs in the ``workflow_run`` workflow that follows ``benchmarks-pr``, with the one
permission it needs (``pull-requests: write``), and never checks out or runs the pull
request's code. The artifact the gate left (``pr.json``: the PR number and head commit;
``summary.md``: the gate's Markdown) came from a run of untrusted code, so it is data: the
number must be a number, name a pull request whose head is the commit that run tested
(``RUN_HEAD_SHA``, from the event, not the artifact), and the text is posted as a comment
body, never run or put into a shell.

Exit status: 0 posted or edited; 3 GitHub unreachable or refused; 4 a malformed artifact,
a PR that does not match the run, or a missing token.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tools._lib.cli import ArgumentParser, BadInput, run_main
from tools._lib.github import GitHub

MARKER = "<!-- tensorops-pr-gate -->"
# Who a workflow's token writes as: only a comment of its own is the gate's to edit (anyone
# can write the marker into a comment of theirs).
BOT_LOGIN = "github-actions[bot]"
# GitHub refuses comment bodies over 65536 characters.
MAX_BODY = 65_000


def read_artifact(folder: Path, run_head_sha: str) -> tuple[int, str]:
    """The PR number and the comment text, after checking the artifact is the gate's for
    the run's commit."""
    if not re.fullmatch(r"[0-9a-f]{40}", run_head_sha):
        raise BadInput(f"RUN_HEAD_SHA must be the run's 40-hex head commit, got {run_head_sha!r}")
    try:
        described = json.loads((folder / "pr.json").read_text())
        summary = (folder / "summary.md").read_text(errors="replace")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadInput(f"{folder} is not the gate's artifact: {error}") from None
    number = described.get("number") if isinstance(described, dict) else None
    if isinstance(number, str) and number.isdigit():
        number = int(number)
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise BadInput(f"the artifact's PR number is not a number: {number!r}")
    if described.get("head_sha") != run_head_sha:
        raise BadInput(
            f"the artifact is for commit {str(described.get('head_sha'))[:40]!r}, "
            f"not the run's {run_head_sha}"
        )
    if len(summary) > MAX_BODY:
        summary = summary[:MAX_BODY] + "\n\n(cut: the full table is in the run's summary)"
    return number, f"{MARKER}\n{summary}"


def post(github: GitHub, number: int, run_head_sha: str, body: str) -> str:
    """Create the gate's comment on PR ``number``, or edit the one there."""
    pull = github.call("GET", f"/pulls/{number}")
    if pull.get("head", {}).get("sha") != run_head_sha:
        raise BadInput(f"pull request #{number} is not at the run's commit {run_head_sha[:12]}")
    for comment in github.all_pages(f"/issues/{number}/comments"):
        mine = (comment.get("user") or {}).get("login") == BOT_LOGIN
        if mine and (comment.get("body") or "").startswith(MARKER):
            github.call("PATCH", f"/issues/comments/{comment['id']}", {"body": body})
            return f"edited the comment on #{number}"
    github.call("POST", f"/issues/{number}/comments", {"body": body})
    return f"commented on #{number}"


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("artifact", type=Path, help="the downloaded gate artifact")
    args = parser.parse_args()
    run_head_sha = os.environ.get("RUN_HEAD_SHA", "")
    number, body = read_artifact(args.artifact, run_head_sha)
    print(f"pr_comment: {post(GitHub.from_environment(), number, run_head_sha, body)}")
    return 0


if __name__ == "__main__":
    run_main("pr_comment", main)
