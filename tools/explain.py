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
