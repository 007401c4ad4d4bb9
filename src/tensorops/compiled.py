"""Compiled variants: an eager variant's function through ``torch.compile`` (inductor).

Compilation is lazy. ``torch.compile`` is called at the variant's first call, so importing
tensorops imports neither dynamo nor inductor, and that first call pays for compiling:
the benchmark harness's warm-up. ``fullgraph=True`` makes a graph break an error instead
of a silent fall-back to eager code, and ``dynamic=False`` compiles for the exact shapes
and dtypes of the call, as a model with fixed shapes would be compiled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ._registry import variant

COMPILED = "compiled"


def register_compiled_variant(
    op: str, eager: Callable[..., torch.Tensor], prepare: Callable[..., tuple] | None = None
) -> None:
    """Register variant ``compiled`` of ``op``: ``eager`` through torch.compile."""
    compiled: list[Callable[..., torch.Tensor]] = []

    def run(*args: Any) -> torch.Tensor:
        if not compiled:
            compiled.append(torch.compile(eager, fullgraph=True, dynamic=False))
        return compiled[0](*args)

    summary = (eager.__doc__ or eager.__name__).strip().splitlines()[0]
    run.__doc__ = f"torch.compile (inductor) of: {summary}"
    options = {"prepare": prepare} if prepare is not None else {}
    variant(op, COMPILED, **options)(run)
