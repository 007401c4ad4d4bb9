"""Controlled variables: every process-wide setting a timing depends on, fixed explicitly
and restored afterwards (torch.utils.benchmark fixes threads the same way)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import torch

from .._names import THREADS_ENV

# One thread by default, as torch.utils.benchmark does: timings then compare across
# machines with different core counts, and a shared 2-core CI runner stays quiet.
DEFAULT_THREADS = 1


@dataclass(frozen=True)
class Controls:
    """Every process-wide setting a timing depends on.

    TF32 is off: a float32 benchmark measures float32 arithmetic, and a change in
    torch's TF32 default cannot move the history. ``cudnn.benchmark`` is off so the
    convolution algorithm is chosen by fixed heuristics, not by an autotuning race
    whose winner can differ between runs and show up as a false regression.
    """

    threads: int = DEFAULT_THREADS
    allow_tf32: bool = False
    cudnn_benchmark: bool = False
    seed: int = 0


def threads_from_env(environ: Mapping[str, str] = os.environ) -> int:
    raw = environ.get(THREADS_ENV, "").strip()
    if not raw:
        return DEFAULT_THREADS
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{THREADS_ENV} must be a positive integer, got {raw!r}")
    return int(raw)


def controls_from_env(environ: Mapping[str, str] = os.environ) -> Controls:
    return Controls(threads=threads_from_env(environ))


@contextlib.contextmanager
def controlled(controls: Controls) -> Iterator[Controls]:
    """Apply ``controls`` for the duration of the block, then restore what was there."""
    saved = (
        torch.get_num_threads(),
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
        torch.backends.cudnn.benchmark,
    )
    torch.set_num_threads(controls.threads)
    torch.backends.cuda.matmul.allow_tf32 = controls.allow_tf32
    torch.backends.cudnn.allow_tf32 = controls.allow_tf32
    torch.backends.cudnn.benchmark = controls.cudnn_benchmark
    torch.manual_seed(controls.seed)
    try:
        yield controls
    finally:
        torch.set_num_threads(saved[0])
        torch.backends.cuda.matmul.allow_tf32 = saved[1]
        torch.backends.cudnn.allow_tf32 = saved[2]
        torch.backends.cudnn.benchmark = saved[3]
