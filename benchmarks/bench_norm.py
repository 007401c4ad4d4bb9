"""Normalisation on the NLP shape [32, 512, 768]: manual formulas vs fused kernels;
forward alone and forward plus backward."""

from ._harness import DEVICES, BandwidthTracks, OpBenchmark
from ._shapes import NLP

NORM_PARAMS = [DEVICES, ["float32", "bfloat16"], [NLP], ["functional", "manual"]]
NORM_PARAM_NAMES = ["device", "dtype", "shape", "variant"]


class LayerNorm(BandwidthTracks):
    op = "layer_norm"
    params, param_names = NORM_PARAMS, NORM_PARAM_NAMES

    def time_layer_norm(self, device, dtype, shape, variant):
        self.call()

    def peakmem_layer_norm(self, device, dtype, shape, variant):
        # The manual form keeps full-size intermediates alive; the fused kernel does not.
        self.call()


class RMSNorm(BandwidthTracks):
    op = "rms_norm"
    params, param_names = NORM_PARAMS, NORM_PARAM_NAMES

    def time_rms_norm(self, device, dtype, shape, variant):
        self.call()

    def peakmem_rms_norm(self, device, dtype, shape, variant):
        self.call()


class LayerNormTraining(OpBenchmark):
    """Forward and backward, as in a training step (prepare.with_backward)."""

    op = "layer_norm"
    backward = True
    params, param_names = NORM_PARAMS, NORM_PARAM_NAMES

    def time_forward_backward(self, device, dtype, shape, variant):
        self.call()


class RMSNormTraining(OpBenchmark):
    """Forward and backward, as in a training step (prepare.with_backward)."""

    op = "rms_norm"
    backward = True
    params, param_names = NORM_PARAMS, NORM_PARAM_NAMES

    def time_forward_backward(self, device, dtype, shape, variant):
        self.call()
