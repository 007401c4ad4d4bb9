"""Device-side tracks on accelerators: GPU time by CUDA events next to the sync-wrapped
wall time of the suites, host time to launch, peak device memory, and the cost of one
synchronize. Every op keeps its suite's params; the CPU rows skip (harness.DeviceTracks)."""

import statistics

from . import bench_activation as _activation
from . import bench_attention as _attention
from . import bench_conv as _conv
from . import bench_linear as _linear
from . import bench_matmul as _matmul
from . import bench_movement as _movement
from . import bench_norm as _norm
from . import bench_reduction as _reduction
from .harness import DEVICES, DeviceTracks, get_device


class Synchronize:
    """What one ``synchronize()`` of an idle device costs on this machine: the floor of
    every sync-wrapped timing, paid once per block of ``number`` calls."""

    params = [DEVICES]
    param_names = ["device"]
    unit = "seconds"
    version = "1"  # as harness.OpBenchmark's: history survives harness edits

    def setup(self, device):
        self.device = get_device(device)
        if not self.device.has_device_clock:
            raise NotImplementedError(f"{device} has no device queue to synchronize")

    def track_sync_time(self, device):
        return statistics.median(self.device.sync_seconds(200))


class MatMul(DeviceTracks):
    op = "matmul"
    params, param_names = _matmul.MatMul.params, _matmul.MatMul.param_names


class Linear(DeviceTracks):
    op = "linear"
    params, param_names = _linear.Linear.params, _linear.Linear.param_names


class Conv2d(DeviceTracks):
    op = "conv2d"
    params, param_names = _conv.Conv2d.params, _conv.Conv2d.param_names


class CausalAttention(DeviceTracks):
    op = "attention"
    params, param_names = _attention.CausalAttention.params, _attention.CausalAttention.param_names


class LayerNorm(DeviceTracks):
    op = "layer_norm"
    params, param_names = _norm.LayerNorm.params, _norm.LayerNorm.param_names


class Softmax(DeviceTracks):
    op = "softmax"
    params, param_names = _reduction.Softmax.params, _reduction.Softmax.param_names


class Silu(DeviceTracks):
    op = "silu"
    params, param_names = _activation.Silu.params, _activation.Silu.param_names


class HostToDevice(DeviceTracks):
    op = "host_to_device"
    params, param_names = _movement.HostToDevice.params, _movement.HostToDevice.param_names
