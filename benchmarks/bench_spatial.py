"""Spatial ops on images, NCHW and channels_last: pooling (max, average, global average)
and 2x upsampling (nearest, bilinear)."""

from ._harness import DEVICES, BandwidthTracks, GbpsTrack, OpBenchmark
from ._harness.tiers import weekly_grid
from ._shapes import FPN_LEVEL, RESNET_HEAD, RESNET_STEM, image

LAYOUTS = ["contiguous", "channels_last"]
PARAM_NAMES = ["device", "dtype", "shape", "layout", "variant"]
FLOATS = ["float32", "bfloat16"]


class _Spatial(OpBenchmark):
    tier, pr = "nightly", {"dtype": ["float32"], "layout": ["contiguous"]}
    param_names = PARAM_NAMES


class MaxPool2d(_Spatial):
    op = "max_pool2d"
    params = [
        DEVICES,
        ["float32"],
        [RESNET_STEM],
        ["contiguous"],
        ["functional", "unfold_max", "module"],
    ]

    def time_max_pool2d(self, device, dtype, shape, layout, variant):
        self.call()


class AvgPool2d(_Spatial):
    op = "avg_pool2d"
    params = [
        DEVICES,
        ["float32"],
        [RESNET_STEM],
        ["contiguous"],
        ["functional", "reshape_mean", "depthwise_conv"],
    ]

    def time_avg_pool2d(self, device, dtype, shape, layout, variant):
        self.call()


class AdaptiveAvgPool2d(_Spatial):
    op = "adaptive_avg_pool2d"
    params = [DEVICES, ["float32"], [RESNET_HEAD], ["contiguous"], ["functional", "mean"]]

    def time_adaptive_avg_pool2d(self, device, dtype, shape, layout, variant):
        self.call()


class InterpolateNearest(_Spatial):
    op = "interpolate_nearest"
    params = [
        DEVICES,
        ["float32"],
        [FPN_LEVEL],
        ["contiguous"],
        ["functional", "repeat_interleave", "expand_reshape"],
    ]

    def time_interpolate_nearest(self, device, dtype, shape, layout, variant):
        self.call()


class InterpolateBilinear(_Spatial):
    op = "interpolate_bilinear"
    params = [
        DEVICES,
        ["float32"],
        [FPN_LEVEL],
        ["contiguous"],
        ["functional", "module", "grid_sample"],
    ]

    def time_interpolate_bilinear(self, device, dtype, shape, layout, variant):
        self.call()


class PoolSweep(BandwidthTracks):
    """Max pooling from one small image to a large batch, odd sizes."""

    op = "max_pool2d"
    tier = "weekly"
    params = [
        DEVICES,
        ["float32"],
        [
            image(batch=1, channels=64, height=112, width=112),
            image(batch=64, channels=64, height=112, width=112),
            image(batch=8, channels=3, height=224, width=224),
            image(batch=8, channels=512, height=14, width=14),
        ],
        LAYOUTS,
        ["functional", "unfold_max"],
    ]
    param_names = PARAM_NAMES

    def time_max_pool2d(self, device, dtype, shape, layout, variant):
        self.call()


# The low-precision and channels_last rows of the ops above, weekly: the nightly's
# budget holds their float32, contiguous rows (docs/reference/tiers.md).
MaxPool2dGrid = weekly_grid(MaxPool2d, GbpsTrack, dtype=FLOATS, layout=LAYOUTS)
AvgPool2dGrid = weekly_grid(AvgPool2d, GbpsTrack, dtype=FLOATS, layout=LAYOUTS)
AdaptiveAvgPool2dGrid = weekly_grid(AdaptiveAvgPool2d, GbpsTrack, dtype=FLOATS, layout=LAYOUTS)
InterpolateNearestGrid = weekly_grid(InterpolateNearest, GbpsTrack, dtype=FLOATS, layout=LAYOUTS)
InterpolateBilinearGrid = weekly_grid(InterpolateBilinear, GbpsTrack, dtype=FLOATS, layout=LAYOUTS)
