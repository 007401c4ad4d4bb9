"""Why is one benchmark process slower than another? Per process, what could differ.

    python -m tools.studies.process_noise [--processes 8] [--calls 15] [--case OP/VARIANT/DTYPE ...]
        [--out FILE]

Each case is run in ``--processes`` fresh processes forked from one server that imported
torch and the harness first, as asv's forkserver does, once with glibc's malloc as the
platform has it (``TENSOROPS_ALLOCATOR=glibc``) and once with the harness's setting (the
default). In each process the harness prepares the case (inputs, warm-up) and times
``--calls`` calls; recorded per process: the median call, the minor page faults per timed
call (``getrusage``), the bytes malloc holds in mapped blocks and on its heap
(``mallinfo2``), huge pages (``AnonHugePages``), the CPU it ran on and the ISA torch's
kernels were picked for. The table it prints is docs/measurement.md's "Slow processes".
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.common import REPO_ROOT, ArgumentParser, BadInput, ExternalFailure, run_main

# The rows whose no-op ratios were widest: the memory-bound bfloat16 rows of the NLP shape
# (docs/measurement.md, "Choosing the factor"), the three the detection runs missed and the
# widest of the first no-op comparison of the pr tier (rms_norm, 1.53).
DEFAULT_CASES = [
    "silu/manual/bfloat16",
    "gelu/manual_erf/bfloat16",
    "softmax/manual/bfloat16",
    "layer_norm/manual/float32",
    "logsumexp/functional/float32",
    "scatter_add/index_put_accumulate/float32",
    "gather/flat_take/float32",
    "rms_norm/manual/float32",
]
REFERENCE_BYTES = 64 * 2**20

# One process per case, forked from a server that has imported torch and the harness. It
# runs from a file: the forkserver's children import the target function from the main
# module by name, which `python -c` has none of.
WORKER = """
import ctypes, json, multiprocessing as mp, resource, statistics, sys, time
from queue import Empty
sys.path.insert(0, sys.argv[1])

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks",
                "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

def reference_gbps(nbytes):
    import torch
    source = torch.ones(nbytes // 4)
    target = torch.empty_like(source)
    times = []
    for _ in range(7):
        begun = time.perf_counter()
        target.copy_(source)
        times.append(time.perf_counter() - begun)
    return 2 * nbytes / statistics.median(times[2:]) / 1e9

def measure(op, variant, dtype, backward, calls, queue):
    import torch
    from benchmarks._harness import allocator
    from benchmarks._harness.controls import controlled, controls_from_env
    from benchmarks._harness.prepare import prepare
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = Mallinfo2
    with controlled(controls_from_env()):
        prepared = prepare(op, variant, device="cpu", shape=tuple(json.loads(sys.argv[3])),
                           dtype=dtype, backward=backward)
        faults, times = allocator.page_faults(), []
        for _ in range(calls):
            begun = time.perf_counter()
            prepared.call()
            times.append(time.perf_counter() - begun)
        faults = (allocator.page_faults() - faults) / calls
        reference = reference_gbps(int(sys.argv[7]))
    info = libc.mallinfo2()
    huge = sum(int(line.split()[1]) for line in open("/proc/self/smaps_rollup")
               if line.startswith("AnonHugePages"))
    queue.put({"ms": statistics.median(times) * 1e3, "faults": faults,
               "mapped_mib": info.hblkhd / 2**20, "heap_mib": info.arena / 2**20,
               "huge_kib": huge, "cpu": int(open("/proc/self/stat").read().split()[38]),
               "isa": torch.backends.cpu.get_cpu_capability(),
               "warm_up_calls": prepared.warm_up_calls, "reference_gbps": reference})

if __name__ == "__main__":
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(["torch", "benchmarks._harness"])
    op, variant, dtype = sys.argv[2].split("/")
    for _ in range(int(sys.argv[4])):
        queue = context.Queue()
        child = context.Process(
            target=measure,
            args=(op, variant, dtype, sys.argv[6] == "1", int(sys.argv[5]), queue),
        )
        child.start()
        while True:  # a child that died puts nothing: say so instead of waiting forever
            try:
                print(json.dumps(queue.get(timeout=5)), flush=True)
                break
            except Empty:
                if not child.is_alive():
                    sys.exit(f"the measuring process exited {child.exitcode} without a record")
        child.join()
"""


def nightly_row(case: str):
    """The default suite's CPU time row of ``OP/VARIANT/DTYPE`` (its first shape)."""
    from tools.studies.detection_power import time_rows

    try:
        op, variant, dtype = case.split("/")
    except ValueError:
        raise BadInput(f"{case!r}: a case is OP/VARIANT/DTYPE") from None
    for row in time_rows():
        if (row.op, row.variant, row.spec["dtype"]) == (op, variant, dtype):
            return row
    raise BadInput(f"{case!r}: no CPU time row of the default suite measures it")


def processes(case: str, allocator: str, count: int, calls: int) -> list[dict]:
    row = nightly_row(case)
    env = {
        **os.environ,
        "TENSOROPS_ALLOCATOR": allocator,
        "TENSOROPS_THREADS": "1",
        "PYTHONPATH": str(REPO_ROOT),
    }
    with tempfile.TemporaryDirectory(prefix="process-noise-") as scratch:
        worker = Path(scratch) / "process_noise_worker.py"
        worker.write_text(WORKER)
        return run_worker(worker, case, row, env, count, calls)


def run_worker(worker: Path, case: str, row, env: dict, count: int, calls: int) -> list[dict]:
    done = subprocess.run(
        [
            sys.executable,
            str(worker),
            str(REPO_ROOT),
            case,
            json.dumps(row.spec["shape"]),
            str(count),
            str(calls),
            "1" if row.backward else "0",
            str(REFERENCE_BYTES),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    if done.returncode != 0:
        raise ExternalFailure(f"{case}: {done.stderr.strip()[-300:]}")
    return [json.loads(line) for line in done.stdout.splitlines()]


def table(rows: list[tuple[str, str, list[dict]]]) -> str:
    lines = [
        "| case | malloc | ms per call, each process | median | page faults per timed call "
        "| mapped MiB | heap MiB | huge pages KiB | CPUs | ISA | reference copy GB/s, each |",
        "|---|---|---|---:|---|---:|---:|---:|---|---|---|",
    ]
    for case, allocator, measured in rows:
        times = [p["ms"] for p in measured]
        each = ", ".join(f"{t:.1f}" for t in times)
        faults = ", ".join(str(round(p["faults"])) for p in measured)
        references = ", ".join(f"{p['reference_gbps']:.1f}" for p in measured)
        lines.append(
            f"| {case} | {allocator} | {each} | {statistics.median(times):.1f} | {faults} "
            f"| {statistics.median(p['mapped_mib'] for p in measured):.0f} "
            f"| {statistics.median(p['heap_mib'] for p in measured):.0f} "
            f"| {max(p['huge_kib'] for p in measured)} "
            f"| {','.join(sorted({str(p['cpu']) for p in measured}))} "
            f"| {','.join(sorted({p['isa'] for p in measured}))} "
            f"| {references} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--case", action="append", help="OP/VARIANT/DTYPE (default: five)")
    parser.add_argument("--out", type=Path, help="write every process's record as JSON")
    args = parser.parse_args()
    if args.processes < 1 or args.calls < 1:
        raise BadInput("--processes and --calls must be at least 1")
    rows = [
        (case, allocator, processes(case, allocator, args.processes, args.calls))
        for case in args.case or DEFAULT_CASES
        for allocator in ("glibc", "fixed")
    ]
    print(table(rows))
    if args.out:
        args.out.write_text(
            json.dumps([{"case": c, "malloc": a, "processes": p} for c, a, p in rows], indent=1)
        )
    return 0


if __name__ == "__main__":
    run_main("process_noise", main)
