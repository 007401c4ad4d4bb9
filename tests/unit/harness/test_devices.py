"""The accelerator side of the harness, through monkeypatched CUDA hooks: CUDA-event device
time, launch time, sync cost, peak device memory, L2 flushing, the TF32 switch."""

from __future__ import annotations

import time

import pytest
import torch

from benchmarks import bench_device
from benchmarks._harness import TF32Switch, devices
from benchmarks._harness.base import OpBenchmark
from tests.support.probe import ProbeOnDevice


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


def sleeper(seconds: float, calls: list):
    def call():
        calls.append(1)
        time.sleep(seconds)

    return call


def test_device_time_is_an_event_pair_per_call_read_after_one_sync(fake_queue):
    calls = []
    spent = devices.CudaDevice().device_seconds(sleeper(0.002, calls), reps=5)
    assert len(calls) == 5 and len(fake_queue.events) == 10
    assert fake_queue.syncs == 1
    assert all(0.002 <= seconds < 0.05 for seconds in spent)


def test_launch_time_does_not_wait_for_each_call(fake_queue):
    calls = []
    per_call = devices.CudaDevice().launch_seconds(sleeper(0.001, calls), reps=4)
    assert len(calls) == 4
    assert fake_queue.syncs == 2  # drain before, drain after: never between calls
    assert 0.001 <= per_call < 0.05


def test_sync_cost_times_each_synchronize(fake_queue):
    spent = devices.CudaDevice().sync_seconds(reps=7)
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
    assert devices.CudaDevice().peak_memory_bytes(call) == 4_096


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
    with pytest.raises(NotImplementedError, match="cpu is not an accelerator"):
        bench.setup("cpu")
    bench.setup("cuda")
    assert bench.track_sync_time("cuda") >= 0 and fake_queue.syncs == 201


def test_cold_l2_flushes_before_each_call_outside_the_timed_interval(monkeypatch, fake_queue):
    order = []
    monkeypatch.setattr(devices.CudaDevice, "flush_l2", lambda self: order.append("flush"))
    device = devices.CudaDevice()
    device.device_seconds(lambda: order.append("call"), reps=3, before_each=device.flush_l2)
    assert order == ["flush", "call"] * 3
    assert fake_queue.syncs == 1


def test_flush_l2_writes_a_buffer_the_size_of_l2(monkeypatch, fake_queue):
    class Properties:
        L2_cache_size = 4096

    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: Properties)
    monkeypatch.setattr(devices.CudaDevice, "_l2_flush_buffer", None)
    device = devices.CudaDevice()
    device.flush_l2()
    buffer = devices.CudaDevice._l2_flush_buffer
    assert buffer.numel() == 4096 and buffer.dtype == torch.int8
    buffer.fill_(7)
    device.flush_l2()
    assert devices.CudaDevice._l2_flush_buffer is buffer and int(buffer.sum()) == 0


class ProbeTF32(TF32Switch, OpBenchmark):
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


@pytest.mark.parametrize(
    "capability, onednn, native",
    [
        ("AVX512", None, {"bfloat16"}),
        ("AVX512", "avx512_core_bf16", {"bfloat16"}),
        ("AVX512", "AVX2", set()),
        ("AVX512", "AVX512_CORE", set()),
        ("AVX2", None, set()),
    ],
)
def test_a_dtype_is_native_only_where_torch_is_let_use_its_instructions(
    monkeypatch, tmp_path, capability, onednn, native
):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("flags\t\t: fpu sse2 avx2 avx512f avx512bw avx512_bf16\n")
    monkeypatch.setattr(devices, "CPU_INFO", cpuinfo)
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: capability)
    if onednn is None:
        monkeypatch.delenv(devices.ONEDNN_ISA_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(devices.ONEDNN_ISA_VARIABLE, onednn)
    assert devices.CpuDevice().native_dtypes() == native
