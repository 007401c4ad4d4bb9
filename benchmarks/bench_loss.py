"""Losses: cross-entropy as one fused call, as log_softmax then nll_loss, written out."""

from ._harness import DEVICES, OpBenchmark, TrainingStep
from ._harness.tiers import weekly_grid
from ._shapes import BERT_MLM_LOGITS

FLOATS = ["float32", "bfloat16"]


class CrossEntropy(OpBenchmark):
    op = "cross_entropy"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [
        DEVICES,
        ["float32"],
        [BERT_MLM_LOGITS],
        ["functional", "log_softmax_nll", "manual"],
    ]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_cross_entropy(self, device, dtype, shape, variant):
        self.call()


class CrossEntropyTraining(TrainingStep):
    op = "cross_entropy"
    tier = "nightly"
    params = CrossEntropy.params
    param_names = CrossEntropy.param_names


# The low-precision and channels_last rows of the ops above, weekly: the nightly's
# budget holds their float32, contiguous rows (docs/reference/tiers.md).
CrossEntropyGrid = weekly_grid(CrossEntropy, dtype=FLOATS)
CrossEntropyTrainingGrid = weekly_grid(CrossEntropyTraining, dtype=FLOATS)
