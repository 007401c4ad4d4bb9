"""Affine layers: F.linear vs matmul plus bias vs addmm, on the NLP shape [32, 512, 768];
forward alone and forward plus backward."""

from ._harness import DEVICES, FlopsTracks, OpBenchmark
from ._shapes import NLP_PROJECTION


class Linear(FlopsTracks):
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


class LinearTraining(OpBenchmark):
    """Forward and backward, as in a training step (prepare.with_backward)."""

    op = "linear"
    backward = True
    params = [DEVICES, ["float32", "bfloat16"], [NLP_PROJECTION], ["functional", "matmul_bias"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_forward_backward(self, device, dtype, shape, variant):
        self.call()
