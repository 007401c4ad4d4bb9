"""Data movement: view vs reshape vs contiguous on a transposed tensor, and host↔device
copies from pageable vs pinned memory (CUDA only; skipped on CPU machines)."""

from ._harness import DEVICES, GbpsTrack, OpBenchmark
from ._harness.tiers import weekly_grid
from ._shapes import GPT2_HEADS, NLP

FLOATS = ["float32", "bfloat16"]

# 64 MiB of float32, as 16 x 1024 x 1024.
COPY_64_MIB = (16, 1024, 1024)


class SplitLastDim(OpBenchmark):
    op = "split_last_dim"
    tier = "pr"
    params = [DEVICES, [NLP], ["view", "reshape", "contiguous"]]
    param_names = ["device", "shape", "variant"]

    def time_split_last_dim(self, device, shape, variant):
        self.call()


class FlattenTransposed(OpBenchmark):
    op = "flatten_transposed"
    tier = "pr"
    params = [DEVICES, [NLP], ["reshape", "contiguous_view", "flatten"]]
    param_names = ["device", "shape", "variant"]

    def time_flatten_transposed(self, device, shape, variant):
        self.call()


class HostToDevice(GbpsTrack):
    op = "host_to_device"
    tier = "nightly"
    cpu_rows = False  # a copy between host and accelerator
    params = [DEVICES, [COPY_64_MIB], ["contiguous", "pinned"], ["to", "to_non_blocking"]]
    param_names = ["device", "shape", "layout", "variant"]

    def time_host_to_device(self, device, shape, layout, variant):
        self.call()


class DeviceToHost(GbpsTrack):
    op = "device_to_host"
    tier = "nightly"
    cpu_rows = False
    params = [DEVICES, [COPY_64_MIB], ["contiguous", "pinned"], ["cpu", "copy_into"]]
    param_names = ["device", "shape", "layout", "variant"]

    def time_device_to_host(self, device, shape, layout, variant):
        self.call()


class Cat(OpBenchmark):
    op = "cat"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [
        DEVICES,
        ["float32"],
        [GPT2_HEADS],
        ["cat", "stack_reshape", "copy_into_slices"],
    ]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_cat(self, device, dtype, shape, variant):
        self.call()


class Stack(OpBenchmark):
    op = "stack"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [
        DEVICES,
        ["float32"],
        [GPT2_HEADS],
        ["stack", "cat_unsqueezed", "copy_into_slices"],
    ]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_stack(self, device, dtype, shape, variant):
        self.call()


# The low-precision and channels_last rows of the ops above, weekly: the nightly's
# budget holds their float32, contiguous rows (docs/reference/tiers.md).
CatGrid = weekly_grid(Cat, dtype=FLOATS)
StackGrid = weekly_grid(Stack, dtype=FLOATS)
