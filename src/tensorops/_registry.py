"""The op/variant registry: how a caller asks for "op X, variant Y".

An *op* is one mathematical function (say, a matrix product). A *variant* is one
way of computing it (``torch.mm``, ``torch.einsum``...). Every op names one
reference variant; every other variant must agree with it within the tolerance
of the output dtype (see :mod:`tensorops.cases`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

Inputs = tuple[Any, ...]


class VariantUnavailable(LookupError):
    """The op or variant does not exist in this version of tensorops.

    A LookupError, so callers built against a newer tensorops (the benchmarks,
    run by asv against old commits) can treat it as "not available there".
    """


class UnsupportedCase(NotImplementedError):
    """The variant exists but cannot run this case (device, dtype or layout)."""


@dataclass(frozen=True)
class Variant:
    """One implementation strategy of an op.

    ``fn(*args)`` is the call a benchmark times. ``prepare(*inputs)`` runs once,
    untimed, and turns the op's inputs into ``args`` (for example, wraps weights
    in an ``nn.Module``), so construction cost never leaks into the timing.
    """

    op: str
    name: str
    fn: Callable[..., Any]
    prepare: Callable[..., Inputs] | None = None
    # Absolute error allowed on top of the dtype tolerance, for variants that are
    # approximations by design (gelu's tanh form); relative to max |reference|.
    approximation_error: float = 0.0
    # "close": equal to the reference within tolerance. "distribution": random
    # output, equal in shape, dtype, device and distribution (different RNG streams).
    equivalence: str = "close"
    # The output dtype when it differs from the inputs' (autocast); None means "the same".
    output_dtype: torch.dtype | None = None
    # An optimizer step updates its inputs (parameters, state) in place, as training does;
    # every other variant must leave its inputs as they were (tests/unit/library/test_variants.py).
    updates_inputs: bool = False

    def bind(self, inputs: Inputs) -> Callable[[], Any]:
        args = self.prepare(*inputs) if self.prepare is not None else inputs
        fn = self.fn
        return lambda: fn(*args)


@dataclass(frozen=True)
class Op:
    """An op: its input factory, its cost model and its variants.

    ``flops(case)`` is None for an op whose work is not floating-point arithmetic (a
    gather, a copy); ``bytes_moved(case)`` None means the default, every input tensor
    read once and the output written once (:attr:`tensorops.Case.bytes_moved`).
    """

    name: str
    make_inputs: Callable[..., Inputs]
    reference: str
    flops: Callable[..., int] | None = None
    bytes_moved: Callable[..., int] | None = None
    variants: dict[str, Variant] = field(default_factory=dict)


_OPS: dict[str, Op] = {}


def define_op(
    name: str,
    *,
    make_inputs: Callable[..., Inputs],
    reference: str,
    flops: Callable[..., int] | None = None,
    bytes_moved: Callable[..., int] | None = None,
) -> Op:
    """Register op ``name``: its seeded input factory, its reference variant's name, and
    optionally its FLOPs and (when they are not the inputs' and output's bytes) its
    compulsory memory traffic, each a function of the case."""
    if name in _OPS:
        raise ValueError(f"op {name!r} is defined twice")
    op = Op(name, make_inputs, reference, flops, bytes_moved, {})
    _OPS[name] = op
    return op


def variant(op: str, name: str, **options: Any) -> Callable[[Callable], Callable]:
    """Register ``fn`` as variant ``name`` of ``op``; returns ``fn`` unchanged."""

    def register(fn: Callable) -> Callable:
        variants = get_op(op).variants
        if name in variants:
            raise ValueError(f"variant {name!r} of op {op!r} is registered twice")
        variants[name] = Variant(op, name, fn, **options)
        return fn

    return register


def get_op(name: str) -> Op:
    try:
        return _OPS[name]
    except KeyError:
        raise VariantUnavailable(
            f"op {name!r} is not in this version of tensorops (it has: {', '.join(sorted(_OPS))})"
        ) from None


def get_variant(op: str, name: str) -> Variant:
    variants = get_op(op).variants
    try:
        return variants[name]
    except KeyError:
        raise VariantUnavailable(
            f"op {op!r} has no variant {name!r} in this version of tensorops "
            f"(it has: {', '.join(sorted(variants))})"
        ) from None


def op_names() -> list[str]:
    return sorted(_OPS)


def variant_names(op: str) -> list[str]:
    return sorted(get_op(op).variants)


def require_accelerator(device: torch.device, why: str) -> None:
    if device.type == "cpu":
        raise UnsupportedCase(f"{why} needs an accelerator device, not the CPU")
