"""Binary elementwise with broadcasting and type promotion: activations plus a float32 bias."""

from ._harness import DEVICES, BandwidthTracks, GbpsTrack, OpBenchmark
from ._harness.tiers import weekly_grid
from ._shapes import NLP, activation_sweep, activations

FLOATS = ["float32", "bfloat16"]


class AddBroadcast(OpBenchmark):
    op = "add_broadcast"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [DEVICES, ["float32"], [NLP], ["operator", "upcast_first", "expanded"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_add_broadcast(self, device, dtype, shape, variant):
        self.call()


class AddBroadcastSweep(BandwidthTracks):
    """From one token to a large batch, small and large features, odd sizes, and a
    non-contiguous (transposed) activation."""

    op = "add_broadcast"
    tier = "weekly"
    params = [
        DEVICES,
        ["float32", "bfloat16"],
        activation_sweep(activations(batch=8, tokens=511, features=8191)),
        ["contiguous", "transposed"],
        ["operator", "upcast_first"],
    ]
    param_names = ["device", "dtype", "shape", "layout", "variant"]

    def time_add_broadcast(self, device, dtype, shape, layout, variant):
        self.call()


# The low-precision and channels_last rows of the ops above, weekly: the nightly's
# budget holds their float32, contiguous rows (docs/reference/tiers.md).
AddBroadcastGrid = weekly_grid(AddBroadcast, GbpsTrack, dtype=FLOATS)
