"""Why is one benchmark process slower than another? Per process, what could differ.

    python -m tools.studies.process_noise [--servers 4] [--processes 2] [--calls 15]
        [--case OP/VARIANT/DTYPE ...] [--malloc NAME ...] [--warm-inputs] [--out FILE]

asv runs a benchmark's processes by forking them from one server that imported the suite,
and a process inherits that server's heap. So here each case runs in ``--servers``
servers (each imports torch and the harness, as asv's forkserver does), each forking
``--processes`` measuring processes, the servers taking turns: processes of different
servers run seconds apart, so what follows the server shows apart from what follows the
hour. That is done once per allocator (``--malloc``): ``jemalloc`` (the harness's,
preloaded as tools.common starts asv), ``fixed`` (glibc's malloc never mapping nor
trimming: the setting before jemalloc), ``glibc`` (as the platform has it) and
``tcmalloc`` (for comparison; it needs libtcmalloc-minimal4).

In each process the harness prepares the case (inputs, warm-up) and times ``--calls``
calls; recorded per process: the median call, the minor page faults per timed call
(``getrusage``), how many distinct output blocks the timed calls wrote, the resident
memory, huge pages (``AnonHugePages``), the CPU it ran on, the ISA torch's kernels were
picked for, and a reference measured right after in the same process: a 64 MiB copy in
GB/s. A row whose class takes its inputs cold (``cold_inputs``) takes them cold here too,
unless ``--warm-inputs``. What its tables showed is in
docs/explanation/measurement.md, "The allocator".
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._names import ALLOCATOR_ENV
from tools._lib.asv.run import allocator_environment
from tools._lib.asv.suites import REPO_ROOT
from tools._lib.base.cli import ArgumentParser, BadInput, ExternalFailure, run_main

# The rows whose processes spread most before jemalloc and the cold inputs
# (docs/explanation/measurement.md, "The allocator").
DEFAULT_CASES = [
    "zeros/on_device/float32",
    "zeros/host_then_to/float32",
    "gather/gather/float32",
    "gather/take_along_dim/float32",
    "gather/flat_take/float32",
    "scatter_add/index_put_accumulate/float32",
    "batch_norm/functional/float32",
    "batch_norm/manual/float32",
    "group_norm/functional/float32",
    "layer_norm/functional/float32",
    "rms_norm/manual/float32",
]
REFERENCE_BYTES = 64 * 2**20

# A server: imports torch and the harness, then forks one measuring process per line on
# its stdin and prints that process's record. asv_runner's server forks the same way.
WORKER = """
import ctypes, json, os, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import torch
import benchmarks._harness
from benchmarks._harness import allocator
from benchmarks._harness.controls import controlled, controls_from_env
from benchmarks._harness.prepare import prepare

def reference_gbps(nbytes):
    source = torch.ones(nbytes // 4)
    target = torch.empty_like(source)
    times = []
    for _ in range(7):
        begun = time.perf_counter()
        target.copy_(source)
        times.append(time.perf_counter() - begun)
    return 2 * nbytes / statistics.median(times[2:]) / 1e9

def measure(op, variant, dtype, backward, calls, cold):
    with controlled(controls_from_env()):
        prepared = prepare(op, variant, device="cpu", shape=tuple(json.loads(sys.argv[3])),
                           dtype=dtype, backward=backward, cold=cold)
        faults, times, blocks = allocator.page_faults(), [], set()
        for _ in range(calls):
            begun = time.perf_counter()
            out = prepared.call()
            times.append(time.perf_counter() - begun)
            if isinstance(out, torch.Tensor):
                blocks.add(out.untyped_storage().data_ptr() >> 12)
            del out
        faults = (allocator.page_faults() - faults) / calls
        reference = reference_gbps(int(sys.argv[6]))
    huge = sum(int(line.split()[1]) for line in open("/proc/self/smaps_rollup")
               if line.startswith("AnonHugePages"))
    resident = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return {"ms": statistics.median(times) * 1e3, "faults": faults,
            "blocks": len(blocks) or None, "resident_mib": resident / 2**20,
            "huge_kib": huge, "cpu": int(open("/proc/self/stat").read().split()[38]),
            "isa": torch.backends.cpu.get_cpu_capability(), "malloc": allocator.IN_USE,
            "warm_up_calls": prepared.warm_up_calls, "reference_gbps": reference}

op, variant, dtype = sys.argv[2].split("/")
for _ in sys.stdin:
    readable, writable = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(readable)
        record = measure(op, variant, dtype, sys.argv[5] == "1", int(sys.argv[4]),
                         sys.argv[7] == "1")
        os.write(writable, json.dumps(record).encode())
        os._exit(0)
    os.close(writable)
    with os.fdopen(readable, "rb") as pipe:
        record = pipe.read()
    os.waitpid(child, 0)
    if not record:  # a child that died wrote nothing: say so instead of a blank line
        sys.exit("the measuring process exited without a record")
    print(record.decode(), flush=True)
"""
MALLOCS = ("jemalloc", "fixed", "glibc", "tcmalloc")
TCMALLOC_LIBRARY = "libtcmalloc_minimal.so.4"


def nightly_row(case: str):
    """The default suite's CPU time row of ``OP/VARIANT/DTYPE`` (its first shape)."""
    from tools.studies.plants import time_rows

    try:
        op, variant, dtype = case.split("/")
    except ValueError:
        raise BadInput(f"{case!r}: a case is OP/VARIANT/DTYPE") from None
    for row in time_rows():
        if (row.op, row.variant, row.spec["dtype"]) == (op, variant, dtype):
            return row
    raise BadInput(f"{case!r}: no CPU time row of the default suite measures it")


def malloc_environment(malloc: str) -> dict:
    """The environment a server of ``malloc`` starts in."""
    if malloc == "tcmalloc":
        import ctypes.util

        if ctypes.util.find_library("tcmalloc_minimal") is None:
            raise BadInput("--malloc tcmalloc: not installed (apt install libtcmalloc-minimal4)")
        # Freed spans kept, never released to the kernel: as the harness's jemalloc.
        preload = {"LD_PRELOAD": TCMALLOC_LIBRARY, "TCMALLOC_RELEASE_RATE": "0"}
        return {**os.environ, ALLOCATOR_ENV: "fixed", **preload}
    return allocator_environment({**os.environ, ALLOCATOR_ENV: malloc})


def processes(
    case: str, malloc: str, servers: int, count: int, calls: int, warm: bool = False
) -> list[dict]:
    """``count`` processes from each of ``servers`` servers, the servers taking turns;
    the inputs cold where the row takes them cold, unless ``warm``."""
    row = nightly_row(case)
    env = {**malloc_environment(malloc), "TENSOROPS_THREADS": "1", "PYTHONPATH": str(REPO_ROOT)}
    arguments = [case, json.dumps(row.spec["shape"]), str(calls)]
    arguments += ["1" if row.backward else "0", str(REFERENCE_BYTES)]
    arguments += ["1" if row.cold and not warm else "0"]
    measured = []
    with tempfile.TemporaryDirectory(prefix="process-noise-") as scratch:
        worker = Path(scratch) / "process_noise_worker.py"
        worker.write_text(WORKER)
        started = [
            subprocess.Popen(
                [sys.executable, str(worker), str(REPO_ROOT), *arguments],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for _ in range(servers)
        ]
        try:
            for _ in range(count):
                for index, server in enumerate(started):
                    measured.append({"server": index, **ask(server, case)})
        finally:
            for server in started:
                server.kill()
                server.wait()
    return measured


def ask(server: subprocess.Popen, case: str) -> dict:
    server.stdin.write("measure\n")
    server.stdin.flush()
    line = server.stdout.readline()
    if not line:
        server.wait()
        raise ExternalFailure(f"{case}: {server.stderr.read().strip()[-300:]}")
    return json.loads(line)


def by_server(measured: list[dict], key: str, form: str) -> str:
    """``key`` of each process, a server's processes together, servers apart by " / "."""
    servers = sorted({p["server"] for p in measured})
    return " / ".join(
        ", ".join(form.format(p[key]) for p in measured if p["server"] == server)
        for server in servers
    )


def table(rows: list[tuple[str, str, list[dict]]]) -> str:
    lines = [
        "| case | malloc | ms per call, each process (servers apart by /) | median "
        "| slowest / fastest | output blocks per process | page faults per timed call "
        "| resident MiB | huge pages KiB | CPUs | ISA | reference copy GB/s |",
        "|---|---|---|---:|---:|---|---|---:|---:|---|---|---|",
    ]
    for case, malloc, measured in rows:
        times = [p["ms"] for p in measured]
        references = [p["reference_gbps"] for p in measured]
        lines.append(
            f"| {case} | {malloc} | {by_server(measured, 'ms', '{:.1f}')} "
            f"| {statistics.median(times):.1f} | {max(times) / min(times):.2f} "
            f"| {by_server(measured, 'blocks', '{}')} "
            f"| {by_server(measured, 'faults', '{:.0f}')} "
            f"| {statistics.median(p['resident_mib'] for p in measured):.0f} "
            f"| {max(p['huge_kib'] for p in measured)} "
            f"| {','.join(sorted({str(p['cpu']) for p in measured}))} "
            f"| {','.join(sorted({p['isa'] for p in measured}))} "
            f"| {min(references):.1f} to {max(references):.1f} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=4, help="servers per case and malloc")
    parser.add_argument("--processes", type=int, default=2, help="processes per server")
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--case", action="append", help="OP/VARIANT/DTYPE (default: eleven)")
    parser.add_argument(
        "--malloc", action="append", choices=MALLOCS, help="default: jemalloc, fixed, glibc"
    )
    parser.add_argument(
        "--warm-inputs",
        action="store_true",
        help="inputs where the last call left them, also in the rows that take them cold",
    )
    parser.add_argument("--out", type=Path, help="write every process's record as JSON")
    args = parser.parse_args()
    if min(args.servers, args.processes, args.calls) < 1:
        raise BadInput("--servers, --processes and --calls must be at least 1")
    cases = args.case or DEFAULT_CASES
    for case in cases:
        nightly_row(case)  # every case's bad input before the first measurement
    rows = [
        (
            case,
            malloc,
            processes(case, malloc, args.servers, args.processes, args.calls, args.warm_inputs),
        )
        for case in cases
        for malloc in args.malloc or MALLOCS[:3]
    ]
    print(table(rows))
    if args.out:
        args.out.write_text(
            json.dumps([{"case": c, "malloc": m, "processes": p} for c, m, p in rows], indent=1)
        )
    return 0


if __name__ == "__main__":
    run_main("process_noise", main)
