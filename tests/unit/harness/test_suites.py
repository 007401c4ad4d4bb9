"""The suites' declarations, without running them: modules, signatures, which classes take
cold inputs, asv's own check, and that the integration lane runs every row asv discovers
(tests/integration/test_every_row.py runs them)."""

from __future__ import annotations

import inspect
import itertools
import os
import subprocess
import sys
import time

import pytest
from asv_runner.discovery import disc_benchmarks

from benchmarks import _harness
from benchmarks._harness import tiers
from tests.support import REPO_ROOT
from tests.support.suites import (
    benchmark_classes,
    benchmark_methods,
    combinations,
    qualified,
    suite_modules,
)


def test_there_are_at_least_eight_suite_modules_with_benchmarks():
    modules = {cls.__module__ for cls in benchmark_classes()}
    assert len(suite_modules()) >= 8
    assert modules == {module.__name__ for module in suite_modules()}


# The ops that read their inputs at data-dependent addresses: their rows take copies of
# the inputs in turn (cold_inputs), all others where the last call left them.
COLD_SUITES = {"Embedding", "EmbeddingBag", "Gather", "IndexSelect", "IndexAdd", "ScatterAdd"}


def test_the_random_access_suites_and_only_they_take_cold_inputs():
    cold = {qualified(c) for c in benchmark_classes() if getattr(c, "cold_inputs", False)}
    expected = {f"bench_indexing.{name}" for name in COLD_SUITES}
    expected |= {f"bench_indexing.{name}Grid" for name in COLD_SUITES - {"Embedding"}}
    assert cold == expected


# Seconds of one call of the slowest CPU row, a bfloat16 2048^3 product on a CPU without
# bfloat16 instructions (docs/explanation/measurement.md, "Rows of a minute a call").
SLOWEST_CALL_SECONDS = 56.0


def test_a_track_of_the_slowest_cpu_row_takes_half_its_timeout_at_most(monkeypatch):
    from benchmarks import bench_matmul
    from benchmarks._harness import measure, warmup

    # A call longer than the warm-up's time bound stops it at its least number of calls.
    warm_up_calls = inspect.signature(warmup.warm_up).parameters["min_calls"].default
    calls = []
    min_run_time = 0.05
    measure.sampled_seconds(lambda: calls.append(time.sleep(1.25 * min_run_time)), 1, min_run_time)
    # Calls slower than min_run_time, as the slowest row's are: one sizes the block, one
    # block of one call, and each further block to MIN_BLOCKS is Timer.timeit's, which
    # warms up with two calls of its own.
    assert len(calls) == 1 + 1 + 3 * (measure.MIN_BLOCKS - 1)
    process_seconds = (warm_up_calls + len(calls)) * SLOWEST_CALL_SECONDS
    assert process_seconds <= 0.5 * bench_matmul.MatMulSweep.timeout


@pytest.mark.parametrize("cls", list(benchmark_classes()), ids=qualified)
def test_signatures_mirror_param_names(cls):
    assert cls.param_names[0] == "device"
    assert cls.params[0] == _harness.DEVICES
    assert len(cls.params) == len(cls.param_names)
    for name in benchmark_methods(cls):
        method = getattr(cls, name)
        if method.__module__.startswith(_harness.__name__):
            continue  # the harness's methods (tracks, the training step) take *params
        parameters = list(inspect.signature(method).parameters)
        # asv hands setup_cache's value to every method first
        cached = ["counts"] if hasattr(cls, "setup_cache") else []
        assert parameters == ["self", *cached, *cls.param_names], f"{cls.__name__}.{name}"


def test_asv_check_passes():
    # tensorops comes from the dev venv's editable install; asv's discovery breaks
    # when PYTHONPATH is set, so it must not be.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-m", "asv", "check", "-E", f"existing:{sys.executable}"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No problems found" in done.stdout


def test_the_integration_lane_runs_every_row_asv_discovers():
    """test_every_row.py runs each method of each param combination of every suite
    class: exactly the rows asv_runner's own discovery finds, no more, no fewer."""
    discovered = {
        f"{b.name}({', '.join(combo)})" if b.params else b.name
        for b in disc_benchmarks(str(REPO_ROOT / "benchmarks"))
        for combo in itertools.product(*b.params)
    }
    run = {
        tiers.row_label(f"{qualified(c.cls)}.{method}", c.params)
        for c in combinations()
        for method in benchmark_methods(c.cls)
    }
    assert run == discovered and len(run) > 2000
