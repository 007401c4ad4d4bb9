"""Affine layers: F.linear vs matmul plus bias vs addmm, on the NLP shape [32, 512, 768];
forward alone and forward plus backward."""

from .harness import DEVICES, OpBenchmark

NLP_PROJECTION = (32, 512, 768, 768)


class Linear(OpBenchmark):
    op = "linear"
    params = [
        DEVICES,
        ["float32", "bfloat16"],
        [NLP_PROJECTION],
        ["functional", "matmul_bias", "addmm"],
    ]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_linear(self, device, dtype, shape, variant):
        self.call()

    def track_gflops(self, device, dtype, shape, variant):
        return self.measure_gflops()

    track_gflops.unit = "GFLOP/s"

    def track_percent_of_peak(self, device, dtype, shape, variant):
        return self.measure_percent_of_peak_flops()

    track_percent_of_peak.unit = "% of peak"


class LinearTraining(OpBenchmark):
    """Forward and backward, as in a training step (harness.with_backward)."""

    op = "linear"
    backward = True
    params = [DEVICES, ["float32", "bfloat16"], [NLP_PROJECTION], ["functional", "matmul_bias"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_forward_backward(self, device, dtype, shape, variant):
        self.call()
