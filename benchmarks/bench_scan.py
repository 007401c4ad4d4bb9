"""Scans and selection over the last dimension: cumulative sums, top-k and sort."""

from ._harness import DEVICES, BandwidthTracks, OpBenchmark
from ._shapes import GPT2_LOGITS, activations

FLOATS = ["float32", "bfloat16"]
PARAM_NAMES = ["device", "dtype", "shape", "variant"]


class Cumsum(BandwidthTracks):
    op = "cumsum"
    tier, pr = "nightly", {"dtype": ["float32"]}
    # A running sum over 256 channels of 32 x 512 tokens (the triangular product is a GEMM).
    params = [
        DEVICES,
        FLOATS,
        [activations(batch=32, tokens=512, features=256)],
        ["cumsum", "triangular_matmul"],
    ]
    param_names = PARAM_NAMES

    def time_cumsum(self, device, dtype, shape, variant):
        self.call()


class TopK(OpBenchmark):
    op = "topk"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [DEVICES, FLOATS, [GPT2_LOGITS], ["topk", "sort_slice"]]
    param_names = PARAM_NAMES

    def time_topk(self, device, dtype, shape, variant):
        self.call()


class Sort(OpBenchmark):
    op = "sort"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [DEVICES, FLOATS, [GPT2_LOGITS], ["sort", "stable", "argsort_gather"]]
    param_names = PARAM_NAMES

    def time_sort(self, device, dtype, shape, variant):
        self.call()
