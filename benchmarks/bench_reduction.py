"""Softmax and reductions over the last dimension of [32, 512, 768]."""

from ._harness import DEVICES, BandwidthTracks, OpBenchmark
from ._shapes import NLP, activations


class Softmax(BandwidthTracks):
    op = "softmax"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["functional", "manual"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_softmax(self, device, dtype, shape, variant):
        self.call()

    def peakmem_softmax(self, device, dtype, shape, variant):
        self.call()


class LogSumExp(OpBenchmark):
    op = "logsumexp"
    tier = "pr"
    params = [DEVICES, ["float32"], [NLP], ["functional", "manual"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_logsumexp(self, device, dtype, shape, variant):
        self.call()


class RowSum(OpBenchmark):
    op = "row_sum"
    tier = "pr"
    params = [DEVICES, ["float32"], [NLP], ["sum", "einsum", "matmul_ones"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_row_sum(self, device, dtype, shape, variant):
        self.call()


class SoftmaxSweep(BandwidthTracks):
    """From one token to a large batch, 64 to 50257 features (a vocabulary), odd sizes,
    transposed."""

    op = "softmax"
    tier = "weekly"
    params = [
        DEVICES,
        ["float32", "bfloat16"],
        [
            activations(batch=1, tokens=1, features=50257),
            activations(batch=8, tokens=512, features=64),
            activations(batch=16, tokens=128, features=50257),
            activations(batch=32, tokens=513, features=767),
        ],
        ["contiguous", "transposed"],
        ["functional", "manual"],
    ]
    param_names = ["device", "dtype", "shape", "layout", "variant"]

    def time_softmax(self, device, dtype, shape, layout, variant):
        self.call()
