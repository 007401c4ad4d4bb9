"""File the regressions the nightly's triage confirmed as GitHub issues, one per
regression, and close them when the triage sees the benchmark back within its threshold.

    python -m tools.file_issues REPORT.json [REPORT.json ...]

A report (``tools.triage --report``, or ``tools.releases --report``) lists each regression
with a key, its title and body, and whether it is open or resolved. Each issue carries its
kind's label (``performance-regression`` for the triage's, ``release-regression`` for a
torch release's) and the key in its kind's marker in its body, so filing is idempotent: a
regression already filed is updated in place, never filed twice, and the next run retries
what did not get through. This step runs no benchmark code and holds the
``issues: write`` token alone; a report is data, posted, never run.

Exit status: 0 done; 3 GitHub unreachable or refused a call (one line, also in the step
summary); 4 a malformed report or a missing token/repository.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from tools._lib.cli import ArgumentParser, BadInput, ExternalFailure, run_main
from tools._lib.github import GitHub
from tools._lib.summary import append_step_summary


@dataclass(frozen=True)
class Kind:
    """What a report's issues are: their label and the name in their marker."""

    label: str
    color: str
    description: str
    marker_name: str

    def marker(self, key: str) -> str:
        return f"<!-- {self.marker_name}: {key} -->"

    @property
    def marker_pattern(self) -> re.Pattern:
        return re.compile(rf"<!-- {re.escape(self.marker_name)}: ([^>]+?) -->")


KINDS = {
    "regression": Kind(
        "performance-regression",
        "d93f0b",
        "Found by the nightly benchmarks",
        "tensorops-regression",
    ),
    "release": Kind(
        "release-regression", "5319e7", "Found by comparing torch releases", "tensorops-release"
    ),
}
LABEL = KINDS["regression"].label


def read_report(path: Path) -> tuple[str, list[dict]]:
    """A report's kind and its regressions, checked to be what the triage or the
    releases comparison writes."""
    try:
        report = json.loads(path.read_text())
        kind = report.get("kind", "regression")
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}")
        regressions = report["regressions"]
        for regression in regressions:
            for field in ("key", "state", "title", "body"):
                if not isinstance(regression.get(field), str):
                    raise TypeError(f"{field} is not text")
            if regression["state"] not in ("open", "resolved"):
                raise ValueError(f"unknown state {regression['state']!r}")
            if not re.fullmatch(r"[\w.()',|=: /+-]{1,300}", regression["key"]):
                raise ValueError(f"a key that cannot be a marker: {regression['key'][:80]!r}")
    except (
        OSError,
        AttributeError,
        json.JSONDecodeError,
        KeyError,
        TypeError,
        ValueError,
    ) as error:
        raise BadInput(f"{path} is not a triage or releases report: {error}") from None
    return kind, regressions


def ensure_label(github: GitHub, kind: Kind) -> str:
    """The label's name as the repository has it: GitHub's label names are one whatever
    their case, so one made by hand as "Performance-Regression" is the label."""
    for label in github.all_pages("/labels"):
        if label["name"].lower() == kind.label.lower():
            return label["name"]
    github.call(
        "POST",
        "/labels",
        {"name": kind.label, "color": kind.color, "description": kind.description},
    )
    return kind.label


def key_of(body: str, kind: Kind = KINDS["regression"]) -> str | None:
    """The key an issue this tool filed carries: its marker is the body's last line (a
    marker anywhere else came with the text, and says nothing)."""
    lines = body.rstrip().splitlines()
    found = kind.marker_pattern.fullmatch(lines[-1].strip()) if lines else None
    return found.group(1) if found else None


def filed_issues(github: GitHub, kind: Kind, label: str) -> dict[str, dict]:
    """The issues of one kind this tool filed, open and closed, by the key in their
    marker."""
    filed = {}
    for issue in github.all_pages("/issues", labels=label, state="all"):
        key = key_of(issue.get("body") or "", kind)
        if key and "pull_request" not in issue:
            filed.setdefault(key, issue)
    return filed


def file_all(
    github: GitHub, regressions: list[dict], kind: Kind = KINDS["regression"]
) -> list[str]:
    """Bring GitHub in line with the reports of one kind; what was done, a line each."""
    if not regressions:
        return []
    label = ensure_label(github, kind)
    filed = filed_issues(github, kind, label)
    done = []
    for regression in regressions:
        key, issue = regression["key"], filed.get(regression["key"])
        body = f"{regression['body']}\n\n{kind.marker(key)}\n"
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
    by_kind: dict[str, list[dict]] = {}
    for path in args.reports:
        kind, regressions = read_report(path)
        by_kind.setdefault(kind, []).extend(regressions)
    try:
        github = GitHub.from_environment()
        done = [
            line for kind, found in by_kind.items() for line in file_all(github, found, KINDS[kind])
        ]
    except (BadInput, ExternalFailure) as error:
        append_step_summary(f"**Filing regressions failed:** {error} (the next night retries)")
        raise
    for line in done or ["nothing to file: every regression is filed and up to date"]:
        print(f"file_issues: {line}")
    append_step_summary("\n".join(f"- {line}" for line in done) or "No regression to file.")
    return 0


if __name__ == "__main__":
    run_main("file_issues", main)
