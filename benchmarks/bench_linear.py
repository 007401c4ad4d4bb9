"""Affine layers: F.linear vs matmul plus bias vs addmm, on the NLP shape [32, 512, 768];
forward alone and forward plus backward."""

from ._harness import DEVICES, FlopsTracks, TrainingStep
from ._shapes import NLP_PROJECTION, projection


class Linear(FlopsTracks):
    op = "linear"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [
        DEVICES,
        ["float32", "bfloat16"],
        [NLP_PROJECTION],
        ["functional", "matmul_bias", "addmm"],
    ]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_linear(self, device, dtype, shape, variant):
        self.call()


class LinearTraining(TrainingStep):
    op = "linear"
    tier = "nightly"
    params = [DEVICES, ["float32", "bfloat16"], [NLP_PROJECTION], ["functional", "matmul_bias"]]
    param_names = ["device", "dtype", "shape", "variant"]


class LinearSweep(FlopsTracks):
    """One token, a large batch, small and large widths, odd sizes, transposed input."""

    op = "linear"
    tier = "weekly"
    params = [
        DEVICES,
        ["float32", "bfloat16"],
        [
            projection(batch=1, tokens=1, in_features=4096, out_features=4096),
            projection(batch=128, tokens=512, in_features=64, out_features=64),
            projection(batch=4, tokens=511, in_features=4095, out_features=1023),
        ],
        ["contiguous", "transposed"],
        ["functional", "matmul_bias"],
    ]
    param_names = ["device", "dtype", "shape", "layout", "variant"]

    def time_linear(self, device, dtype, shape, layout, variant):
        self.call()
