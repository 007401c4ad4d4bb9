"""Every benchmark row of every suite runs once in-process on the CPU: its setup (inputs
built, one call to warm up), each of its methods (a time_ method calls the op once, a
track reads the time of the row's latest call), then its teardown; the CUDA rows skip
saying why, and so does every row that skips by design. A large row of a low-precision
dtype this CPU has no native arithmetic for runs a smaller case of the same code path
(``sized_for_this_cpu``). How well a row is measured is not
asked here: the warm-up, the blocks of the tracks and the calibration
have their own tests (tests/unit/harness/), and asv's own runs are in
test_asv_e2e.py. tests/unit/harness/test_suites.py checks that these are the rows asv discovers."""

from __future__ import annotations

import math
import statistics
import time

import pytest
import torch
from asv_runner.benchmarks.mark import SkipNotImplemented

from benchmarks import _harness
from benchmarks._harness import controls, devices, emulated, prepare, tracks
from benchmarks._harness.prepare import prepare_once
from benchmarks._harness.twins import Counted
from benchmarks._harness.warmup import WarmedUp
from tests.support.suites import benchmark_classes, benchmark_methods, combinations, qualified

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
# What the count rows' setup_cache would hand them, without running valgrind here (the
# real counts: test_instruction_counts.py).
FAKE_COUNTS = {case.key: 1234.5 for case in Counted.rows.values()}


def sized_for_this_cpu(combination) -> tuple:
    """A row's params; for a large call of a dtype this CPU computes through float32
    (benchmarks/_harness/emulated.py: a bfloat16 2048^3 matmul took about a minute a call
    on an AVX2-only EPYC, four such rows eight minutes of this test), its shape halved
    along its largest even dimension (an odd one is a deliberate edge case, kept) until it
    is no longer one: the same op, variant, dtype and layout, a smaller case. What this
    test asks (a setup, a call, the tracks' values and units) does not depend on the size."""
    named, params = combination.named, list(combination.params)
    native = devices.CpuDevice().native_dtypes()
    shape = list(named.get("shape", ()))
    while emulated.emulated_here(combination.cls, {**named, "shape": tuple(shape)}, native):
        even = [size for size in shape if size % 2 == 0]
        if not even:
            break
        shape[shape.index(max(even))] //= 2
    if "shape" in named:
        params[list(combination.cls.param_names).index("shape")] = tuple(shape)
    return tuple(params)


def arguments(combination) -> tuple:
    cached = (FAKE_COUNTS,) if hasattr(combination.cls, "setup_cache") else ()
    return (*cached, *sized_for_this_cpu(combination))


def one_call(call, synchronize, **bounds) -> WarmedUp:
    begun = time.perf_counter()
    call()
    synchronize()
    return WarmedUp(1, time.perf_counter() - begun)


def timed(bound_call):
    """``prepare.bound_call`` whose call keeps the seconds of its latest run."""

    def bind(*args, **kwargs):
        call = bound_call(*args, **kwargs)

        def timed_call():
            begun = time.perf_counter()
            call()
            timed_call.seconds = time.perf_counter() - begun

        timed_call.seconds = None
        return timed_call

    return bind


def latest_block(call, threads, min_run_time=0.0):
    """The latest call's seconds as one block, or one call's when there was none."""
    if getattr(call, "seconds", None) is None:
        call()
    return [call.seconds], 1


@pytest.fixture(autouse=True)
def once(monkeypatch):
    """One call to warm up and one per time_ method; the tracks read the latest call's
    time at a fixed peak rather than call again, as a large bfloat16 row takes about a
    minute a call on a CPU without bfloat16 instructions (docs/reference/tests.md). No
    prepared case kept between rows (the largest inputs are hundreds of MiB)."""
    monkeypatch.setattr(prepare, "bound_call", timed(prepare.bound_call))
    monkeypatch.setattr(prepare, "warm_up", one_call)
    monkeypatch.setattr(tracks, "sampled_seconds", latest_block)
    monkeypatch.setattr(tracks, "peak_matmul_gflops", lambda *args: 1000.0)
    monkeypatch.setattr(tracks, "peak_copy_gbps", lambda *args: 10.0)
    monkeypatch.delenv(controls.THREADS_ENV, raising=False)
    prepare_once.cache_clear()
    yield
    prepare_once.cache_clear()


def check_skip(combination, reason: str) -> None:
    device = combination.named["device"]
    if hasattr(combination.cls, "setup_cache") and device == "cuda":
        assert "instruction counts are of CPU code" in reason
    elif device == "cuda" and not torch.cuda.is_available():
        assert "no CUDA device" in reason
    else:
        assert CPU_SKIPS.get(qualified(combination.cls), "<runs>") in reason, reason


def check_result(bench, name: str, result, counted: bool) -> None:
    if not name.startswith("track_"):
        assert result is None
        return
    if isinstance(result, dict):  # sampled, as asv reads a timing result
        assert set(result) == {"samples", "number"} and result["number"] >= 1
        assert result["samples"]
        for value in result["samples"]:
            assert isinstance(value, float) and math.isfinite(value) and value > 0
        result = statistics.median(result["samples"])
    assert isinstance(result, float) and math.isfinite(result) and result > 0
    method = getattr(bench, name)  # asv reads unit from the method, else from the class
    assert getattr(method, "unit", getattr(bench, "unit", None)) in UNITS
    if counted:
        assert result == 1234.5  # the row found its case among those counted


@pytest.mark.parametrize("combination", combinations(), ids=str)
def test_every_row_runs_once_or_skips_with_reason(combination):
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
            check_skip(combination, str(skip))
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
            check_result(bench, name, result, counted)
        finally:
            if hasattr(bench, "teardown"):
                bench.teardown(*args)
        assert torch.get_num_threads() == threads_before
