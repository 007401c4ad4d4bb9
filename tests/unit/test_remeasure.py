"""The alternation's protocol with real worker processes (benchmarks/_harness/worker.py) on
probe suites whose side misbehaves: a side that dies, hangs or skips a row ends that row
with the reason, nothing waits past its timeout, the other side is closed cleanly, and the
next row is measured as usual. What it measures is not checked here (that is a
measurement: tools/studies/noise_study.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tools._lib import remeasure, workers
from tools._lib.remeasure import Side, measure_again

PROBE = """
import os
import time

from probe_mode import MODE


class Fine:
    def time_sum(self):
        sum(range(200))


class Dies:
    def time_sum(self):
        if MODE == "dies":
            os._exit(7)
        sum(range(200))


class Hangs:
    def time_sum(self):
        if MODE == "hangs":
            time.sleep(3600)
        sum(range(200))


class Skips:
    def setup(self):
        if MODE == "skips":
            raise NotImplementedError("not on this side")

    def time_sum(self):
        sum(range(200))


class Tracked:
    def track_value(self):
        return 2.0 if MODE == "dies" else 1.0

    track_value.unit = "GB/s"
"""
FINE = "bench_probe.Fine.time_sum"


@pytest.fixture
def probe_repo(tmp_path) -> Path:
    """A repository whose suites are the harness and the probe, beside two libraries."""
    repo = tmp_path / "repo"
    (repo / "benchmarks").mkdir(parents=True)
    for name in ("__init__.py", "_names.py", "_harness"):
        (repo / "benchmarks" / name).symlink_to(REPO_ROOT / "benchmarks" / name)
    (repo / "benchmarks" / "bench_probe.py").write_text(PROBE)
    return repo


def side(root: Path, mode: str) -> Side:
    library = root / f"library-{mode}"
    library.mkdir(exist_ok=True)
    (library / "probe_mode.py").write_text(f"MODE = {mode!r}\n")
    return Side(mode, Path(sys.executable), library)


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    """One round of two pairs; a hang is given up on after a few seconds."""
    monkeypatch.setattr(remeasure, "ROUNDS", 1)
    monkeypatch.setattr(remeasure, "EXTRA_ROUNDS", 0)
    monkeypatch.setattr(remeasure, "PAIRS", 2)
    monkeypatch.setattr(workers, "BLOCK_SLACK_SECONDS", 2.0)
    monkeypatch.setattr(workers, "SETUP_SECONDS", 15.0)


def test_a_side_that_dies_ends_its_row_and_the_next_row_is_measured(probe_repo, tmp_path):
    sides = (side(tmp_path, "ok"), side(tmp_path, "dies"))
    found = measure_again(probe_repo, sides, ["bench_probe.Dies.time_sum", FINE])
    assert found["bench_probe.Dies.time_sum"].paired is None
    assert "died at dies" in found["bench_probe.Dies.time_sum"].why
    assert len(found[FINE].paired.pair_ratios) == 2  # one ABBA cycle


def test_a_side_that_hangs_is_given_up_on_and_the_next_row_is_measured(probe_repo, tmp_path):
    sides = (side(tmp_path, "hangs"), side(tmp_path, "ok"))
    begun = time.monotonic()
    found = measure_again(probe_repo, sides, ["bench_probe.Hangs.time_sum", FINE])
    assert "hangs gave no answer in" in found["bench_probe.Hangs.time_sum"].why
    assert found[FINE].paired is not None
    assert time.monotonic() - begun < 60


def test_a_side_that_skips_a_row_says_why_and_closes_the_other(probe_repo, tmp_path):
    sides = (side(tmp_path, "ok"), side(tmp_path, "skips"))
    found = measure_again(probe_repo, sides, ["bench_probe.Skips.time_sum", FINE, FINE + "x"])
    assert found["bench_probe.Skips.time_sum"].why == "skip at skips: not on this side"
    assert found[FINE].paired is not None
    assert "error at ok: AttributeError" in found[FINE + "x"].why  # no such method


def test_a_track_is_read_the_way_round_its_unit_says(probe_repo, tmp_path):
    sides = (side(tmp_path, "ok"), side(tmp_path, "dies"))  # "dies" tracks 2.0 GB/s here
    (found,) = measure_again(probe_repo, sides, ["bench_probe.Tracked.track_value"]).values()
    assert found.paired.unit == "GB/s" and found.paired.ratio == 2.0
    assert found.paired.slowdown == 0.5  # a rate that doubled is twice as fast


def scripted_rounds(monkeypatch, ratios: dict[str, list[float]]) -> dict[str, int]:
    """One_round as a host would answer it: each row's pairs at the given ratios, every
    round alike; how many rounds each row was measured in."""
    measured_in = dict.fromkeys(ratios, 0)

    def one_round(repo, sides, labels, scratch, round_):
        for label in labels:
            measured_in[label] += 1
        return {
            label: workers.Timed([1.0] * len(ratios[label]), list(ratios[label]), "seconds")
            for label in labels
        }

    monkeypatch.setattr(remeasure, "one_round", one_round)
    monkeypatch.setattr(remeasure, "ROUNDS", 3)
    monkeypatch.setattr(remeasure, "EXTRA_ROUNDS", 2)
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
    found = measure_again(tmp_path, sides, list(thresholds), thresholds)
    extra = measured_in.pop("edge")
    assert 3 < extra <= 5 and measured_in == {"clear": 3, "no_op": 3, "unjudged": 3}
    assert found["edge"].paired.rounds == (8,) * extra
