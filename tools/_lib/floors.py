"""Each machine's detection floors: per row, the smallest slowdown the paired comparison can
call on that machine's host with no false alarm, from no-op comparisons run there
(``python -m tools.floors``). A machine's file holds the floors of every host (CPU model)
its runs landed on, since a runner class changes hosts under one name; the verdicts look
theirs up by the CPU they run on (docs/explanation/comparison.md, "Floors").
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from tools._lib.cli import BadInput
from tools._lib.paired import Paired

FLOORS_FILE = "floors.json"
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
# Where a host has no floors yet, a row is judged at the factor the caller gives (the
# gate's: 1.15).
# The paired estimate the floors were measured with (tools/_lib/paired.Paired and the
# rounds of tools/_lib/remeasure.py): 3 takes two rounds and more while they disagree, 2
# took three rounds, 1 did not take each pair's place in the ABBA order out. Floors of
# another estimate say nothing of this one's spread, so a host that has only those is
# judged at the factor.
ESTIMATOR = 3


@dataclass(frozen=True)
class Floors:
    """One host's floors, by row; ``runs`` no-op comparisons made them."""

    host: str
    runs: int
    by_row: dict[str, float]

    def threshold(self, label: str, factor: float) -> float | None:
        """What the row is judged at: its floor, or ``factor`` where it has none; None
        where its floor is above ``factor`` (not judged here)."""
        floor = self.by_row.get(label)
        if floor is None:
            return factor
        return floor if floor <= factor else None


def no_floors(host: str) -> Floors:
    return Floors(host, 0, {})


def spread(slowdown: float) -> float:
    """How far from 1 a no-op's slowdown lies, either way."""
    return max(slowdown, 1 / slowdown)


def floor_of(no_op_slowdowns: list[float]) -> float:
    """A row's floor from its paired slowdowns in no-op comparisons, rounded up to a
    hundredth."""
    worst = max(spread(s) for s in no_op_slowdowns)
    floor = 1 + SPREAD_MULTIPLE * (worst - 1) + MARGIN
    return max(MIN_FLOOR, math.ceil(floor * 100 - 1e-9) / 100)


def read_floors(path: Path, host: str) -> Floors:
    """The floors of ``host`` in a machine's floors file; none when the file or the host
    is not there; bad input for a file that is not a floors file."""
    if not path.exists():
        return no_floors(host)
    try:
        hosts = json.loads(path.read_text())["hosts"]
        entry = hosts.get(host)
        if entry is None:
            return no_floors(host)
        floors = Floors(
            host, int(entry["runs"]), {str(k): float(v) for k, v in entry["floors"].items()}
        )
        estimator = entry.get("estimator", 1)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise BadInput(f"{path} is not a floors file: {error}") from None
    if estimator != ESTIMATOR:
        print(
            f"floors: {path}: the floors of {host} were measured with another paired "
            "estimate; judged at the factor until tools.floors measures them again",
            file=sys.stderr,
        )
        return no_floors(host)
    return floors


def write_floors(path: Path, floors: Floors, measured: dict) -> None:
    """``floors`` into the machine's file beside the other hosts', with what they were
    measured from (``measured``: date, commit, command)."""
    hosts = {}
    if path.exists():
        try:
            hosts = json.loads(path.read_text())["hosts"]
        except (ValueError, KeyError, TypeError):
            hosts = {}
    hosts[floors.host] = {
        "runs": floors.runs,
        "floors": floors.by_row,
        "estimator": ESTIMATOR,
        **measured,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"version": 1, "hosts": hosts}, indent=1, sort_keys=True) + "\n"
    temporary = path.with_suffix(".tmp")
    temporary.write_text(text)
    temporary.replace(path)


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
