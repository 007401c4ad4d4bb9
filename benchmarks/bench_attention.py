"""Causal attention: naive softmax(QKᵀ/√d)V vs F.scaled_dot_product_attention; forward alone
and forward plus backward."""

from ._harness import DEVICES, FlopsTracks, TrainingStep
from ._shapes import ATTENTION, attention


class CausalAttention(FlopsTracks):
    op = "attention"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [DEVICES, ["float32", "bfloat16"], [ATTENTION], ["naive", "sdpa"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_attention(self, device, dtype, shape, variant):
        self.call()

    def peakmem_attention(self, device, dtype, shape, variant):
        # Process memory: on the CPU, naive's (L, L) score matrices show up here.
        self.call()


class CausalAttentionTraining(TrainingStep):
    op = "attention"
    tier = "nightly"
    params = CausalAttention.params
    param_names = CausalAttention.param_names


class CausalAttentionSweep(FlopsTracks):
    """Short and long sequences, batch 1, and a small head."""

    op = "attention"
    tier = "weekly"
    params = [
        DEVICES,
        ["float32", "bfloat16"],
        [
            attention(batch=1, heads=12, tokens=128, head_dim=64),
            attention(batch=1, heads=32, tokens=2048, head_dim=128),
            attention(batch=32, heads=8, tokens=257, head_dim=32),
        ],
        ["naive", "sdpa"],
    ]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_attention(self, device, dtype, shape, variant):
        self.call()
