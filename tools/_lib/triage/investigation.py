"""What the triage does with one step of a machine's history, in order, each stage once:
measure it again, bisect it to one commit, explain it; and with an open regression, whether
it has recovered. Every stage's outcome lands in the record (tools/_lib/triage/record.py)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from pathlib import Path

from tools._lib.asv.private import config_thresholds, regressions_threshold
from tools._lib.asv.results import RESULTS_DIR
from tools._lib.measure.comparison import slowdown
from tools._lib.measure.explain import explained
from tools._lib.measure.host_floors import FLOORS_FILE, read_floors
from tools._lib.triage.bisection import bisected
from tools._lib.triage.issue_text import issue_body, issue_title, resolution
from tools._lib.triage.record import Finding, Regression, State, Step, record_of
from tools._lib.triage.steps import latest_value, measured_again
from tools._lib.verdict.issue_report import Issue, IssueReport
from tools._lib.verdict.judge import of_measurement
from tools._lib.verdict.row import Judgement


class Investigation:
    """The triage's stages for one machine, on this host's floors."""

    def __init__(self, repo: Path, machine: str, host: str):
        self.repo, self.machine = repo, machine
        self.floors = read_floors(repo / RESULTS_DIR / machine / FLOORS_FILE, host)
        self.thresholds = config_thresholds(repo)

    def detection_at(self, label: str) -> float:
        """The relative step the history detection calls at: asv's threshold, or finer
        where this host's floor says the row can be told apart finer (a step the host's
        noise made is dismissed when measured again)."""
        history = regressions_threshold(self.thresholds, label)
        floor = self.floors.by_row.get(label)
        return min(history, floor - 1) if floor else history

    def confirmed_at(self, step: Step) -> float:
        """The slowdown a step must show measured again: the row's floor on this host, or
        the history's threshold where the host has none."""
        return self.floors.by_row.get(step.label) or 1 + step.threshold

    def investigate(self, step: Step) -> Regression:
        """Confirm, bisect and explain one step: each stage a room of its own, in turn."""
        threshold = self.confirmed_at(step)
        measured = measured_again(self.repo, self.machine, step, step.good, step.bad, threshold)
        record = record_of(step, of_measurement(step.label, step.unit, measured, threshold))
        if record.finding != Finding.CONFIRMED:
            return record
        return explained(self.repo, bisected(self.repo, self.machine, record, measured))


def resolution_of(investigation: Investigation, record: Regression) -> Regression:
    """``record`` resolved when its row is back, measured again; else ``record`` itself.

    One nightly point can be noise either way: a point within the threshold, or nearer the
    level before the step than the level after it, is measured again by alternation, and
    only that measurement resolves it; one that cannot be measured again (a row that now
    skips, or is a device this host lacks) resolves nothing."""
    step = record.step
    latest = latest_value(investigation.repo, investigation.machine, step)
    if latest is None or latest[0] == record.guilty:
        return record
    commit, value = latest
    now = slowdown(record.before, value, step.unit)
    looks_back = now <= max(investigation.confirmed_at(step), math.sqrt(record.slowdown))
    if not looks_back:
        print(f"triage: {step.label}: still {now:.2f}x at {commit[:12]}")
        return record
    threshold = investigation.confirmed_at(step)
    again = measured_again(
        investigation.repo, investigation.machine, step, record.parent, commit, threshold
    )
    verdict = of_measurement(step.label, step.unit, again, threshold)
    if verdict.judgement == Judgement.NOT_MEASURED:
        print(f"triage: {step.label}: not measured again at {commit[:12]}; stays open")
        return record
    if verdict.judgement == Judgement.SLOWER:
        print(f"triage: {step.label}: still {verdict.slowdown:.2f}x at {commit[:12]}")
        return record
    print(f"triage: {step.label}: back within its threshold at {commit[:12]}")
    return dataclasses.replace(record, state=State.RESOLVED, resolved_at=commit, latest=value)


def report(repo: Path, records: Iterable[Regression], machine: str, site_url: str) -> IssueReport:
    """The confirmed regressions of ``machine``, as tools/file_issues.py files them."""
    issues = tuple(
        Issue(
            record.key,
            str(record.state),
            issue_title(record),
            issue_body(repo, record, site_url),
            resolution(record),
        )
        for record in sorted(records, key=lambda r: r.key)
        if record.finding == Finding.CONFIRMED and record.step.machine == machine
    )
    return IssueReport("regression", machine, issues)
