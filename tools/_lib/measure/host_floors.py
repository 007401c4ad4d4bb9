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

from tools._lib.base.cli import BadInput

FLOORS_FILE = "floors.json"
# The paired estimate the floors were measured with (tools/_lib/measure/paired.Paired and the
# rounds of tools/_lib/measure/alternation.py): 3 takes two rounds and more while they disagree, 2
# took three rounds, 1 did not take each pair's place in the ABBA order out. Floors of
# another estimate say nothing of this one's spread, so a host that has only those is
# judged at the factor.
ESTIMATOR = 3
# A floor is the slowdown a row is called slower beyond: above 1 (at 1 a no-op's noise is
# a change; below it every no-op fails), and at most MAX_FLOOR (no host's no-ops stray
# that far: tools/_lib/measure/no_op_floors.floor_of stops there, so a larger number is no floor
# of ours). A floor outside them, NaN or not a number at all could pass a regression or
# fail every no-op: the whole file is refused, at read and at push.
MAX_FLOOR = 10.0
# A row measured deeper (more rounds: more process pairs) strays less on a no-op, so its
# floor is lower there. A floor's part above the margin is what a process pair stuck a few
# per cent off did to the median of a no-op's pairs; that pair's share of the pairs, and
# so its pull on their median, falls in proportion to the rounds, from the rounds the
# floors' no-op runs took (FLOOR_ROUNDS) to the rounds measured, down to DEEP_MIN_FLOOR
# (the noise of the median itself is the intervals' business). This is a rule, not a
# measurement at each depth: it holds at the depths held-out no-op runs checked it at
# (DEPTHS_CHECKED), and a verdict uses it at no other (docs/explanation/comparison.md,
# "Depth").
FLOOR_ROUNDS = 2
FLOOR_MARGIN = 0.01
DEEP_MIN_FLOOR = 1.03
DEPTHS_CHECKED = (16,)


def is_floor(value) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 1.0 < value <= MAX_FLOOR
    )


def check_floors_data(data) -> dict:
    """A floors file's hosts (``{host: {"runs", "floors", ...}}``), checked: ValueError in
    one line naming every floor that is not one, or what else is wrong."""
    hosts = data.get("hosts") if isinstance(data, dict) else None
    if not isinstance(hosts, dict):
        raise ValueError("no hosts")
    bad = []
    for host, entry in hosts.items():
        floors = entry.get("floors") if isinstance(entry, dict) else None
        if not isinstance(floors, dict) or not isinstance(entry.get("runs"), int):
            raise ValueError(f"host {host!r} has no runs and floors")
        bad += [
            f"{host}: {row!r} {value!r}" for row, value in floors.items() if not is_floor(value)
        ]
    if bad:
        raise ValueError(
            f"floors must be numbers above 1.0 and at most {MAX_FLOOR:g}: {'; '.join(bad)}"
        )
    return hosts


@dataclass(frozen=True)
class Floors:
    """One host's floors, by row; ``runs`` no-op comparisons made them."""

    host: str
    runs: int
    by_row: dict[str, float]

    def __post_init__(self):
        check_floors_data({"hosts": {self.host: {"runs": self.runs, "floors": self.by_row}}})

    def threshold(self, label: str, factor: float) -> float | None:
        """What the row is judged at: its floor, or ``factor`` where it has none; None
        where its floor is above ``factor`` (not judged here)."""
        floor = self.by_row.get(label)
        if floor is None:
            return factor
        return floor if floor <= factor else None

    def threshold_at(self, label: str, factor: float, rounds: int | None) -> float | None:
        """:meth:`threshold` for a row measured in exactly ``rounds`` rounds (None: the
        alternation's own rounds, as the floors were measured): the row's floor scaled to
        that depth where the depth is one the rule was checked at; the factor where the
        row has no floor."""
        if rounds is None or label not in self.by_row:
            return self.threshold(label, factor)
        if rounds not in DEPTHS_CHECKED:
            raise ValueError(f"no floors are checked at {rounds} rounds")
        deep = deep_floor(self.by_row[label], rounds)
        return deep if deep <= factor else None


def deep_floor(floor: float, rounds: int) -> float:
    """A floor measured at FLOOR_ROUNDS, at ``rounds`` (see DEPTHS_CHECKED), rounded up to
    a hundredth."""
    above = max(0.0, floor - 1 - FLOOR_MARGIN) * FLOOR_ROUNDS / rounds
    scaled = math.ceil((1 + FLOOR_MARGIN + above) * 100 - 1e-9) / 100
    return max(DEEP_MIN_FLOOR, min(floor, scaled))


def no_floors(host: str) -> Floors:
    return Floors(host, 0, {})


def read_floors(path: Path, host: str, missing_ok: bool = True) -> Floors:
    """The floors of ``host`` in a machine's floors file; none when the host is not there
    (or the file, with ``missing_ok``: a results branch before its first floors); bad
    input for a file that is not a floors file, or holds a floor that is not one."""
    if missing_ok and not path.exists():
        return no_floors(host)
    try:
        hosts = check_floors_data(json.loads(path.read_text()))
    except (OSError, ValueError) as error:
        raise BadInput(f"{path} is not a floors file: {error}") from None
    entry = hosts.get(host)
    if entry is None:
        return no_floors(host)
    floors = Floors(host, entry["runs"], {str(k): float(v) for k, v in entry["floors"].items()})
    estimator = entry.get("estimator", 1)
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
