"""The count twins come from the suites' own declarations: every CPU time row of the
default suite has one, a suite added later gets its own with no benchmark code, and a
twin is in the pr tier exactly when a pr time row counts on it. No valgrind here: the
counting itself is tests/integration/test_instruction_counts.py."""

from __future__ import annotations

import itertools
import math

from benchmarks import bench_instructions
from benchmarks._harness import DEVICES, OpBenchmark, tiers
from benchmarks._harness.twins import (
    COUNT_ELEMENTS,
    Counted,
    count_rows,
    count_shape,
    selected_cases,
    timed_cases,
    twin_classes,
)
from tests.support.suites import benchmark_classes


def default_cpu_time_rows():
    """(class, named params, tier) of every CPU time_ row of the pr and nightly tiers."""
    for cls in benchmark_classes():
        if not issubclass(cls, OpBenchmark) or cls.tier == "weekly" or not cls.cpu_rows:
            continue
        timed = [m for m in tiers.benchmark_methods(cls) if m.startswith("time_")]
        for method, combination in itertools.product(timed, itertools.product(*cls.params)):
            named = dict(zip(cls.param_names, combination, strict=True))
            if named["device"] == "cpu":
                yield cls, named, tiers.tier_of(cls, method, named)


def test_every_cpu_time_row_of_the_default_suite_has_a_count_twin():
    counted = {(c.op, c.variant, c.dtype, c.layout, c.backward) for c in Counted.rows.values()}
    seen = set()
    for cls, named, _ in default_cpu_time_rows():
        op, variant, spec = cls().resolve(named)
        if variant == "compiled":
            # Left out: inductor's compile in every child (docs/explanation/measurement.md,
            # "Instruction counts").
            continue
        key = (op, variant, spec["dtype"], spec["layout"], cls.backward)
        assert key in counted, key
        seen.add(key)
    assert len(seen) >= 150
    twins = {(c.op, c.variant, c.dtype) for c in Counted.rows.values()}
    assert {key[:3] for key in seen} == twins  # and no twin of a row that is not timed


def test_a_suite_added_later_gets_its_twins_with_no_code_of_its_own():
    class GeluLater(OpBenchmark):
        op = "gelu"
        tier, pr = "nightly", {"dtype": ["float32"]}
        params = [DEVICES, ["float32", "bfloat16"], [(64, 4096)], ["exact", "manual_erf"]]
        param_names = ["device", "dtype", "shape", "variant"]

        def time_gelu(self, device, dtype, shape, variant):
            self.call()

    cases = timed_cases([GeluLater])
    assert len(cases) == 4 and {c.shape for c in cases} == {count_shape((64, 4096))}
    assert sorted(cases.values()) == ["nightly", "nightly", "pr", "pr"]
    (twin,) = twin_classes(cases, __name__).values()
    rows = count_rows([twin])
    assert len(rows) == 4 and set(rows.values()) == set(cases)
    in_pr = {row for row, tier in tiers.rows([twin]) if tier == "pr"}
    assert {rows[row].dtype for row in in_pr} == {"float32"} and len(in_pr) == 2


def test_a_count_shape_is_the_suites_shrunk_to_the_element_budget():
    assert count_shape((32, 512, 768)) == (32, 32, 24)
    assert count_shape((8, 8)) == (8, 8)
    assert all(
        min(count_shape(shape)) >= 1 and math.prod(count_shape(shape)) <= COUNT_ELEMENTS
        for shape in [(1, 2**20), (4096, 4096, 3), (64, 3, 224, 224, 64, 3)]
    )


def test_the_cases_counted_are_those_of_the_rows_asv_selects():
    rows = Counted.rows
    one = (
        "bench_instructions.Instructions.track_instructions"
        "('cpu', ('matmul', 'mm', (128, 128, 128)))"
    )
    assert one in rows
    assert selected_cases(rows, None) == sorted(set(rows.values()), key=lambda c: c.key)
    assert [c.key for c in selected_cases(rows, '["Instructions.*matmul"]')] == [rows[one].key]
    assert selected_cases(rows, '["^bench_matmul"]') == []
    assert bench_instructions.Instructions.tier == "pr"
