"""Shards of a tier: K runners of one machine class each run one part of the tier's rows
in one night, landed into one history (docs/explanation/continuous.md, "Shards").

Each class is in exactly one shard, and whole, so that a class's time_ row and the tracks
that read it run in one asv run (derived.py). The shards are balanced by what their rows
cost: the seconds each benchmark's rows took in a measured nightly on the hosted runners'
CPU (ROW_SECONDS, written by tools/studies/row_seconds.py), because the rows' costs differ
by thousands of times and a split by their number leaves one shard nearly half the night.
A row the table lacks (a benchmark added since, a weekly sweep) weighs the table's median
row. The table is a file in the repository, not a reading of the results branch, so
every shard computes the same split whenever it starts.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from pathlib import Path

from .tiers import rows

ROW_SECONDS = Path(__file__).with_name("row_seconds.json")


def row_seconds(table: Path = ROW_SECONDS) -> dict[str, float]:
    """Seconds a row of each benchmark (asv's name) took, from ``table``; empty where the
    file is missing."""
    if not table.exists():
        return {}
    return {name: float(s) for name, s in json.loads(table.read_text())["seconds"].items()}


def weights(
    classes: Iterable[type], tiers: Iterable[str], seconds: dict[str, float]
) -> dict[type, float]:
    """Each class with rows in ``tiers`` and what they cost: a row of a benchmark in
    ``seconds`` its seconds, any other the median of them (1 where ``seconds`` is empty,
    so the split is by rows)."""
    wanted = set(tiers)
    default = statistics.median(seconds.values()) if seconds else 1.0
    found: dict[type, float] = {}
    for cls in classes:
        chosen = [row for row, tier in rows([cls]) if tier in wanted]
        if chosen:
            found[cls] = sum(seconds.get(row.split("(", 1)[0], default) for row in chosen)
    return found


def shard(
    classes: Iterable[type],
    tiers: Iterable[str],
    index: int,
    count: int,
    seconds: dict[str, float] | None = None,
) -> list[type]:
    """The classes of shard ``index`` of ``count`` (from 1) of ``tiers``' rows: the
    costliest class first, each to the shard that costs least so far (ties: the lower
    shard; classes of equal cost: by name). ``seconds``: the rows' costs (the committed
    table by default)."""
    cost = weights(classes, tiers, row_seconds() if seconds is None else seconds)
    loads, shards = [0.0] * count, [[] for _ in range(count)]
    for cls in sorted(cost, key=lambda c: (-cost[c], c.__module__, c.__qualname__)):
        lightest = loads.index(min(loads))
        loads[lightest] += cost[cls]
        shards[lightest].append(cls)
    return shards[index - 1]
