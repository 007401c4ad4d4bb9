"""Indexing with integer tensors: an embedding lookup by F.embedding vs index_select vs
advanced indexing."""

from ._harness import DEVICES, GbpsTrack
from ._shapes import GPT2_EMBEDDING


class Embedding(GbpsTrack):
    op = "embedding"
    params = [
        DEVICES,
        ["float32", "bfloat16"],
        [GPT2_EMBEDDING],
        ["functional", "index_select", "advanced_indexing"],
    ]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_embedding(self, device, dtype, shape, variant):
        self.call()
