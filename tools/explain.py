"""Why a benchmark row got slower between two commits, from the row's own call run at each
commit: the torch.profiler operator table (``key_averages``) of a wall-time row, before
and after, side by side.

Each commit's tensorops is taken from a git worktree of that commit (the library is pure
Python, so its ``src`` on PYTHONPATH is the commit's library); the benchmark classes and
the harness are today's, as asv runs them. The interpreter is asv's benchmarking env, which
has torch at the pinned version.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tools.common import ExternalFailure, git

# Run in the asv env's interpreter: the row's call, profiled. Prints JSON, one record per
# operator: self CPU time (µs), total CPU time (µs), calls.
PROFILE = """
import ast, importlib, json, sys
import torch
from torch.profiler import ProfilerActivity, profile

module, cls, method = sys.argv[1].rsplit(".", 2)
params = ast.literal_eval(sys.argv[2]) if sys.argv[2] else ()
params = params if isinstance(params, tuple) else (params,)
bench = getattr(importlib.import_module("benchmarks." + module), cls)()
bench.setup(*params)
call = lambda: getattr(bench, method)(*params)
for _ in range(2):
    call()
activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
with profile(activities=activities) as prof:
    for _ in range(int(sys.argv[3])):
        call()
bench.teardown(*params)
print(json.dumps({e.key: [e.self_cpu_time_total, e.cpu_time_total, e.count]
                  for e in prof.key_averages()}))
"""


def benchmark_python(repo: Path) -> str:
    """asv's benchmarking env's interpreter (the nightly built it)."""
    found = sorted((repo / ".asv" / "env").glob("*/bin/python"))
    if not found:
        raise ExternalFailure(f"no asv environment in {repo / '.asv' / 'env'} to explain with")
    return str(found[0])


@contextlib.contextmanager
def library_at(repo: Path, commit: str) -> Iterator[Path]:
    """A worktree of ``commit``, removed afterwards; its ``src`` is that commit's library."""
    with tempfile.TemporaryDirectory(prefix="explain-") as scratch:
        tree = Path(scratch) / commit[:12]
        git("worktree", "add", "--quiet", "--detach", str(tree), commit, cwd=repo)
        try:
            yield tree / "src"
        finally:
            git("worktree", "remove", "--force", str(tree), cwd=repo, check=False)


def operator_times(repo: Path, commit: str, benchmark: str, params: str, calls: int) -> dict:
    """``{operator: (self µs per call, total µs per call, calls per call)}`` of the row's
    call at ``commit``."""
    with library_at(repo, commit) as library:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(library), str(repo)])}
        done = subprocess.run(
            [
                benchmark_python(repo),
                "-c",
                PROFILE,
                benchmark,
                params,
                str(calls),
            ],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    if done.returncode != 0:
        raise ExternalFailure(
            f"profiling {benchmark}{params} at {commit[:12]} failed: {done.stderr.strip()[-300:]}"
        )
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    return {key: (s / calls, t / calls, n / calls) for key, (s, t, n) in measured.items()}


def profile_table(before: dict, after: dict, rows: int = 12) -> str:
    """The two commits' operators side by side, those whose self time grew most first."""

    def self_us(table: dict, key: str) -> float:
        return table.get(key, (0.0, 0.0, 0.0))[0]

    keys = sorted(
        set(before) | set(after), key=lambda k: self_us(after, k) - self_us(before, k), reverse=True
    )[:rows]
    lines = [
        "| operator | self CPU before (µs/call) | after | calls before | after |",
        "|---|---:|---:|---:|---:|",
    ]
    for key in keys:
        old, new = before.get(key, (0.0, 0.0, 0.0)), after.get(key, (0.0, 0.0, 0.0))
        lines.append(f"| `{key}` | {old[0]:.1f} | {new[0]:.1f} | {old[2]:g} | {new[2]:g} |")
    return "\n".join(lines)


def explain_time(repo: Path, parent: str, guilty: str, benchmark: str, params: str) -> str:
    """The profiler's view of the row at both commits, as Markdown."""
    calls = 5
    before = operator_times(repo, parent, benchmark, params, calls)
    after = operator_times(repo, guilty, benchmark, params, calls)
    return (
        f"torch.profiler `key_averages()` of the row's call, {calls} calls at each commit "
        f"(`{parent[:12]}` before, `{guilty[:12]}` after), per call:\n\n"
        + profile_table(before, after)
    )


# ---------------------------------------------------------------- instruction counts
# The counting run keeps each case's function counts per commit under this folder
# (benchmarks/_harness/callgrind.py, $TENSOROPS_CALLGRIND_DIR; tools.common.asv sets it).
FUNCTIONS_DIR = Path(".asv") / "callgrind"
GROWN_FUNCTIONS = 15


def counted_case(benchmark: str, params: str) -> str | None:
    """The counted case's key of an instruction-count row, ``None`` for another row."""
    import ast
    import importlib

    module, cls, _ = benchmark.rsplit(".", 2)
    suite = getattr(importlib.import_module(f"benchmarks.{module}"), cls, None)
    if suite is None or not hasattr(suite, "case_for"):
        return None
    named = dict(zip(suite.param_names, ast.literal_eval(params), strict=True))
    return suite().case_for(named["case"]).key


def functions_at(repo: Path, commit: str, key: str):
    """The case's exclusive function counts per call at ``commit``, as torch's
    ``CallgrindStats``, or None when that commit's run kept none."""
    from torch.utils.benchmark.utils.common import TaskSpec
    from torch.utils.benchmark.utils.valgrind_wrapper.timer_interface import (
        CallgrindStats,
        FunctionCount,
        FunctionCounts,
    )

    kept = repo / FUNCTIONS_DIR / commit / (re.sub(r"[^\w.-]+", "_", key) + ".json")
    if not kept.exists():
        return None
    functions = json.loads(kept.read_text())["functions"]
    counts = FunctionCounts(tuple(FunctionCount(c, name) for c, name in functions), False)
    nothing = FunctionCounts((), inclusive=True)
    return CallgrindStats(
        TaskSpec("call()", ""),
        1,
        False,
        nothing,
        FunctionCounts((), inclusive=False),
        nothing,
        counts,
        None,
    )


def shortened(function: str, keep: int = 160) -> str:
    """A C++ symbol cut in the middle when templates make it long."""
    if len(function) <= keep:
        return function
    return f"{function[: keep // 2]}…{function[-keep // 2 :]}"


def grown_functions(repo: Path, before: str, after: str, benchmark: str, params: str) -> str:
    """The functions whose instructions per call grew most from ``before`` to ``after``
    (torch's ``as_standardized`` and ``delta``), as Markdown; empty when not kept."""
    key = counted_case(benchmark, params)
    if key is None:
        return ""
    old, new = functions_at(repo, before, key), functions_at(repo, after, key)
    if old is None or new is None:
        return ""
    delta = new.as_standardized().delta(old.as_standardized())
    grown = sorted(delta, key=lambda counted: -counted.count)[:GROWN_FUNCTIONS]
    lines = [
        f"Functions whose instructions per call grew most, `{before[:12]}` → `{after[:12]}` "
        f"(callgrind, `{key}`):",
        "",
        "| instructions | function |",
        "|---:|---|",
        *(f"| {counted.count:+,.1f} | `{shortened(counted.function)}` |" for counted in grown),
    ]
    return "\n".join(lines)
