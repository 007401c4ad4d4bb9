"""What "slower" means: asv's rule on two commits' recorded rows (rates the right way round),
the paired estimate of an alternation and its interval, and the PR gate's verdict on both
(which rows it judges, at which threshold, and what it says of the rows it cannot judge).
The real gate runs are in tests/integration/test_pr_gate_bisect.py."""

from __future__ import annotations

import json
import random
import re

import pytest

from benchmarks import _names
from benchmarks._harness import twins
from benchmarks._shapes import NLP, product
from tests.support import REPO_ROOT
from tests.support.scripted_gate import (
    COUNT_ROW,
    FLOORED_COUNT_ROW,
    OTHER_ROW,
    TIME_ROW,
    ScriptedGate,
    pairs,
)
from tools._lib.asv.private import config_thresholds
from tools._lib.asv.run import asv_environment, bench_selection, split_bench_selection
from tools._lib.base.cli import Status
from tools._lib.measure import workers
from tools._lib.measure.comparison import COUNT_FACTOR, Row, compare, count_factor
from tools._lib.measure.paired import Paired, median_interval
from tools._lib.verdict.gate import with_default_selection
from tools._lib.verdict.gate_report import summary


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
    (only,) = compare(results, "m", ("a" * 40, "e"), ("b" * 40, "e"))
    assert compare(results, "m", ("a" * 40, "other"), ("b" * 40, "e")) == []
    assert only.label == "a.A.time_x('cpu')" and only.ratio == 3.0 and only.unit == "seconds"


@pytest.mark.parametrize("value", [0.0, -1.0, float("nan"), float("inf"), True])
def test_no_verdict_rests_on_a_value_that_is_no_measurement(value):
    with pytest.raises(ValueError, match="not a finite positive number"):
        row("a.A.track_x", "GB/s", 1.0, value)
    with pytest.raises(ValueError, match="not a finite positive number"):
        Paired("a.A.time_x", "seconds", (1.0, value), (1.0, 1.0))
    with pytest.raises(ValueError, match="not pairs"):
        Paired("a.A.time_x", "seconds", (1.0, 1.0), (1.0,))


def test_the_gate_measures_the_pr_tier_unless_told_otherwise():
    chosen = with_default_selection(["--show-stderr"], REPO_ROOT)
    assert chosen[:2] == ["--show-stderr", "--bench"]
    assert with_default_selection(["-b", "Silu"], REPO_ROOT) == ["-b", "Silu"]
    pattern = re.compile(chosen[2])
    picked = f"bench_activation.Silu.time_silu('cpu', 'float32', {NLP!r}, 'functional')"
    assert pattern.search(picked)
    case = "('matmul', 'mm', (128, 128, 128))"
    assert pattern.search(f"bench_instructions.Instructions.track_instructions('cpu', {case})")
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
    chosen = _names.SELECTION_ENV
    assert asv_environment(REPO_ROOT, {}, selection)[chosen] == json.dumps(selection)
    assert chosen not in asv_environment(REPO_ROOT, {chosen: "stale"}, [])
    assert chosen == twins.SELECTION_ENV  # what setup_cache reads


# ---------------------------------------------------------------- the paired estimate


def test_the_median_interval_holds_the_median_and_widens_with_fewer_pairs():
    values = [1.0 + i / 100 for i in range(16)]
    low, high = median_interval(values)
    assert values[2] == low and values[13] == high  # 99%: three values left out each side
    assert median_interval(values[:6]) == (values[0], values[5])  # too few: every value


def test_a_paired_row_is_slower_only_when_its_interval_lies_above_one():
    clear = Paired(TIME_ROW, "seconds", *pairs(1.25))
    assert clear.slowdown == clear.ratio and clear.slower(1.15) and not clear.slower(1.3)
    spread = Paired(TIME_ROW, "seconds", (1.0,) * 8, (0.8, 0.8, 1.4, 1.4) * 2)  # median 1.1, wide
    assert spread.slowdown > 1.05 and not spread.slower(1.05)
    rate = Paired("a.A.track_gbps('cpu',)", "GB/s", *pairs(0.8))  # a rate that fell
    assert rate.slowdown > 1.2 and rate.slower(1.15)


def test_a_paired_row_is_faster_only_when_every_round_reads_faster():
    def rounds(*reads: float, unit: str = "seconds") -> Paired:
        after = tuple(r * (1 + 0.002 * i) for r in reads for i in range(-4, 4))
        return Paired(TIME_ROW, unit, (1.0,) * len(after), after, (8,) * len(reads))

    assert rounds(0.80, 0.82).faster(1.15) and not rounds(0.80, 0.82).slower(1.15)
    assert not rounds(0.90, 0.91).faster(1.15)  # above 1/1.15
    flattered = rounds(0.80, 0.80, 0.80, 1.01)  # one round's pair reads slower
    assert flattered.slowdown < 0.85 and flattered.slowdown_interval[1] < 1.0
    assert not flattered.faster(1.15)
    assert rounds(1.25, 1.3, unit="GB/s").faster(1.15)  # a rate that rose


def test_a_row_is_unsettled_only_near_its_threshold():
    def paired(ratios: list[float]) -> Paired:
        return Paired(TIME_ROW, "seconds", (1.0,) * len(ratios), tuple(ratios))

    near = paired([1.07 + 0.004 * i for i in range(-6, 6)])  # 1.046 to 1.094
    assert near.unsettled_at(1.08)  # halfway there, the interval holds it
    assert not near.unsettled_at(1.20)  # not halfway to it
    assert not near.unsettled_at(1.03)  # the whole interval is above it
    assert not near.unsettled_at(None)  # not judged here
    assert not paired([1.0 + 0.004 * i for i in range(-6, 6)]).unsettled_at(1.05)
    rate = Paired(TIME_ROW, "GB/s", (1.07,) * 12, tuple(1 + 0.004 * i for i in range(-6, 6)))
    assert rate.unsettled_at(1.08)  # a rate's fall, read the right way round


def test_rounds_disagree_when_their_own_reads_lie_more_than_5_percent_apart():
    def rounds(*reads: float) -> Paired:
        after = tuple(r * (1 + 0.002 * i) for r in reads for i in range(-4, 4))
        return Paired(TIME_ROW, "seconds", (1.0,) * len(after), after, (8,) * len(reads))

    assert not rounds(1.00, 1.04).rounds_disagree  # within 5%
    assert rounds(1.00, 1.06).rounds_disagree
    assert rounds(1.00, 1.00, 0.94).rounds_disagree  # either way
    assert not rounds(1.25, 1.27, 1.26).rounds_disagree  # a real change reads alike in each


def drifting_host(seed: int, blocks: int) -> list[float]:
    """A host's slowness per block in the shape measured on the drifting hosts: spells of
    seconds (many blocks) at 1.0 to 1.6x, one-sided, and single-block bursts up to 2x."""
    draw, levels = random.Random(seed), []
    while len(levels) < blocks:
        level = 1.0 if draw.random() < 0.5 else draw.uniform(1.05, 1.6)
        levels += [level] * draw.randint(20, 120)
    return [
        lv * (draw.uniform(1.3, 2.0) if draw.random() < 0.05 else 1.0) for lv in levels[:blocks]
    ]


def alternated(seed: int, slowdown: float, pairs_: int = 16) -> Paired:
    """Pairs taken ABBA on the drifting host, the halves of a pair adjacent blocks, and as
    many again when undecided, as tools/_lib/measure/alternation.py takes them."""
    host = drifting_host(seed, 4 * pairs_)
    before, after = [], []
    for i in range(2 * pairs_):
        first, second = host[2 * i], host[2 * i + 1]
        a, b = (first, second) if i % 2 == 0 else (second, first)
        before.append(0.010 * a)
        after.append(0.010 * slowdown * b)
        paired = Paired(TIME_ROW, "seconds", tuple(before), tuple(after))
        if i + 1 == pairs_ and not paired.undecided:
            break
    return paired


def test_under_a_one_sided_drift_a_slowdown_is_found_and_a_no_op_is_not_flagged():
    for seed in range(200):
        assert not alternated(seed, 1.0).slower(1.05), seed
        hidden = alternated(seed, 1.10)
        assert hidden.slower(1.05) and abs(hidden.slowdown - 1.10) < 0.03, seed


class CarriedOver:
    """Two sides timed by tools/_lib/measure/workers.alternate on a host where a block that follows
    one of the other process (or the row's setup) costs ``penalty`` times one that follows
    its own: 2x for a 48 MiB ``zeros`` on a 480 MiB-L3 Xeon host."""

    def __init__(self, slowdown: float, penalty: float, jitter: int = 0):
        self.workers = ("before", "after")
        self.cost = {"before": 0.010, "after": 0.010 * slowdown}
        self.penalty, self.last, self.draw = penalty, None, random.Random(jitter)

    def ask(self, worker, timeout, block):
        place = 1.0 if worker == self.last else self.penalty
        self.last = worker
        noise = 1 + self.draw.uniform(-0.01, 0.01)
        return {"status": "measured", "value": self.cost[worker] * place * noise}


def carried_over(slowdown: float, penalty: float, jitter: int = 0) -> Paired:
    rounds = [
        workers.alternate(CarriedOver(slowdown, penalty, jitter + r), 1, 8, 1.0) for r in range(3)
    ]
    return Paired.of_rounds(TIME_ROW, [workers.Timed(b, a, "seconds") for b, a in rounds])


def test_a_blocks_place_in_the_abba_order_is_taken_out():
    for jitter in range(50):
        no_op = carried_over(1.0, penalty=2.0, jitter=jitter)
        assert abs(no_op.slowdown - 1.0) < 0.02 and not no_op.slower(1.03), jitter
        hidden = carried_over(1.10, penalty=2.0, jitter=jitter)
        assert abs(hidden.slowdown - 1.10) < 0.02 and hidden.slower(1.05), jitter
    # the pairs alone read 2 and 0.5 by turns: their median could be anything between
    assert sorted({round(r, 1) for r in carried_over(1.0, 2.0).pair_ratios}) == [0.5, 2.0]
    assert len(carried_over(1.0, 2.0).ratios) == 24  # eight pairs a round, three rounds


def test_the_drift_would_mislead_sides_measured_seconds_apart():
    """What asv's rounds meet on such a host: each side's samples from its own stretch."""
    misled = 0
    for seed in range(200):
        host = drifting_host(seed, 400)
        before = sorted(host[:16])[8]  # one side's median in one stretch,
        after = sorted(host[200:216])[8]  # the other's a few seconds later
        misled += max(after / before, before / after) > 1.15
    assert misled > 20


# ---------------------------------------------------------------- the gate's verdict


def test_a_2_percent_count_rise_fails_without_being_measured_again():
    gate = ScriptedGate({COUNT_ROW: 1.02, TIME_ROW: 1.0})
    verdict = gate.decide(0)
    assert verdict.status == Status.REGRESSED
    assert gate.asked == [[TIME_ROW]]  # the count is not measured again
    assert ScriptedGate({COUNT_ROW: 1.005}).decide(0).status == Status.OK


def test_a_count_row_a_layout_moves_further_is_judged_at_its_own_floor():
    """asv.conf.json gives the row a floor above the counts' own factor: a 2% rise of its
    count is within what a change of the counting process alone did, and passes; past its
    floor it fails, and the report says what it was judged at."""
    thresholds = config_thresholds(REPO_ROOT)
    floor = count_factor(thresholds, FLOORED_COUNT_ROW)
    assert floor > COUNT_FACTOR + 0.01
    assert count_factor(thresholds, COUNT_ROW) == COUNT_FACTOR
    assert ScriptedGate({FLOORED_COUNT_ROW: 1.02}).decide(0).status == Status.OK
    past = ScriptedGate({FLOORED_COUNT_ROW: floor + 0.01})
    assert past.decide(0).status == Status.REGRESSED
    assert past.row_factor(next(iter(past.decide(0).rows))) == floor
    # Never above the gate's factor, which caps every threshold.
    low = ScriptedGate({FLOORED_COUNT_ROW: 1.02}, factor=1.015)
    assert low.decide(0).status == Status.REGRESSED


def test_the_first_pass_does_not_decide_a_timed_row_the_alternation_does():
    assert ScriptedGate({TIME_ROW: 1.4}, {TIME_ROW: 1.0}).decide(0).status == Status.OK
    assert ScriptedGate({TIME_ROW: 1.0}, {TIME_ROW: 1.25}).decide(0).status == Status.REGRESSED


def test_a_slowdown_above_a_rows_floor_fails_though_below_the_factor():
    floors = {TIME_ROW: 1.05, OTHER_ROW: 1.12}
    gate = ScriptedGate(
        {TIME_ROW: 1.0, OTHER_ROW: 1.0}, {TIME_ROW: 1.08, OTHER_ROW: 1.08}, floors=floors
    )
    verdict = gate.decide(0)
    assert verdict.status == Status.REGRESSED
    assert [j.row.label for j in verdict.judged if j.slower] == [TIME_ROW]
    # each row is measured by the threshold it is judged at
    assert gate.thresholds == {TIME_ROW: 1.05, OTHER_ROW: 1.12}


def test_a_row_whose_floor_is_above_the_factor_is_not_judged_here():
    gate = ScriptedGate({TIME_ROW: 1.0}, {TIME_ROW: 1.25}, floors={TIME_ROW: 1.30})
    verdict = gate.decide(0)
    assert verdict.status == Status.OK and [j.row.label for j in verdict.not_judged] == [TIME_ROW]
    assert gate.thresholds == {TIME_ROW: None}
    text = summary(gate, verdict, ("base", "head"), lambda: "")
    section = text.split("### Not judged here")[1]
    assert TIME_ROW in section and "1.250x" in section and "floor 1.30 on this host" in section


def test_a_row_that_cannot_be_measured_again_fails_saying_why():
    verdict = (gate := ScriptedGate({TIME_ROW: 1.0}, {TIME_ROW: None})).decide(0)
    assert verdict.status == Status.BENCHMARK_FAILED
    text = summary(gate, verdict, ("base", "head"), lambda: "")
    assert "### Not measured again" in text and "its process died" in text


def test_the_summary_shows_outside_text_as_data():
    """A ref name is the caller's text: it cannot open markup in the summary."""
    gate = ScriptedGate({TIME_ROW: 1.0})
    text = summary(gate, gate.decide(0), ("<!-- x --> @team", "head"), lambda: "")
    assert "`<!-- x --> @team`" in text
