#!/usr/bin/env python
"""Each count row's floor: the step its instruction count must show before anything calls
it slower, from how far the row's count moved when only the counting process changed
(``tools.studies.count_perturbation``'s figures), with asv.conf.json's entries for the
rows whose floor is above the counts' own factor.

    python -m tools.studies.count_floors FIGURES.json [FIGURES.json ...] [--check FILE]

Each figures file holds ``as-is`` and one or more other layouts of the counting process;
every layout but the control (``as-is-again``) is one draw of how far a count moves from
one commit to the next when the code counted does not change. ``--check`` reads another
figures file held out of the floors and lists the rows it moves past them. The entries
printed go in asv.conf.json's ``regressions_thresholds``, where the gate, the releases
comparison, the triage and asv's own regressions page read them
(docs/explanation/measurement.md, "Instruction counts").
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from tools._lib.base.cli import ArgumentParser, BadInput, run_main
from tools._lib.measure.comparison import COUNT_FACTOR, row_selection

# Layouts a figures file holds that are no draw of a layout's effect: the counts the others
# are compared with, and the same process counted again (identical by construction).
NOT_LAYOUTS = ("as-is", "as-is-again")
# The floor is this many times the largest move a row showed over the layouts. A handful
# of layouts is a handful of draws, and their largest understates what the next layout
# does: with the floors taken from five layouts and each of those left out in turn, the
# one left out crossed its row's floor in 3 of 800 row-layout pairs at 1.5 times the
# largest, 1 at twice and 0 at three times (30 at 1% for every row); twice puts 32 rows of
# 160 above 1% and none above 6% (docs/explanation/measurement.md, "Instruction counts").
SPREAD_TIMES = 2.0
# Floors go up in steps of half a per cent: finer says more than a handful of layouts know.
STEP = 0.005


def layout_moves(figures: dict) -> dict[str, list[float]]:
    """Each case's relative moves from ``as-is``, one per layout of the figures."""
    counts = figures.get("counts") if isinstance(figures, dict) else None
    if not isinstance(counts, dict) or "as-is" not in counts:
        raise ValueError("no counts of as-is to compare with")
    base = counts["as-is"]
    moves: dict[str, list[float]] = {}
    for layout, counted in counts.items():
        if layout in NOT_LAYOUTS:
            continue
        for key, count in counted.items():
            if key in base:
                moves.setdefault(key, []).append(count / base[key] - 1)
    if not moves:
        raise ValueError("no layout but as-is to compare with it")
    return moves


def floor_of(moves: list[float]) -> float:
    """A row's floor: ``SPREAD_TIMES`` its largest move, rounded up to ``STEP``, and never
    below the counts' own factor."""
    spread = SPREAD_TIMES * max(abs(move) for move in moves)
    return max(COUNT_FACTOR, round(1 + math.ceil(round(spread / STEP, 9)) * STEP, 3))


def count_floors(moves: dict[str, list[float]]) -> dict[str, float]:
    """Every case's floor, by case key."""
    return {key: floor_of(found) for key, found in moves.items()}


def crossings(floors: dict[str, float], held_out: dict[str, list[float]]) -> list[str]:
    """The cases a held-out layout moved past their floor, either way."""
    return sorted(
        f"{key}: {100 * move:+.2f}% (floor {floors[key]})"
        for key, found in held_out.items()
        if key in floors
        for move in found
        if abs(move) > floors[key] - 1
    )


def threshold_entries(floors: dict[str, float], rows: dict[str, str]) -> dict[str, float]:
    """asv.conf.json's ``regressions_thresholds`` entries, one per count row (``rows``:
    its asv label to its case key) whose floor is above the counts' own factor."""
    return {
        row_selection(label): round(floors[key] - 1, 3)
        for label, key in sorted(rows.items())
        if floors.get(key, COUNT_FACTOR) > COUNT_FACTOR
    }


def count_rows() -> dict[str, str]:
    """Every count row's asv label and its case key."""
    import benchmarks.bench_instructions  # noqa: F401 - declares every count row
    from benchmarks._harness.twins import Counted

    return {label: case.key for label, case in Counted.rows.items()}


def read_figures(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise BadInput(f"{path}: not count_perturbation's figures: {error}") from None


def moves_of(paths: list[Path]) -> dict[str, list[float]]:
    merged: dict[str, list[float]] = {}
    for path in paths:
        try:
            found = layout_moves(read_figures(path))
        except ValueError as error:
            raise BadInput(f"{path}: {error}") from None
        for key, moves in found.items():
            merged.setdefault(key, []).extend(moves)
    return merged


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("figures", type=Path, nargs="+", help="count_perturbation's --out")
    parser.add_argument("--check", type=Path, help="figures held out: rows moved past floors")
    args = parser.parse_args()
    floors = count_floors(moves_of(args.figures))
    if args.check:
        crossed = crossings(floors, moves_of([args.check]))
        print(f"count_floors: {len(crossed)} held-out moves past their floor", file=sys.stderr)
        for line in crossed:
            print(f"  {line}", file=sys.stderr)
    entries = threshold_entries(floors, count_rows())
    print(f"count_floors: {len(entries)} rows above {COUNT_FACTOR}", file=sys.stderr)
    print("\n".join(f"{json.dumps(regex)}: {value}," for regex, value in entries.items()))
    return 0


if __name__ == "__main__":
    run_main("count_floors", main)
