"""Causal attention: naive softmax(QKᵀ/√d)V vs F.scaled_dot_product_attention; forward alone
and forward plus backward."""

from .harness import DEVICES, OpBenchmark


class CausalAttention(OpBenchmark):
    op = "attention"
    # batch 8, 12 heads of width 64 (a 768-wide model), 512 tokens
    params = [DEVICES, ["float32", "bfloat16"], [(8, 12, 512, 64)], ["naive", "sdpa"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_attention(self, device, dtype, shape, variant):
        self.call()

    def track_gflops(self, device, dtype, shape, variant):
        return self.measure_gflops()

    track_gflops.unit = "GFLOP/s"

    def peakmem_attention(self, device, dtype, shape, variant):
        # Process memory: on the CPU, naive's (L, L) score matrices show up here.
        self.call()

    def track_percent_of_peak(self, device, dtype, shape, variant):
        return self.measure_percent_of_peak_flops()

    track_percent_of_peak.unit = "% of peak"


class CausalAttentionTraining(OpBenchmark):
    """Forward and backward, as in a training step (harness.with_backward)."""

    op = "attention"
    backward = True
    params = [DEVICES, ["float32", "bfloat16"], [(8, 12, 512, 64)], ["naive", "sdpa"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_forward_backward(self, device, dtype, shape, variant):
        self.call()
