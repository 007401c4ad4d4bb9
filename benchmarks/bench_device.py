"""Device-side tracks on accelerators: GPU time by CUDA events next to the sync-wrapped
wall time of the suites, host time to launch, peak device memory, and the cost of one
synchronize. Every op keeps its suite's params; the CPU rows skip (tracks.DeviceTracks)."""

import statistics

from . import bench_activation as _activation
from . import bench_attention as _attention
from . import bench_conv as _conv
from . import bench_linear as _linear
from . import bench_matmul as _matmul
from . import bench_movement as _movement
from . import bench_norm as _norm
from . import bench_reduction as _reduction
from ._harness import DEVICES, DeviceTracks, require_accelerator


class Synchronize:
    """What one ``synchronize()`` of an idle device costs on this machine: the floor of
    every sync-wrapped timing, paid once per block of ``number`` calls."""

    tier = "nightly"
    params = [DEVICES]
    param_names = ["device"]
    unit = "seconds"
    version = "1"  # as OpBenchmark's: history survives harness edits

    def setup(self, device):
        self.device = require_accelerator(device, "synchronize waits on a device queue")

    def track_sync_time(self, device):
        return statistics.median(self.device.sync_seconds(200))


def device_tracks_of(suite: type) -> type:
    """The device tracks of ``suite``'s op with ``suite``'s params, under its name."""
    return type(
        suite.__name__,
        (DeviceTracks,),
        {
            "op": suite.op,
            "tier": "nightly",
            "params": suite.params,
            "param_names": suite.param_names,
            "__module__": __name__,
            "__qualname__": suite.__name__,
        },
    )


MatMul = device_tracks_of(_matmul.MatMul)
Linear = device_tracks_of(_linear.Linear)
Conv2d = device_tracks_of(_conv.Conv2d)
CausalAttention = device_tracks_of(_attention.CausalAttention)
LayerNorm = device_tracks_of(_norm.LayerNorm)
Softmax = device_tracks_of(_reduction.Softmax)
Silu = device_tracks_of(_activation.Silu)
HostToDevice = device_tracks_of(_movement.HostToDevice)
