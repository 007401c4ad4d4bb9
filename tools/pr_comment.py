"""Answer on the pull request: the PR gate's verdict as one comment, created once and then
edited in place.

    RUN_HEAD_SHA=... [RUN_ID=...] python -m tools.pr_comment GATE_ARTIFACT_DIR

It runs in the ``workflow_run`` workflow that follows ``benchmarks-pr``, with the one
permission it needs (``pull-requests: write``), and never checks out or runs the pull
request's code. The artifact the gate left came from a run of the pull request's own
workflow, so it is data, and none of its text is posted as written: ``pr.json`` (the PR
number and head commit) must name a pull request whose head is the commit that run tested
(``RUN_HEAD_SHA``, from the event, not the artifact); ``verdict.json`` (every row's
judgement, tools/_lib/verdict/row.py) is checked against its schema, and the comment is built
here from it (tools/_lib/verdict/markdown.py): its words are this tool's, every string from
the artifact a code span, every number formatted here. A ``summary.md`` beside it is
never read. The comment says that the pull request's own run measured it, and which
files of the code that measured it the pull request changes (GitHub's list of its files).

Exit status: 0 posted or edited; 3 GitHub unreachable or refused; 4 a malformed artifact
or verdict, a PR that does not match the run, or a missing token.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tools._lib.base.cli import ArgumentParser, BadInput, run_main
from tools._lib.base.text import code
from tools._lib.github.api import GitHub
from tools._lib.verdict.markdown import markdown
from tools._lib.verdict.row import GateReport

MARKER = "<!-- tensorops-pr-gate -->"
# Who a workflow's token writes as: only a comment of its own is the gate's to edit (anyone
# can write the marker into a comment of theirs).
BOT_LOGIN = "github-actions[bot]"
# GitHub refuses comment bodies over 65536 characters.
MAX_BODY = 65_000
# What shapes the gate's measurement and its verdict: a pull request that changes any of
# these measured itself with code of its own.
MEASURING = re.compile(
    r"^(\.github/workflows/|tools/|benchmarks/_harness/|benchmarks/_names\.py$|asv\.conf\.json$"
    r"|requirements/|pyproject\.toml$)"
)
SHOWN_FILES = 20


def read_artifact(folder: Path, run_head_sha: str) -> tuple[int, GateReport]:
    """The PR number and the gate's verdict, after checking the artifact is the gate's
    for the run's commit and the verdict is one."""
    if not re.fullmatch(r"[0-9a-f]{40}", run_head_sha):
        raise BadInput(f"RUN_HEAD_SHA must be the run's 40-hex head commit, got {run_head_sha!r}")
    try:
        described = json.loads((folder / "pr.json").read_text())
        verdict = json.loads((folder / "verdict.json").read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadInput(f"{folder} is not the gate's artifact: {error}") from None
    number = described.get("number") if isinstance(described, dict) else None
    if isinstance(number, str) and re.fullmatch(r"[0-9]{1,9}", number):
        number = int(number)
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise BadInput(f"the artifact's PR number is not a number: {number!r}")
    if described.get("head_sha") != run_head_sha:
        raise BadInput(
            f"the artifact is for commit {str(described.get('head_sha'))[:40]!r}, "
            f"not the run's {run_head_sha}"
        )
    try:
        report = GateReport.from_json(verdict)
    except (ValueError, KeyError, TypeError) as error:
        raise BadInput(f"{folder / 'verdict.json'} is not the gate's verdict: {error}") from None
    return number, report


def provenance(github: GitHub, number: int) -> str:
    """What measured the verdict: the pull request's own run, and the files of the
    measuring code it changes."""
    changed = [
        str(one.get("filename", ""))
        for one in github.all_pages(f"/pulls/{number}/files")
        if MEASURING.match(str(one.get("filename", "")))
    ]
    run = os.environ.get("RUN_ID", "")
    which = f" (run {run})" if re.fullmatch(r"[0-9]{1,20}", run) else ""
    said = (
        f"This verdict was measured by this pull request's own run of `benchmarks-pr`{which}: "
        "its workflow file and code are the pull request's, so these numbers are as "
        "trustworthy as that code."
    )
    if not changed:
        return f"{said} This pull request changes none of the code that measured it."
    shown = ", ".join(code(name) for name in changed[:SHOWN_FILES])
    more = f" and {len(changed) - SHOWN_FILES} more" if len(changed) > SHOWN_FILES else ""
    return f"{said} **This pull request changes the code that measured it:** {shown}{more}"


def post(github: GitHub, number: int, run_head_sha: str, report: GateReport) -> str:
    """Create the gate's comment on PR ``number``, or edit the one there."""
    pull = github.call("GET", f"/pulls/{number}")
    if pull.get("head", {}).get("sha") != run_head_sha:
        raise BadInput(f"pull request #{number} is not at the run's commit {run_head_sha[:12]}")
    text = markdown(report, provenance=provenance(github, number))
    if len(text) > MAX_BODY:
        text = text[:MAX_BODY] + "\n\n(cut: the full table is in the run's summary)"
    body = f"{MARKER}\n{text}"
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
    number, report = read_artifact(args.artifact, run_head_sha)
    print(f"pr_comment: {post(GitHub.from_environment(), number, run_head_sha, report)}")
    return 0


if __name__ == "__main__":
    run_main("pr_comment", main)
