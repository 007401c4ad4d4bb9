"""The tracks the suites mix in (throughput, % of peak), the calibration they divide by,
training steps, compiled variants, instruction counts, and what asv discovers."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
import torch

from benchmarks import bench_device
from benchmarks._harness import (
    BandwidthTracks,
    DeviceTracks,
    FlopsTracks,
    GbpsTrack,
    calibration,
    callgrind,
    controls,
    devices,
    measure,
    prepare,
    tracks,
)
from benchmarks._harness.base import OpBenchmark
from tensorops._registry import _OPS
from tests.support import REPO_ROOT
from tests.support.probe import PARAMS, Probe, ProbeBandwidth, ProbeFlops

# ------------------------------------------------------------------- throughput


def test_throughput_tracks_give_asv_one_sample_per_timed_block(monkeypatch, probe_op):
    """In the form asv reads a timing result in: asv keeps the samples' median and
    confidence interval, and asv compare tests a change of a track for significance."""
    timed = ([2e-6, 4e-6, 2.5e-6], 100)
    monkeypatch.setattr(tracks, "sampled_seconds", lambda call, threads, min_run_time: timed)
    flops, bandwidth = ProbeFlops(), ProbeBandwidth()
    for bench in (flops, bandwidth):
        bench.setup(*PARAMS)
    try:
        gflops = flops.track_gflops(*PARAMS)
        assert gflops["number"] == 100
        assert gflops["samples"] == pytest.approx([1000 / t / 1e9 for t in timed[0]])
        gbps = bandwidth.track_gbps(*PARAMS)["samples"]
        assert gbps == pytest.approx([8000 / t / 1e9 for t in timed[0]])
    finally:
        for bench in (bandwidth, flops):  # last set up, first torn down: controls nest
            bench.teardown(*PARAMS)


def test_a_call_slower_than_the_run_time_still_gives_three_samples():
    """One block (a call longer than min_run_time) would give asv an infinite interval."""
    calls = []
    seconds, number = measure.sampled_seconds(lambda: calls.append(time.sleep(0.02)), 1, 0.01)
    assert number == 1 and len(seconds) == measure.MIN_BLOCKS == 3
    assert all(s >= 0.02 for s in seconds) and len(calls) >= 3


def test_an_op_without_flops_skips_its_flops_tracks_saying_why(probe_op, capsys):
    _OPS["probe"] = dataclasses.replace(_OPS["probe"], flops=None)
    bench = ProbeFlops()
    bench.setup(*PARAMS)
    try:
        with pytest.raises(NotImplementedError, match="states no FLOPs") as raised:
            bench.track_gflops(*PARAMS)
        from asv_runner.benchmarks.mark import SkipNotImplemented

        assert isinstance(raised.value, SkipNotImplemented)  # asv stores it as n/a
        assert "skipped: op 'probe' states no FLOPs" in capsys.readouterr().err
    finally:
        bench.teardown(*PARAMS)


def test_the_track_mixins_are_abstract_so_asv_collects_only_the_suites():
    for mixin in (FlopsTracks, GbpsTrack, BandwidthTracks, DeviceTracks):
        assert inspect.isabstract(mixin), mixin
    assert not inspect.isabstract(ProbeFlops)
    assert not inspect.isabstract(bench_device.MatMul)
    assert FlopsTracks.track_gflops.unit == "GFLOP/s"
    assert BandwidthTracks.track_gbps.unit == "GB/s"
    assert bench_device.MatMul.track_peak_device_memory.unit == "bytes"


def test_asv_collects_the_suites_and_not_the_harness():
    from asv_runner.discovery import disc_benchmarks

    names = {b.name for b in disc_benchmarks(str(REPO_ROOT / "benchmarks"))}
    assert "bench_device.MatMul.track_device_time" in names
    assert "bench_device.Synchronize.track_sync_time" in names
    assert "bench_matmul.MatMul.track_gflops" in names
    assert not [name for name in names if not name.startswith("bench_")]


# ------------------------------------------------------------------- % of peak


def test_calibration_is_measured_once_per_process_and_dtype(monkeypatch, fresh_cache):
    monkeypatch.setattr(calibration, "CALIBRATION_MIN_RUN_TIME", 0.01)
    # A small product: a bfloat16 1024^3 one takes seconds a call where it is emulated.
    monkeypatch.setitem(calibration.CALIBRATION_MATMUL, "cpu", 128)
    prepared = []
    real_prepare = calibration.prepare
    monkeypatch.setattr(
        calibration, "prepare", lambda *a, **k: prepared.append(k) or real_prepare(*a, **k)
    )
    cpu, fixed = devices.CpuDevice(), controls.Controls(threads=1)
    first = calibration.peak_matmul_gflops(cpu, "float32", fixed)
    assert calibration.peak_matmul_gflops(cpu, "float32", fixed) == first
    assert [k["shape"] for k in prepared] == [(128, 128, 128)]
    calibration.peak_matmul_gflops(cpu, "bfloat16", fixed)
    assert [k["dtype"] for k in prepared] == ["float32", "bfloat16"]


def test_one_asv_run_calibrates_once_for_all_its_processes(tmp_path):
    """Processes of one run (the run's folder, one commit) share the figure;
    another commit or no asv measures again."""
    script = textwrap.dedent(
        """
        import sys
        from benchmarks._harness.calibration import once_per_run

        def measure():
            with open(sys.argv[1], "a") as log:
                log.write("measured\\n")
            return 42.5

        print(once_per_run("matmul cpu float32 test-" + sys.argv[2], measure))
        """
    )
    log = tmp_path / "log"

    def process(commit: str | None) -> str:
        env = {k: v for k, v in os.environ.items() if k != "ASV_COMMIT"}
        env["TENSOROPS_RUN_DIR"] = str(tmp_path / "run")  # the tools make one a run
        if commit:
            env["ASV_COMMIT"] = commit
        done = subprocess.run(
            [sys.executable, "-c", script, str(log), str(os.getpid())],
            env=env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert [process("c1"), process("c1")] == ["42.5", "42.5"]
    assert log.read_text().count("measured") == 1
    process("c2")
    process(None)
    process(None)
    assert log.read_text().count("measured") == 4


def test_a_figure_planted_in_a_shared_temporary_folder_is_never_read(monkeypatch, tmp_path):
    """Anyone may write to /tmp: a figure left at a path another user can guess would set
    every % of peak row's divisor."""
    from benchmarks._harness.calibration import once_per_run

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("ASV_COMMIT", "c1")
    monkeypatch.delenv("TENSOROPS_RUN_DIR", raising=False)
    key = "matmul cpu float32 planted"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    planted = tmp_path / "tensorops-calibration" / f"{os.getppid()}-c1" / f"{digest}.json"
    planted.parent.mkdir(parents=True)
    planted.write_text(json.dumps({"key": key, "value": 12345.0}))
    assert once_per_run(key, lambda: 1.0) == 1.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tensorops-calibration"]  # no more


def test_the_tools_give_each_asv_run_a_private_folder_and_remove_it(monkeypatch, tmp_path):
    from tools._lib.asv import run as asv_run

    seen = {}

    def run(command, **kwargs):
        folder = Path(kwargs["env"]["TENSOROPS_RUN_DIR"])
        status = folder.lstat()
        seen.update(folder=folder, mode=status.st_mode & 0o777, owner=status.st_uid)
        (folder / "c1").mkdir()  # what the run's processes write
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(asv_run.subprocess, "run", run)
    asv_run.asv("publish", cwd=REPO_ROOT)
    assert seen["mode"] == 0o700 and seen["owner"] == os.getuid()
    assert not seen["folder"].exists()


def test_copy_calibration_counts_bytes_read_and_written(monkeypatch, fresh_cache):
    monkeypatch.setattr(calibration, "measure_seconds", lambda call, threads, min_run_time: 0.5)
    peak = calibration.peak_copy_gbps(devices.CpuDevice(), controls.Controls(threads=1))
    assert peak == 2 * calibration.CALIBRATION_COPY_BYTES["cpu"] / 0.5 / 1e9


def test_the_calibration_case_itself_is_near_100_percent_of_peak(monkeypatch, fresh_cache):
    from benchmarks.bench_matmul import MatMul

    monkeypatch.setattr(calibration, "CALIBRATION_MIN_RUN_TIME", 0.1)
    params = ("cpu", "float32", (1024, 1024, 1024), "mm")
    bench = MatMul()
    bench.setup(*params)
    try:
        percent = bench.track_percent_of_peak(*params)["samples"]
        assert 50 < statistics.median(percent) < 150
    finally:
        bench.teardown(*params)


# ------------------------------------------------------------------- training, compile


def test_a_training_step_clears_grads_so_they_never_accumulate():
    x = torch.randn(5, 3)
    weight = torch.randn(4, 3)
    indices = torch.tensor([0, 2, 4])
    step = prepare.with_backward(
        lambda inputs: lambda: (inputs[0] @ inputs[1].T)[inputs[2]], (x, weight, indices), seed=0
    )
    step()
    first = (x.grad.clone(), weight.grad.clone())
    step()
    step()
    assert torch.equal(x.grad, first[0]) and torch.equal(weight.grad, first[1])
    assert x.requires_grad and weight.requires_grad and not indices.requires_grad
    assert x.grad.abs().sum() > 0


def test_training_benchmarks_time_forward_and_backward(probe_op):
    class ProbeTraining(OpBenchmark):
        op = "probe"
        backward = True
        params, param_names = Probe.params, Probe.param_names

    bench = ProbeTraining()
    bench.setup(*PARAMS)
    try:
        calls = probe_op["calls"]
        bench.call()
        x = probe_op["last_input"]
        assert probe_op["calls"] == calls + 1
        assert x.requires_grad and x.grad is not None and x.grad.shape == (4, 4)
    finally:
        bench.teardown(*PARAMS)


def test_a_recompile_while_timing_fails_instead_of_timing_the_compiler():
    compiled = torch.compile(lambda x: x * 2, backend="eager", dynamic=False)
    compiled(torch.ones(3))
    with measure.recompiles_fail(), pytest.raises(Exception, match=r"[Rr]ecompil"):
        compiled(torch.ones(5))  # a new shape: its guard fails
    compiled(torch.ones(7))  # outside the block a recompile is allowed again


def test_cold_compile_time_resets_dynamo_first(monkeypatch):
    import torch._dynamo

    resets = []
    real_reset = torch._dynamo.reset
    monkeypatch.setattr(torch._dynamo, "reset", lambda: resets.append(1) or real_reset())
    compiled = torch.compile(lambda x: x + 1, backend="eager")
    compiled(torch.ones(3))
    seconds = measure.cold_compile_seconds(lambda: compiled(torch.ones(3)), devices.CpuDevice())
    assert resets == [1] and seconds > 0


def test_instruction_counts_skip_without_valgrind(monkeypatch):
    monkeypatch.setattr(callgrind.shutil, "which", lambda name: None)
    with pytest.raises(NotImplementedError, match="valgrind is not installed"):
        callgrind.instructions_per_call("matmul", "mm", (8, 8, 8))


# ------------------------------------------------------------------- import hygiene


def test_importing_the_suites_does_not_touch_cuda():
    """asv's forkserver imports every suite before forking; CUDA must not start there."""
    script = textwrap.dedent(
        """
        import torch, torch.cuda
        def forbidden(*args, **kwargs):
            raise SystemExit("CUDA initialised at import")
        torch.cuda._lazy_init = forbidden
        torch.cuda.init = forbidden
        import tests.support.suites as suites
        modules = suites.suite_modules()
        assert len(modules) >= 8, modules
        assert not torch.cuda.is_initialized()
        print("imported", len(modules))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "imported" in done.stdout
