"""torch.compile (inductor) against eager code: matmul + bias + gelu, causal attention
and RMSNorm, each next to its eager form; and the time compiling takes.

Compiled variants compile in setup, in the warm-up. A recompile while timing fails the
benchmark (measure.recompiles_fail): it would time the compiler, not the compiled code.
"""

from ._harness import DEVICES, OpBenchmark, cold_compile_seconds
from ._shapes import ATTENTION, NLP, NLP_PROJECTION

# The pr tier has the eager rows of the ops only this module times; compiled rows compile
# in every process (tens of seconds each on two cores), so they are nightly.


class LinearGelu(OpBenchmark):
    op = "linear_gelu"
    tier, pr = "nightly", {"dtype": ["float32"], "variant": ["eager"]}
    params = [DEVICES, ["float32", "bfloat16"], [NLP_PROJECTION], ["eager", "compiled"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_linear_gelu(self, device, dtype, shape, variant):
        self.call()


class CausalAttention(OpBenchmark):
    op = "attention"
    tier = "nightly"
    params = [DEVICES, ["float32", "bfloat16"], [ATTENTION], ["naive", "compiled"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_attention(self, device, dtype, shape, variant):
        self.call()


class RMSNorm(OpBenchmark):
    op = "rms_norm"
    tier, pr = "nightly", {"dtype": ["float32"], "variant": ["eager"]}
    params = [DEVICES, ["float32", "bfloat16"], [NLP], ["manual", "compiled"]]
    param_names = ["device", "dtype", "shape", "variant"]

    def time_rms_norm(self, device, dtype, shape, variant):
        self.call()


class CompileTime(OpBenchmark):
    """Seconds to compile each compiled variant again after its warm-up compiled it once:
    dynamo reset and inductor's FX graph cache off (measure.cold_compile_seconds)."""

    variant = "compiled"
    tier = "nightly"
    params = [DEVICES, ["linear_gelu", "attention", "rms_norm"]]
    param_names = ["device", "op"]
    shapes = {"linear_gelu": NLP_PROJECTION, "attention": ATTENTION, "rms_norm": NLP}
    timeout = 900.0
    unit = "seconds"

    def resolve(self, named):
        _, variant, spec = super().resolve({**named, "shape": self.shapes[named["op"]]})
        return named["op"], variant, spec

    def track_compile_time(self, device, op):
        return cold_compile_seconds(self.call, self.device)
