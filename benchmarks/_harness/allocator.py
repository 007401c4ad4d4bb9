"""The host allocator as a controlled variable.

Which malloc serves torch's CPU tensors decides which memory a call writes, and so how
fast it runs. glibc's malloc is a best fit over its free blocks, and torch asks it for
64-byte-aligned blocks, which splits off small fragments. In some processes two free
blocks of an output's size then take turns: call N writes block A, call N+1 block B,
call N+2 block A again. A call then streams over twice the memory, out of the cache, and
a (32, 512, 768) float32 `zeros` takes 4 to 5.5 ms instead of 1.8. Which processes do so
is decided by the heap they start from: every process forked from one asv server does the
same, so a whole asv run is fast or slow (docs/explanation/measurement.md, "The allocator").

jemalloc hands a freed block of a size class back to the next request of that class, in
every process: one block, always (tcmalloc does the same; jemalloc is the allocator
PyTorch's CPU tuning guide names first). It must be loaded before the process starts
(``LD_PRELOAD``), which asv cannot do for its benchmark processes, so the tools that
launch asv do it (``tools.common.allocator_environment``), and tell it never to give
freed memory back (``MALLOC_CONF``), so a timed call never faults on pages it touched
before. Here a benchmark process only finds out what it runs on, and falls back to fixed
settings of glibc's malloc when jemalloc is not there.

``TENSOROPS_ALLOCATOR`` picks the allocator: ``jemalloc`` (the default), ``fixed``
(glibc's malloc, never mapping blocks nor trimming its heap: the setting before
jemalloc, and the fallback of a benchmark process started without jemalloc) or ``glibc``
(as the platform has it; ``tools/studies/process_noise.py`` compares all of them).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import sys
from collections.abc import Mapping

from .._names import ALLOCATOR_ENV, ALLOCATORS, DEFAULT_ALLOCATOR

# glibc's mallopt parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
# Freed memory kept, at most: a C int, so below 2 GiB.
RETAINED_BYTES = 2**30


def without_preload(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` less the preloaded jemalloc, asking for glibc's malloc with fixed
    settings: the instruction counts run on the malloc their history was counted on."""
    env = {k: v for k, v in environ.items() if k != "MALLOC_CONF"}
    others = [p for p in env.pop("LD_PRELOAD", "").split() if "jemalloc" not in p]
    if others:
        env["LD_PRELOAD"] = " ".join(others)
    if env.get(ALLOCATOR_ENV) != "glibc":
        env[ALLOCATOR_ENV] = "fixed"
    return env


def jemalloc_loaded() -> bool:
    # jemalloc's own entry point, found only where it serves this process's malloc.
    return hasattr(ctypes.CDLL(None), "mallctl")


def keep_freed_memory() -> bool:
    """Set glibc's malloc never to map blocks and never to trim its heap; False where the
    C library is not glibc (the setting is then what the platform does)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, RETAINED_BYTES))


def page_faults() -> int:
    """Minor page faults of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def settle() -> str:
    """The allocator this process runs on, fixed at import before any tensor exists."""
    choice = os.environ.get(ALLOCATOR_ENV, DEFAULT_ALLOCATOR)
    if choice not in ALLOCATORS:  # the launching tools refuse it before any process
        choice = DEFAULT_ALLOCATOR
    if jemalloc_loaded():
        return "jemalloc"
    if choice == "jemalloc" and "ASV_COMMIT" in os.environ:
        # A benchmark process asv was started for without the tools (plain `asv run`).
        print(
            "tensorops: jemalloc is not preloaded (run asv through tools/dev.sh or tools.*); "
            "timing on glibc's malloc with fixed settings",
            file=sys.stderr,
        )
    if choice != "glibc" and keep_freed_memory():
        return "fixed"
    return "glibc"


IN_USE = settle()
