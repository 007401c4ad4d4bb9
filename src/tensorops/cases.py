"""Cases: a frozen description of one op invocation, its seeded inputs and its cost.

A case is everything needed to rebuild the exact same inputs on any machine:
inputs are drawn on the CPU from a generator seeded by ``seed`` and only then
moved to the target device and dtype, so a CPU run and a CUDA run of one case
see the same numbers.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from ._registry import Inputs, get_op, get_variant

DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}

# "transposed": every input of two or more dimensions drawn with its last two dimensions
# swapped, then transposed back: the same shape, not contiguous (the shape sweeps).
LAYOUTS = ("contiguous", "channels_last", "pinned", "transposed")

# (rtol, atol relative to max |reference|) for outputs of each dtype. Loose enough
# for a reduction of a few thousand terms rounded once to the output dtype, tight
# enough that a wrong transpose, a missing scale or a dropped bias fails.
TOLERANCES = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (5e-3, 2e-3),
    torch.bfloat16: (3e-2, 1e-2),
}

# Inputs built on this device have shapes and dtypes but no data: what the default
# bytes count needs, for free.
_NO_DATA = torch.device("meta")


@dataclass(frozen=True)
class Case:
    """One invocation of op ``op``: shape, dtype, device, input layout and seed.

    ``shape`` is interpreted by the op (see each op's ``make_inputs``).
    """

    op: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    device: str = "cpu"
    layout: str = "contiguous"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {sorted(DTYPES)}, not {self.dtype!r}")
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, not {self.layout!r}")
        object.__setattr__(self, "shape", tuple(int(n) for n in self.shape))

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    @property
    def torch_device(self) -> torch.device:
        return torch.device(self.device)

    def inputs(self) -> Inputs:
        return get_op(self.op).make_inputs(self)

    @property
    def flops(self) -> int | None:
        """Floating-point operations of one call, counting a multiply-add as two; None
        for an op that states none (its work is not arithmetic)."""
        formula = get_op(self.op).flops
        return None if formula is None else int(formula(self))

    @property
    def bytes_moved(self) -> int:
        """Compulsory memory traffic of one call: by default every input tensor read
        once and the output written once; an op whose traffic differs states its own."""
        formula = get_op(self.op).bytes_moved
        return int(formula(self)) if formula is not None else _inputs_and_output_bytes(self)


@functools.cache
def _inputs_and_output_bytes(case: Case) -> int:
    """The default traffic, from the shapes alone: the inputs built without data and
    the reference run on them (torch's meta tensors); an op the meta device cannot run
    is run for real once."""
    reference = get_variant(case.op, get_op(case.op).reference)
    for device in (_NO_DATA.type, case.device):
        try:
            inputs = dataclasses.replace(case, device=device).inputs()
            with torch.no_grad():
                output = reference.bind(inputs)()
        except (NotImplementedError, RuntimeError):
            if device == case.device:
                raise
            continue
        return sum(t.nbytes for t in tensors_in((*inputs, output)))
    raise AssertionError("unreachable")


def flops_per_element(count: int) -> Callable[[Case], int]:
    """An op's FLOPs formula for ``count`` operations per element of the case's shape."""
    return lambda case: count * math.prod(case.shape)


def tensors_in(value: Any) -> Iterator[torch.Tensor]:
    """Every tensor in ``value``: a tensor, or a tuple or list of values."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from tensors_in(item)


def seeded_generator(case: Case, stream: int = 0) -> torch.Generator:
    """A CPU generator for ``case``: its ``seed``, and ``stream`` for an independent
    sequence (integer indices drawn beside float inputs)."""
    return torch.Generator().manual_seed(case.seed + 1_000_003 * stream)


def random_inputs(
    case: Case, *shapes: tuple[int, ...], scale: float = 1.0, device: str | None = None
) -> list[torch.Tensor]:
    """Standard-normal tensors of ``shapes`` (times ``scale``), reproducible from ``case.seed``.

    They land on ``case.device`` unless ``device`` names another (host-side inputs).
    """
    target = torch.device(device) if device is not None else case.torch_device
    if target == _NO_DATA:
        return [torch.empty(shape, dtype=case.torch_dtype, device=target) for shape in shapes]
    generator = seeded_generator(case)
    tensors = []
    for shape in shapes:
        swapped = case.layout == "transposed" and len(shape) >= 2
        drawn_shape = (*shape[:-2], shape[-1], shape[-2]) if swapped else shape
        drawn = torch.randn(drawn_shape, generator=generator, dtype=torch.float64) * scale
        drawn = drawn.transpose(-1, -2) if swapped else drawn
        tensors.append(drawn.to(device=target, dtype=case.torch_dtype))
    return tensors


def random_indices(
    case: Case, *shapes: tuple[int, ...], high: int, stream: int = 1
) -> list[torch.Tensor]:
    """int64 tensors of ``shapes`` with values uniform in [0, high), on ``case.device``,
    reproducible from ``case.seed`` and independent of :func:`random_inputs`' values."""
    if case.torch_device == _NO_DATA:
        return [torch.empty(shape, dtype=torch.int64, device=_NO_DATA) for shape in shapes]
    generator = seeded_generator(case, stream)
    return [
        torch.randint(high, shape, generator=generator).to(case.torch_device) for shape in shapes
    ]


def bind(case: Case, variant: str) -> Callable[[], Any]:
    """The zero-argument call a benchmark times: ``variant`` of ``case.op`` on ``case``'s inputs."""
    return get_variant(case.op, variant).bind(case.inputs())


def _as_float64_cpu(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        upcast = value.to(torch.float64) if value.is_floating_point() else value
        return upcast.cpu()  # a copy to the host: it waits for the device's work
    if isinstance(value, (tuple, list)):
        return tuple(_as_float64_cpu(item) for item in value)
    return value


def reference_output(case: Case, inputs: Inputs) -> Any:
    """The reference variant, evaluated in float64 on the CPU from the same inputs."""
    reference = get_variant(case.op, get_op(case.op).reference)
    cpu_inputs = tuple(_as_float64_cpu(value) for value in inputs)
    with torch.no_grad():
        return _as_float64_cpu(reference.bind(cpu_inputs)())


def verify(case: Case, variant: str) -> float:
    """Check ``variant`` against the op's reference on ``case``; return the max abs error.

    An output may be a tensor or a tuple of tensors (values and indices), compared
    element by element. Raises AssertionError with the case, the error and the tolerance
    when they disagree.
    """
    chosen = get_variant(case.op, variant)
    # The reference's inputs first: an optimizer step updates its inputs in place.
    expected = reference_output(case, case.inputs())
    with torch.no_grad():
        output = chosen.bind(case.inputs())()
    label = f"{case} variant {variant!r}"
    outputs, references = list(tensors_in(output)), list(tensors_in(expected))
    if len(outputs) != len(references):
        raise AssertionError(f"{label}: {len(outputs)} output tensors != {len(references)}")
    if chosen.equivalence == "distribution":
        (only,) = outputs
        _check_shape_and_dtype(label, only, references[0], chosen.output_dtype or case.torch_dtype)
        return _verify_standard_normal(label, only)
    errors = []
    for index, (actual, reference) in enumerate(zip(outputs, references, strict=True)):
        part = label if len(outputs) == 1 else f"{label} output {index}"
        wanted = chosen.output_dtype or case.torch_dtype
        if not reference.is_floating_point():
            wanted = reference.dtype  # indices keep their integer dtype
        _check_shape_and_dtype(part, actual, reference, wanted)
        errors.append(_compare(part, actual, reference, chosen.approximation_error))
    return max(errors)


def _check_shape_and_dtype(
    label: str, output: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype
) -> None:
    if tuple(output.shape) != tuple(expected.shape):
        raise AssertionError(f"{label}: shape {tuple(output.shape)} != {tuple(expected.shape)}")
    if output.dtype != dtype:
        raise AssertionError(f"{label}: output dtype {output.dtype} != {dtype}")


def _compare(label: str, output: torch.Tensor, expected: torch.Tensor, approximation: float):
    actual = _as_float64_cpu(output)
    if not expected.is_floating_point():
        if not torch.equal(actual, expected):
            raise AssertionError(f"{label}: integer output differs from the reference")
        return 0.0
    rtol, atol = TOLERANCES[output.dtype]
    scale = max(float(expected.abs().max()), 1e-30) if expected.numel() else 1.0
    allowed_abs = atol * scale + approximation * scale
    error = (actual - expected).abs()
    bound = allowed_abs + rtol * expected.abs()
    if not bool((error <= bound).all()):
        worst = float(error.max())
        raise AssertionError(
            f"{label}: max abs error {worst:.3g} exceeds rtol={rtol:g}, "
            f"atol={allowed_abs:.3g} (output dtype {output.dtype})"
        )
    return float(error.max()) if error.numel() else 0.0


def _verify_standard_normal(label: str, output: torch.Tensor) -> float:
    """Random outputs cannot match elementwise across RNG streams; check N(0, 1) instead."""
    values = _as_float64_cpu(output).flatten()
    count = values.numel()
    # Five standard errors: a false alarm about once in 1.7 million checks.
    mean_bound = 5.0 / count**0.5
    std_bound = 5.0 * (0.5 / count) ** 0.5 + 2**-7  # plus bfloat16 rounding
    mean, std = float(values.mean()), float(values.std())
    if abs(mean) > mean_bound or abs(std - 1.0) > std_bound:
        raise AssertionError(f"{label}: not N(0,1): mean {mean:.4f}, std {std:.4f}")
    return abs(mean)
