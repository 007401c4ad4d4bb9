"""asv run over an existing interpreter (``-E existing``) of a few rows, in a throwaway git
copy of the working tree, under each launch method, with every row measured: the GPU
check's asv part (tools/studies/gpu_check.py), which runs on a device machine with no
asv environment of its own."""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._names import ALLOCATOR_ENV
from tools._lib.asv.run import allocator_environment
from tools._lib.asv.suites import REPO_ROOT
from tools._lib.base.cli import BadInput

ASV_SELECTION = [
    r"^bench_matmul\.MatMul\.time_matmul\('cuda', 'float32', \(1024, 1024, 1024\), 'mm'\)$",
    r"^bench_reduction\.Softmax\.time_softmax\('cuda', 'float32', .*'functional'\)$",
    r"^bench_device\.MatMul\.track_device_time\('cuda', 'bfloat16', \(1024, 1024, 1024\), 'mm'\)$",
    r"^bench_device\.Synchronize\.track_sync_time\('cuda'\)$",
]


def scratch_repo(scratch: str) -> tuple[Path, dict, str]:
    """A one-commit git copy of the working tree in ``scratch`` (asv needs a commit to file
    results under), its environment, and the commit."""
    repo = Path(scratch) / "repo"
    shutil.copytree(
        REPO_ROOT,
        repo,
        ignore=shutil.ignore_patterns(".git", ".asv", ".venv", ".whl", "__pycache__"),
    )
    env = {
        **os.environ,
        "HOME": scratch,
        "GIT_AUTHOR_NAME": "gpu-check",
        "GIT_AUTHOR_EMAIL": "gpu-check@example.invalid",
        "GIT_COMMITTER_NAME": "gpu-check",
        "GIT_COMMITTER_EMAIL": "gpu-check@example.invalid",
    }
    try:
        env = allocator_environment(env)
    except BadInput:  # a device machine without jemalloc and no network to fetch it
        env[ALLOCATOR_ENV] = "fixed"
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "check"]):
        subprocess.run(["git", *command], cwd=repo, env=env, check=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run(
        [sys.executable, "-m", "asv", "machine", "--machine", "gpu-check", "--yes"],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
    )
    return repo, env, commit


def asv_run_row(repo: Path, env: dict, commit: str, method: str, selection: list[str]) -> dict:
    """One asv run of the selection under one launch method, and what it measured."""
    begun = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "asv",
            "run",
            "--machine",
            "gpu-check",
            "-E",
            f"existing:{sys.executable}",
            "--set-commit-hash",
            commit,
            "--launch-method",
            method,
            "--show-stderr",
            *[arg for regex in selection for arg in ("--bench", regex)],
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    values = measured_values(repo / ".asv" / "results" / "gpu-check", selection)
    shutil.rmtree(repo / ".asv" / "results" / "gpu-check", ignore_errors=True)
    log = done.stdout + done.stderr
    finite = all(isinstance(v, float) and math.isfinite(v) for v in values.values())
    return {
        "launch_method": method,
        "exit": done.returncode,
        "seconds": time.perf_counter() - begun,
        "values": values,
        "cuda_error_in_log": "CUDA" in log and "error" in log.lower(),
        "passed": done.returncode == 0 and len(values) == len(selection) and finite,
        "log_tail": log[-1500:],
    }


def check_asv(launch_methods=("spawn", "forkserver"), selection=ASV_SELECTION) -> dict:
    """asv run -E existing over a few suites' CUDA rows, in a throwaway git copy of the
    working tree, under each launch method."""
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as scratch:
        repo, env, commit = scratch_repo(scratch)
        rows = [asv_run_row(repo, env, commit, method, selection) for method in launch_methods]
    return {"rows": rows, "passed": all(row["passed"] for row in rows)}


def measured_values(machine_dir: Path, selection: list[str]) -> dict[str, float | None]:
    """Each selected row's value from the result files asv wrote."""
    values = {}
    for path in machine_dir.glob("*.json"):
        if path.name == "machine.json":
            continue
        data = json.loads(path.read_text())
        for name, row in data["results"].items():
            row = dict(zip(data["result_columns"], row, strict=False))
            combos = list(itertools.product(*row["params"])) or [()]
            for combo, value in zip(combos, row["result"] or [], strict=False):
                label = f"{name}({', '.join(combo)})" if combo else name
                if any(re.search(regex, label) for regex in selection):
                    values[label] = value
    return values
