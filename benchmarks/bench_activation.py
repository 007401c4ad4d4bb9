"""Activations on the NLP shape [32, 512, 768]: gelu exact vs tanh vs manual, and silu."""

from ._harness import DEVICES, BandwidthTracks
from ._shapes import NLP


class Gelu(BandwidthTracks):
    op = "gelu"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["exact", "tanh", "manual_erf"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_gelu(self, device, dtype, shape, variant):
        self.call()


class Silu(BandwidthTracks):
    op = "silu"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["functional", "manual"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_silu(self, device, dtype, shape, variant):
        self.call()
