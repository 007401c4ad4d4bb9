"""Normalisation on the NLP shape [32, 512, 768]: manual formulas vs fused kernels;
forward alone and forward plus backward."""

from .harness import DEVICES, OpBenchmark

NLP = (32, 512, 768)


class LayerNorm(OpBenchmark):
    op = "layer_norm"
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["functional", "manual"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_layer_norm(self, device, dtype, shape, variant):
        self.call()

    def peakmem_layer_norm(self, device, dtype, shape, variant):
        # The manual form keeps full-size intermediates alive; the fused kernel does not.
        self.call()

    def track_gbps(self, device, dtype, shape, variant):
        return self.measure_gbytes_per_second()

    def track_percent_of_peak(self, device, dtype, shape, variant):
        return self.measure_percent_of_peak_bandwidth()

    track_gbps.unit = "GB/s"
    track_percent_of_peak.unit = "% of peak"


class RMSNorm(OpBenchmark):
    op = "rms_norm"
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["functional", "manual"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_rms_norm(self, device, dtype, shape, variant):
        self.call()

    def peakmem_rms_norm(self, device, dtype, shape, variant):
        self.call()

    def track_gbps(self, device, dtype, shape, variant):
        return self.measure_gbytes_per_second()

    def track_percent_of_peak(self, device, dtype, shape, variant):
        return self.measure_percent_of_peak_bandwidth()

    track_gbps.unit = "GB/s"
    track_percent_of_peak.unit = "% of peak"


class LayerNormTraining(OpBenchmark):
    """Forward and backward, as in a training step (harness.with_backward)."""

    op = "layer_norm"
    backward = True
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["functional", "manual"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_forward_backward(self, device, dtype, shape, variant):
        self.call()


class RMSNormTraining(OpBenchmark):
    """Forward and backward, as in a training step (harness.with_backward)."""

    op = "rms_norm"
    backward = True
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["functional", "manual"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_forward_backward(self, device, dtype, shape, variant):
        self.call()
