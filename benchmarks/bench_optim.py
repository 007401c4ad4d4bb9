"""The optimizer step: AdamW over a model's parameters, for-loop vs foreach vs fused."""

from ._harness import DEVICES, GbpsTrack, OpBenchmark
from ._harness.tiers import weekly_grid

FLOATS = ["float32", "bfloat16"]

# BERT-mini (Turc et al.): 4 layers of width 256, a 30522-word embedding; 11 M parameters.
BERT_MINI = (4, 256, 30522)  # (layers, width, vocabulary)


class AdamW(OpBenchmark):
    op = "adamw"
    tier, pr = "nightly", {"dtype": ["float32"]}
    # Counted on a 1-layer, 32-wide model with a 512-word embedding: 25 tensors, 21 k values.
    count_shape = (1, 32, 512)
    params = [DEVICES, ["float32"], [BERT_MINI], ["for_loop", "foreach", "fused"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_step(self, device, dtype, shape, variant):
        self.call()


# The low-precision and channels_last rows of the ops above, weekly: the nightly's
# budget holds their float32, contiguous rows (docs/reference/tiers.md).
AdamWGrid = weekly_grid(AdamW, GbpsTrack, dtype=FLOATS)
