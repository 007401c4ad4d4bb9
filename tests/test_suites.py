"""Every benchmark method of every suite runs once in-process on the CPU, through
setup and teardown, for every CPU param combination; CUDA combinations skip cleanly."""

from __future__ import annotations

import inspect
import math
import os
import statistics
import subprocess
import sys

import pytest
import torch
from asv_runner.benchmarks.mark import SkipNotImplemented

from benchmarks import _harness
from benchmarks._harness import calibration, controls, measure, tracks
from benchmarks._harness.prepare import prepare_once
from benchmarks._harness.twins import Counted

from .conftest import REPO_ROOT
from .suites import benchmark_classes, benchmark_methods, combinations, suite_modules

# Suites whose CPU rows skip by design, and the reason they must give.
CPU_SKIPS = {
    "bench_movement.HostToDevice": "accelerator",
    "bench_movement.DeviceToHost": "accelerator",
    "bench_matmul.MatMulTF32": "TF32 is a CUDA tensor-core mode",
    "bench_conv.Conv2dTF32": "TF32 is a CUDA tensor-core mode",
    "bench_device.Synchronize": "cpu is not an accelerator",
    **{
        f"bench_device.{cls.__name__}": "device tracks read an accelerator's clock"
        for cls in benchmark_classes()
        if issubclass(cls, _harness.DeviceTracks)
    },
}
UNITS = ("GFLOP/s", "GB/s", "% of peak", "seconds", "bytes", "instructions")


def qualified(cls: type) -> str:
    return f"{cls.__module__.split('.')[-1]}.{cls.__name__}"


def test_there_are_at_least_eight_suite_modules_with_benchmarks():
    modules = {cls.__module__ for cls in benchmark_classes()}
    assert len(suite_modules()) >= 8
    assert modules == {module.__name__ for module in suite_modules()}


# The ops that read their inputs at data-dependent addresses: their rows take copies of
# the inputs in turn (cold_inputs), all others where the last call left them.
COLD_SUITES = {"Embedding", "EmbeddingBag", "Gather", "IndexSelect", "IndexAdd", "ScatterAdd"}


def test_the_random_access_suites_and_only_they_take_cold_inputs():
    cold = {qualified(c) for c in benchmark_classes() if getattr(c, "cold_inputs", False)}
    expected = {f"bench_indexing.{name}" for name in COLD_SUITES}
    expected |= {f"bench_indexing.{name}Grid" for name in COLD_SUITES - {"Embedding"}}
    assert cold == expected


@pytest.mark.parametrize("cls", list(benchmark_classes()), ids=qualified)
def test_signatures_mirror_param_names(cls):
    assert cls.param_names[0] == "device"
    assert cls.params[0] == _harness.DEVICES
    assert len(cls.params) == len(cls.param_names)
    for name in benchmark_methods(cls):
        method = getattr(cls, name)
        if method.__module__ == tracks.__name__:
            continue  # the mixins' tracks take *params, for every suite alike
        parameters = list(inspect.signature(method).parameters)
        # asv hands setup_cache's value to every method first
        cached = ["counts"] if hasattr(cls, "setup_cache") else []
        assert parameters == ["self", *cached, *cls.param_names], f"{cls.__name__}.{name}"


# What the count rows' setup_cache would hand them, without running valgrind here (the
# real counts: test_instruction_counts.py).
FAKE_COUNTS = {case.key: 1234.5 for case in Counted.rows.values()}


def arguments(combination) -> tuple:
    cached = (FAKE_COUNTS,) if hasattr(combination.cls, "setup_cache") else ()
    return (*cached, *combination.params)


@pytest.fixture(scope="module", autouse=True)
def calibration_per_module():
    """Each peak (per device, dtype and controls) is measured once for the whole module,
    as asv measures it once per run: a float16 peak is a 1024^3 product that takes
    4 s a call on a CPU without native float16, and measured again for each of its rows
    it made this module the longest part of CI."""
    _harness.drop_cache()
    yield
    _harness.drop_cache()


@pytest.fixture(autouse=True)
def quick_tracks(monkeypatch):
    """Tracks run once here, not measured: the shortest blocks, one of them (the
    three-block minimum: test_harness_tracks.py), and no prepared case kept between
    tests."""
    monkeypatch.setattr(tracks._Tracks, "throughput_min_run_time", 0.01)
    monkeypatch.setattr(calibration, "CALIBRATION_MIN_RUN_TIME", 0.01)
    monkeypatch.setattr(measure, "MIN_BLOCKS", 1)
    monkeypatch.delenv(controls.THREADS_ENV, raising=False)
    prepare_once.cache_clear()
    yield
    prepare_once.cache_clear()


@pytest.mark.parametrize("combination", combinations(), ids=str)
def test_every_benchmark_runs_once_or_skips_with_reason(combination):
    device = combination.named["device"]
    threads_before = torch.get_num_threads()
    args = arguments(combination)
    counted = hasattr(combination.cls, "setup_cache")
    for name in benchmark_methods(combination.cls):
        bench = combination.cls()
        try:
            bench.setup(*args)
        except NotImplementedError as skip:
            if hasattr(bench, "teardown"):
                bench.teardown(*args)  # as asv does after a skip
            reason = str(skip)
            if counted and device == "cuda":
                assert "instruction counts are of CPU code" in reason
            elif device == "cuda" and not torch.cuda.is_available():
                assert "no CUDA device" in reason
            else:
                assert CPU_SKIPS.get(qualified(combination.cls), "<runs>") in reason, reason
            assert torch.get_num_threads() == threads_before
            continue
        try:
            if isinstance(bench, _harness.OpBenchmark):  # the harness's controls apply
                assert torch.get_num_threads() == controls.DEFAULT_THREADS
            try:
                result = getattr(bench, name)(*args)
            except SkipNotImplemented as skip:  # asv's skip from inside a benchmark: n/a
                assert str(skip), f"{combination}.{name} skipped without a reason"
                continue
            if name.startswith("track_"):
                if isinstance(result, dict):  # sampled, as asv reads a timing result
                    assert set(result) == {"samples", "number"} and result["number"] >= 1
                    assert result["samples"]
                    for value in result["samples"]:
                        assert isinstance(value, float) and math.isfinite(value) and value > 0
                    result = statistics.median(result["samples"])
                assert isinstance(result, float) and math.isfinite(result) and result > 0
                # asv reads unit from the method, else from the class
                method = getattr(bench, name)
                assert getattr(method, "unit", getattr(bench, "unit", None)) in UNITS
                if counted:
                    assert result == 1234.5  # the row found its case among those counted
            else:
                assert result is None
        finally:
            if hasattr(bench, "teardown"):
                bench.teardown(*args)
        assert torch.get_num_threads() == threads_before


def test_asv_check_passes():
    # tensorops comes from the dev venv's editable install; asv's discovery breaks
    # when PYTHONPATH is set, so it must not be.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "asv", "check", "-E", f"existing:{sys.executable}"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No problems found" in done.stdout
