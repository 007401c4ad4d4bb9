"""Enumerate the asv suites in-process, the way asv discovers them."""

from __future__ import annotations

import importlib
import inspect
import itertools
import pkgutil
from collections.abc import Iterator
from dataclasses import dataclass

import benchmarks

BENCHMARK_PREFIXES = ("time_", "track_", "peakmem_", "mem_", "timeraw_")


@dataclass(frozen=True)
class Combination:
    cls: type
    params: tuple

    @property
    def named(self) -> dict:
        return dict(zip(self.cls.param_names, self.params, strict=True))

    def __str__(self) -> str:
        return f"{self.cls.__module__.split('.')[-1]}.{self.cls.__name__}{self.params}"


def suite_modules() -> list:
    names = [
        m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_")
    ]
    return [importlib.import_module(f"benchmarks.{name}") for name in sorted(names)]


def benchmark_methods(cls: type) -> list[str]:
    return sorted(name for name in dir(cls) if name.startswith(BENCHMARK_PREFIXES))


def benchmark_classes() -> Iterator[type]:
    for module in suite_modules():
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and benchmark_methods(cls):
                yield cls


def combinations() -> list[Combination]:
    return [
        Combination(cls, params)
        for cls in benchmark_classes()
        for params in itertools.product(*cls.params)
    ]
