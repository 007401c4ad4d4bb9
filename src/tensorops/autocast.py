"""Autocast variants: the same op run under ``torch.autocast`` from float32 inputs.

Autocast casts the inputs of eligible ops (matmul, linear, conv) to a lower
precision inside the region. Its output dtype is the autocast dtype, so the
equality check applies that dtype's tolerance against the float64 reference.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ._registry import UnsupportedCase, variant

AUTOCAST_DTYPES = {"autocast_bf16": torch.bfloat16, "autocast_fp16": torch.float16}


def _require_float32(*inputs: object) -> tuple[object, ...]:
    for value in inputs:
        if isinstance(value, torch.Tensor) and value.dtype != torch.float32:
            # float64 is what the equality check feeds the reference, never a variant.
            raise UnsupportedCase(f"autocast starts from float32 inputs, not {value.dtype}")
    return inputs


def register_autocast_variants(op: str, compute: Callable[..., torch.Tensor]) -> None:
    """Register ``autocast_bf16`` and ``autocast_fp16`` variants of ``op`` around ``compute``."""
    for name, dtype in AUTOCAST_DTYPES.items():

        def run(*args: torch.Tensor, _dtype: torch.dtype = dtype) -> torch.Tensor:
            with torch.autocast(args[0].device.type, dtype=_dtype):
                return compute(*args)

        run.__doc__ = f"{op} under torch.autocast({dtype}) from float32 inputs."
        variant(op, name, prepare=_require_float32, output_dtype=dtype)(run)
