"""A PR gate whose asv runs are scripted, for the gate's logic without asv."""

from __future__ import annotations

from tools import pr_gate
from tools.common import Row

COUNT_ROW = "bench_instructions.Instructions.track_instructions('cpu', ('matmul', 'mm'))"
TIME_ROW = "bench_activation.Silu.time_silu('cpu', 'float32', 'functional')"
UNITS = {COUNT_ROW: "instructions", TIME_ROW: "seconds"}


class ScriptedGate(pr_gate.Gate):
    """A Gate whose asv runs are scripted: each ``continuous`` pass moves to the next
    list of (ratio, row), which ``rows`` then reports."""

    def __init__(self, passes: list[list[tuple[float, str]]], factor: float = 1.2):
        self.factor, self.passes, self.selections, self.calls = factor, passes, [], []

    def continuous(self, *asv_args: str) -> int:
        self.calls.append(asv_args)
        self.selections.append(asv_args[asv_args.index("--bench") + 1])
        self.passes = self.passes[1:] if len(self.selections) > 1 else self.passes
        return 0

    def rows(self) -> list[Row]:
        return [
            Row(label.split("(")[0], label[label.index("(") :], UNITS[label], 1.0, ratio)
            for ratio, label in self.passes[0]
        ]
