"""Conv2d(3, 64, 3): nn.Conv2d vs F.conv2d, NCHW vs channels_last, batch 1 and 32 at 224²,
and float32 with TF32 off and on (CUDA)."""

from ._harness import DEVICES, FlopsTracks, TF32Switch
from ._shapes import CONV_B1, CONV_B32, conv


class Conv2d(FlopsTracks):
    op = "conv2d"
    tier, pr = "nightly", {"shape": [CONV_B1]}
    params = [
        DEVICES,
        [CONV_B1, CONV_B32],
        ["contiguous", "channels_last"],
        ["module", "functional"],
    ]
    param_names = ["device", "shape", "layout", "variant"]

    def time_conv2d(self, device, shape, layout, variant):
        self.call()


class Conv2dTF32(TF32Switch, FlopsTracks):
    op = "conv2d"
    variant = "functional"
    tier = "nightly"
    params = [DEVICES, [CONV_B32], ["channels_last"], ["off", "on"]]
    param_names = ["device", "shape", "layout", "tf32"]

    def time_conv2d(self, device, shape, layout, tf32):
        self.call()


class Conv2dSweep(FlopsTracks):
    """A large batch, an odd image size, a deeper layer's 3x3 and a 1x1 convolution."""

    op = "conv2d"
    tier = "weekly"
    params = [
        DEVICES,
        [
            conv(batch=64, in_channels=3, height=224, width=224, out_channels=64, kernel=3),
            conv(batch=8, in_channels=3, height=225, width=227, out_channels=64, kernel=3),
            conv(batch=8, in_channels=256, height=14, width=14, out_channels=256, kernel=3),
            conv(batch=8, in_channels=256, height=56, width=56, out_channels=64, kernel=1),
        ],
        ["contiguous", "channels_last"],
        ["module", "functional"],
    ]
    param_names = ["device", "shape", "layout", "variant"]

    def time_conv2d(self, device, shape, layout, variant):
        self.call()
