"""Throughput tracks that read their class's time_ row: the two benchmark types, built and
run as asv_runner builds and runs them (discovery, then setup, run and teardown)."""

from __future__ import annotations

import math
import sys

import pytest
from asv_runner.benchmarks import benchmark_types
from asv_runner.benchmarks.track import TrackBenchmark

from benchmarks._harness import base, derived
from benchmarks._harness.derived import DerivedTrack, RecordedTime
from tests.support import REPO_ROOT
from tests.support.probe import PARAMS, ProbeBandwidth, ProbeFlops

FLOP = 1000  # the probe op's FLOPs per call (conftest's probe_op)


class TimedFlops(ProbeFlops):
    number, repeat, warmup_time = 3, 4, 0.0

    def time_probe(self, device, shape, variant):
        self.call()


class TimedBandwidth(ProbeBandwidth):
    number, repeat, warmup_time = 3, 4, 0.0

    def time_probe(self, device, shape, variant):
        self.call()


@pytest.fixture
def run_folder(monkeypatch, tmp_path):
    """What the tools and asv set for a benchmark process of one run."""
    monkeypatch.setenv("TENSOROPS_RUN_DIR", str(tmp_path))
    monkeypatch.setenv("ASV_COMMIT", "c1")
    monkeypatch.setenv("ASV_ENV_NAME", "env-1")
    return tmp_path


def built(kind: type, cls: type, method: str):
    """One benchmark as asv_runner's discovery builds it, at the probe's CPU params."""
    instance = cls()
    func = getattr(instance, method)
    benchmark = kind(
        f"bench_probe.{cls.__name__}.{method}", func, [func, instance, sys.modules[__name__]]
    )
    benchmark.set_param_idx(0)
    assert benchmark._current_params == PARAMS
    return benchmark


def run(kind: type, cls: type, method: str):
    """One benchmark process, as asv_runner's ``run`` runs it."""
    benchmark = built(kind, cls, method)
    skip = benchmark.do_setup()
    try:
        return math.nan if skip else benchmark.do_run()
    finally:
        benchmark.do_teardown()


def no_inputs(monkeypatch):
    def prepare(*args, **kwargs):
        raise AssertionError("the track built inputs and warmed up")

    monkeypatch.setattr(base, "prepare_once", prepare)


def test_a_track_answers_with_its_time_rows_samples_and_builds_no_inputs(
    probe_op, run_folder, monkeypatch
):
    timed = run(RecordedTime, TimedFlops, "time_probe")
    calls = probe_op["calls"]
    no_inputs(monkeypatch)
    gflops = run(DerivedTrack, TimedFlops, "track_gflops")
    assert gflops["number"] == timed["number"] == 3
    assert gflops["samples"] == pytest.approx([FLOP / 1e9 / s for s in timed["samples"]])
    assert probe_op["calls"] == calls  # not one call timed again


def test_every_track_of_the_class_reads_the_same_record(probe_op, run_folder, monkeypatch):
    """GB/s and % of peak of a bandwidth class: one time_ row, two tracks, no call timed."""
    timed = run(RecordedTime, TimedBandwidth, "time_probe")
    no_inputs(monkeypatch)
    gbps = run(DerivedTrack, TimedBandwidth, "track_gbps")
    assert gbps["samples"] == pytest.approx([8000 / 1e9 / s for s in timed["samples"]])
    monkeypatch.setattr("benchmarks._harness.tracks.peak_copy_gbps", lambda device, controls: 50.0)
    share = run(DerivedTrack, TimedBandwidth, "track_percent_of_peak")
    assert share["samples"] == pytest.approx([100.0 * g / 50.0 for g in gbps["samples"]])


def test_the_track_of_a_nightly_reads_every_round_of_its_time_row(probe_op, run_folder):
    """asv runs a time_ row in two rounds and a track once, after both: the track's
    samples are all of the time_ row's."""
    rounds = [run(RecordedTime, TimedFlops, "time_probe")["samples"] for _ in range(2)]
    gflops = run(DerivedTrack, TimedFlops, "track_gflops")
    assert gflops["samples"] == pytest.approx([FLOP / 1e9 / s for s in rounds[0] + rounds[1]])


def test_a_track_run_in_every_round_reads_each_round_once(probe_op, run_folder):
    """``--attribute rounds=2`` runs the track after each round of the time_ row, and asv
    adds the track's rounds as it adds the time_ row's: each sample counted once."""
    for _ in range(2):
        timed = run(RecordedTime, TimedFlops, "time_probe")["samples"]
        gflops = run(DerivedTrack, TimedFlops, "track_gflops")
        assert gflops["samples"] == pytest.approx([FLOP / 1e9 / s for s in timed])


def test_without_a_record_a_track_times_its_call_itself(probe_op, run_folder, monkeypatch):
    """Asked for alone (no time_ row ran), or outside a run the tools started."""
    gflops = run(DerivedTrack, TimedFlops, "track_gflops")
    assert len(gflops["samples"]) >= 3 and probe_op["calls"] > 0
    run(RecordedTime, TimedFlops, "time_probe")
    monkeypatch.delenv("TENSOROPS_RUN_DIR")
    calls = probe_op["calls"]
    run(DerivedTrack, TimedFlops, "track_gflops")
    assert probe_op["calls"] > calls


def test_a_time_row_that_fails_leaves_no_record(probe_op, run_folder):
    run(RecordedTime, TimedFlops, "time_probe")
    benchmark = built(RecordedTime, TimedFlops, "time_probe")
    benchmark.do_setup()
    benchmark.func.__self__.call = lambda: 1 / 0
    with pytest.raises(ZeroDivisionError):
        benchmark.do_run()
    benchmark.do_teardown()
    path = derived.record_path("bench_probe.TimedFlops.time_probe", PARAMS)
    assert not path.exists()
    calls = probe_op["calls"]
    run(DerivedTrack, TimedFlops, "track_gflops")
    assert probe_op["calls"] > calls  # timed itself


def test_a_record_is_read_only_by_its_own_class_params_commit_and_environment(
    probe_op, run_folder, monkeypatch
):
    name = "bench_probe.TimedFlops.time_probe"
    path = derived.record_path(name, PARAMS)
    derived.write_record(path, name, PARAMS, {"rounds": [[1e-6]], "number": 1})
    assert derived.read_record(path, name, PARAMS) == ([[1e-6]], 1)
    assert derived.read_record(path, "bench_probe.Other.time_probe", PARAMS) is None
    assert derived.read_record(path, name, ("cuda", (4, 4), "plus_one")) is None
    assert derived.record_path(name, ("cuda", (4, 4), "plus_one")) != path
    monkeypatch.setenv("ASV_COMMIT", "c2")
    assert derived.record_path(name, PARAMS) != path
    monkeypatch.setenv("ASV_COMMIT", "c1")
    monkeypatch.setenv("ASV_ENV_NAME", "env-2")
    assert derived.record_path(name, PARAMS) != path
    path.write_text("{not json")
    assert derived.read_record(path, name, PARAMS) is None


def test_asv_runner_builds_the_suites_rows_with_the_two_types():
    from asv_runner.discovery import disc_benchmarks

    kinds = {b.name: type(b) for b in disc_benchmarks(str(REPO_ROOT / "benchmarks"))}
    assert kinds["bench_matmul.MatMul.time_matmul"] is RecordedTime
    assert kinds["bench_matmul.MatMul.track_gflops"] is DerivedTrack
    assert kinds["bench_norm.LayerNorm.track_percent_of_peak"] is DerivedTrack
    assert kinds["bench_device.MatMul.track_device_time"] is TrackBenchmark
    assert benchmark_types[:2] == [RecordedTime, DerivedTrack]
    derived.register()
    assert benchmark_types.count(RecordedTime) == benchmark_types.count(DerivedTrack) == 1
