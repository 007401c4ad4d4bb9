"""A host with AVX-512 standing in for one without: one call of a square product in each
dtype, in a fresh process of its own, with torch's instruction sets as they are and capped
at AVX2 (docs/reference/tests.md, "A host without AVX-512"), beside what the harness calls
native in each process. A capped host is a stand-in only as far as these times say.

    python -m tools.studies.isa_cap [--size N] [--threads N] [--out FILE]

Each process warms the product up on a small case, then times one call of ``--size``
cubed; the caps are environment variables torch and its libraries read at start-up, so
each setting needs processes of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tools._lib.asv.machines import last_level_cache, this_host
from tools._lib.asv.suites import REPO_ROOT
from tools._lib.base.cli import ArgumentParser, run_main

# torch's own kernels, oneDNN (its bfloat16 and float16 products) and MKL (its float32
# products), each told to stop at AVX2.
AVX2_CAPS = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
}
DTYPES = ("float32", "bfloat16", "float16")

ONE_CALL = """
import json, sys, time, torch
from benchmarks._harness.devices import CpuDevice
size, threads, dtype = int(sys.argv[1]), int(sys.argv[2]), getattr(torch, sys.argv[3])
torch.set_num_threads(threads)
small = torch.randn(64, 64, dtype=dtype)
torch.mm(small, small)
a, b = torch.randn(size, size, dtype=dtype), torch.randn(size, size, dtype=dtype)
begun = time.perf_counter()
torch.mm(a, b)
seconds = time.perf_counter() - begun
print(json.dumps({"capability": torch.backends.cpu.get_cpu_capability(),
                  "native": sorted(CpuDevice().native_dtypes()), "seconds": seconds}))
"""


def one_call(size: int, threads: int, dtype: str, capped: bool) -> dict:
    environment = {k: v for k, v in os.environ.items() if k not in AVX2_CAPS}
    if capped:
        environment.update(AVX2_CAPS)
    done = subprocess.run(
        [sys.executable, "-c", ONE_CALL, str(size), str(threads), dtype],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def parse():
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path)
    return parser.parse_args()


def main() -> int:
    args = parse()
    found = []
    for capped in (False, True):
        for dtype in DTYPES:
            read = one_call(args.size, args.threads, dtype, capped)
            found.append({"capped": capped, "dtype": dtype, **read})
            print(json.dumps(found[-1]), flush=True)
    flags = set(Path("/proc/cpuinfo").read_text().split())
    summary = {
        "host": this_host(),
        "l3": last_level_cache(),
        "avx512_flags": sorted(f for f in flags if f.startswith("avx512")),
        "size": args.size,
        "threads": args.threads,
        "calls": found,
    }
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    run_main("isa_cap", main)
