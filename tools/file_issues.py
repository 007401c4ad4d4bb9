"""File the regressions the nightly's triage confirmed as GitHub issues, one per
regression, and close them when the triage sees the benchmark back within its threshold.

    python -m tools.file_issues [MACHINE=]REPORT.json ... [--landed FILE]

A report (``tools.triage --report``, or ``tools.releases --report``) is one machine's: it
lists each regression of that machine with a key, its title and body, and whether it is
open or resolved. A report is data its job's benchmarked code could have written, so
``MACHINE=REPORT`` binds it to the machine whose job made it (a report of another machine
is refused), a key of another machine is refused, and with ``--landed`` (the machines
whose results ``tools.push_results --landed`` pushed) a machine whose results did not
land files nothing: its issues would name results that are not on the branch, and the
next night files them. Each issue carries its
kind's label (``performance-regression`` for the triage's, ``release-regression`` for a
torch release's) and the key in its kind's marker in its body, so filing is idempotent: a
regression already filed is updated in place, never filed twice, and the next run retries
what did not get through. This step runs no benchmark code and holds the
``issues: write`` token alone; a report is data, posted, never run.

Exit status: 0 done; 3 GitHub unreachable or refused a call (one line, also in the step
summary); 4 a malformed report, one of another machine than it is bound to or with another
machine's key, or a missing token/repository.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from tools._lib.base.cli import ArgumentParser, BadInput, ExternalFailure, run_main
from tools._lib.base.step_summary import append_step_summary
from tools._lib.github.api import GitHub
from tools._lib.verdict.issue_report import Issue, IssueReport


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


BOUND = re.compile(r"([A-Za-z0-9][\w.-]*)=(.+)")


def read_report(path: Path) -> IssueReport:
    """A report of the triage or the releases comparison, checked
    (tools/_lib/verdict/issue_report.py)."""
    try:
        return IssueReport.from_json(json.loads(path.read_text()))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise BadInput(f"{path} is not a triage or releases report: {error}") from None


def bound_report(argument: str) -> IssueReport:
    """``[MACHINE=]PATH``'s report; bad input when it is of another machine than bound."""
    bound = BOUND.fullmatch(argument)
    path = Path(bound.group(2) if bound else argument)
    report = read_report(path)
    if bound and report.machine != bound.group(1):
        raise BadInput(
            f"{path}: the report's machine is {report.machine}, but its job was {bound.group(1)}'s"
        )
    return report


def landed_machines(path: Path | None) -> set[str] | None:
    """The machines whose results landed (``tools.push_results --landed``); None: all."""
    if path is None:
        return None
    try:
        return set(path.read_text().split())
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"--landed {path}: {error}") from None


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


def file_all(github: GitHub, issues: list[Issue], kind: Kind = KINDS["regression"]) -> list[str]:
    """Bring GitHub in line with the reports of one kind; what was done, a line each."""
    if not issues:
        return []
    label = ensure_label(github, kind)
    filed = filed_issues(github, kind, label)
    done = []
    for wanted in issues:
        issue = filed.get(wanted.key)
        body = f"{wanted.body}\n\n{kind.marker(wanted.key)}\n"
        if wanted.state == "open":
            if issue is None:
                made = github.call(
                    "POST", "/issues", {"title": wanted.title, "body": body, "labels": [label]}
                )
                done.append(f"filed #{made['number']}: {wanted.title}")
            elif (issue["title"], issue.get("body")) != (wanted.title, body):
                github.call(
                    "PATCH", f"/issues/{issue['number']}", {"title": wanted.title, "body": body}
                )
                done.append(f"updated #{issue['number']}: {wanted.title}")
        elif issue is not None and issue["state"] == "open":
            comment = wanted.resolution or "Back within its threshold."
            github.call("POST", f"/issues/{issue['number']}/comments", {"body": comment})
            github.call("PATCH", f"/issues/{issue['number']}", {"state": "closed"})
            done.append(f"closed #{issue['number']}: {wanted.title}")
    return done


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", metavar="[MACHINE=]REPORT")
    parser.add_argument("--landed", type=Path, help="file only the machines listed here")
    args = parser.parse_args()
    landed = landed_machines(args.landed)
    by_kind: dict[str, list[Issue]] = {}
    for argument in args.reports:
        report = bound_report(argument)
        if landed is not None and report.machine not in landed:
            print(f"file_issues: {report.machine}: not filed: its results did not land")
            continue
        by_kind.setdefault(report.kind, []).extend(report.issues)
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
