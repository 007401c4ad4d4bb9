"""The alternation's protocol with real worker processes (benchmarks/_harness/worker.py) on
probe suites whose side misbehaves: a side that dies, hangs or skips a row ends that row
with the reason, nothing waits past its timeout, the other side is closed cleanly, and the
next row is measured as usual. What it measures is not checked here (that is a
measurement: tools/studies/noise_study.py)."""

from __future__ import annotations

import re
import time

import pytest

from tests.support.probe_workers import FINE, side
from tools._lib.measure import alternation, workers
from tools._lib.measure.alternation import measure_rows


@pytest.fixture(autouse=True)
def quick(quick_alternation):
    """Every test here measures one round of two pairs a row (tests/conftest.py)."""


def test_a_side_that_dies_ends_its_row_and_the_next_row_is_measured(probe_repo, tmp_path, capsys):
    sides = (side(tmp_path, "ok"), side(tmp_path, "dies"))
    found = measure_rows(probe_repo, sides, ["bench_probe.Dies.time_sum", FINE])
    assert found["bench_probe.Dies.time_sum"].paired is None
    assert "died at dies" in found["bench_probe.Dies.time_sum"].why
    assert len(found[FINE].paired.pair_ratios) == 2  # one ABBA cycle
    # the round's log says what its setups cost beside its blocks
    assert re.search(r"round 1: 2 rows in \d+ s \(\d+ s setting them up\)", capsys.readouterr().out)


def test_a_side_that_hangs_is_given_up_on_and_the_next_row_is_measured(probe_repo, tmp_path):
    sides = (side(tmp_path, "hangs"), side(tmp_path, "ok"))
    begun = time.monotonic()
    found = measure_rows(probe_repo, sides, ["bench_probe.Hangs.time_sum", FINE])
    assert "hangs gave no answer in" in found["bench_probe.Hangs.time_sum"].why
    assert found[FINE].paired is not None
    assert time.monotonic() - begun < 60


def test_a_side_that_skips_a_row_says_why_and_closes_the_other(probe_repo, tmp_path):
    sides = (side(tmp_path, "ok"), side(tmp_path, "skips"))
    found = measure_rows(probe_repo, sides, ["bench_probe.Skips.time_sum", FINE, FINE + "x"])
    assert found["bench_probe.Skips.time_sum"].why == "skip at skips: not on this side"
    assert found[FINE].paired is not None
    assert "error at ok: AttributeError" in found[FINE + "x"].why  # no such method


def test_a_track_is_read_the_way_round_its_unit_says(probe_repo, tmp_path):
    sides = (side(tmp_path, "ok"), side(tmp_path, "dies"))  # "dies" tracks 2.0 GB/s here
    (found,) = measure_rows(probe_repo, sides, ["bench_probe.Tracked.track_value"]).values()
    assert found.paired.unit == "GB/s" and found.paired.ratio == 2.0
    assert found.paired.slowdown == 0.5  # a rate that doubled is twice as fast


def scripted_rounds(
    monkeypatch, ratios: dict[str, list[float]], speeds: dict[str, list[float]] | None = None
) -> dict[str, int]:
    """One_round as a host would answer it: each row's pairs at the given ratios, times its
    process pair's speed in that round (``speeds``, by row; 1 where none is given); how
    many rounds each row was measured in."""
    measured_in = dict.fromkeys(ratios, 0)
    speeds = speeds or {}

    def one_round(repo, sides, labels, scratch, round_):
        timed = {}
        for label in labels:
            measured_in[label] += 1
            speed = speeds.get(label, [1.0] * 5)[round_]
            after = [speed * r for r in ratios[label]]
            timed[label] = workers.Timed([1.0] * len(after), after, "seconds")
        return timed

    monkeypatch.setattr(alternation, "one_round", one_round)
    monkeypatch.setattr(alternation, "FIRST_ROUNDS", 2)
    monkeypatch.setattr(alternation, "MAX_ROUNDS", 5)
    return measured_in


def test_a_row_near_its_threshold_is_measured_in_more_rounds(monkeypatch, tmp_path):
    spread = [1.0 + 0.006 * i for i in range(-4, 4)]  # a round's pairs, 0.976 to 1.018
    measured_in = scripted_rounds(
        monkeypatch,
        {
            "edge": [1.07 * r for r in spread],  # its interval holds the threshold, 1.08
            "clear": [1.30 * r for r in spread],  # far past it
            "no_op": spread,  # nowhere near it
            "unjudged": [1.07 * r for r in spread],  # no threshold here
        },
    )
    sides = (side(tmp_path, "a"), side(tmp_path, "b"))
    thresholds = {"edge": 1.08, "clear": 1.08, "no_op": 1.08, "unjudged": None}
    found = measure_rows(tmp_path, sides, list(thresholds), thresholds)
    extra = measured_in.pop("edge")
    # a row about to fail is measured in a third round first; the rest stop at two
    assert 2 < extra <= 5 and measured_in == {"clear": 3, "no_op": 2, "unjudged": 2}
    assert found["edge"].paired.rounds == (8,) * extra


def test_a_row_whose_rounds_disagree_is_measured_until_the_stray_round_is_outvoted(
    monkeypatch, tmp_path
):
    spread = [1.0 + 0.006 * i for i in range(-4, 4)]
    # Identical code; the second round's process pair ran the new side 20% slower (as
    # cumsum's did on the quiet Xeon host), every other pair at one speed.
    measured_in = scripted_rounds(
        monkeypatch,
        {"stray": spread, "steady": spread},
        speeds={"stray": [1.0, 1.2, 1.0, 1.0, 1.0]},
    )
    sides = (side(tmp_path, "a"), side(tmp_path, "b"))
    found = measure_rows(tmp_path, sides, ["stray", "steady"], {"stray": 1.08, "steady": 1.08})
    assert measured_in == {"stray": 5, "steady": 2}
    stray = found["stray"].paired
    # Two rounds pooled would read it between 1.0 and 1.2; five read the code's 1.0.
    assert abs(stray.slowdown - 1.0) < 0.01 and not stray.slower(1.08)
    assert max(stray.round_slowdowns) > 1.19  # the stray round is still in the pooled pairs


def test_a_no_op_two_process_pairs_ran_slow_is_measured_again_before_it_fails(
    monkeypatch, tmp_path
):
    spread = [1.0 + 0.002 * i for i in range(-4, 4)]
    # Identical code; the first two process pairs ran the new side 7.7% slower (as randn's
    # did on the quiet Xeon host), agreeing with each other, then three ran it alike.
    measured_in = scripted_rounds(
        monkeypatch, {"randn": spread}, speeds={"randn": [1.077, 1.077, 1.0, 1.0, 1.0]}
    )
    sides = (side(tmp_path, "a"), side(tmp_path, "b"))
    found = measure_rows(tmp_path, sides, ["randn"], {"randn": 1.05})["randn"].paired
    assert measured_in == {"randn": 5}  # the third disagreed, so the most rounds
    assert not found.slower(1.05) and abs(found.slowdown - 1.0) < 0.01


def test_a_depth_measures_every_row_in_exactly_that_many_rounds(monkeypatch, tmp_path):
    spread = [1.0 + 0.006 * i for i in range(-4, 4)]
    rows = {"edge": [1.07 * r for r in spread], "no_op": spread, "clear": spread}
    measured_in = scripted_rounds(monkeypatch, rows, speeds=dict.fromkeys(rows, [1.0] * 16))
    sides = (side(tmp_path, "a"), side(tmp_path, "b"))
    found = measure_rows(tmp_path, sides, list(rows), dict.fromkeys(rows, 1.08), rounds=16)
    assert measured_in == dict.fromkeys(rows, 16)
    assert found["edge"].paired.rounds == (8,) * 16


def test_a_deep_measurement_is_judged_by_its_rounds_median_not_its_one_stray_round():
    from tools._lib.measure.paired import Paired
    from tools._lib.measure.workers import Timed

    spread = [1.0 + 0.004 * i for i in range(-4, 4)]

    def rounds(speeds):
        return [Timed([1.0] * 8, [s * 1.06 * r for r in spread], "seconds") for s in speeds]

    # A 1.06x change in sixteen process pairs, one of which ran the old side slow.
    deep = Paired.of_rounds("row", rounds([1.0] * 15 + [0.9]))
    assert min(deep.round_slowdowns) < 1.0 and deep.slower(1.04)
    # In the alternation's own rounds one such pair still stops the verdict.
    shallow = Paired.of_rounds("row", rounds([1.0, 1.0, 0.9]))
    assert not shallow.slower(1.04)
    assert all(s > 1.0 for s in Paired.of_rounds("row", rounds([1.0] * 3)).round_slowdowns)
    assert Paired.of_rounds("row", rounds([1.0] * 3)).slower(1.04)
