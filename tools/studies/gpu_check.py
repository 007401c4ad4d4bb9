"""The GPU verification: what the CPU tests can only fake, measured on a CUDA machine.

    python -m tools.studies.gpu_check --out DIR [--skip-asv]

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
import json
import math
import statistics
import sys
import time
from pathlib import Path

import torch

from tools.studies.asv_check import check_asv

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
