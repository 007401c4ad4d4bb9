"""The harness: skips, warm-up, synchronisation, controls, out-of-memory, import hygiene,
and the device-side tracks."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap
import time
import timeit

import pytest
import torch

import tensorops
from benchmarks import bench_device, harness
from benchmarks.harness import OpBenchmark
from tensorops._registry import _OPS, define_op, variant

from .conftest import REPO_ROOT


@pytest.fixture(autouse=True)
def fresh_cache():
    harness.drop_cache()
    yield
    harness.drop_cache()


@pytest.fixture
def probe_op():
    """A registered op whose single variant counts its calls and can be slowed down."""
    state = {"calls": 0, "durations": []}

    def run(x):
        state["calls"] += 1
        state["last_input"] = x
        if state["durations"]:
            time.sleep(state["durations"].pop(0))
        return x + 1

    define_op(
        "probe",
        make_inputs=lambda case: tuple(tensorops.cases.random_inputs(case, case.shape)),
        flops=lambda case: 1000,
        bytes_moved=lambda case: 8000,
        reference="plus_one",
    )
    variant("probe", "plus_one")(run)
    yield state
    del _OPS["probe"]


class Probe(OpBenchmark):
    op = "probe"
    params = [["cpu", "cuda"], [(4, 4)], ["plus_one"]]
    param_names = ["device", "shape", "variant"]

    def time_probe(self, device, shape, variant):
        self.call()


@pytest.fixture
def fake_cuda(monkeypatch):
    """CUDA as the harness sees it, on the CPU: available, with counted synchronizes."""
    syncs = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *args, **kwargs: syncs.append(1))
    monkeypatch.setattr(harness.CudaDevice, "tensor_device", "cpu")
    return syncs


def run_like_asv(bench: OpBenchmark, params: tuple, number: int = 5) -> float:
    """One asv sample: setup, a block of `number` calls timed with the class timer, teardown."""
    bench.setup(*params)
    try:
        method = bench.time_probe if hasattr(bench, "time_probe") else None
        return timeit.Timer(lambda: method(*params), timer=bench.timer).timeit(number)
    finally:
        bench.teardown(*params)


# ------------------------------------------------------------------- skips


def test_missing_device_is_a_skip_with_reason(monkeypatch, probe_op):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(NotImplementedError, match="no CUDA device on this machine"):
        Probe().setup("cuda", (4, 4), "plus_one")
    assert probe_op["calls"] == 0


def test_variant_missing_at_this_commit_is_a_skip(probe_op):
    with pytest.raises(NotImplementedError, match=r"not available at this commit.*'fused'"):
        Probe().setup("cpu", (4, 4), "fused")


def test_tensorops_without_the_api_is_a_skip(monkeypatch, probe_op):
    monkeypatch.delattr(tensorops, "get_variant")
    with pytest.raises(NotImplementedError, match="predates the op/variant API"):
        Probe().setup("cpu", (4, 4), "plus_one")


def test_unsupported_case_is_a_skip():
    bench = OpBenchmark()
    bench.op, bench.param_names = "host_to_device", ["device", "shape", "layout", "variant"]
    with pytest.raises(NotImplementedError, match=r"unsupported here.*accelerator"):
        bench.setup("cpu", (4,), "pinned", "to")


def test_out_of_memory_in_setup_is_a_skip_and_releases_memory(monkeypatch, fake_cuda, probe_op):
    released = []
    monkeypatch.setattr(harness.CudaDevice, "release_memory", lambda self: released.append(1))

    def exhausted(self, inputs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 80.00 GiB")

    monkeypatch.setattr(tensorops.Variant, "bind", exhausted)
    with pytest.raises(NotImplementedError, match=r"out of memory on cuda for probe/plus_one"):
        Probe().setup("cuda", (4, 4), "plus_one")
    assert released == [1]
    assert harness.OpBenchmark._cache == {}


def test_other_errors_in_setup_fail_loudly(monkeypatch, probe_op):
    def broken(self, inputs):
        raise RuntimeError("shape mismatch")

    monkeypatch.setattr(tensorops.Variant, "bind", broken)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        Probe().setup("cpu", (4, 4), "plus_one")


# ------------------------------------------------------------------- warm-up


def test_warm_up_runs_before_timing(probe_op):
    bench = Probe()
    bench.setup("cpu", (4, 4), "plus_one")
    warmed = bench.prepared.warm_up.calls
    assert warmed >= 2
    assert probe_op["calls"] == warmed
    bench.time_probe("cpu", (4, 4), "plus_one")
    assert probe_op["calls"] == warmed + 1
    bench.teardown("cpu", (4, 4), "plus_one")


def test_warm_up_stops_once_calls_settle():
    durations = [0.05, 0.004, 0.004, 0.004, 0.004]
    result = harness.warm_up(lambda: time.sleep(durations.pop(0)), lambda: None, max_calls=10)
    assert result.calls == 3


def test_warm_up_is_bounded_by_count():
    # Every call is twice as fast as the one before: it never settles by itself.
    durations = [0.016 / 2**i for i in range(10)]
    result = harness.warm_up(lambda: time.sleep(durations.pop(0)), lambda: None, max_calls=4)
    assert result.calls == 4


def test_warm_up_is_bounded_by_time():
    durations = [0.04 / 1.5**i for i in range(50)]
    result = harness.warm_up(
        lambda: time.sleep(durations.pop(0)), lambda: None, max_calls=50, max_seconds=0.05
    )
    assert 2 <= result.calls < 50
    assert result.seconds < 0.05 + 0.04


def test_repeated_setup_reuses_inputs_and_skips_warm_up(probe_op):
    """asv_runner 0.2.5 re-runs setup per sample; the warm-up is paid once per process."""
    bench = Probe()
    bench.setup("cpu", (4, 4), "plus_one")
    first = bench.prepared
    bench.teardown("cpu", (4, 4), "plus_one")
    calls_after_first = probe_op["calls"]
    bench.setup("cpu", (4, 4), "plus_one")
    assert bench.prepared is first
    assert probe_op["calls"] == calls_after_first
    bench.teardown("cpu", (4, 4), "plus_one")


# ------------------------------------------------------------------- synchronisation


def test_sync_is_called_on_cuda(fake_cuda, probe_op):
    run_like_asv(Probe(), ("cuda", (4, 4), "plus_one"), number=5)
    # Warm-up syncs after each call; the timer syncs at both ends of the block.
    assert len(fake_cuda) >= 2 + 2


def test_sync_is_never_called_on_cpu(monkeypatch, probe_op):
    syncs = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *args, **kwargs: syncs.append(1))
    run_like_asv(Probe(), ("cpu", (4, 4), "plus_one"))
    assert syncs == []


def test_timed_interval_contains_the_device_work(monkeypatch, fake_cuda, probe_op):
    """Work still queued when the block ends is inside the interval, not after it."""
    queued_work = 0.03
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *args, **kwargs: time.sleep(queued_work))
    bench = Probe()
    bench.setup("cuda", (4, 4), "plus_one")
    elapsed = timeit.Timer(
        lambda: bench.time_probe("cuda", (4, 4), "plus_one"), timer=bench.timer
    ).timeit(1)
    bench.teardown("cuda", (4, 4), "plus_one")
    assert elapsed >= queued_work


# ------------------------------------------------------------------- controls


@pytest.mark.parametrize("raw", ["0", "-2", "two", "1.5"])
def test_bad_threads_value_is_a_clear_error(monkeypatch, raw, probe_op):
    monkeypatch.setenv(harness.THREADS_ENV, raw)
    with pytest.raises(
        ValueError, match=rf"TENSOROPS_THREADS must be a positive integer, got '{raw}'"
    ):
        Probe().setup("cpu", (4, 4), "plus_one")


def test_threads_are_set_explicitly_and_restored(monkeypatch, probe_op):
    before = torch.get_num_threads()
    monkeypatch.setenv(harness.THREADS_ENV, "3")
    bench = Probe()
    bench.setup("cpu", (4, 4), "plus_one")
    assert torch.get_num_threads() == 3
    bench.teardown("cpu", (4, 4), "plus_one")
    assert torch.get_num_threads() == before


def test_default_threads_is_one(monkeypatch):
    monkeypatch.delenv(harness.THREADS_ENV, raising=False)
    assert harness.controls_from_env().threads == 1


def test_tf32_and_cudnn_benchmark_are_fixed_off_then_restored():
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    try:
        with harness.controlled(harness.Controls()):
            assert torch.backends.cuda.matmul.allow_tf32 is False
            assert torch.backends.cudnn.allow_tf32 is False
            assert torch.backends.cudnn.benchmark is False
        assert torch.backends.cuda.matmul.allow_tf32 is True
        assert torch.backends.cudnn.benchmark is True
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.benchmark = False


def test_seed_is_fixed_in_setup(probe_op):
    bench = Probe()
    bench.setup("cpu", (4, 4), "plus_one")
    drawn = torch.rand(3)
    bench.teardown("cpu", (4, 4), "plus_one")
    harness.drop_cache()
    bench.setup("cpu", (4, 4), "plus_one")
    assert torch.equal(torch.rand(3), drawn)
    bench.teardown("cpu", (4, 4), "plus_one")


def test_throughput_track_divides_flops_by_the_median_time(monkeypatch, probe_op):
    monkeypatch.setattr(harness, "measure_seconds", lambda prepared, threads, min_run_time: 2e-6)
    bench = Probe()
    bench.setup("cpu", (4, 4), "plus_one")
    assert bench.measure_gflops() == pytest.approx(1000 / 2e-6 / 1e9)
    assert bench.measure_gbytes_per_second() == pytest.approx(8000 / 2e-6 / 1e9)
    bench.teardown("cpu", (4, 4), "plus_one")


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
        import tests.suites as suites
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


# ------------------------------------------------------------------- device tracks
# CUDA-event device time, launch time, sync cost and peak device memory, through
# monkeypatched CUDA hooks: a fake event reads the host clock when recorded.


class FakeQueue:
    """A CUDA stream on the CPU: calls run at once, an event records the host clock."""

    def __init__(self):
        self.syncs = 0
        self.events = []

    def event(self, enable_timing=False):
        queue = self

        class Event:
            def record(self):
                self.at = time.perf_counter()
                queue.events.append(self)

            def elapsed_time(self, end):
                return (end.at - self.at) * 1e3  # CUDA reports milliseconds

        assert enable_timing
        return Event()

    def synchronize(self, *args, **kwargs):
        self.syncs += 1


@pytest.fixture
def fake_queue(monkeypatch, fake_cuda):
    queue = FakeQueue()
    monkeypatch.setattr(torch.cuda, "Event", queue.event)
    monkeypatch.setattr(torch.cuda, "synchronize", queue.synchronize)
    return queue


class ProbeOnDevice(harness.DeviceTracks):
    op = "probe"
    params = Probe.params
    param_names = Probe.param_names


def sleeper(seconds: float, calls: list):
    def call():
        calls.append(1)
        time.sleep(seconds)

    return call


def test_device_time_is_an_event_pair_per_call_read_after_one_sync(fake_queue):
    calls = []
    spent = harness.CudaDevice().device_seconds(sleeper(0.002, calls), reps=5)
    assert len(calls) == 5 and len(fake_queue.events) == 10
    assert fake_queue.syncs == 1
    assert all(0.002 <= seconds < 0.05 for seconds in spent)


def test_launch_time_does_not_wait_for_each_call(fake_queue):
    calls = []
    per_call = harness.CudaDevice().launch_seconds(sleeper(0.001, calls), reps=4)
    assert len(calls) == 4
    assert fake_queue.syncs == 2  # drain before, drain after: never between calls
    assert 0.001 <= per_call < 0.05


def test_sync_cost_times_each_synchronize(fake_queue):
    spent = harness.CudaDevice().sync_seconds(reps=7)
    assert len(spent) == 7 and fake_queue.syncs == 8
    assert all(seconds >= 0 for seconds in spent)


def test_peak_device_memory_is_the_peak_less_what_was_allocated_before(monkeypatch, fake_queue):
    allocator = {"allocated": 1_000, "peak": 1_000, "resets": 0}

    def reset():
        allocator["resets"] += 1
        allocator["peak"] = allocator["allocated"]

    def call():
        assert allocator["resets"] == 1, "peak stats must be reset before the call"
        allocator["peak"] = allocator["allocated"] + 4_096  # an intermediate and an output
        return "output"

    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", reset)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda *a: allocator["allocated"])
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda *a: allocator["peak"])
    assert harness.CudaDevice().peak_memory_bytes(call) == 4_096


def test_device_tracks_skip_on_the_cpu_before_building_inputs(probe_op):
    with pytest.raises(NotImplementedError, match="device tracks read an accelerator's clock"):
        ProbeOnDevice().setup("cpu", (4, 4), "plus_one")
    assert probe_op["calls"] == 0


def test_device_tracks_measure_the_op_on_an_accelerator(fake_queue, probe_op):
    bench = ProbeOnDevice()
    bench.setup("cuda", (4, 4), "plus_one")
    try:
        warmed = probe_op["calls"]
        probe_op["durations"] = [0.003] * bench.device_reps
        assert bench.track_device_time("cuda", (4, 4), "plus_one") >= 0.003
        assert probe_op["calls"] == warmed + bench.device_reps
        assert bench.track_launch_time("cuda", (4, 4), "plus_one") >= 0
    finally:
        bench.teardown("cuda", (4, 4), "plus_one")


def test_synchronize_benchmark_skips_on_cpu_and_measures_on_cuda(monkeypatch, fake_queue):
    bench = bench_device.Synchronize()
    with pytest.raises(NotImplementedError, match="cpu has no device queue"):
        bench.setup("cpu")
    bench.setup("cuda")
    assert bench.track_sync_time("cuda") >= 0 and fake_queue.syncs == 201


def test_units_and_the_abstract_base_stay_out_of_asv():
    assert inspect.isabstract(harness.DeviceTracks)
    assert not inspect.isabstract(bench_device.MatMul)
    assert bench_device.MatMul.track_device_time.unit == "seconds"
    assert bench_device.MatMul.track_peak_device_memory.unit == "bytes"


def test_asv_collects_the_device_tracks_and_not_their_base():
    from asv_runner.discovery import disc_benchmarks

    names = {b.name for b in disc_benchmarks(str(harness.__file__).rsplit("/", 1)[0])}
    assert "bench_device.MatMul.track_device_time" in names
    assert "bench_device.Synchronize.track_sync_time" in names
    assert not [name for name in names if name.startswith("harness.")]


def test_cold_l2_flushes_before_each_call_outside_the_timed_interval(monkeypatch, fake_queue):
    order = []
    monkeypatch.setattr(harness.CudaDevice, "flush_l2", lambda self: order.append("flush"))
    device = harness.CudaDevice()
    device.device_seconds(lambda: order.append("call"), reps=3, before_each=device.flush_l2)
    assert order == ["flush", "call"] * 3
    assert fake_queue.syncs == 1


def test_flush_l2_writes_a_buffer_the_size_of_l2(monkeypatch, fake_queue):
    class Properties:
        L2_cache_size = 4096

    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: Properties)
    monkeypatch.setattr(harness.CudaDevice, "_l2_flush_buffer", None)
    device = harness.CudaDevice()
    device.flush_l2()
    buffer = harness.CudaDevice._l2_flush_buffer
    assert buffer.numel() == 4096 and buffer.dtype == torch.int8
    buffer.fill_(7)
    device.flush_l2()
    assert harness.CudaDevice._l2_flush_buffer is buffer and int(buffer.sum()) == 0


class ProbeTF32(harness.TF32Switch, OpBenchmark):
    op = "probe"
    variant = "plus_one"
    params = [["cpu", "cuda"], [(4, 4)], ["off", "on"]]
    param_names = ["device", "shape", "tf32"]


def test_tf32_param_skips_on_cpu_and_sets_tf32_on_cuda(fake_cuda, probe_op):
    with pytest.raises(NotImplementedError, match="TF32 is a CUDA tensor-core mode"):
        ProbeTF32().setup("cpu", (4, 4), "on")
    assert probe_op["calls"] == 0
    for tf32, expected in (("on", True), ("off", False)):
        bench = ProbeTF32()
        bench.setup("cuda", (4, 4), tf32)
        try:
            assert torch.backends.cuda.matmul.allow_tf32 is expected
            assert torch.backends.cudnn.allow_tf32 is expected
        finally:
            bench.teardown("cuda", (4, 4), tf32)
        assert torch.backends.cuda.matmul.allow_tf32 is False  # restored: the suites' setting


# ------------------------------------------------------------------- % of peak


def test_calibration_is_measured_once_per_process_and_dtype(monkeypatch):
    monkeypatch.setattr(harness, "CALIBRATION_MIN_RUN_TIME", 0.01)
    prepared = []
    real_prepare = harness.prepare
    monkeypatch.setattr(
        harness, "prepare", lambda *a, **k: prepared.append(k) or real_prepare(*a, **k)
    )
    cpu, controls = harness.CpuDevice(), harness.Controls(threads=1)
    first = harness.peak_matmul_gflops(cpu, "float32", controls)
    assert harness.peak_matmul_gflops(cpu, "float32", controls) == first
    assert [k["shape"] for k in prepared] == [(1024, 1024, 1024)]
    harness.peak_matmul_gflops(cpu, "bfloat16", controls)
    assert [k["dtype"] for k in prepared] == ["float32", "bfloat16"]


def test_copy_calibration_counts_bytes_read_and_written(monkeypatch):
    monkeypatch.setattr(harness, "measure_seconds", lambda call, threads, min_run_time: 0.5)
    peak = harness.peak_copy_gbps(harness.CpuDevice(), harness.Controls(threads=1))
    assert peak == 2 * harness.CALIBRATION_COPY_BYTES["cpu"] / 0.5 / 1e9


def test_the_calibration_case_itself_is_near_100_percent_of_peak(monkeypatch):
    from benchmarks.bench_matmul import MatMul

    monkeypatch.setattr(harness, "CALIBRATION_MIN_RUN_TIME", 0.1)
    params = ("cpu", "float32", (1024, 1024, 1024), "mm")
    bench = MatMul()
    bench.setup(*params)
    try:
        assert 50 < bench.track_percent_of_peak(*params) < 150
    finally:
        bench.teardown(*params)


# ------------------------------------------------------------------- training, compile


def test_a_training_step_clears_grads_so_they_never_accumulate():
    x = torch.randn(5, 3)
    weight = torch.randn(4, 3)
    mask = torch.ones(5, dtype=torch.bool)
    step = harness.with_backward(
        lambda inputs: lambda: (inputs[0] @ inputs[1].T)[inputs[2]], (x, weight, mask), seed=0
    )
    step()
    first = (x.grad.clone(), weight.grad.clone())
    step()
    step()
    assert torch.equal(x.grad, first[0]) and torch.equal(weight.grad, first[1])
    assert x.requires_grad and weight.requires_grad and not mask.requires_grad
    assert x.grad.abs().sum() > 0


def test_training_benchmarks_time_forward_and_backward(probe_op):
    class ProbeTraining(OpBenchmark):
        op = "probe"
        backward = True
        params = Probe.params
        param_names = Probe.param_names

    bench = ProbeTraining()
    bench.setup("cpu", (4, 4), "plus_one")
    try:
        calls = probe_op["calls"]
        bench.call()
        x = probe_op["last_input"]
        assert probe_op["calls"] == calls + 1
        assert x.requires_grad and x.grad is not None and x.grad.shape == (4, 4)
    finally:
        bench.teardown("cpu", (4, 4), "plus_one")


def test_a_recompile_while_timing_fails_instead_of_timing_the_compiler():
    compiled = torch.compile(lambda x: x * 2, backend="eager", dynamic=False)
    compiled(torch.ones(3))
    with harness.recompiles_fail(), pytest.raises(Exception, match=r"[Rr]ecompil"):
        compiled(torch.ones(5))  # a new shape: its guard fails
    compiled(torch.ones(7))  # outside the block a recompile is allowed again


def test_cold_compile_time_resets_dynamo_first(monkeypatch):
    import torch._dynamo

    resets = []
    real_reset = torch._dynamo.reset
    monkeypatch.setattr(torch._dynamo, "reset", lambda: resets.append(1) or real_reset())
    compiled = torch.compile(lambda x: x + 1, backend="eager")
    compiled(torch.ones(3))
    seconds = harness.cold_compile_seconds(lambda: compiled(torch.ones(3)), harness.CpuDevice())
    assert resets == [1] and seconds > 0


def test_instruction_counts_skip_without_valgrind(monkeypatch):
    monkeypatch.setattr(harness.shutil, "which", lambda name: None)
    with pytest.raises(NotImplementedError, match="valgrind is not installed"):
        harness.instructions_per_call("matmul", "mm", (8, 8, 8))
