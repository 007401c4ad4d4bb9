"""Data movement: view vs reshape vs contiguous on a transposed tensor, and host↔device
copies from pageable vs pinned memory (CUDA only; skipped on CPU machines)."""

from ._harness import DEVICES, GbpsTrack, OpBenchmark
from ._shapes import NLP

# 64 MiB of float32, as 16 x 1024 x 1024.
COPY_64_MIB = (16, 1024, 1024)


class SplitLastDim(OpBenchmark):
    op = "split_last_dim"
    params = [DEVICES, [NLP], ["view", "reshape", "contiguous"]]
    param_names = ["device", "shape", "variant"]

    def time_split_last_dim(self, device, shape, variant):
        self.call()


class FlattenTransposed(OpBenchmark):
    op = "flatten_transposed"
    params = [DEVICES, [NLP], ["reshape", "contiguous_view", "flatten"]]
    param_names = ["device", "shape", "variant"]

    def time_flatten_transposed(self, device, shape, variant):
        self.call()


class HostToDevice(GbpsTrack):
    op = "host_to_device"
    params = [DEVICES, [COPY_64_MIB], ["contiguous", "pinned"], ["to", "to_non_blocking"]]
    param_names = ["device", "shape", "layout", "variant"]

    def time_host_to_device(self, device, shape, layout, variant):
        self.call()


class DeviceToHost(GbpsTrack):
    op = "device_to_host"
    params = [DEVICES, [COPY_64_MIB], ["contiguous", "pinned"], ["cpu", "copy_into"]]
    param_names = ["device", "shape", "layout", "variant"]

    def time_device_to_host(self, device, shape, layout, variant):
        self.call()
