"""The suites as the tools see them: which benchmarks exist with which unit, and which rows
a tier holds, read from the suites themselves (this imports torch and the suites)."""

from __future__ import annotations

import contextlib
import itertools
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path


@contextlib.contextmanager
def importable(repo: Path) -> Iterator[None]:
    """The repository's ``benchmarks`` package importable for the duration."""
    sys.path.insert(0, str(repo))
    try:
        yield
    finally:
        sys.path.remove(str(repo))


def discovered(repo: Path) -> dict[str, tuple[str, list[str]]]:
    """Every benchmark of the repository's suites: its unit and its rows
    (``name(params)``), by asv_runner's own discovery."""
    from asv_runner.discovery import disc_benchmarks

    with importable(repo):
        found = disc_benchmarks(str(repo / "benchmarks"))
        return {
            b.name: (
                b.unit,
                [
                    f"{b.name}({', '.join(c)})" if c else b.name
                    for c in itertools.product(*b.params)
                ],
            )
            for b in found
        }


def discovered_units(repo: Path) -> dict[str, str]:
    """Every benchmark of the repository's suites and its unit."""
    return {name: unit for name, (unit, _) in discovered(repo).items()}


def tier_selection(
    repo: Path, tiers: Sequence[str], shard: tuple[int, int] | None = None
) -> tuple[str, set[str]]:
    """asv's ``--bench`` regex for exactly the rows of ``tiers``, and the benchmarks those
    rows belong to, from the tiers the suites declare (benchmarks/_harness/tiers.py); with
    ``shard`` (index, count), those of that shard alone."""
    with importable(repo):
        from benchmarks._harness import shards
        from benchmarks._harness import tiers as declared

        classes = declared.benchmark_classes(declared.suite_modules())
        if shard is not None:
            classes = shards.shard(classes, tiers, *shard)
        return declared.selection(classes, tiers), declared.benchmarks_of(classes, tiers)


def tier_rows(repo: Path, tiers: Sequence[str]) -> list[str]:
    """The rows (``name(params)``) of ``tiers``, in the suites' order."""
    wanted = set(tiers)
    with importable(repo):
        from benchmarks._harness import tiers as declared

        classes = declared.benchmark_classes(declared.suite_modules())
        return [row for row, tier in declared.rows(classes) if tier in wanted]


def emulated_rows(repo: Path) -> set[str]:
    """The rows this CPU computes through float32, large calls of a dtype it has no native
    arithmetic for (benchmarks/_harness/emulated.py)."""
    with importable(repo):
        from benchmarks._harness import emulated, tiers

        return emulated.emulated_rows(tiers.benchmark_classes(tiers.suite_modules()))


def count_twins(repo: Path) -> dict[str, str]:
    """Each timed row (``name(params)``) and its instruction-count twin's row."""
    with importable(repo):
        from benchmarks import bench_instructions
        from benchmarks._harness.twins import suite_classes, twins_of_rows

        return twins_of_rows(suite_classes(bench_instructions.SUITES))


# The checkout these tools run from: the studies clone it.
REPO_ROOT = Path(__file__).resolve().parents[3]  # tools/_lib/asv/suites.py
