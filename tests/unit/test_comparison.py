"""Reading a comparison of two commits (tools.common.compare, asv's rule, rates the right
way round) and the PR gate's logic on it: which rows it measures, which it confirms, and
the factor each is judged at. The real gate runs are in test_pr_gate_bisect.py."""

from __future__ import annotations

import json
import re

from benchmarks._harness import twins
from benchmarks._shapes import NLP, product
from tests.support.scripted_gate import COUNT_ROW, TIME_ROW, ScriptedGate
from tools import pr_gate
from tools.common import (
    REPO_ROOT,
    SELECTION_ENV,
    Row,
    asv_environment,
    bench_selection,
    compare,
    row_selection,
    split_bench_selection,
)


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


def test_pr_gate_measures_the_pr_tier_unless_told_otherwise():
    (default,) = pr_gate.with_default_selection(["--show-stderr"], REPO_ROOT)[2:]
    assert pr_gate.with_default_selection(["--show-stderr"], REPO_ROOT)[:2] == [
        "--show-stderr",
        "--bench",
    ]
    assert pr_gate.with_default_selection(["-b", "Silu"], REPO_ROOT) == ["-b", "Silu"]
    pattern = re.compile(default)
    picked = f"bench_activation.Silu.time_silu('cpu', 'float32', {NLP!r}, 'functional')"
    assert pattern.search(picked)
    first_count = "('matmul', 'mm', (128, 128, 128))"
    assert pattern.search(
        f"bench_instructions.Instructions.track_instructions('cpu', {first_count})"
    )
    assert not pattern.search(picked.replace("'cpu'", "'cuda'"))
    assert not pattern.search(picked.replace("'float32'", "'bfloat16'"))
    square = product(m=512, k=512, n=512)
    assert not pattern.search(
        f"bench_matmul.MatMul.track_gflops('cpu', 'float32', {square!r}, 'mm')"
    )


def test_the_callers_selection_is_split_from_the_other_asv_arguments():
    args = ["--bench", "Silu", "-b", "Gelu", "--bench=MatMul", "--show-stderr", "-a", "rounds=4"]
    selection, rest = split_bench_selection(args)
    assert selection == ["Silu", "Gelu", "MatMul"]
    assert rest == ["--show-stderr", "-a", "rounds=4"]
    assert bench_selection(args) == selection
    assert bench_selection(["find", "HEAD~3..HEAD", "Softmax"]) == ["Softmax"]
    assert asv_environment(REPO_ROOT, {}, selection)[SELECTION_ENV] == json.dumps(selection)
    assert SELECTION_ENV not in asv_environment(REPO_ROOT, {SELECTION_ENV: "stale"}, [])
    assert twins.SELECTION_ENV == SELECTION_ENV  # what setup_cache reads


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
    # The confirming pass samples four processes a side, the first pass asv's default.
    assert "rounds=4" in gate.calls[1] and "rounds=4" not in gate.calls[0]
    # A count rise fails the gate even when the sampled row beside it does not reproduce.
    counted = ScriptedGate([[(1.3, TIME_ROW), (1.02, COUNT_ROW)], [(1.1, TIME_ROW)]])
    assert counted.decide(counted.continuous("--bench", "x"), [], True)[0] == 1
    assert counted.selections[1] == row_selection(TIME_ROW)


def test_pr_gate_confirms_a_row_the_first_pass_read_slower_than_the_screen():
    # At factor 1.2 the screen is sqrt(1.2) = 1.095: a 1.10 is measured again (a 1.25x
    # slowdown reads that low when the base side ran a slow process), a 1.05 is not.
    gate = ScriptedGate([[(1.10, TIME_ROW)], [(1.25, TIME_ROW)]])
    assert gate.slower() == [] and gate.suspects() == [TIME_ROW]
    assert gate.decide(gate.continuous("--bench", "x"), ["--bench", "x"], True)[0] == 1
    assert gate.selections == ["x", row_selection(TIME_ROW)]
    assert gate.measured_again == (TIME_ROW,)
    quiet = ScriptedGate([[(1.05, TIME_ROW)]])
    assert quiet.decide(quiet.continuous("--bench", "x"), ["--bench", "x"], True) == (0, "")
    assert quiet.selections == ["x"] and quiet.measured_again == ()
    # Faster is never a suspect, and without confirming only asv's rule at the factor counts.
    assert ScriptedGate([[(0.8, TIME_ROW)]]).suspects() == []
    unconfirmed = ScriptedGate([[(1.10, TIME_ROW)]])
    assert unconfirmed.decide(unconfirmed.continuous("--bench", "x"), [], False) == (0, "")
