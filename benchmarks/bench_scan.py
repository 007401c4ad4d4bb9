"""Scans and selection over the last dimension: cumulative sums, top-k and sort."""

from ._harness import DEVICES, GbpsTrack, OpBenchmark
from ._harness.tiers import weekly_grid
from ._shapes import GPT2_LOGITS, activations

FLOATS = ["float32", "bfloat16"]
PARAM_NAMES = ["device", "dtype", "shape", "variant"]


class Cumsum(OpBenchmark):
    op = "cumsum"
    tier, pr = "nightly", {"dtype": ["float32"]}
    # A running sum over 256 channels of 32 x 512 tokens (the triangular product is a GEMM).
    params = [
        DEVICES,
        ["float32"],
        [activations(batch=32, tokens=512, features=256)],
        ["cumsum", "triangular_matmul"],
    ]
    param_names = PARAM_NAMES

    def time_cumsum(self, device, dtype, shape, variant):
        self.call()


class TopK(OpBenchmark):
    op = "topk"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [DEVICES, ["float32"], [GPT2_LOGITS], ["topk", "sort_slice"]]
    param_names = PARAM_NAMES

    def time_topk(self, device, dtype, shape, variant):
        self.call()


class Sort(OpBenchmark):
    op = "sort"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [DEVICES, ["float32"], [GPT2_LOGITS], ["sort", "stable", "argsort_gather"]]
    param_names = PARAM_NAMES

    def time_sort(self, device, dtype, shape, variant):
        self.call()


# The low-precision and channels_last rows of the ops above, weekly: the nightly's
# budget holds their float32, contiguous rows (docs/reference/tiers.md).
CumsumGrid = weekly_grid(Cumsum, GbpsTrack, dtype=FLOATS)
TopKGrid = weekly_grid(TopK, dtype=FLOATS)
SortGrid = weekly_grid(Sort, dtype=FLOATS)
