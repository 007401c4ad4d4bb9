"""Autocast: float32 vs torch.autocast to bfloat16 or float16, from float32 inputs.

The float32 row is the op's plain variant, so each class reads as one comparison.
CPU autocast supports bfloat16 and float16; whether they are faster than float32
depends on the CPU's instruction set, which is the point of tracking them per machine.
"""

from ._harness import DEVICES, OpBenchmark
from ._shapes import CONV_B32, NLP_PROJECTION, product

PRECISIONS = ["float32", "autocast_bf16", "autocast_fp16"]


class _AutocastBenchmark(OpBenchmark):
    # Nightly: a precision mode of the ops' own variants (which the pr tier has), and at
    # 39 s of the pr tier's 302 s per commit (conv alone 27 s) more than it can pay.
    tier = "nightly"
    float32_variant = ""
    param_names = ["device", "shape", "precision"]

    def resolve(self, named):
        # The plain float32 variant is the baseline row of the same class.
        precision = named["precision"]
        variant = self.float32_variant if precision == "float32" else precision
        return super().resolve({**named, "variant": variant})


class AutocastMatMul(_AutocastBenchmark):
    op = "matmul"
    float32_variant = "matmul"
    params = [DEVICES, [product(m=1024, k=1024, n=1024)], PRECISIONS]

    def time_matmul(self, device, shape, precision):
        self.call()


class AutocastLinear(_AutocastBenchmark):
    op = "linear"
    float32_variant = "functional"
    params = [DEVICES, [NLP_PROJECTION], PRECISIONS]

    def time_linear(self, device, shape, precision):
        self.call()


class AutocastConv2d(_AutocastBenchmark):
    op = "conv2d"
    float32_variant = "functional"
    params = [DEVICES, [CONV_B32], PRECISIONS]

    def time_conv2d(self, device, shape, precision):
        self.call()
