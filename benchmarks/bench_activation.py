"""Activations on the NLP shape [32, 512, 768]: gelu exact vs tanh vs manual, and silu."""

from .harness import DEVICES, OpBenchmark

NLP = (32, 512, 768)


class Gelu(OpBenchmark):
    op = "gelu"
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["exact", "tanh", "manual_erf"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_gelu(self, device, dtype, shape, variant):
        self.call()

    def track_gbps(self, device, dtype, shape, variant):
        return self.measure_gbytes_per_second()

    def track_percent_of_peak(self, device, dtype, shape, variant):
        return self.measure_percent_of_peak_bandwidth()

    track_gbps.unit = "GB/s"
    track_percent_of_peak.unit = "% of peak"


class Silu(OpBenchmark):
    op = "silu"
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["functional", "manual"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_silu(self, device, dtype, shape, variant):
        self.call()

    def track_gbps(self, device, dtype, shape, variant):
        return self.measure_gbytes_per_second()

    def track_percent_of_peak(self, device, dtype, shape, variant):
        return self.measure_percent_of_peak_bandwidth()

    track_gbps.unit = "GB/s"
    track_percent_of_peak.unit = "% of peak"
