"""Instruction counts at one thread (valgrind's callgrind): a history without the
wall-clock noise of a shared runner, where a 2% change is visible.

Every case the suites time on the CPU has a twin here, one class per op (and per op's
training step), one row per variant, dtype, layout and count shape (the suite's shape,
shrunk: twins.count_shape), derived from the suites' own declarations. All of a commit's
counts come from one valgrind process (twins.Counted.setup_cache). ``Instructions`` is the
first three counts, kept under their names so their history goes on.
"""

from ._harness import DEVICES
from ._harness.callgrind import CountCase
from ._harness.tiers import suite_modules
from ._harness.twins import Counted, count_rows, suite_classes, timed_cases, twin_classes

# (op, variant, shape): the first three counts.
CASES = [
    ("matmul", "mm", (128, 128, 128)),
    ("softmax", "functional", (64, 512)),
    ("layer_norm", "functional", (64, 768)),
]
# Every other suite module: its CPU time rows are what the twins count (a module whose
# classes time nothing on the CPU, as bench_device's, gives none).
SUITES = [module for module in suite_modules() if module.__name__ != __name__]


class Instructions(Counted):
    tier = "pr"
    params = [DEVICES, CASES]
    param_names = ["device", "case"]

    def case_for(self, case):
        op, variant, shape = case
        return CountCase(op, variant, shape)

    def track_instructions(self, counts, device, case):
        return self.count


TWINS = twin_classes(timed_cases(suite_classes(SUITES)), __name__)
globals().update(TWINS)
Counted.rows = count_rows([Instructions, *TWINS.values()])
