"""Measurements a ``track_`` benchmark takes itself: seconds per call by
torch.utils.benchmark's Timer, the cost of a cold compile, and the guard that turns a
recompile while timing into an error."""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from torch.utils.benchmark import Timer

from .devices import Device

# A call slower than min_run_time leaves blocked_autorange one block, and asv gives one
# sample an infinite interval, which no comparison can ever call significant (a float16
# 1024^3 mm takes 4 s on a CPU without native float16). Three samples give asv a finite
# one.
MIN_BLOCKS = 3


def sampled_seconds(
    call: Callable[[], Any], threads: int, min_run_time: float = 0.2
) -> tuple[list[float], int]:
    """Seconds per call of each block of torch.utils.benchmark's blocked_autorange, at
    least ``MIN_BLOCKS`` of them, and the calls per block.

    Timer syncs the accelerator around each block, so the interval holds the device work.
    """
    timer = Timer(stmt="call()", globals={"call": call}, num_threads=threads)
    measured = timer.blocked_autorange(min_run_time=min_run_time)
    times = list(measured.times)
    while len(times) < MIN_BLOCKS:
        times += timer.timeit(measured.number_per_run).times
    return times, measured.number_per_run


def measure_seconds(call: Callable[[], Any], threads: int, min_run_time: float = 0.2) -> float:
    """Median seconds per call, by blocked_autorange (:func:`sampled_seconds`)."""
    return statistics.median(sampled_seconds(call, threads, min_run_time)[0])


@contextlib.contextmanager
def recompiles_fail() -> Iterator[None]:
    """While the block runs, a torch.compile recompile raises instead of happening: the
    timed calls of a compiled variant must run the code its warm-up compiled, and a
    recompile (a guard that fails on the timed inputs) would time the compiler instead."""
    dynamo = sys.modules.get("torch._dynamo")  # only compiled variants import it
    if dynamo is None:
        yield
        return
    saved = dynamo.config.error_on_recompile
    dynamo.config.error_on_recompile = True
    try:
        yield
    finally:
        dynamo.config.error_on_recompile = saved


def cold_compile_seconds(call: Callable[[], Any], device: Device) -> float:
    """Seconds of the first call of a compiled variant after dynamo forgets everything and
    with inductor's FX graph cache off: dynamo's tracing, inductor's lowering and code
    generation, plus one run of the result. The kernels' own builds (C++ on the CPU,
    Triton on CUDA) can still come from inductor's code cache, which a process that
    compiled the variant before (its warm-up) has filled: a fresh machine's first
    compile costs more."""
    import torch._dynamo
    import torch._inductor.config

    torch._dynamo.reset()
    with torch._inductor.config.patch(fx_graph_cache=False):
        device.synchronize()
        begun = time.perf_counter()
        call()
        device.synchronize()
        return time.perf_counter() - begun
