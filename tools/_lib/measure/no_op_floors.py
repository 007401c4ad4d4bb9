"""A row's floor from no-op comparisons (``python -m tools.floors``): how far their paired
slowdowns strayed from 1, and the no-op runs' pairs kept as JSON so floors and estimates
can be made again from them. The floors file itself, and how a verdict reads it, are
tools/_lib/measure/host_floors.py's."""

from __future__ import annotations

import json
import math
from pathlib import Path

from tools._lib.base.cli import BadInput
from tools._lib.measure.host_floors import MAX_FLOOR
from tools._lib.measure.paired import Paired

# A row's floor stands above the no-op slowdowns measured on its host: their worst spread
# either way (a row that read 0.96 can read 1.04), four times over, plus a margin. A few
# runs see less than the tail of many: a pair of processes can land a row a few per cent
# off, and held-out no-op runs read past twice and three times the spread, significantly,
# but not past four times (docs/explanation/comparison.md, "Floors").
SPREAD_MULTIPLE = 4.0
MARGIN = 0.01
# Never judge a row more finely than this, whatever a host's no-ops allow: a verdict
# calls a change a person should look at.
MIN_FLOOR = 1.03


def spread(slowdown: float) -> float:
    """How far from 1 a no-op's slowdown lies, either way."""
    return max(slowdown, 1 / slowdown)


def floor_of(no_op_slowdowns: list[float]) -> float:
    """A row's floor from its paired slowdowns in no-op comparisons, rounded up to a
    hundredth, at most MAX_FLOOR (a row that far off is not judged on any host)."""
    worst = max(spread(s) for s in no_op_slowdowns)
    floor = 1 + SPREAD_MULTIPLE * (worst - 1) + MARGIN
    return min(MAX_FLOOR, max(MIN_FLOOR, math.ceil(floor * 100 - 1e-9) / 100))


def samples_of(runs: list[dict[str, Paired]]) -> list[dict]:
    """No-op runs' pairs as JSON: per run and row, each side's blocks and the pairs a round
    (``tools.floors --samples``): floors and estimates can be made again from them."""
    return [
        {
            label: {"before": p.before, "after": p.after, "rounds": p.rounds, "unit": p.unit}
            for label, p in run.items()
        }
        for run in runs
    ]


def read_samples(path: Path) -> list[dict[str, Paired]]:
    """The no-op runs of a samples file, at least two (one no-op says little of the next);
    bad input for anything else."""
    try:
        runs = json.loads(path.read_text())
        found = [
            {
                label: Paired(
                    label, s["unit"], tuple(s["before"]), tuple(s["after"]), tuple(s["rounds"])
                )
                for label, s in run.items()
            }
            for run in runs
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise BadInput(f"{path} is not a samples file of tools.floors: {error}") from None
    if len(found) < 2:
        raise BadInput(f"{path} holds fewer than two no-op runs")
    return found
