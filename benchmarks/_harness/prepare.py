"""Preparation, one linear function: resolve the variant, build seeded inputs on the
device, warm up; every reason a case cannot run here becomes asv's skip saying why.

It relies only on the public names tensorops has had since its first commit (``Case``,
``get_variant``, ``VariantUnavailable``, ``UnsupportedCase``): asv runs today's
benchmarks against old commits of the library.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

import tensorops

from .cold import copies_needed, copy_inputs, in_turn, input_bytes
from .controls import Controls
from .devices import Device, get_device, is_out_of_memory
from .warmup import WarmedUp, warm_up

# The seed of every timed case's inputs.
SEED = 0


@dataclass(frozen=True)
class Prepared:
    """A case ready to time: its zero-argument call, its device, and its warm-up's calls
    and last call's seconds."""

    case: Any
    call: Callable[[], Any]
    device: Device
    warm_up_calls: int
    call_seconds: float


def _tensorops_api() -> tuple[type, Callable]:
    try:
        return tensorops.Case, tensorops.get_variant
    except AttributeError as missing:
        raise NotImplementedError(
            f"this tensorops commit predates the op/variant API ({missing})"
        ) from None


def looked_up(op: str, variant: str, shape, dtype: str, target: Device, layout: str, seed: int):
    """The variant and the case; a skip where this commit lacks either. Only the lookup: an
    IndexError or KeyError the op's own call raises later is a failure, or a change that
    breaks an op would read n/a and pass the gate."""
    case_type, get_variant = _tensorops_api()
    try:
        chosen = get_variant(op, variant)
        case = case_type(
            op, shape, dtype=dtype, device=target.tensor_device, layout=layout, seed=seed
        )
    except LookupError as missing:
        raise NotImplementedError(f"not available at this commit: {missing}") from None
    except NotImplementedError as unsupported:
        raise NotImplementedError(f"unsupported here: {unsupported}") from None
    return chosen, case


def prepare(
    op: str,
    variant: str,
    *,
    device: str,
    shape: tuple[int, ...],
    dtype: str = "float32",
    layout: str = "contiguous",
    seed: int = SEED,
    backward: bool = False,
    warm_up_calls: int | None = None,
    cold: bool = False,
) -> Prepared:
    """Resolve ``op``/``variant``, build seeded inputs on ``device`` and warm up
    (:func:`bound_call`; ``warm_up_calls`` fixes the warm-up's length, which an instruction
    count must not take from how long calls took). Every reason the case cannot run here
    (no such device, an op or variant missing at this commit, a dtype or layout it does not
    support, device out of memory) becomes asv's skip, a NotImplementedError saying why;
    anything else the op raises is a failure.
    """
    target = get_device(device)
    chosen, case = looked_up(op, variant, shape, dtype, target, layout, seed)
    out_of_memory = False
    try:
        call = bound_call(chosen, case, target, seed, backward, cold)
        if warm_up_calls is None:
            warmed = warm_up(call, target.synchronize)
        else:
            # A count's warm-up runs nothing between its calls (no clock, no page-fault
            # read), so the counted calls start from the same state every run.
            for _ in range(warm_up_calls):
                call()
            warmed = WarmedUp(warm_up_calls, math.nan)
    except NotImplementedError as unsupported:
        raise NotImplementedError(f"unsupported here: {unsupported}") from None
    except Exception as error:
        if not is_out_of_memory(error):
            raise
        out_of_memory = True
    if out_of_memory:
        # Released only now: inside the except block the traceback's frames still hold
        # the tensors that were allocated before the failure.
        target.release_memory()
        raise NotImplementedError(f"out of memory on {device} for {op}/{variant} {shape} {dtype}")
    return Prepared(case, call, target, *warmed)


def bound_call(chosen, case, target: Device, seed: int, backward: bool, cold: bool) -> Callable:
    """The case's zero-argument call on its seeded inputs: with ``backward`` a training
    step's forward and backward (:func:`with_backward`); with ``cold``, over copies of the
    inputs taken in turn, enough that none is found in the device's last-level cache
    (:mod:`.cold`)."""
    inputs = case.inputs()
    copies = [inputs]
    if cold:
        needed = copies_needed(target.last_level_cache_bytes(), input_bytes(inputs))
        copies += [copy_inputs(inputs, case.inputs) for _ in range(needed - 1)]
    return in_turn(
        [with_backward(chosen.bind, c, seed) if backward else chosen.bind(c) for c in copies]
    )


@functools.lru_cache(maxsize=1)
def prepare_once(
    op: str,
    variant: str,
    spec: tuple[tuple[str, Any], ...],
    controls: Controls,
    backward: bool,
    cold: bool = False,
) -> Prepared:
    """:func:`prepare`, keeping the last case per process: asv_runner 0.2.5 re-runs
    setup before every sample, and repeated setups of one case then reuse its inputs and
    skip the warm-up. ``controls`` is part of the key: the same case under other
    controls is another case."""
    return prepare(op, variant, backward=backward, cold=cold, **dict(spec))


def with_backward(bind: Callable, inputs: tuple, seed: int) -> Callable[[], None]:
    """A training step of the op: its floating-point inputs require grad, each call runs
    the forward and a backward from a fixed seeded gradient, and every input's grad is
    cleared (set to None) before the call, so grads never accumulate across calls."""
    trainable = [
        t.requires_grad_() for t in inputs if isinstance(t, torch.Tensor) and t.is_floating_point()
    ]
    forward = bind(inputs)
    with torch.no_grad():
        output = forward()
    generator = torch.Generator().manual_seed(seed + 1)
    gradient = torch.randn(output.shape, generator=generator).to(output.device, output.dtype)

    def step() -> None:
        for tensor in trainable:
            tensor.grad = None
        forward().backward(gradient)

    return step
