"""Softmax and reductions over the last dimension of [32, 512, 768]."""

from .harness import DEVICES, OpBenchmark

NLP = (32, 512, 768)


class Softmax(OpBenchmark):
    op = "softmax"
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["functional", "manual"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_softmax(self, device, dtype, shape, variant):
        self.call()

    def peakmem_softmax(self, device, dtype, shape, variant):
        self.call()

    def track_gbps(self, device, dtype, shape, variant):
        return self.measure_gbytes_per_second()

    def track_percent_of_peak(self, device, dtype, shape, variant):
        return self.measure_percent_of_peak_bandwidth()

    track_gbps.unit = "GB/s"
    track_percent_of_peak.unit = "% of peak"


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
