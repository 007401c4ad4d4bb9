"""File the regressions the nightly's triage confirmed as GitHub issues, one per
regression, and close them when the triage sees the benchmark back within its threshold.

    python -m tools.file_issues REPORT.json [REPORT.json ...]

A report (``tools.triage --report``) lists each regression with a key, its title and body,
and whether it is open or resolved. Each issue carries the label
``performance-regression`` and the key in a marker in its body, so filing is idempotent:
a regression already filed is updated in place, never filed twice, and the next night
retries what did not get through. This step runs no benchmark code and holds the
``issues: write`` token alone; a report is data, posted, never run.

Exit status: 0 done; 3 GitHub unreachable or refused a call (one line, also in the step
summary); 4 a malformed report or a missing token/repository.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tools._lib.cli import ArgumentParser, BadInput, ExternalFailure, run_main
from tools._lib.github import GitHub
from tools._lib.summary import append_step_summary

LABEL = "performance-regression"
LABEL_COLOR = "d93f0b"
MARKER = re.compile(r"<!-- tensorops-regression: ([^>]+?) -->")


def marker(key: str) -> str:
    return f"<!-- tensorops-regression: {key} -->"


def read_report(path: Path) -> list[dict]:
    """The regressions of one triage report, checked to be what triage writes."""
    try:
        report = json.loads(path.read_text())
        regressions = report["regressions"]
        for regression in regressions:
            for field in ("key", "state", "title", "body"):
                if not isinstance(regression.get(field), str):
                    raise TypeError(f"{field} is not text")
            if regression["state"] not in ("open", "resolved"):
                raise ValueError(f"unknown state {regression['state']!r}")
            if not re.fullmatch(r"[\w.()',|=: /+-]{1,300}", regression["key"]):
                raise ValueError(f"a key that cannot be a marker: {regression['key'][:80]!r}")
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise BadInput(f"{path} is not a triage report: {error}") from None
    return regressions


def ensure_label(github: GitHub) -> str:
    """The label's name as the repository has it: GitHub's label names are one whatever
    their case, so one made by hand as "Performance-Regression" is the label."""
    for label in github.all_pages("/labels"):
        if label["name"].lower() == LABEL.lower():
            return label["name"]
    github.call(
        "POST",
        "/labels",
        {"name": LABEL, "color": LABEL_COLOR, "description": "Found by the nightly benchmarks"},
    )
    return LABEL


def key_of(body: str) -> str | None:
    """The key an issue this tool filed carries: its marker is the body's last line (a
    marker anywhere else came with the text, and says nothing)."""
    lines = body.rstrip().splitlines()
    found = MARKER.fullmatch(lines[-1].strip()) if lines else None
    return found.group(1) if found else None


def filed_issues(github: GitHub, label: str) -> dict[str, dict]:
    """The issues this tool filed, open and closed, by the key in their marker."""
    filed = {}
    for issue in github.all_pages("/issues", labels=label, state="all"):
        key = key_of(issue.get("body") or "")
        if key and "pull_request" not in issue:
            filed.setdefault(key, issue)
    return filed


def file_all(github: GitHub, regressions: list[dict]) -> list[str]:
    """Bring GitHub in line with the reports; what was done, a line each."""
    label = ensure_label(github)
    filed = filed_issues(github, label)
    done = []
    for regression in regressions:
        key, issue = regression["key"], filed.get(regression["key"])
        body = f"{regression['body']}\n\n{marker(key)}\n"
        if regression["state"] == "open":
            if issue is None:
                made = github.call(
                    "POST",
                    "/issues",
                    {"title": regression["title"], "body": body, "labels": [label]},
                )
                done.append(f"filed #{made['number']}: {regression['title']}")
            elif (issue["title"], issue.get("body")) != (regression["title"], body):
                github.call(
                    "PATCH",
                    f"/issues/{issue['number']}",
                    {"title": regression["title"], "body": body},
                )
                done.append(f"updated #{issue['number']}: {regression['title']}")
        elif issue is not None and issue["state"] == "open":
            comment = regression.get("resolution") or "Back within its threshold."
            github.call("POST", f"/issues/{issue['number']}/comments", {"body": comment})
            github.call("PATCH", f"/issues/{issue['number']}", {"state": "closed"})
            done.append(f"closed #{issue['number']}: {regression['title']}")
    return done


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", type=Path, metavar="REPORT")
    args = parser.parse_args()
    regressions = [regression for path in args.reports for regression in read_report(path)]
    try:
        done = file_all(GitHub.from_environment(), regressions)
    except (BadInput, ExternalFailure) as error:
        append_step_summary(f"**Filing regressions failed:** {error} (the next night retries)")
        raise
    for line in done or ["nothing to file: every regression is filed and up to date"]:
        print(f"file_issues: {line}")
    append_step_summary("\n".join(f"- {line}" for line in done) or "No regression to file.")
    return 0


if __name__ == "__main__":
    run_main("file_issues", main)
