"""Conv2d(3, 64, 3): nn.Conv2d vs F.conv2d, NCHW vs channels_last, batch 1 and 32 at 224²."""

from .harness import DEVICES, OpBenchmark


class Conv2d(OpBenchmark):
    op = "conv2d"
    params = [
        DEVICES,
        [(1, 3, 224, 224, 64, 3), (32, 3, 224, 224, 64, 3)],
        ["contiguous", "channels_last"],
        ["module", "functional"],
    ]
    param_names = ["device", "shape", "layout", "variant"]

    def time_conv2d(self, device, shape, layout, variant):
        self.call()

    def track_gflops(self, device, shape, layout, variant):
        return self.measure_gflops()

    track_gflops.unit = "GFLOP/s"
