"""The gate's verdict as data (tools/_lib/verdict/row.py), read back from the artifact a pull
request's own workflow wrote: every field checked against its schema, and what the gate
writes reads back as it was."""

from __future__ import annotations

import json

import pytest

from tests.support.gate_verdict import broken, verdict
from tools._lib.verdict.row import GateReport


def test_a_verdict_reads_back_as_it_was_written():
    report = GateReport.from_json(verdict())
    assert GateReport.from_json(json.loads(json.dumps(report.to_json()))) == report


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("top.status", 7),
        ("top.status", "0"),
        ("top.version", 1),
        ("top.base", "main"),
        ("top.factor", float("nan")),
        ("top.rows", "none"),
        ("top.machine", "pr gate\n"),
        ("top.unavailable", -1),
        ("row.label", "bench_x.X.time_y\n## passed"),
        ("row.judgement", "great"),
        ("row.method", "trust me"),
        ("row.before", float("inf")),
        ("row.slowdown", "1.0"),
        ("row.interval", [1.0]),
        ("row.pairs", 1.5),
        ("row.why", "LONG"),
        ("row.unit", KeyError),
    ],
)
def test_a_verdict_that_breaks_its_schema_is_refused_in_one_line(path, value):
    with pytest.raises(ValueError) as refused:
        GateReport.from_json(json.loads(json.dumps(broken(path, value))))
    assert len(str(refused.value).splitlines()) == 1
