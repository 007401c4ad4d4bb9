"""Conv2d(3, 64, 3): nn.Conv2d vs F.conv2d, NCHW vs channels_last, batch 1 and 32 at 224²,
and float32 with TF32 off and on (CUDA)."""

from .harness import DEVICES, OpBenchmark, TF32Switch


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

    def track_percent_of_peak(self, device, shape, layout, variant):
        return self.measure_percent_of_peak_flops()

    track_percent_of_peak.unit = "% of peak"


class Conv2dTF32(TF32Switch, OpBenchmark):
    op = "conv2d"
    variant = "functional"
    params = [DEVICES, [(32, 3, 224, 224, 64, 3)], ["channels_last"], ["off", "on"]]
    param_names = ["device", "shape", "layout", "tf32"]

    def time_conv2d(self, device, shape, layout, tf32):
        self.call()

    def track_gflops(self, device, shape, layout, tf32):
        return self.measure_gflops()

    track_gflops.unit = "GFLOP/s"

    def track_percent_of_peak(self, device, shape, layout, tf32):
        return self.measure_percent_of_peak_flops()

    track_percent_of_peak.unit = "% of peak"
