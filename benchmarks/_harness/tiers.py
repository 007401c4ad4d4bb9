"""Tiers: which rows run where, declared on each suite class.

- ``pr``: the rows the PR gate measures by default: one representative shape per op,
  every variant, on the CPU (but compiled rows, which pay inductor's compile in every
  process, and autocast rows: nightly);
- ``nightly``: everything else of the default suite; the nightly runs ``pr`` and
  ``nightly`` rows;
- ``weekly``: the shape sweeps, run by the weekly workflow.

A class sets ``tier`` for its rows (one that sets none, such as a benchmark a user adds
without reading this, is ``nightly``), and a ``pr`` mapping of param name to values moves
the rows that match it into the ``pr`` tier (``pr = {"shape": [NLP]}``). A row is a
benchmark and a param combination, ``name(params)`` as asv names it and as ``--bench``
selects it; every row has exactly one tier. Throughput and device tracks are one number
per run, which the gate does not judge, and the gate runs on a CPU runner: those rows, and
other devices' rows, are ``nightly`` in a ``pr`` class.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import pkgutil
import re
from collections.abc import Iterable, Iterator
from typing import Any

from asv_runner.benchmarks._base import _validate_params

TIERS = ("pr", "nightly", "weekly")
DEFAULT_TIER = "nightly"
BENCHMARK_PREFIXES = ("time_", "track_", "peakmem_", "mem_", "timeraw_")
# What the gate judges: sampled rows at its factor, instruction counts at theirs.
GATED_PREFIXES = ("time_", "peakmem_", "track_instructions")


def suite_modules() -> list[Any]:
    """Every suite module of the ``benchmarks`` package as it was imported (``bench_*``),
    imported."""
    package = importlib.import_module(__package__.rsplit(".", 1)[0])
    return [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
        if info.name.startswith("bench_")
    ]


def benchmark_classes(modules: Iterable[Any]) -> list[type]:
    """The classes with benchmarks the modules hold, as asv_runner's discovery finds them:
    a public name, a class, not abstract (a leading underscore or ``abc`` marks a base)."""
    return [
        value
        for module in modules
        for name, value in vars(module).items()
        if not name.startswith("_")
        and inspect.isclass(value)
        and not inspect.isabstract(value)
        and benchmark_methods(value)
    ]


def benchmark_methods(cls: type) -> list[str]:
    return sorted(name for name in dir(cls) if name.startswith(BENCHMARK_PREFIXES))


def row_label(name: str, params: Iterable[Any]) -> str:
    """asv's name of a row: the benchmark, and its params' text forms."""
    shown = [repr(value) for value in params]
    return f"{name}({', '.join(shown)})" if shown else name


def declared_tier(cls: type) -> str:
    return getattr(cls, "tier", DEFAULT_TIER)


def tier_of(cls: type, method: str, named: dict[str, Any]) -> str:
    """The tier of one row of ``cls.method``."""
    tier, picked = declared_tier(cls), getattr(cls, "pr", {})
    if tier == "nightly" and picked and all(named.get(k) in v for k, v in picked.items()):
        tier = "pr"
    if tier == "pr" and (
        not method.startswith(GATED_PREFIXES) or named.get("device", "cpu") != "cpu"
    ):
        return "nightly"  # the gate judges sampled and counted rows, on its CPU runner
    return tier


def param_grid(cls: type) -> tuple[list[list[Any]], list[str]]:
    """A class's params and their names as asv reads them (none, a single list, or names
    left out), by asv_runner's own check (private, but it is what asv runs)."""
    return _validate_params(getattr(cls, "params", []), getattr(cls, "param_names", []), cls)


def rows(classes: Iterable[type]) -> Iterator[tuple[str, str]]:
    """``(row, tier)`` of every row of the classes."""
    for cls in classes:
        module = cls.__module__.split(".", 1)[-1]
        params, names = param_grid(cls)
        for method in benchmark_methods(cls):
            name = f"{module}.{cls.__name__}.{method}"
            for combination in itertools.product(*params):
                named = dict(zip(names, combination, strict=True))
                yield row_label(name, combination), tier_of(cls, method, named)


def benchmarks_of(classes: Iterable[type], tiers: Iterable[str]) -> set[str]:
    """The benchmarks (asv's names) with a row in one of ``tiers``."""
    wanted = set(tiers)
    return {row.split("(", 1)[0] for row, tier in rows(classes) if tier in wanted}


def selection(classes: Iterable[type], tiers: Iterable[str]) -> str:
    """asv's ``--bench`` regex for exactly the rows of ``tiers``: whole benchmarks where
    every row is in, single rows where only some are."""
    wanted = set(tiers)
    by_benchmark: dict[str, list[tuple[str, bool]]] = {}
    for row, tier in rows(classes):
        by_benchmark.setdefault(row.split("(", 1)[0], []).append((row, tier in wanted))
    patterns = []
    for name, members in sorted(by_benchmark.items()):
        if all(chosen for _, chosen in members):
            patterns.append(re.escape(name) + r"(\(|$)")
        else:
            patterns += [re.escape(row) + "$" for row, chosen in members if chosen]
    return "^(" + "|".join(patterns) + ")" if patterns else "^$"


def weekly_grid(cls: type, *mixins: type, **values: list[Any]) -> type:
    """``cls``'s benchmarks over more values of some params (``dtype=[...]``), and the
    tracks of ``mixins``, as a weekly class of the same module named ``<cls>Grid``: the
    nightly keeps the rows that matter most per commit, the week runs the whole grid."""
    params = [
        values.pop(name, axis) for name, axis in zip(cls.param_names, cls.params, strict=True)
    ]
    if values:
        raise TypeError(f"{cls.__name__} has no params {sorted(values)}")
    name = f"{cls.__name__}Grid"
    doc = f"{cls.__name__}'s benchmarks over every " + ", ".join(
        n for n, a, b in zip(cls.param_names, cls.params, params, strict=True) if a != b
    )
    namespace = {"tier": "weekly", "pr": {}, "params": params, "__doc__": doc}
    namespace |= {"__module__": cls.__module__, "__qualname__": name}
    return type(name, (cls, *mixins), namespace)
