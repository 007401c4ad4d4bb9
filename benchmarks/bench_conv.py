"""Conv2d(3, 64, 3): nn.Conv2d vs F.conv2d, NCHW vs channels_last, batch 1 and 32 at 224²,
and float32 with TF32 off and on (CUDA)."""

from ._harness import DEVICES, FlopsTracks, TF32Switch
from ._shapes import CONV_B1, CONV_B32


class Conv2d(FlopsTracks):
    op = "conv2d"
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
    params = [DEVICES, [CONV_B32], ["channels_last"], ["off", "on"]]
    param_names = ["device", "shape", "layout", "tf32"]

    def time_conv2d(self, device, shape, layout, tf32):
        self.call()
