"""Matrix products: torch.mm vs torch.matmul vs torch.einsum, batched products, and float32
with TF32 off and on (CUDA)."""

from .harness import DEVICES, OpBenchmark, TF32Switch


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

    def track_percent_of_peak(self, device, dtype, shape, variant):
        return self.measure_percent_of_peak_flops()

    track_percent_of_peak.unit = "% of peak"


class BatchedMatMul(OpBenchmark):
    op = "bmm"
    params = [DEVICES, ["float32", "bfloat16"], [(64, 128, 128, 128)], ["bmm", "matmul", "einsum"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_bmm(self, device, dtype, shape, variant):
        self.call()

    def track_gflops(self, device, dtype, shape, variant):
        return self.measure_gflops()

    track_gflops.unit = "GFLOP/s"

    def track_percent_of_peak(self, device, dtype, shape, variant):
        return self.measure_percent_of_peak_flops()

    track_percent_of_peak.unit = "% of peak"


class MatMulTF32(TF32Switch, OpBenchmark):
    op = "matmul"
    variant = "mm"
    params = [DEVICES, [(4096, 4096, 4096)], ["off", "on"]]
    param_names = ["device", "shape", "tf32"]

    def time_matmul(self, device, shape, tf32):
        self.call()

    def track_gflops(self, device, shape, tf32):
        return self.measure_gflops()

    track_gflops.unit = "GFLOP/s"

    def track_percent_of_peak(self, device, shape, tf32):
        return self.measure_percent_of_peak_flops()

    track_percent_of_peak.unit = "% of peak"
