"""Benchmarks over the ``probe`` op of conftest's ``probe_op`` fixture, and a helper that
runs one the way asv does."""

from __future__ import annotations

import timeit

from benchmarks._harness import BandwidthTracks, DeviceTracks, FlopsTracks, OpBenchmark

PARAMS = ("cpu", (4, 4), "plus_one")


class Probe(OpBenchmark):
    op = "probe"
    params = [["cpu", "cuda"], [(4, 4)], ["plus_one"]]
    param_names = ["device", "shape", "variant"]

    def time_probe(self, device, shape, variant):
        self.call()


class ProbeFlops(FlopsTracks):
    op = "probe"
    params, param_names = Probe.params, Probe.param_names


class ProbeBandwidth(BandwidthTracks):
    op = "probe"
    params, param_names = Probe.params, Probe.param_names


class ProbeOnDevice(DeviceTracks):
    op = "probe"
    params, param_names = Probe.params, Probe.param_names


def run_like_asv(bench: OpBenchmark, params: tuple, number: int = 5) -> float:
    """One asv sample: setup, a block of `number` calls timed with the class timer, teardown."""
    bench.setup(*params)
    try:
        return timeit.Timer(lambda: bench.time_probe(*params), timer=bench.timer).timeit(number)
    finally:
        bench.teardown(*params)
