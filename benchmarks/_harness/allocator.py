"""The host allocator as a controlled variable.

glibc's malloc serves a block at or above its mmap threshold with fresh pages from the
kernel, and each first touch of those pages is a page fault: on the 2-core CI VM about
1.5 µs per 4 KiB page, so a (32, 512, 768) float32 intermediate costs some 18 ms of faults
on every call. The threshold is dynamic: it rises to the size of a freed mapped block, up
to 32 MiB. So a bfloat16 intermediate (24 MiB) moves from fresh pages to reused heap after
a few calls, at a point that differs between processes, and a process whose timed calls
begin before the move runs at a third of its speed (40 ms against 12 ms for silu's
manual form); a float32 one (48 MiB, above the cap) faults on every call
(docs/measurement.md, "Slow processes").

So before any tensor exists the harness tells malloc never to map blocks and never to
return freed memory to the kernel: after the warm-up, which runs until two calls in a row
make no page fault (warmup.py), every timed call reuses memory it already touched.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource

# mallopt parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
# Freed memory kept, at most: a C int, so below 2 GiB.
RETAINED_BYTES = 2**30
# "glibc" leaves malloc as the platform has it (tools/studies/process_noise.py compares).
ALLOCATOR_ENV = "TENSOROPS_ALLOCATOR"


def keep_freed_memory() -> bool:
    """Set malloc never to map blocks and never to trim its heap; False where the C
    library is not glibc (the setting is then what the platform does)."""
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


ALLOCATOR_FIXED = os.environ.get(ALLOCATOR_ENV, "fixed") != "glibc" and keep_freed_memory()
