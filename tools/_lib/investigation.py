"""What the triage does with one step of a machine's history, in order, each stage once:
measure it again, bisect it to one commit, explain it; and with an open regression, whether
it has recovered. Every stage's outcome lands in the record (tools/_lib/record.py)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from pathlib import Path

from tools._lib.bisection import locate, measure_pair
from tools._lib.comparison import Paired, Row, compare, is_count, shown, slowdown
from tools._lib.explain import explain_time, grown_functions
from tools._lib.floors import FLOORS_FILE, read_floors
from tools._lib.git import commit_count
from tools._lib.issue_text import issue_body, issue_title, resolution
from tools._lib.record import Finding, Regression, State, Step
from tools._lib.results import RESULTS_DIR
from tools._lib.steps import asv_threshold, config_thresholds, latest_value


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
        history = asv_threshold(self.thresholds, label)
        floor = self.floors.by_row.get(label)
        return min(history, floor - 1) if floor else history

    def confirmed_at(self, step: Step) -> float:
        """The slowdown a step must show measured again: the row's floor on this host, or
        the history's threshold where the host has none."""
        return self.floors.by_row.get(step.label) or 1 + step.threshold

    def measured_again(self, step: Step, first: str, second: str) -> Paired | Row | None:
        """The row from ``first`` to ``second``: by alternation, or from the history for a
        count (deterministic)."""
        if is_count(step.unit):
            rows = compare(
                self.repo / RESULTS_DIR, self.machine, first, second, {step.benchmark: step.unit}
            )
            return next((row for row in rows if row.label == step.label), None)
        return measure_pair(self.repo, step.label, first, second)

    def unmeasured(self, step: Step, why: str) -> Regression:
        print(f"triage: {step.label}: not measured again ({why}); tried again next night")
        return Regression(step, Finding.UNMEASURED, f"not measured again: {why}")

    def investigate(self, step: Step) -> Regression:
        """Confirm, bisect and explain one step."""
        measured = self.measured_again(step, step.good, step.bad)
        if measured is None:
            return self.unmeasured(step, "the row gave no result at one of its commits")
        confirmation = (
            "an instruction count, deterministic: no second measurement needed"
            if is_count(step.unit)
            else f"measured again by alternation: {shown(measured.before_value, step.unit)} -> "
            f"{shown(measured.after_value, step.unit)} ({measured.slowdown:.2f}x)"
        )
        if not measured.slower(self.confirmed_at(step)):
            print(f"triage: {step.label}: dismissed ({confirmation})")
            return Regression(step, Finding.DISMISSED, confirmation)
        record = Regression(
            step,
            Finding.CONFIRMED,
            confirmation,
            step.good,
            step.bad,
            0,
            measured.before_value,
            measured.after_value,
        )
        if commit_count(step.good, step.bad, self.repo) != 1:
            record = self.bisected(record, measured)
        record = dataclasses.replace(record, explanation=self.explained(record))
        print(
            f"triage: {step.label}: confirmed; guilty {record.guilty[:12]} after "
            f"{record.builds} builds"
        )
        return record

    def bisected(self, record: Regression, whole: Paired | Row) -> Regression:
        step = record.step
        timed = None if is_count(step.unit) else whole
        found, at = locate(
            self.repo, self.machine, step.label, step.unit, step.good, step.bad, timed
        )
        values = (
            (at.before_value, at.after_value) if at is not None else (record.before, record.after)
        )
        return dataclasses.replace(
            record,
            parent=found.parent,
            guilty=found.guilty,
            builds=found.builds,
            before=values[0],
            after=values[1],
        )

    def explained(self, record: Regression) -> str:
        step = record.step
        if is_count(step.unit):
            return grown_functions(self.repo, record.parent, record.guilty, step.label) or (
                "callgrind kept no function counts of these commits on this machine."
            )
        return explain_time(self.repo, record.parent, record.guilty, step.label)


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
    again = investigation.measured_again(step, record.parent, commit)
    if again is None:
        print(f"triage: {step.label}: not measured again at {commit[:12]}; stays open")
        return record
    if again.slower(investigation.confirmed_at(step)):
        print(f"triage: {step.label}: still {again.slowdown:.2f}x at {commit[:12]}")
        return record
    print(f"triage: {step.label}: back within its threshold at {commit[:12]}")
    return dataclasses.replace(record, state=State.RESOLVED, resolved_at=commit, latest=value)


def report(repo: Path, records: Iterable[Regression], machine: str, site_url: str) -> dict:
    """The confirmed regressions of ``machine``, as tools/file_issues.py files them."""
    regressions = [
        {
            "key": record.key,
            "state": str(record.state),
            "title": issue_title(record),
            "body": issue_body(repo, record, site_url),
            "resolution": resolution(record),
        }
        for record in sorted(records, key=lambda r: r.key)
        if record.finding == Finding.CONFIRMED and record.step.machine == machine
    ]
    return {"version": 1, "machine": machine, "regressions": regressions}
