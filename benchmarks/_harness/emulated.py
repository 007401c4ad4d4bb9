"""Rows this CPU computes through float32: a bfloat16 or float16 row without the CPU's
native arithmetic for its dtype (devices.CpuDevice.native_dtypes), whose call is large.
torch converts to float32 and back there, a large product at a minute a call (a 2048^3
bfloat16 mm on one thread of an AVX2-only EPYC: docs/reference/tests.md), so the first
look leaves them out (tools/bench.py) and the every-row test runs them smaller; the nightly
measures them as they are."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import tensorops

from .devices import LOW_PRECISION_FLAGS, CpuDevice
from .tiers import benchmark_methods, param_grid, row_label
from .tracks import DeviceTracks

# One call's work (FLOPs) past which an emulated row is left out of a first look: about a
# second at the fraction of a GFLOP/s an emulated bfloat16 product runs at.
EMULATED_MAX_FLOPS = 2**28


def emulated_here(cls: type, named: dict[str, Any], native: set[str]) -> bool:
    """Whether the row (``named``: its params) is a large call of a dtype this CPU
    computes through float32 (``native``: the dtypes it computes natively)."""
    dtype, op = named.get("dtype", "float32"), getattr(cls, "op", "")
    if named.get("device") != "cpu" or dtype not in LOW_PRECISION_FLAGS or dtype in native:
        return False
    if issubclass(cls, DeviceTracks) or not getattr(cls, "cpu_rows", True):
        return False  # its CPU rows skip before any call
    if not op or "shape" not in named:
        return False
    return (tensorops.Case(op, tuple(named["shape"]), dtype=dtype).flops or 0) > EMULATED_MAX_FLOPS


def emulated_rows(classes: Iterable[type]) -> set[str]:
    """The rows (``name(params)``) of ``classes`` that are large emulated calls here."""
    native = CpuDevice().native_dtypes()
    found = set()
    for cls in classes:
        module = cls.__module__.split(".", 1)[-1]
        params, names = param_grid(cls)
        for combination in itertools.product(*params):
            named = dict(zip(names, combination, strict=True))
            if emulated_here(cls, named, native):
                found |= {
                    row_label(f"{module}.{cls.__name__}.{method}", combination)
                    for method in benchmark_methods(cls)
                }
    return found
