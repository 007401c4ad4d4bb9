"""Indexing with integer tensors: embedding lookups, gathers and scatters, each by its
torch function against formulations from other indexing ops."""

from ._harness import DEVICES, GbpsTrack, OpBenchmark
from ._harness.tiers import weekly_grid
from ._shapes import DLRM_BAGS, GPT2_EMBEDDING, embedding

FLOATS = ["float32", "bfloat16"]
PARAM_NAMES = ["device", "dtype", "shape", "variant"]


class Embedding(GbpsTrack):
    op = "embedding"
    tier, pr = "nightly", {"dtype": ["float32"]}
    cold_inputs = True
    params = [
        DEVICES,
        FLOATS,
        [GPT2_EMBEDDING],
        ["functional", "index_select", "advanced_indexing"],
    ]
    param_names = PARAM_NAMES

    def time_embedding(self, device, dtype, shape, variant):
        self.call()


class EmbeddingBag(OpBenchmark):
    op = "embedding_bag"
    tier, pr = "nightly", {"dtype": ["float32"]}
    cold_inputs = True
    params = [DEVICES, ["float32"], [DLRM_BAGS], ["functional", "embedding_sum"]]
    param_names = PARAM_NAMES

    def time_embedding_bag(self, device, dtype, shape, variant):
        self.call()


class Gather(OpBenchmark):
    op = "gather"
    tier, pr = "nightly", {"dtype": ["float32"]}
    cold_inputs = True
    # GPT-2 small's activations (32 x 512 tokens, 768 features), 64 features picked per token.
    params = [DEVICES, ["float32"], [(32, 512, 768, 64)], ["gather", "take_along_dim", "flat_take"]]
    param_names = PARAM_NAMES

    def time_gather(self, device, dtype, shape, variant):
        self.call()


class IndexSelect(OpBenchmark):
    op = "index_select"
    tier, pr = "nightly", {"dtype": ["float32"]}
    cold_inputs = True
    # A GNN's minibatch: 8192 of 100000 nodes' 128-wide features (rows, features, picked).
    params = [
        DEVICES,
        ["float32"],
        [(100_000, 128, 8192)],
        ["index_select", "advanced_indexing", "gather"],
    ]
    param_names = PARAM_NAMES

    def time_index_select(self, device, dtype, shape, variant):
        self.call()


class IndexAdd(OpBenchmark):
    op = "index_add"
    tier, pr = "nightly", {"dtype": ["float32"]}
    cold_inputs = True
    # BERT-base's embedding gradient: 8192 token rows added into its 30522 x 768 table.
    params = [
        DEVICES,
        ["float32"],
        [(30522, 768, 8192)],
        ["index_add", "index_put_accumulate", "scatter_add"],
    ]
    param_names = PARAM_NAMES

    def time_index_add(self, device, dtype, shape, variant):
        self.call()


class ScatterAdd(OpBenchmark):
    op = "scatter_add"
    tier, pr = "nightly", {"dtype": ["float32"]}
    cold_inputs = True
    # Per-row histograms: 512 rows of 4096 values into 1024 bins (rows, sources, targets).
    params = [DEVICES, ["float32"], [(512, 4096, 1024)], ["scatter_add", "index_put_accumulate"]]
    param_names = PARAM_NAMES

    def time_scatter_add(self, device, dtype, shape, variant):
        self.call()


class EmbeddingSweep(OpBenchmark):
    """Lookups from one token to a large batch, small to large tables. Its inputs stay
    where the last call left them (no ``cold_inputs``): a table that fits in the cache
    is part of what the sweep shows."""

    op = "embedding"
    tier = "weekly"
    params = [
        DEVICES,
        ["float32"],
        [
            embedding(batch=1, tokens=1, vocabulary=50257, features=768),
            embedding(batch=1, tokens=512, vocabulary=50257, features=768),
            embedding(batch=128, tokens=512, vocabulary=1000, features=64),
            embedding(batch=8, tokens=511, vocabulary=250_000, features=1024),
        ],
        ["functional", "index_select", "advanced_indexing"],
    ]
    param_names = PARAM_NAMES

    def time_embedding(self, device, dtype, shape, variant):
        self.call()


# The low-precision and channels_last rows of the ops above, weekly: the nightly's
# budget holds their float32, contiguous rows (docs/reference/tiers.md).
EmbeddingBagGrid = weekly_grid(EmbeddingBag, GbpsTrack, dtype=FLOATS)
GatherGrid = weekly_grid(Gather, dtype=FLOATS)
IndexSelectGrid = weekly_grid(IndexSelect, dtype=FLOATS)
IndexAddGrid = weekly_grid(IndexAdd, dtype=FLOATS)
ScatterAddGrid = weekly_grid(ScatterAdd, dtype=FLOATS)
