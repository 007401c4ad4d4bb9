"""Reading a comparison of two commits (tools.common.compare, asv's rule, rates the right
way round) and the PR gate's logic on it: which rows it measures, which it confirms, and
the factor each is judged at. The real gate runs are in test_pr_gate_bisect.py."""

from __future__ import annotations

import json
import re

from tools import pr_gate
from tools.common import Row, compare, row_selection

from .scripted_gate import COUNT_ROW, TIME_ROW, ScriptedGate


def row(name: str, unit: str, before: float, after: float, params: str = "('cpu',)") -> Row:
    return Row(name, params, unit, before, after)


def test_slowdowns_are_read_with_rates_reversed():
    # asv reads every value as lower-is-better; for a rate a fall is the slowdown.
    assert row("a.A.time_x", "seconds", 1.0, 2.0).slower(1.2)
    assert not row("a.A.time_x", "seconds", 2.0, 1.0).slower(1.2)
    assert row("a.A.track_gflops", "GFLOP/s", 150, 100).slower(1.2)
    assert not row("a.A.track_gbps", "GB/s", 10, 20).slower(1.2)
    assert row("a.A.track_percent_of_peak", "% of peak", 80, 40).slower(1.2)
    assert row("a.A.peakmem_x", "bytes", 100, 150).slower(1.2)
    assert not row("a.A.time_x", "seconds", 1.0, 1.1).slower(1.2)  # within the factor
    assert row("a.A.track_gflops", "GFLOP/s", 150, 100).slowdown == 1.5
    assert row("a.A.time_x", "seconds", 2.0, 1.0).changed(1.2)


def test_a_difference_asv_finds_insignificant_is_not_a_slowdown():
    stats = ({"ci_99_a": 0.5, "ci_99_b": 3.0, "q_25": 0.9, "q_75": 2.5, "repeat": 10}, None)
    noisy = Row("a.A.time_x", "", "seconds", 1.0, 2.0, stats, stats)
    assert not noisy.slower(1.2)


def test_the_comparison_reads_asv_result_files(tmp_path):
    results = tmp_path / "results"
    (results / "m").mkdir(parents=True)
    (results / "m" / "machine.json").write_text(json.dumps({"machine": "m", "version": 1}))
    benchmarks = {"a.A.time_x": {"unit": "seconds"}, "version": 2}
    (results / "benchmarks.json").write_text(json.dumps(benchmarks))
    for commit, value in (("a" * 40, 1.0), ("b" * 40, 3.0)):
        result = {
            "commit_hash": commit,
            "env_name": "e",
            "date": 0,
            "params": {"machine": "m"},
            "python": "3.11",
            "requirements": {},
            "env_vars": {},
            "result_columns": ["result", "params"],
            "results": {"a.A.time_x": [[value, float("nan")], [["'cpu'", "'cuda'"]]]},
            "durations": {},
            "version": 2,
        }
        (results / "m" / f"{commit[:8]}-e.json").write_text(json.dumps(result))
    (only,) = compare(results, "m", "a" * 40, "b" * 40)
    assert only.label == "a.A.time_x('cpu')" and only.ratio == 3.0 and only.unit == "seconds"


def test_pr_gate_measures_sampled_rows_unless_told_otherwise():
    assert pr_gate.with_default_selection(["--show-stderr"]) == [
        "--show-stderr",
        "--bench",
        pr_gate.DEFAULT_SELECTION,
    ]
    assert pr_gate.with_default_selection(["-b", "Silu"]) == ["-b", "Silu"]
    pattern = re.compile(pr_gate.DEFAULT_SELECTION)
    assert pattern.search("bench_activation.Silu.time_silu")
    assert pattern.search("bench_norm.RMSNorm.peakmem_rms_norm")
    assert pattern.search("bench_instructions.Instructions.track_instructions")
    assert not pattern.search("bench_matmul.MatMul.track_gflops")
    assert not pattern.search("bench_matmul.MatMul.track_percent_of_peak")


def test_pr_gate_confirms_without_the_callers_selection():
    args = ["--bench", "Silu", "-b", "Gelu", "--bench=MatMul", "--show-stderr", "-a", "rounds=4"]
    assert pr_gate.without_bench_selection(args) == ["--show-stderr", "-a", "rounds=4"]


def test_pr_gate_fails_a_2_percent_count_rise_without_measuring_it_again():
    gate = ScriptedGate([[(1.02, COUNT_ROW), (1.05, TIME_ROW)]])
    assert gate.slower() == [COUNT_ROW]  # the time row's 1.05 is within its factor
    assert gate.decide(gate.continuous("--bench", "x"), ["--bench", "x"], True) == (1, "")
    assert gate.selections == ["x"]  # no confirming pass for a deterministic count
    assert COUNT_ROW in gate.changes() and TIME_ROW not in gate.changes()
    assert ScriptedGate([[(1.005, COUNT_ROW)]]).slower() == []


def test_pr_gate_confirms_only_the_sampled_rows_and_passes_what_does_not_reproduce():
    gate = ScriptedGate([[(1.3, TIME_ROW)], [(1.1, TIME_ROW)]])
    status, first_changes = gate.decide(gate.continuous("--bench", "x"), ["--bench", "x"], True)
    assert status == 0 and f"| slower | 1.00s | 1.30s | 1.300 | {TIME_ROW} |" in first_changes
    assert gate.selections == ["x", row_selection(TIME_ROW)]
    # A count rise fails the gate even when the sampled row beside it does not reproduce.
    counted = ScriptedGate([[(1.3, TIME_ROW), (1.02, COUNT_ROW)], [(1.1, TIME_ROW)]])
    assert counted.decide(counted.continuous("--bench", "x"), [], True)[0] == 1
    assert counted.selections[1] == row_selection(TIME_ROW)
