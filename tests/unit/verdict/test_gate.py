"""The PR gate's rule, no verdict without a measurement (tools/_lib/verdict/gate.py), on
scripted asv records: a row measured at the base and not at the head fails the gate and is
named, and a gate that compared nothing does not pass."""

from __future__ import annotations

import pytest

from tests.support.scripted_gate import OTHER_ROW, TIME_ROW, ScriptedGate
from tools._lib.base.cli import Status
from tools._lib.verdict.gate_report import summary


@pytest.mark.parametrize("state", ["skipped", "failed", "absent", "invalid"])
def test_a_row_measured_at_the_base_and_not_at_the_head_fails_the_gate_named(state):
    gate = ScriptedGate({TIME_ROW: 1.0}, at_head={OTHER_ROW: state})
    verdict = gate.decide(2 if state == "failed" else 0)
    assert verdict.status == Status.BENCHMARK_FAILED
    text = summary(gate, verdict, ("base", "head"), lambda: "")
    section = text.split("### Measured at the base, not at the head\n\n")[1].split("\n\n")[0]
    (line,) = [line for line in section.splitlines() if OTHER_ROW in line]
    words = {"skipped": "skipped", "failed": "failed", "absent": "absent", "invalid": "gave 0.0"}
    assert words[state] in line, line
    assert TIME_ROW not in section  # the row compared is not listed there


def test_a_row_new_at_the_head_is_listed_and_does_not_fail():
    gate = ScriptedGate({TIME_ROW: 1.0})
    base, head = gate.recorded()
    key = (OTHER_ROW.split("(")[0], OTHER_ROW[OTHER_ROW.index("(") :])
    head[key] = (1.0, None, None)
    gate.recorded = lambda: (base, head)
    verdict = gate.decide(0)
    assert verdict.status == Status.OK
    text = summary(gate, verdict, ("base", "head"), lambda: "")
    assert OTHER_ROW in text.split("### New at the head")[1]


def test_a_gate_that_compared_no_row_does_not_pass():
    gate = ScriptedGate({})
    verdict = gate.decide(0)
    assert verdict.status == Status.BENCHMARK_FAILED
    text = summary(gate, verdict, ("base", "head"), lambda: "")
    assert text.startswith("## Benchmarks: no benchmark was measured at both commits")
    assert "no benchmark got slower" not in text
