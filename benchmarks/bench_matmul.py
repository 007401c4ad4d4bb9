"""Matrix products: torch.mm vs torch.matmul vs torch.einsum, and batched products."""

from .harness import DEVICES, OpBenchmark


class MatMul(OpBenchmark):
    op = "matmul"
    params = [
        DEVICES,
        ["float32", "float16", "bfloat16"],
        [(512, 512, 512), (1024, 1024, 1024)],
        ["mm", "matmul", "einsum"],
    ]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_matmul(self, device, dtype, shape, variant):
        self.call()

    def track_gflops(self, device, dtype, shape, variant):
        return self.measure_gflops()

    track_gflops.unit = "GFLOP/s"


class BatchedMatMul(OpBenchmark):
    op = "bmm"
    params = [DEVICES, ["float32", "bfloat16"], [(64, 128, 128, 128)], ["bmm", "matmul", "einsum"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_bmm(self, device, dtype, shape, variant):
        self.call()

    def track_gflops(self, device, dtype, shape, variant):
        return self.measure_gflops()

    track_gflops.unit = "GFLOP/s"
