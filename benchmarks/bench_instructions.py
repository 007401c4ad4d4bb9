"""Instruction counts of a few CPU ops at one thread (valgrind's callgrind): a history
without the wall-clock noise of a shared runner, where a 2% change is visible.

Each count costs about a minute (callgrind runs the child interpreter, torch's import
included, under valgrind), so the set is small and each is taken once per commit.
"""

from ._harness import DEVICES, get_device
from ._harness.callgrind import instructions_per_call

# (op, variant, shape): small enough that callgrind's slowdown stays affordable.
CASES = [
    ("matmul", "mm", (128, 128, 128)),
    ("softmax", "functional", (64, 512)),
    ("layer_norm", "functional", (64, 768)),
]


class Instructions:
    params = [DEVICES, CASES]
    param_names = ["device", "case"]
    unit = "instructions"
    rounds = 1  # a count does not vary between rounds
    timeout = 600.0
    version = "1"  # as OpBenchmark's: history survives harness edits

    def setup(self, device, case):
        if get_device(device).is_accelerator:
            raise NotImplementedError("instruction counts are of CPU code (valgrind)")

    def track_instructions(self, device, case):
        op, variant, shape = case
        return instructions_per_call(op, variant, shape)
