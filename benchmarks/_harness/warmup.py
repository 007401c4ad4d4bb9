"""Warm-up: run a case until its lazy initialisation is paid for, before any timing."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

from .allocator import page_faults

# One quiet call is not enough: silu's bfloat16 manual form made no fault on its second
# call and 6,144 (24 MiB of fresh heap) on its fourth, the first timed one, every process:
# the free blocks' layout takes a few calls to settle (docs/explanation/
# measurement.md, "The warm-up").
QUIET_CALLS = 2


class WarmedUp(NamedTuple):
    """How a warm-up ended: its calls, and the seconds its last call took."""

    calls: int
    last_call_seconds: float


def warm_up(
    call: Callable[[], Any],
    synchronize: Callable[[], None],
    *,
    min_calls: int = 2,
    max_calls: int = 20,
    max_seconds: float = 2.0,
    settle: float = 0.10,
) -> WarmedUp:
    """Run ``call`` until lazy initialisation is paid for, bounded by count and time;
    return how many calls it took and how long the last one took.

    The first calls on a device pay for context creation, library handles
    (cuBLAS, cuDNN, oneDNN primitives) and allocator growth. Warm-up ends once the last
    ``QUIET_CALLS`` calls made no page fault (the allocator reuses memory it already
    touched, allocator.py) and a call is no longer more than ``settle`` faster than the one
    before, after at least ``min_calls`` and at most ``max_calls`` calls or ``max_seconds``.
    """
    start = time.perf_counter()
    previous = float("inf")
    duration = float("nan")  # no call made: max_calls of 0
    calls = quiet = 0
    while calls < max_calls:
        faults = page_faults()
        begun = time.perf_counter()
        call()
        synchronize()
        duration = time.perf_counter() - begun
        calls += 1
        quiet = quiet + 1 if page_faults() == faults else 0
        settled = duration >= (1.0 - settle) * previous and quiet >= QUIET_CALLS
        if calls >= min_calls and (settled or time.perf_counter() - start >= max_seconds):
            break
        previous = duration
    return WarmedUp(calls, duration)
