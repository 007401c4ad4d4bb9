"""Tracks declared once and mixed into the suites: throughput and share of the machine's
peak from the seconds the class's time_ row measured (derived.py), and the accelerator's
own device tracks.

Each mixin is abstract (its ``op`` unset) so that asv, which collects every class with
benchmark methods in a suite module's namespace, does not collect the mixin itself.
"""

from __future__ import annotations

import abc
import statistics
import sys
from typing import Any

from asv_runner.benchmarks.mark import SkipNotImplemented

from .base import OpBenchmark
from .calibration import peak_copy_gbps, peak_matmul_gflops
from .devices import require_accelerator
from .measure import sampled_seconds


def sampled(values: list[float], number: int) -> dict[str, Any]:
    """A track's values in the form of asv_runner's timing result, which asv reads from
    any benchmark (asv/runner.py, ``_run_benchmark_single_param``): asv then keeps their
    median with a confidence interval and ``asv compare`` tests a change for significance,
    as for the time_ rows, instead of one number per process it can only compare."""
    return {"samples": values, "number": number}


class _Tracks(OpBenchmark, abc.ABC):
    """Throughput tracks: an amount of the case (FLOPs, bytes) per second of its call.

    The seconds are those the class's ``time_`` row measured at the same params in the
    same asv run, when it left them (``timed``, set by derived.py); otherwise the track
    times the call itself."""

    # Seconds of blocked_autorange for a track that times its call itself.
    throughput_min_run_time = 0.2
    # The time_ row's seconds per call of each sample and calls per sample.
    timed: tuple[list[float], int] | None = None

    @property
    @abc.abstractmethod
    def op(self) -> str:
        """The tensorops op; a suite sets it as a class attribute."""

    def per_second(self, amount: float, scale: float = 1.0) -> dict[str, Any]:
        """``amount`` per second, times ``scale``: one sample per timed sample or block."""
        if self.timed is not None:
            seconds, number = self.timed
        else:
            seconds, number = sampled_seconds(
                self.call, self.controls.threads, self.throughput_min_run_time
            )
        return sampled([scale * amount / s for s in seconds], number)


def skip(reason: str) -> SkipNotImplemented:
    """asv's skip from inside a benchmark (setup has passed): the row shows n/a. asv does
    not print the reason, so it goes to stderr (``asv run --show-stderr``)."""
    print(f"skipped: {reason}", file=sys.stderr)
    return SkipNotImplemented(reason)


class FlopsTracks(_Tracks):
    """``track_gflops`` and ``track_percent_of_peak`` (of this machine's matmul peak for
    the dtype, :func:`peak_matmul_gflops`), for compute-bound ops. An op that states no
    FLOPs shows these rows as skipped."""

    def gflops(self, scale: float = 1.0) -> dict[str, Any]:
        flops = self.case.flops
        if flops is None:
            raise skip(f"op {self.op!r} states no FLOPs")
        return self.per_second(flops / 1e9, scale)

    def track_gflops(self, *params: Any) -> dict[str, Any]:
        return self.gflops()

    def track_percent_of_peak(self, *params: Any) -> dict[str, Any]:
        peak = peak_matmul_gflops(self.device, self.case.dtype, self.controls)
        return self.gflops(100.0 / peak)

    track_gflops.unit = "GFLOP/s"
    track_percent_of_peak.unit = "% of peak"


class GbpsTrack(_Tracks):
    """``track_gbps``: the case's compulsory bytes (inputs read, output written) per
    second."""

    def gbps(self, scale: float = 1.0) -> dict[str, Any]:
        return self.per_second(self.case.bytes_moved / 1e9, scale)

    def track_gbps(self, *params: Any) -> dict[str, Any]:
        return self.gbps()

    track_gbps.unit = "GB/s"


class BandwidthTracks(GbpsTrack):
    """``track_gbps`` and ``track_percent_of_peak`` (of this machine's copy bandwidth,
    :func:`peak_copy_gbps`), for memory-bound ops."""

    def track_percent_of_peak(self, *params: Any) -> dict[str, Any]:
        return self.gbps(100.0 / peak_copy_gbps(self.device, self.controls))

    track_percent_of_peak.unit = "% of peak"


class TrainingStep(OpBenchmark, abc.ABC):
    """``time_forward_backward``: a forward and a backward from a fixed seeded gradient, as
    in a training step (prepare.with_backward). A suite subclasses it with ``op``,
    ``params``, ``param_names`` and its ``tier`` (each suite declares its own rows' tier)."""

    backward = True

    @property
    @abc.abstractmethod
    def op(self) -> str:
        """The tensorops op; a suite sets it as a class attribute."""

    def time_forward_backward(self, *params: Any) -> None:
        self.call()


class DeviceTracks(_Tracks):
    """Device-side tracks of an op, read from the accelerator itself. A suite subclasses
    it with ``op``, ``params`` and ``param_names`` and nothing else.

    - ``track_device_time``: the median of ``device_reps`` CUDA-event pairs, one around
      each call, all read after one final synchronize. It is the GPU's own time for the
      kernels without the host's launch cost, so for ops well above launch overhead
      (about 1 ms and up) it agrees with the sync-wrapped ``time_*`` of the suites, and
      for small ops it is lower: there ``time_*`` measures launches, this the kernels;
    - ``track_device_time_cold_l2``: the same with L2 flushed before each call (as
      triton's ``do_bench``), so the inputs come from device memory: the figure for an
      op whose inputs were just evicted by other work, next to the warm one above;
    - ``track_launch_time``: host seconds to issue one call without waiting for it;
    - ``track_peak_device_memory``: ``max_memory_allocated`` after
      ``reset_peak_memory_stats``, less what was allocated before the call (inputs left
      out, outputs and intermediates in).

    The CPU has no device clock, so on ``cpu`` setup skips before building any inputs.
    """

    device_reps = 50
    launch_reps = 20

    def setup(self, *params: Any) -> None:
        named = dict(zip(self.param_names, params, strict=True))
        require_accelerator(
            named["device"],
            "device tracks read an accelerator's clock and allocator (the CPU's figures "
            "are its time_* and peakmem_* rows)",
        )
        super().setup(*params)

    def track_device_time(self, *params: Any) -> float:
        return statistics.median(self.device.device_seconds(self.call, self.device_reps))

    def track_device_time_cold_l2(self, *params: Any) -> float:
        spent = self.device.device_seconds(self.call, self.device_reps, self.device.flush_l2)
        return statistics.median(spent)

    def track_launch_time(self, *params: Any) -> float:
        return self.device.launch_seconds(self.call, self.launch_reps)

    def track_peak_device_memory(self, *params: Any) -> float:
        return float(self.device.peak_memory_bytes(self.call))

    track_device_time.unit = track_device_time_cold_l2.unit = track_launch_time.unit = "seconds"
    track_peak_device_memory.unit = "bytes"
