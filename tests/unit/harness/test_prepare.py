"""The harness's preparation and timing: skips, warm-up, the kept case, synchronisation,
controls and out-of-memory."""

from __future__ import annotations

import sys
import time
import timeit
from types import SimpleNamespace

import pytest
import torch
from asv_runner.benchmarks.time import TimeBenchmark

import tensorops
from benchmarks._harness import base, cold, controls, devices, prepare, warmup
from benchmarks._harness.base import OpBenchmark
from tests.support.probe import PARAMS, Probe, run_like_asv

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
        Probe().setup(*PARAMS)


def test_unsupported_case_is_a_skip(fresh_cache):
    bench = OpBenchmark()
    bench.op, bench.param_names = "host_to_device", ["device", "shape", "layout", "variant"]
    with pytest.raises(NotImplementedError, match=r"unsupported here.*accelerator"):
        bench.setup("cpu", (4,), "pinned", "to")


def test_out_of_memory_in_setup_is_a_skip_and_releases_memory(monkeypatch, fake_cuda, probe_op):
    released = []
    monkeypatch.setattr(devices.CudaDevice, "release_memory", lambda self: released.append(1))

    def exhausted(self, inputs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 80.00 GiB")

    monkeypatch.setattr(tensorops.Variant, "bind", exhausted)
    with pytest.raises(NotImplementedError, match=r"out of memory on cuda for probe/plus_one"):
        Probe().setup("cuda", (4, 4), "plus_one")
    assert released == [1]
    assert prepare.prepare_once.cache_info().currsize == 0


def test_other_errors_in_setup_fail_loudly(monkeypatch, probe_op):
    def broken(self, inputs):
        raise RuntimeError("shape mismatch")

    monkeypatch.setattr(tensorops.Variant, "bind", broken)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        Probe().setup(*PARAMS)


def test_a_lookup_error_of_the_ops_own_call_fails_loudly_not_as_a_skip(monkeypatch, probe_op):
    """Only the lookup of the op and its variant is "not available at this commit"; an
    IndexError (a LookupError) the op itself raises in its warm-up is a failure, or a pull
    request that breaks an op would read n/a and pass the gate."""

    def out_of_range(self, inputs):
        def call():
            raise IndexError("index 9 is out of bounds for dimension 0 with size 4")

        return call

    monkeypatch.setattr(tensorops.Variant, "bind", out_of_range)
    with pytest.raises(IndexError, match="out of bounds"):
        Probe().setup(*PARAMS)


# ------------------------------------------------------------------- warm-up


def test_warm_up_runs_before_timing(probe_op):
    bench = Probe()
    bench.setup(*PARAMS)
    warmed = bench.prepared.warm_up_calls
    assert warmed >= 2
    assert probe_op["calls"] == warmed
    bench.time_probe(*PARAMS)
    assert probe_op["calls"] == warmed + 1
    bench.teardown(*PARAMS)


class FakeClock:
    """``time.perf_counter`` for the warm-up that moves only when a call says so: a
    sleep's overshoot on a busy host would decide these tests instead of the rule."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def calls_taking(self, durations):
        def call():
            self.now += durations.pop(0)

        return call


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(warmup, "time", SimpleNamespace(perf_counter=fake.perf_counter))
    monkeypatch.setattr(warmup, "page_faults", lambda: 0)
    return fake


def test_warm_up_stops_once_calls_settle(clock):
    call = clock.calls_taking([0.05, 0.004, 0.004, 0.004, 0.004])
    warmed = warmup.warm_up(call, lambda: None, max_calls=10)
    assert warmed.calls == 3
    assert warmed.last_call_seconds == pytest.approx(0.004)


def test_warm_up_goes_on_while_calls_still_speed_up(clock):
    # 0.004 after 0.0046 is 13% faster: not settled; the next equal call settles it.
    call = clock.calls_taking([0.05, 0.0046, 0.004, 0.004, 0.004])
    assert warmup.warm_up(call, lambda: None, max_calls=10).calls == 4


def test_warm_up_waits_for_two_calls_without_a_page_fault(clock, monkeypatch):
    """The first and third calls take fresh pages (an allocator whose free blocks settle
    only after a few calls): one quiet call in between does not end the warm-up."""
    faults = {"count": 0, "calls": 0}
    steady = clock.calls_taking([0.005] * 10)  # steady calls: only the faults keep it going

    def call():
        steady()
        faults["calls"] += 1
        faults["count"] += 100 if faults["calls"] in (1, 3) else 0

    monkeypatch.setattr(warmup, "page_faults", lambda: faults["count"])
    assert warmup.warm_up(call, lambda: None, max_calls=10, max_seconds=60).calls == 5


def test_warm_up_is_bounded_by_count(clock):
    # Every call is twice as fast as the one before: it never settles by itself.
    call = clock.calls_taking([0.016 / 2**i for i in range(10)])
    assert warmup.warm_up(call, lambda: None, max_calls=4).calls == 4


def test_warm_up_is_bounded_by_time(clock):
    # Calls that keep speeding up stop once max_seconds have passed: 0.04 + 0.027 > 0.05.
    call = clock.calls_taking([0.04 / 1.5**i for i in range(50)])
    assert warmup.warm_up(call, lambda: None, max_calls=50, max_seconds=0.05).calls == 2
    assert clock.now < 0.05 + 0.04


def asv_time_benchmark(bench: OpBenchmark) -> TimeBenchmark:
    """``bench``'s time_probe at the probe's CPU params, as asv_runner's discovery builds
    a benchmark of a class (the method, the instance, the module)."""
    func = bench.time_probe
    benchmark = TimeBenchmark(
        "bench_probe.Probe.time_probe", func, [func, bench, sys.modules[__name__]]
    )
    benchmark.set_param_idx(0)
    return benchmark


def test_a_long_call_is_sampled_twice_a_round_with_no_untimed_call(probe_op, monkeypatch):
    monkeypatch.setattr(base, "LONG_CALL_SECONDS", 0.01)
    probe_op["durations"] = [0.02] * 20
    benchmark = asv_time_benchmark(Probe())
    benchmark.do_setup()
    warmed = benchmark._attr_sources[1].prepared.warm_up_calls
    result = benchmark.run(*PARAMS)
    benchmark.do_teardown()
    assert result["number"] == 1
    assert len(result["samples"]) == base.LONG_CALL_SAMPLES
    assert probe_op["calls"] == warmed + base.LONG_CALL_SAMPLES  # asv called it for no sizing


def test_a_short_call_keeps_asvs_sampling(probe_op):
    benchmark = asv_time_benchmark(Probe())
    benchmark.do_setup()
    result = benchmark.run(*PARAMS)
    benchmark.do_teardown()
    assert (benchmark.repeat, benchmark.warmup_time) == (0, -1)  # asv's defaults
    assert len(result["samples"]) == 5  # asv's most at two rounds


def test_repeated_setup_reuses_inputs_and_skips_warm_up(probe_op):
    """asv_runner 0.2.5 re-runs setup per sample; the warm-up is paid once per process."""
    bench = Probe()
    bench.setup(*PARAMS)
    first = bench.prepared
    bench.teardown(*PARAMS)
    calls_after_first = probe_op["calls"]
    bench.setup(*PARAMS)
    assert bench.prepared is first
    assert probe_op["calls"] == calls_after_first
    bench.teardown(*PARAMS)


# ------------------------------------------------------------------- synchronisation


def test_sync_is_called_on_cuda(fake_cuda, probe_op):
    run_like_asv(Probe(), ("cuda", (4, 4), "plus_one"), number=5)
    # Warm-up syncs after each call; the timer syncs at both ends of the block.
    assert len(fake_cuda) >= 2 + 2


def test_sync_is_never_called_on_cpu(monkeypatch, probe_op):
    syncs = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *args, **kwargs: syncs.append(1))
    run_like_asv(Probe(), PARAMS)
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
    monkeypatch.setenv(controls.THREADS_ENV, raw)
    with pytest.raises(
        ValueError, match=rf"TENSOROPS_THREADS must be a positive integer, got '{raw}'"
    ):
        Probe().setup(*PARAMS)


def test_threads_are_set_explicitly_and_restored(monkeypatch, probe_op):
    before = torch.get_num_threads()
    monkeypatch.setenv(controls.THREADS_ENV, "3")
    bench = Probe()
    bench.setup(*PARAMS)
    assert torch.get_num_threads() == 3
    bench.teardown(*PARAMS)
    assert torch.get_num_threads() == before


def test_default_threads_is_one(monkeypatch):
    monkeypatch.delenv(controls.THREADS_ENV, raising=False)
    assert controls.controls_from_env().threads == 1


def test_tf32_and_cudnn_benchmark_are_fixed_off_then_restored():
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    try:
        with controls.controlled(controls.Controls()):
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
    bench.setup(*PARAMS)
    drawn = torch.rand(3)
    bench.teardown(*PARAMS)
    prepare.prepare_once.cache_clear()
    bench.setup(*PARAMS)
    assert torch.equal(torch.rand(3), drawn)
    bench.teardown(*PARAMS)


# ------------------------------------------------------------------- cold inputs


class ColdProbe(Probe):
    cold_inputs = True


def inputs_seen(monkeypatch, probe_op, bench: OpBenchmark, times: int) -> list[torch.Tensor]:
    """The input of each of ``times`` calls of ``bench``, against a 96-byte cache."""
    monkeypatch.setattr(devices.CpuDevice, "last_level_cache_bytes", lambda self: 96)
    bench.setup(*PARAMS)
    try:
        seen = []
        for _ in range(times):
            bench.call()
            seen.append(probe_op["last_input"])
        return seen
    finally:
        bench.teardown(*PARAMS)


def test_cold_inputs_are_equal_copies_taken_in_turn(monkeypatch, probe_op):
    """A (4, 4) float32 input is 64 bytes: against a 96-byte cache, three copies span two
    caches, and the calls take them in a cycle."""
    seen = inputs_seen(monkeypatch, probe_op, ColdProbe(), 7)
    places = [t.data_ptr() for t in seen]
    assert len(set(places)) == 3
    assert places[3:] == places[:4]
    assert all(torch.equal(t, seen[0]) for t in seen)


def test_warm_inputs_stay_in_one_place(monkeypatch, probe_op):
    seen = inputs_seen(monkeypatch, probe_op, Probe(), 4)
    assert len({t.data_ptr() for t in seen}) == 1


def test_copies_span_two_caches_within_bounds():
    mib = 2**20
    assert cold.copies_needed(480 * mib, 48 * mib) == 20
    assert cold.copies_needed(480 * mib, 400 * mib) == 3
    assert cold.copies_needed(480 * mib, 1500 * mib) == 2  # at least two, however large
    assert cold.copies_needed(480 * mib, 64) == cold.MAX_COPIES
    assert cold.copies_needed(4096 * mib, 100 * mib) == cold.MAX_COPIES_BYTES // (100 * mib)
    assert cold.copies_needed(480 * mib, 0) == 1


def test_a_copy_keeps_strides_or_is_made_again():
    made_again = []

    def make_again():
        made_again.append(1)
        return ("again",)

    transposed = torch.arange(12.0).reshape(3, 4).t()  # dense, not contiguous: cloned
    copied = cold.copy_inputs((transposed, 7), make_again)
    assert copied[0].stride() == transposed.stride() and copied[1] == 7
    assert copied[0].data_ptr() != transposed.data_ptr() and torch.equal(copied[0], transposed)
    assert made_again == []
    sliced = torch.arange(12.0).reshape(3, 4)[:, ::2]  # gaps: a clone would close them
    assert cold.copy_inputs((sliced,), make_again) == ("again",)
    assert made_again == [1]


def test_cpu_last_level_cache_is_the_highest_level_listed(monkeypatch, tmp_path):
    for index, (level, size) in enumerate([(1, "48K"), (2, "2048K"), (3, "491520K")]):
        entry = tmp_path / f"index{index}"
        entry.mkdir()
        (entry / "level").write_text(f"{level}\n")
        (entry / "size").write_text(f"{size}\n")
    monkeypatch.setattr(devices, "CPU0_CACHES", tmp_path)
    assert devices.CpuDevice().last_level_cache_bytes() == 480 * 2**20
    monkeypatch.setattr(devices, "CPU0_CACHES", tmp_path / "absent")
    assert devices.CpuDevice().last_level_cache_bytes() == devices.UNKNOWN_CACHE_BYTES


@pytest.mark.parametrize(
    ("text", "size"), [("491520K\n", 491520 * 1024), ("2M", 2 * 2**20), ("32768", 32768)]
)
def test_cache_sizes_parse_as_sysfs_writes_them(text, size):
    assert devices.parse_cache_size(text) == size
