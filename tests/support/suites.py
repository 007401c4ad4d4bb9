"""Enumerate the asv suites in-process, the way asv discovers them (benchmarks._harness.tiers
mirrors asv_runner's discovery)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from benchmarks._harness import tiers
from benchmarks._harness.tiers import benchmark_methods, suite_modules

__all__ = [
    "Combination",
    "benchmark_classes",
    "benchmark_methods",
    "combinations",
    "qualified",
    "suite_modules",
]


@dataclass(frozen=True)
class Combination:
    cls: type
    params: tuple

    @property
    def named(self) -> dict:
        return dict(zip(self.cls.param_names, self.params, strict=True))

    def __str__(self) -> str:
        return f"{self.cls.__module__.split('.')[-1]}.{self.cls.__name__}{self.params}"


def qualified(cls: type) -> str:
    """A suite class as asv names it: ``bench_module.Class``."""
    return f"{cls.__module__.split('.')[-1]}.{cls.__name__}"


def benchmark_classes() -> list[type]:
    return tiers.benchmark_classes(suite_modules())


def combinations() -> list[Combination]:
    return [
        Combination(cls, params)
        for cls in benchmark_classes()
        for params in itertools.product(*cls.params)
    ]
