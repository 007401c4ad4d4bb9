"""Cold inputs: a case's inputs in several copies, taken in turn by its calls, so that no
call finds its inputs where the calls before it left them, in the last-level cache.

Why: a random-access op over inputs about the size of the share of a last-level cache a
machine gets (a gather from 48 MiB, an embedding table of 147 MiB, on a 2-core VM with a
480 MiB L3 shared with its neighbours) reads partly from the cache and partly from
memory, and how much of each differs from process to process. Over eight processes
(``python -m tools.studies.process_noise --malloc jemalloc --case ...``, with and
without ``--warm-inputs``), ``gather`` flat_take took 4.6 to 9.6 ms with its inputs
warm and 10.1 to 12.3 ms cold, ``scatter_add`` index_put_accumulate 6.5 to 11.5 and
14.9 to 16.4 ms (docs/explanation/measurement.md, "Cold inputs").
Taking the copies in turn costs the timed call nothing; triton's ``do_bench`` gets the
same by writing over the cache between calls, which asv cannot keep out of the time it
measures.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

# The copies together span twice the last-level cache: with the copies taken in a cycle,
# a least-recently-used cache then holds none of the next call's inputs, and a cache that
# keeps some lines longer than that holds little.
CACHE_SPANS = 2
# At most this much memory for the copies of one case, however large the cache, and at
# most this many copies: inputs so small that more would be needed gain nothing from
# being cold (a call over them is over before the cache matters).
MAX_COPIES_BYTES = 2 * 2**30
MAX_COPIES = 64


def input_bytes(inputs: Sequence[Any]) -> int:
    """The bytes of the tensors among ``inputs``."""
    return sum(t.nbytes for t in inputs if isinstance(t, torch.Tensor))


def copies_needed(cache_bytes: int, case_bytes: int) -> int:
    """How many copies of ``case_bytes`` of inputs span ``CACHE_SPANS`` caches of
    ``cache_bytes``: at least two, at most ``MAX_COPIES`` and what ``MAX_COPIES_BYTES``
    holds."""
    if case_bytes <= 0:
        return 1
    wanted = math.ceil(CACHE_SPANS * cache_bytes / case_bytes)
    return max(2, min(wanted, MAX_COPIES, MAX_COPIES_BYTES // case_bytes))


def copy_inputs(inputs: tuple, make_again: Callable[[], tuple]) -> tuple:
    """A copy of ``inputs`` in new memory: each tensor cloned, or, where a clone would not
    keep a tensor's strides or its pinning, the inputs made again (they are seeded, so
    equal)."""
    copied = tuple(t.clone() if isinstance(t, torch.Tensor) else t for t in inputs)
    kept = all(
        c.stride() == t.stride() and c.is_pinned() == t.is_pinned()
        for c, t in zip(copied, inputs, strict=True)
        if isinstance(t, torch.Tensor)
    )
    return copied if kept else make_again()


def in_turn(calls: Sequence[Callable[[], Any]]) -> Callable[[], Any]:
    """One call that runs ``calls`` one after another, a call each time, in a cycle."""
    if len(calls) == 1:
        return calls[0]
    turns = itertools.cycle(calls)

    def call_next() -> Any:
        return next(turns)()

    return call_next
