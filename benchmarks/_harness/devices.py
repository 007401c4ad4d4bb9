"""Devices: what the harness needs to know about a device, behind one interface, as
triton's ``do_bench`` keeps device specifics behind a driver.

Nothing here initialises CUDA or allocates at import: asv's forkserver imports every
suite in a parent process that later forks, and CUDA cannot survive a fork.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

# Where Linux lists CPU 0's caches, and the last-level cache assumed where it does not:
# larger than any CPU's today.
CPU_INFO = Path("/proc/cpuinfo")
# The CPU flags that give a low-precision dtype native arithmetic (lscpu's names).
LOW_PRECISION_FLAGS = {
    "bfloat16": ("avx512_bf16", "amx_bf16"),
    "float16": ("avx512_fp16", "amx_fp16"),
}
# torch can be told to stop short of the CPU's instructions: its own kernels by
# ATEN_CPU_CAPABILITY (get_cpu_capability then names the level it runs), the oneDNN
# products it hands bfloat16 and float16 to by ONEDNN_MAX_CPU_ISA. Capped below a dtype's
# instructions, the dtype runs through float32 whatever the flags say (a capped host
# stands in for one without them: docs/reference/tests.md, "A host without AVX-512").
ONEDNN_ISA_VARIABLE = "ONEDNN_MAX_CPU_ISA"
AMX_LEVELS = {"AVX512_CORE_AMX", "AVX10_1_512_AMX", "AVX512_CORE_AMX_FP16", "AVX10_1_512_AMX_FP16"}
ONEDNN_LEVELS_WITH = {
    "bfloat16": {"ALL", "DEFAULT", "AVX512_CORE_BF16", "AVX512_CORE_FP16", "AVX10_1_512"}
    | AMX_LEVELS,
    "float16": {"ALL", "DEFAULT", "AVX512_CORE_FP16", "AVX10_1_512"} | AMX_LEVELS,
}
CPU0_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")
UNKNOWN_CACHE_BYTES = 2**30

# Every suite's first param: static, so a CPU machine shows the CUDA rows as skips.
DEVICES = ["cpu", "cuda"]


class Device:
    """A device a case runs on: availability, synchronisation, memory, and on an
    accelerator its own clock and allocator statistics."""

    name = ""
    # Where the case's tensors are placed; tests point a fake CUDA device at the CPU.
    tensor_device = ""
    # An accelerator queues work asynchronously and keeps its own clock and allocator
    # statistics: what the device tracks (device time, launch, sync, peak memory) read.
    is_accelerator = False

    def unavailable_reason(self) -> str | None:
        """None when usable; otherwise why not, for the skip message."""
        raise NotImplementedError

    def synchronize(self) -> None:
        """Block until all work queued on the device is done."""

    def release_memory(self) -> None:
        gc.collect()

    def last_level_cache_bytes(self) -> int:
        """The size of the last cache between the device's memory and its cores."""
        raise NotImplementedError

    def device_seconds(
        self, call: Callable[[], Any], reps: int, before_each: Callable[[], Any] | None = None
    ) -> list[float]:
        """Seconds of device work in each of ``reps`` calls, by the device's clock;
        ``before_each`` runs before each call, outside the timed interval."""
        raise NotImplementedError(f"{self.name} has no device clock")

    def flush_l2(self) -> None:
        """Evict the device's L2 cache, so that the next call reads its inputs from memory."""
        raise NotImplementedError(f"{self.name} has no device cache to flush")

    def launch_seconds(self, call: Callable[[], Any], reps: int) -> float:
        """Host seconds to issue one call, not waiting for the device to run it."""
        raise NotImplementedError(f"{self.name} has no device queue")

    def sync_seconds(self, reps: int) -> list[float]:
        """Host seconds of each of ``reps`` synchronizes of an idle device."""
        raise NotImplementedError(f"{self.name} has no device queue")

    def peak_memory_bytes(self, call: Callable[[], Any]) -> int:
        """Device memory one call takes at its peak, beyond what was allocated before."""
        raise NotImplementedError(f"{self.name} keeps no allocator statistics")


class CpuDevice(Device):
    name = tensor_device = "cpu"

    def unavailable_reason(self) -> str | None:
        return None

    def native_dtypes(self) -> set[str]:
        """The low-precision dtypes this CPU computes natively: bfloat16 with AVX-512 BF16
        or AMX, float16 with AVX512-FP16 or AMX-FP16. Without them torch converts to
        float32 and back, and a large product costs seconds to minutes a call (a bfloat16
        2048^3 mm about a minute on an AVX2-only EPYC: docs/reference/tests.md)."""
        try:
            flags = set(CPU_INFO.read_text().split())
        except OSError:
            return set()
        if "AVX512" not in torch.backends.cpu.get_cpu_capability():
            return set()  # torch's kernels capped below AVX-512, or a CPU without it
        capped = os.environ.get(ONEDNN_ISA_VARIABLE, "ALL").strip().upper()
        return {
            dtype
            for dtype, needs in LOW_PRECISION_FLAGS.items()
            if flags & set(needs) and capped in ONEDNN_LEVELS_WITH[dtype]
        }

    def last_level_cache_bytes(self) -> int:
        # sysfs lists every cache of CPU 0 with its level; where it is missing (not Linux,
        # a container hiding it) a 1 GiB guess errs toward too many cold copies.
        sizes = {}
        for entry in CPU0_CACHES.glob("index*"):
            try:
                level = int((entry / "level").read_text())
                sizes[level] = parse_cache_size((entry / "size").read_text())
            except (OSError, ValueError):
                continue
        return sizes[max(sizes)] if sizes else UNKNOWN_CACHE_BYTES


class CudaDevice(Device):
    name = tensor_device = "cuda"
    is_accelerator = True
    _l2_flush_buffer: torch.Tensor | None = None

    def unavailable_reason(self) -> str | None:
        # is_available() asks the driver without creating a context.
        if not torch.cuda.is_available():
            return "no CUDA device on this machine (or torch is a CPU build)"
        return None

    def synchronize(self) -> None:
        torch.cuda.synchronize()

    def release_memory(self) -> None:
        gc.collect()
        if torch.cuda.is_initialized():
            torch.cuda.empty_cache()

    def device_seconds(
        self, call: Callable[[], Any], reps: int, before_each: Callable[[], Any] | None = None
    ) -> list[float]:
        # An event pair around each call and one synchronize after all of them: the host
        # never waits in between, so the stream runs the calls back to back and each
        # pair times one call's kernels, not the launch gaps a per-call sync would add.
        pairs = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(reps)
        ]
        for start, end in pairs:
            if before_each is not None:
                before_each()
            start.record()
            call()
            end.record()
        torch.cuda.synchronize()
        return [start.elapsed_time(end) / 1e3 for start, end in pairs]

    def last_level_cache_bytes(self) -> int:
        return torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size

    def flush_l2(self) -> None:
        # As triton's do_bench: writing a buffer the size of L2 evicts what the previous
        # call left there. Allocated on first use, once per process.
        if CudaDevice._l2_flush_buffer is None:
            size = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
            CudaDevice._l2_flush_buffer = torch.empty(
                max(size, 1), dtype=torch.int8, device=self.tensor_device
            )
        CudaDevice._l2_flush_buffer.zero_()

    def launch_seconds(self, call: Callable[[], Any], reps: int) -> float:
        torch.cuda.synchronize()
        begun = time.perf_counter()
        for _ in range(reps):
            call()
        issued = time.perf_counter() - begun
        torch.cuda.synchronize()
        return issued / reps

    def sync_seconds(self, reps: int) -> list[float]:
        torch.cuda.synchronize()
        spent = []
        for _ in range(reps):
            begun = time.perf_counter()
            torch.cuda.synchronize()
            spent.append(time.perf_counter() - begun)
        return spent

    def peak_memory_bytes(self, call: Callable[[], Any]) -> int:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        result = call()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        del result
        return peak - before


def parse_cache_size(text: str) -> int:
    """Bytes of a sysfs cache size: "491520K", "2M" or a plain count."""
    text = text.strip()
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale


_DEVICES: dict[str, Device] = {"cpu": CpuDevice(), "cuda": CudaDevice()}


def get_device(name: str) -> Device:
    """The device called ``name``; asv's skip (NotImplementedError) when it is absent."""
    try:
        device = _DEVICES[name]
    except KeyError:
        raise ValueError(f"unknown device {name!r}; expected one of {sorted(_DEVICES)}") from None
    reason = device.unavailable_reason()
    if reason is not None:
        raise NotImplementedError(reason)
    return device


def require_accelerator(name: str, what: str) -> Device:
    """The device called ``name`` if it is an accelerator; else asv's skip saying
    that ``what`` needs one."""
    device = get_device(name)
    if not device.is_accelerator:
        raise NotImplementedError(f"{what}; {name} is not an accelerator")
    return device


def is_out_of_memory(error: BaseException) -> bool:
    return isinstance(error, torch.OutOfMemoryError)
