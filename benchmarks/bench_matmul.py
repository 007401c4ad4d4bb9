"""Matrix products: torch.mm vs torch.matmul vs torch.einsum, batched products, and float32
with TF32 off and on (CUDA)."""

from ._harness import DEVICES, FlopsTracks, TF32Switch
from ._shapes import batched_product, product


class MatMul(FlopsTracks):
    op = "matmul"
    tier, pr = "nightly", {"dtype": ["float32"], "shape": [product(m=512, k=512, n=512)]}
    params = [
        DEVICES,
        ["float32", "float16", "bfloat16"],
        [product(m=512, k=512, n=512), product(m=1024, k=1024, n=1024)],
        ["mm", "matmul", "einsum"],
    ]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_matmul(self, device, dtype, shape, variant):
        self.call()


class BatchedMatMul(FlopsTracks):
    op = "bmm"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [
        DEVICES,
        ["float32", "bfloat16"],
        [batched_product(batch=64, m=128, k=128, n=128)],
        ["bmm", "matmul", "einsum"],
    ]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_bmm(self, device, dtype, shape, variant):
        self.call()


class MatMulTF32(TF32Switch, FlopsTracks):
    op = "matmul"
    variant = "mm"
    tier = "nightly"
    params = [DEVICES, [product(m=4096, k=4096, n=4096)], ["off", "on"]]
    param_names = ["device", "shape", "tf32"]

    def time_matmul(self, device, shape, tf32):
        self.call()


class MatMulSweep(FlopsTracks):
    """Matrix-vector and vector-matrix products, odd sizes, a large square product, and
    transposed (non-contiguous) operands."""

    op = "matmul"
    tier = "weekly"
    # A bfloat16 2048^3 product takes about a minute a call on a CPU without bfloat16
    # instructions, and a track's process makes ten calls: 300 s timed out there
    # (docs/explanation/measurement.md, "Rows of a minute a call").
    timeout = 1200.0
    params = [
        DEVICES,
        ["float32", "bfloat16"],
        [
            product(m=1, k=4096, n=4096),
            product(m=4096, k=4096, n=1),
            product(m=127, k=255, n=511),
            product(m=2048, k=2048, n=2048),
        ],
        ["contiguous", "transposed"],
        ["mm", "matmul"],
    ]
    param_names = ["device", "dtype", "shape", "layout", "variant"]

    def time_matmul(self, device, dtype, shape, layout, variant):
        self.call()
