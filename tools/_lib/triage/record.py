"""The triage's record, one type from a step the history shows to the issue filed for it:
``Step`` (what the history shows) inside ``Regression`` (what the triage made of it),
frozen, changed only by ``dataclasses.replace``, kept as JSON on the results branch."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

from tools._lib.base.cli import BadInput
from tools._lib.measure.comparison import row_label, shown, slowdown
from tools._lib.verdict.row import Judgement, RowVerdict


class Finding(enum.StrEnum):
    CONFIRMED = "confirmed"  # measured again: slower beyond the row's threshold
    DISMISSED = "dismissed"  # measured again: not slower; noise in the history
    UNMEASURED = "unmeasured"  # could not be measured again (a skip, a failure): retried


class State(enum.StrEnum):
    OPEN = "open"  # the row is still slower at the newest commit measured
    RESOLVED = "resolved"  # back within its threshold, measured again


@dataclass(frozen=True)
class Step:
    """A step up (a slowdown) in one row of one machine's history."""

    machine: str
    benchmark: str
    params: str
    unit: str
    good: str  # the last commit before the step
    bad: str  # the first commit after it
    before: float
    after: float
    threshold: float  # the relative step the history detection called it at

    @property
    def label(self) -> str:
        return row_label(self.benchmark, self.params)

    @property
    def key(self) -> str:
        return f"{self.machine}|{self.label}|{self.good[:12]}..{self.bad[:12]}"

    @property
    def slowdown(self) -> float:
        return slowdown(self.before, self.after, self.unit)


@dataclass(frozen=True)
class Regression:
    """What the triage made of a step: measured again (how, in words), bisected to one
    commit, explained, and whether the row has recovered since."""

    step: Step
    finding: Finding
    confirmation: str
    parent: str = ""
    guilty: str = ""
    builds: int = 0
    before: float = 0.0  # the row at ``parent`` and at ``guilty``, measured again
    after: float = 0.0
    explanation: str = ""
    state: State = State.OPEN
    resolved_at: str = ""
    latest: float = 0.0  # the value that resolved it

    @property
    def key(self) -> str:
        return self.step.key

    @property
    def slowdown(self) -> float:
        return slowdown(self.before, self.after, self.step.unit)

    @property
    def is_open(self) -> bool:
        return self.finding == Finding.CONFIRMED and self.state == State.OPEN

    def to_json(self) -> dict:
        return {**dataclasses.asdict(self), "label": self.step.label, "key": self.key}

    @classmethod
    def from_json(cls, data: dict) -> Regression:
        """A record as ``to_json`` wrote it; bad input for anything else."""
        try:
            step = Step(**{f.name: data["step"][f.name] for f in dataclasses.fields(Step)})
            fields = {
                f.name: data[f.name]
                for f in dataclasses.fields(cls)
                if f.name not in ("step",) and f.name in data
            }
            record = cls(step, **fields)
            return dataclasses.replace(
                record, finding=Finding(record.finding), state=State(record.state)
            )
        except (KeyError, TypeError, ValueError) as error:
            raise BadInput(f"a triage record that is not one: {error}") from None


def from_first_format(data: dict) -> Regression:
    """A record of the first state format (one file for every machine, plain dicts), so a
    results branch keeps its triage across the change of format."""
    try:
        step = Step(**{f.name: data[f.name] for f in dataclasses.fields(Step)})
        finding = Finding(data["status"])
        extra = {
            name: data[name]
            for name in (
                "parent",
                "guilty",
                "builds",
                "before",
                "after",
                "explanation",
                "resolved_at",
                "latest",
            )
            if name in data and data[name] is not None
        }
        state = State(data.get("state") or State.OPEN)
        return Regression(step, finding, data["confirmation"], state=state, **extra)
    except (KeyError, TypeError, ValueError) as error:
        raise BadInput(f"a triage record that is not one: {error}") from None


# What the triage records of a step, by the judgement of its row measured again.
FINDINGS = {Judgement.SLOWER: Finding.CONFIRMED, Judgement.NOT_MEASURED: Finding.UNMEASURED}


def confirmed_by(verdict: RowVerdict) -> str:
    """How the step was measured again, in words for the record and the issue."""
    if verdict.judgement == Judgement.NOT_MEASURED:
        return f"not measured again: {verdict.why}"
    if verdict.method == "asv":
        return "an instruction count, deterministic: no second measurement needed"
    return (
        f"measured again by alternation: {shown(verdict.before, verdict.unit)} -> "
        f"{shown(verdict.after, verdict.unit)} ({verdict.slowdown:.2f}x)"
    )


def record_of(step: Step, verdict: RowVerdict) -> Regression:
    """The record of a step whose row was measured again and judged at the step's
    threshold (tools/_lib/verdict/judge.py): confirmed when slower."""
    finding = FINDINGS.get(verdict.judgement, Finding.DISMISSED)
    if finding != Finding.CONFIRMED:
        return Regression(step, finding, confirmed_by(verdict))
    return Regression(
        step,
        finding,
        confirmed_by(verdict),
        step.good,
        step.bad,
        0,
        verdict.before,
        verdict.after,
    )
