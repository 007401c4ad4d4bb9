"""A PR gate whose asv runs and re-measurements are scripted, for the gate's logic without
asv: asv's first pass reads the scripted ratios, the alternation the scripted pairs."""

from __future__ import annotations

from pathlib import Path

from tests.support import REPO_ROOT
from tools._lib.asv.private import config_thresholds
from tools._lib.measure.alternation import Outcome
from tools._lib.measure.host_floors import Floors
from tools._lib.measure.paired import Paired
from tools._lib.verdict.gate import Gate

COUNT_ROW = "bench_instructions.Instructions.track_instructions('cpu', ('matmul', 'mm'))"
TIME_ROW = "bench_activation.Silu.time_silu('cpu', 'float32', 'functional')"
OTHER_ROW = "bench_activation.Gelu.time_gelu('cpu', 'float32', 'exact')"
# A count row asv.conf.json gives a floor of its own (a process's layout moves its count).
FLOORED_COUNT_ROW = (
    "bench_instructions.Stack.track_instructions('cpu', 'stack float32 contiguous (12, 8, 16, 16)')"
)
UNITS = {
    COUNT_ROW: "instructions",
    FLOORED_COUNT_ROW: "instructions",
    TIME_ROW: "seconds",
    OTHER_ROW: "seconds",
}


def pairs(ratio: float, count: int = 16, jitter: float = 0.01) -> tuple[tuple, tuple]:
    """``count`` pairs whose ratios spread evenly around ``ratio`` by ``jitter``."""
    before = tuple(1.0 for _ in range(count))
    after = tuple(ratio * (1 + jitter * (2 * i / (count - 1) - 1)) for i in range(count))
    return before, after


# What asv records of a row at the head that it measured at the base (tools/_lib/asv/results.py):
# a skip is NaN, a failure None, a row not run is absent, and a value no measurement is 0.
AT_HEAD = {"skipped": float("nan"), "failed": None, "invalid": 0.0}


class ScriptedGate(Gate):
    """asv's first pass gives ``first`` (ratio by row) and, for the rows of ``at_head``,
    a value at the base and at the head what ``at_head`` says (skipped, failed, absent or
    invalid); measured again, a row gives the paired ratio of ``again`` (None: it could
    not be measured, with ``why``)."""

    def __init__(
        self,
        first: dict[str, float],
        again: dict[str, float | None] | None = None,
        factor: float = 1.15,
        floors: dict[str, float] | None = None,
        at_head: dict[str, str] | None = None,
    ):
        self.repo, self.machine = Path("."), "scripted"
        self.base, self.head, self.factor = "b" * 40, "h" * 40, factor
        self.floors = Floors("scripted-host", 4 if floors else 0, floors or {})
        self.first, self.again, self.asked = first, again or {}, []
        self.at_head = at_head or {}
        self.thresholds: dict[str, float | None] = {}
        self.regressions_thresholds = config_thresholds(REPO_ROOT)

    def recorded(self) -> tuple[dict, dict]:
        """What asv recorded at the base and at the head, as tools/_lib/asv/results.py reads
        it: ``(benchmark, params) -> (value, stats, samples)``."""
        base, head = {}, {}
        for label, ratio in {**self.first, **dict.fromkeys(self.at_head, 1.0)}.items():
            key = (label.split("(")[0], label[label.index("(") :])
            base[key] = (1.0, None, None)
            state = self.at_head.get(label)
            if state is None:
                head[key] = (ratio, None, None)
            elif state != "absent":
                head[key] = (AT_HEAD[state], None, None)
        return base, head

    def units(self) -> dict[str, str]:
        return {label.split("(")[0]: unit for label, unit in UNITS.items()}

    def alternate(self, thresholds: dict[str, float | None]) -> dict[str, Outcome]:
        self.asked.append(list(thresholds))
        self.thresholds.update(thresholds)
        outcomes = {}
        for label in thresholds:
            ratio = self.again.get(label, self.first[label])
            if ratio is None:
                outcomes[label] = Outcome(label, why="died at after: its process died")
            else:
                outcomes[label] = Outcome(label, Paired(label, UNITS[label], *pairs(ratio)))
        return outcomes
