"""Each machine's detection floors: per row, the smallest slowdown the paired comparison can
call on that machine's host with no false alarm, from no-op comparisons run there
(``python -m tools.floors``). A machine's file holds the floors of every host (CPU model)
its runs landed on, since a runner class changes hosts under one name; the verdicts look
theirs up by the CPU they run on (docs/explanation/comparison.md, "Floors").
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from tools._lib.cli import BadInput

FLOORS_FILE = "floors.json"
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
