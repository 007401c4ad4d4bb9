"""Tensor creation: randn and zeros made on the device vs on the host then .to(device)."""

from ._harness import DEVICES, OpBenchmark
from ._shapes import NLP


class Randn(OpBenchmark):
    op = "randn"
    tier = "pr"
    params = [DEVICES, [NLP], ["on_device", "host_then_to"]]
    param_names = ["device", "shape", "variant"]

    def time_randn(self, device, shape, variant):
        self.call()


class Zeros(OpBenchmark):
    op = "zeros"
    tier = "pr"
    params = [DEVICES, [NLP], ["on_device", "host_then_to"]]
    param_names = ["device", "shape", "variant"]

    def time_zeros(self, device, shape, variant):
        self.call()
