"""Instruction counts at one thread (valgrind's callgrind): a history without the
wall-clock noise of a shared runner, where a 2% change is visible.

Every case the suites time on the CPU has a twin here, one class per op (and per op's
training step), one row per variant, dtype, layout and count shape (the suite's shape,
shrunk: twins.count_shape), derived from the suites' own declarations. All of a commit's
counts come from one valgrind process (twins.Counted.setup_cache). ``Instructions`` is the
first three counts, kept under their names so their history goes on.
"""

from . import (
    bench_activation,
    bench_attention,
    bench_autocast,
    bench_compile,
    bench_conv,
    bench_creation,
    bench_elementwise,
    bench_indexing,
    bench_linear,
    bench_loss,
    bench_matmul,
    bench_movement,
    bench_norm,
    bench_optim,
    bench_reduction,
    bench_scan,
    bench_spatial,
)
from ._harness import DEVICES
from ._harness.callgrind import CountCase
from ._harness.twins import Counted, count_rows, suite_classes, timed_cases, twin_classes

# (op, variant, shape): the first three counts.
CASES = [
    ("matmul", "mm", (128, 128, 128)),
    ("softmax", "functional", (64, 512)),
    ("layer_norm", "functional", (64, 768)),
]
SUITES = [
    bench_activation,
    bench_attention,
    bench_autocast,
    bench_compile,
    bench_conv,
    bench_creation,
    bench_elementwise,
    bench_indexing,
    bench_linear,
    bench_loss,
    bench_matmul,
    bench_movement,
    bench_norm,
    bench_optim,
    bench_reduction,
    bench_scan,
    bench_spatial,
]


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
