"""The tiers: every row has exactly one, each tier's selection picks exactly its rows as
asv itself filters them, and the tools run the tiers they say they run."""

from __future__ import annotations

import itertools
from collections import defaultdict
from types import SimpleNamespace

import pytest
from asv.benchmarks import Benchmarks
from asv_runner.discovery import disc_benchmarks

import tensorops
from benchmarks._harness import tiers
from benchmarks._harness.base import OpBenchmark
from tests.support import REPO_ROOT
from tests.support.suites import benchmark_classes
from tools import nightly
from tools._lib.asv.suites import tier_selection
from tools._lib.verdict import gate


@pytest.fixture(scope="module")
def discovered() -> list[dict]:
    """Every benchmark as asv_runner discovers it, in the shape of asv's benchmarks.json."""
    found = disc_benchmarks(str(REPO_ROOT / "benchmarks"))
    return [{"name": b.name, "params": b.params} for b in found]


@pytest.fixture(scope="module")
def declared() -> dict[str, str]:
    labels = list(tiers.rows(benchmark_classes()))
    declared = dict(labels)
    assert len(declared) == len(labels), "a row is declared twice"
    return declared


def asv_rows(discovered: list[dict], regex: str | None) -> set[str]:
    """The rows ``asv run --bench regex`` runs: asv's own filter over the discovery."""
    conf = SimpleNamespace(benchmark_dir=str(REPO_ROOT / "benchmarks"))
    picked = Benchmarks(conf, discovered, regex=regex)
    chosen = set()
    for name, indices in picked.benchmark_selection.items():
        if name not in picked:
            continue
        benchmark = picked[name]
        if indices is None:
            chosen.add(name)
            continue
        combinations = list(itertools.product(*benchmark["params"]))
        chosen |= {f"{name}({', '.join(combinations[i])})" for i in indices}
    return chosen


def test_every_row_asv_discovers_has_exactly_one_tier(discovered, declared):
    assert asv_rows(discovered, None) == set(declared)
    assert set(declared.values()) == set(tiers.TIERS)


def test_every_class_declares_its_tier_in_its_suite_module():
    for cls in benchmark_classes():
        assert cls.tier in tiers.TIERS, cls
        owner = next(base for base in cls.__mro__ if "tier" in vars(base))
        assert owner.__module__ == cls.__module__, f"{cls} inherits its tier from {owner}"
        assert set(getattr(cls, "pr", {})) <= set(cls.param_names), cls


@pytest.mark.parametrize("chosen", [("pr",), ("nightly",), ("weekly",), ("pr", "nightly")])
def test_each_tier_selection_picks_exactly_its_rows(discovered, declared, chosen):
    regex, names = tier_selection(REPO_ROOT, chosen)
    wanted = {row for row, tier in declared.items() if tier in chosen}
    assert asv_rows(discovered, regex) == wanted
    assert names == {row.split("(", 1)[0] for row in wanted}


def test_the_sweeps_and_the_default_suite_share_no_benchmark():
    classes = benchmark_classes()
    weekly = tiers.benchmarks_of(classes, ["weekly"])
    default = tiers.benchmarks_of(classes, ["pr", "nightly"])
    assert weekly and default and not weekly & default


def test_the_nightly_runs_every_tier_once_and_the_gate_the_pr_tier():
    runs = [tier for chosen in nightly.RUNS.values() for tier in chosen]
    assert sorted(runs) == sorted(tiers.TIERS)
    assert nightly.RUNS["weekly"] == ("weekly",)
    assert gate.DEFAULT_TIERS == ("pr",)


def test_the_pr_tier_times_every_eager_variant_of_every_op_at_one_shape_on_the_cpu(declared):
    variants, shapes, accelerator_only = defaultdict(set), defaultdict(set), set()
    for cls in benchmark_classes():
        if not issubclass(cls, OpBenchmark):
            continue
        if not getattr(cls, "cpu_rows", True):  # host/device copies: their CPU rows skip
            accelerator_only.add(cls.op)
            continue
        for method in tiers.benchmark_methods(cls):
            for combination in itertools.product(*cls.params):
                named = dict(zip(cls.param_names, combination, strict=True))
                module = cls.__module__.split(".", 1)[-1]
                row = tiers.row_label(f"{module}.{cls.__name__}.{method}", combination)
                if declared[row] != "pr" or not method.startswith("time_"):
                    continue
                op, variant, spec = cls().resolve(named)
                assert spec["device"] == "cpu", row
                variants[op].add(variant)
                shapes[cls].add(spec["shape"])
    for op in set(tensorops.op_names()) - accelerator_only:
        # Nightly: compiled variants (inductor's compile per process) and autocast (a
        # precision mode of the op's own variants; bench_autocast says why).
        nightly = {"compiled", "autocast_bf16", "autocast_fp16"}
        assert variants[op] == set(tensorops.variant_names(op)) - nightly, op
    assert all(len(found) == 1 for found in shapes.values()), shapes


def test_a_class_that_declares_no_tier_is_nightly():
    class Added:
        params = [["cpu"], [1, 2]]
        param_names = ["device", "n"]

        def time_added(self, device, n):
            pass

    class Bare:  # no params at all, as asv allows
        def time_bare(self):
            pass

    assert {tier for _, tier in tiers.rows([Added])} == {"nightly"}
    # Named as asv names a benchmark: its module's path below the benchmark folder.
    named = f"{__name__.split('.', 1)[-1]}.Bare.time_bare"
    assert list(tiers.rows([Bare])) == [(named, "nightly")]
