"""Causal attention: naive softmax(QKᵀ/√d)V vs F.scaled_dot_product_attention; forward alone
and forward plus backward."""

from ._harness import DEVICES, FlopsTracks, OpBenchmark
from ._shapes import ATTENTION


class CausalAttention(FlopsTracks):
    op = "attention"
    params = [DEVICES, ["float32", "bfloat16"], [ATTENTION], ["naive", "sdpa"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_attention(self, device, dtype, shape, variant):
        self.call()

    def peakmem_attention(self, device, dtype, shape, variant):
        # Process memory: on the CPU, naive's (L, L) score matrices show up here.
        self.call()


class CausalAttentionTraining(OpBenchmark):
    """Forward and backward, as in a training step (prepare.with_backward)."""

    op = "attention"
    backward = True
    params = CausalAttention.params
    param_names = CausalAttention.param_names

    def time_forward_backward(self, device, dtype, shape, variant):
        self.call()
