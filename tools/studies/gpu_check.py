"""The GPU verification: what the CPU tests can only fake, measured on a CUDA machine.

    python -m tools.gpu_check --out DIR [--skip-asv]

Writes DIR/gpu_check.json and DIR/gpu_check.txt with five checks, each with its figures
and a pass/fail:

1. sync matters: an unsynced timing of a large matmul against the synced one;
2. agreement: the suites' sync-wrapped wall time against CUDA-event device time, within
   5% for ops of 1 ms or more (OpBenchmark.timer, devices.CudaDevice);
3. sync cost: one ``torch.cuda.synchronize()`` of an idle device, in µs;
4. asv on the GPU: ``asv run -E existing`` over CUDA rows of a few suites under both
   ``spawn`` and ``forkserver``, with every row measured (no failure, no skip);
5. memory: the peak-device-memory track against sizes computed on the CPU.

Self-contained for the device tool's machine (a few minutes on an H200): it needs
torch with CUDA, git, and asv, asv_runner and tensorops importable by this interpreter
(tools/gpu_check.sh sets that up from carried wheels). Exit status 0 when every check
passes, 1 when one fails, 2 when there is no GPU.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from benchmarks._names import ALLOCATOR_ENV
from tools._lib.asv_run import allocator_environment
from tools._lib.cli import BadInput
from tools._lib.suites import REPO_ROOT

NLP = (32, 512, 768)
# (op, variant, shape, dtype, layout): ops of 1 ms or more on an H200 in float32.
AGREEMENT_CASES = [
    ("matmul", "mm", (8192, 8192, 8192), "float32", "contiguous"),
    ("conv2d", "functional", (32, 3, 224, 224, 64, 3), "float32", "channels_last"),
    ("attention", "naive", (8, 12, 2048, 64), "float32", "contiguous"),
    ("softmax", "functional", (256, 512, 768), "float32", "contiguous"),
    ("layer_norm", "functional", (256, 512, 768), "float32", "contiguous"),
]
# (op, variant, shape, dtype, how many output-sized tensors one call allocates): the
# output, plus for the manual forms each full-size intermediate alive at the peak.
MEMORY_CASES = [
    ("silu", "functional", NLP, "float32", 1),
    ("silu", "manual", NLP, "float32", 2),
    ("gelu", "exact", NLP, "bfloat16", 1),
    ("softmax", "functional", NLP, "float32", 1),
    ("matmul", "mm", (4096, 2048, 1024), "float16", 1),
]
ASV_SELECTION = [
    r"^bench_matmul\.MatMul\.time_matmul\('cuda', 'float32', \(1024, 1024, 1024\), 'mm'\)$",
    r"^bench_reduction\.Softmax\.time_softmax\('cuda', 'float32', .*'functional'\)$",
    r"^bench_device\.MatMul\.track_device_time\('cuda', 'bfloat16', \(1024, 1024, 1024\), 'mm'\)$",
    r"^bench_device\.Synchronize\.track_sync_time\('cuda'\)$",
]
CUDA_ALLOCATION_BLOCK = 512  # the caching allocator rounds every block up to this


def check_sync_matters() -> dict:
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    begun = time.perf_counter()
    for _ in range(10):
        a @ b
    unsynced = (time.perf_counter() - begun) / 10
    torch.cuda.synchronize()
    begun = time.perf_counter()
    for _ in range(10):
        a @ b
    torch.cuda.synchronize()
    synced = (time.perf_counter() - begun) / 10
    ratio = synced / unsynced
    return {"unsynced_s": unsynced, "synced_s": synced, "ratio": ratio, "passed": ratio > 10}


def sync_wrapped_seconds(call, device, number: int, repeat: int) -> float:
    """What the suites' time_* reports: asv's timer (sync, then clock) around blocks."""
    samples = []
    for _ in range(repeat):
        device.synchronize()
        begun = time.perf_counter()
        for _ in range(number):
            call()
        device.synchronize()
        samples.append((time.perf_counter() - begun) / number)
    return statistics.median(samples)


def check_agreement() -> dict:
    from benchmarks._harness.controls import controlled, controls_from_env
    from benchmarks._harness.prepare import prepare

    rows = []
    with controlled(controls_from_env()):
        for op, variant, shape, dtype, layout in AGREEMENT_CASES:
            prepared = prepare(op, variant, device="cuda", shape=shape, dtype=dtype, layout=layout)
            device_s = statistics.median(prepared.device.device_seconds(prepared.call, 30))
            number = max(1, math.ceil(0.05 / device_s))
            wall_s = sync_wrapped_seconds(prepared.call, prepared.device, number, repeat=15)
            rows.append(
                {
                    "case": f"{op}/{variant} {shape} {dtype} {layout}",
                    "device_ms": device_s * 1e3,
                    "wall_ms": wall_s * 1e3,
                    "wall_over_device": wall_s / device_s,
                }
            )
            del prepared
            torch.cuda.empty_cache()
    long_enough = [row for row in rows if row["device_ms"] >= 1.0]
    passed = bool(long_enough) and all(abs(r["wall_over_device"] - 1) <= 0.05 for r in long_enough)
    return {"rows": rows, "passed": passed}


def check_sync_cost() -> dict:
    from benchmarks._harness.devices import CudaDevice

    spent = CudaDevice().sync_seconds(1000)
    return {
        "median_us": statistics.median(spent) * 1e6,
        "p95_us": statistics.quantiles(spent, n=20)[-1] * 1e6,
        "passed": True,
    }


def expected_bytes(op: str, variant: str, shape, dtype: str, tensors: int) -> int:
    """The output's size, computed on the host by running the same case on torch's meta
    device (shapes and dtypes, no data), times the number of output-sized tensors alive
    at the peak, in allocator blocks."""
    import tensorops

    case = tensorops.Case(op, shape, dtype=dtype, device="meta")
    output = tensorops.get_variant(op, variant).bind(case.inputs())()
    block = math.ceil(output.numel() * output.element_size() / CUDA_ALLOCATION_BLOCK)
    return tensors * block * CUDA_ALLOCATION_BLOCK


def check_memory() -> dict:
    from benchmarks._harness.controls import controlled, controls_from_env
    from benchmarks._harness.prepare import prepare

    rows = []
    with controlled(controls_from_env()):
        for op, variant, shape, dtype, tensors in MEMORY_CASES:
            prepared = prepare(op, variant, device="cuda", shape=shape, dtype=dtype)
            measured = prepared.device.peak_memory_bytes(prepared.call)
            expected = expected_bytes(op, variant, shape, dtype, tensors)
            rows.append(
                {
                    "case": f"{op}/{variant} {shape} {dtype}",
                    "measured": measured,
                    "expected": expected,
                    "passed": measured == expected,
                }
            )
            del prepared
            torch.cuda.empty_cache()
    return {"rows": rows, "passed": all(row["passed"] for row in rows)}


def check_asv(launch_methods=("spawn", "forkserver"), selection=ASV_SELECTION) -> dict:
    """asv run -E existing over a few suites' CUDA rows, in a throwaway git copy of the
    working tree (asv needs a commit to file results under)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as scratch:
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
        asv = [sys.executable, "-m", "asv"]
        subprocess.run(
            [*asv, "machine", "--machine", "gpu-check", "--yes"],
            cwd=repo,
            env=env,
            check=True,
            capture_output=True,
        )
        for method in launch_methods:
            begun = time.perf_counter()
            done = subprocess.run(
                [
                    *asv,
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
            rows.append(
                {
                    "launch_method": method,
                    "exit": done.returncode,
                    "seconds": time.perf_counter() - begun,
                    "values": values,
                    "cuda_error_in_log": "CUDA" in log and "error" in log.lower(),
                    "passed": done.returncode == 0
                    and len(values) == len(selection)
                    and all(isinstance(v, float) and math.isfinite(v) for v in values.values()),
                    "log_tail": log[-1500:],
                }
            )
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


def report(results: dict) -> str:
    lines = [f"GPU: {results['gpu']}  torch {results['torch']}  CUDA {results['cuda']}"]
    for name, check in results["checks"].items():
        lines.append(f"\n[{'PASS' if check.get('passed') else 'FAIL'}] {name}")
        for key, value in check.items():
            if key == "rows":
                for row in value:
                    shown = {k: v for k, v in row.items() if k != "log_tail"}
                    lines.append("    " + json.dumps(shown, default=str))
            elif key != "passed":
                lines.append(f"    {key}: {value}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the reports")
    parser.add_argument("--skip-asv", action="store_true", help="leave out check 4")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA device here", file=sys.stderr)
        return 2
    checks = {
        "sync matters": check_sync_matters,
        "agreement": check_agreement,
        "sync cost": check_sync_cost,
        "memory": check_memory,
    }
    if not args.skip_asv:
        checks["asv on the GPU"] = check_asv
    results = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "checks": {},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    for name, check in checks.items():
        begun = time.perf_counter()
        try:
            results["checks"][name] = check()
        except Exception as error:  # one broken check must not hide the others' figures
            results["checks"][name] = {"passed": False, "error": f"{type(error).__name__}: {error}"}
        results["checks"][name]["seconds"] = round(time.perf_counter() - begun, 1)
        (args.out / "gpu_check.json").write_text(json.dumps(results, indent=1, default=str))
        print(f"gpu_check: {name} done", flush=True)
    text = report(results)
    (args.out / "gpu_check.txt").write_text(text)
    print(text)
    return 0 if all(check["passed"] for check in results["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
