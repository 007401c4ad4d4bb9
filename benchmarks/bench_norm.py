"""Normalisation on the NLP shape [32, 512, 768]: manual formulas vs fused kernels;
forward alone and forward plus backward."""

from ._harness import DEVICES, BandwidthTracks, GbpsTrack, OpBenchmark, TrainingStep
from ._harness.tiers import weekly_grid
from ._shapes import NLP, RESNET_STAGE1, activation_sweep, activations

FLOATS = ["float32", "bfloat16"]
LAYOUTS = ["contiguous", "channels_last"]

NORM_PARAMS = [DEVICES, ["float32", "bfloat16"], [NLP], ["functional", "manual"]]
NORM_PARAM_NAMES = ["device", "dtype", "shape", "variant"]


class LayerNorm(BandwidthTracks):
    op = "layer_norm"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params, param_names = NORM_PARAMS, NORM_PARAM_NAMES

    def time_layer_norm(self, device, dtype, shape, variant):
        self.call()

    def peakmem_layer_norm(self, device, dtype, shape, variant):
        # The manual form keeps full-size intermediates alive; the fused kernel does not.
        self.call()


class RMSNorm(BandwidthTracks):
    op = "rms_norm"
    tier, pr = "nightly", {"dtype": ["float32"]}
    params, param_names = NORM_PARAMS, NORM_PARAM_NAMES

    def time_rms_norm(self, device, dtype, shape, variant):
        self.call()

    def peakmem_rms_norm(self, device, dtype, shape, variant):
        self.call()


class LayerNormTraining(TrainingStep):
    op = "layer_norm"
    tier = "nightly"
    params, param_names = NORM_PARAMS, NORM_PARAM_NAMES


class RMSNormTraining(TrainingStep):
    op = "rms_norm"
    tier = "nightly"
    params, param_names = NORM_PARAMS, NORM_PARAM_NAMES


class BatchNorm2d(OpBenchmark):
    op = "batch_norm"
    tier, pr = "nightly", {"dtype": ["float32"], "layout": ["contiguous"]}
    params = [
        DEVICES,
        ["float32"],
        [RESNET_STAGE1],
        ["contiguous"],
        ["functional", "manual", "module"],
    ]
    param_names = ["device", "dtype", "shape", "layout", "variant"]

    def time_batch_norm(self, device, dtype, shape, layout, variant):
        self.call()


class GroupNorm(OpBenchmark):
    op = "group_norm"
    tier, pr = "nightly", {"dtype": ["float32"], "layout": ["contiguous"]}
    params = [
        DEVICES,
        ["float32"],
        [RESNET_STAGE1],
        ["contiguous"],
        ["functional", "manual"],
    ]
    param_names = ["device", "dtype", "shape", "layout", "variant"]

    def time_group_norm(self, device, dtype, shape, layout, variant):
        self.call()


class LayerNormSweep(BandwidthTracks):
    """From one token to a large batch, 64 to 8192 features, odd sizes, transposed."""

    op = "layer_norm"
    tier = "weekly"
    params = [
        DEVICES,
        ["float32", "bfloat16"],
        activation_sweep(
            activations(batch=4, tokens=511, features=8192),
            activations(batch=32, tokens=513, features=767),
        ),
        ["contiguous", "transposed"],
        ["functional", "manual"],
    ]
    param_names = ["device", "dtype", "shape", "layout", "variant"]

    def time_layer_norm(self, device, dtype, shape, layout, variant):
        self.call()


# The low-precision and channels_last rows of the ops above, weekly: the nightly's
# budget holds their float32, contiguous rows (docs/reference/tiers.md).
BatchNorm2dGrid = weekly_grid(BatchNorm2d, GbpsTrack, dtype=FLOATS, layout=LAYOUTS)
GroupNormGrid = weekly_grid(GroupNorm, GbpsTrack, dtype=FLOATS, layout=LAYOUTS)
