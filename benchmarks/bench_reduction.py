"""Softmax and reductions over the last dimension of [32, 512, 768]."""

from ._harness import DEVICES, BandwidthTracks, OpBenchmark
from ._shapes import NLP


class Softmax(BandwidthTracks):
    op = "softmax"
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["functional", "manual"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_softmax(self, device, dtype, shape, variant):
        self.call()

    def peakmem_softmax(self, device, dtype, shape, variant):
        self.call()


class LogSumExp(OpBenchmark):
    op = "logsumexp"
    params = [DEVICES, ["float32"], [NLP], ["functional", "manual"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_logsumexp(self, device, dtype, shape, variant):
        self.call()


class RowSum(OpBenchmark):
    op = "row_sum"
    params = [DEVICES, ["float32"], [NLP], ["sum", "einsum", "matmul_ones"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_row_sum(self, device, dtype, shape, variant):
        self.call()
