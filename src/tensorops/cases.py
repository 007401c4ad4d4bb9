"""Cases: a frozen description of one op invocation, its seeded inputs and its cost.

A case is everything needed to rebuild the exact same inputs on any machine:
inputs are drawn on the CPU from a generator seeded by ``seed`` and only then
moved to the target device and dtype, so a CPU run and a CUDA run of one case
see the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable
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

LAYOUTS = ("contiguous", "channels_last", "pinned")

# (rtol, atol relative to max |reference|) for outputs of each dtype. Loose enough
# for a reduction of a few thousand terms rounded once to the output dtype, tight
# enough that a wrong transpose, a missing scale or a dropped bias fails.
TOLERANCES = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (5e-3, 2e-3),
    torch.bfloat16: (3e-2, 1e-2),
}


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

    @property
    def element_size(self) -> int:
        return torch.empty((), dtype=self.torch_dtype).element_size()

    def inputs(self) -> Inputs:
        return get_op(self.op).make_inputs(self)

    @property
    def flops(self) -> int:
        """Floating-point operations of one call, counting a multiply-add as two."""
        return int(get_op(self.op).flops(self))

    @property
    def bytes_moved(self) -> int:
        """Compulsory memory traffic of one call: every input read once, output written once."""
        return int(get_op(self.op).bytes_moved(self))


def random_inputs(
    case: Case, *shapes: tuple[int, ...], scale: float = 1.0, device: str | None = None
) -> list[torch.Tensor]:
    """Standard-normal tensors of ``shapes`` (times ``scale``), reproducible from ``case.seed``.

    They land on ``case.device`` unless ``device`` names another (host-side inputs).
    """
    generator = torch.Generator().manual_seed(case.seed)
    target = torch.device(device) if device is not None else case.torch_device
    tensors = []
    for shape in shapes:
        drawn = torch.randn(shape, generator=generator, dtype=torch.float64) * scale
        tensors.append(drawn.to(device=target, dtype=case.torch_dtype))
    return tensors


def numel(*shape: int) -> int:
    count = 1
    for n in shape:
        count *= n
    return count


def bind(case: Case, variant: str) -> Callable[[], Any]:
    """The zero-argument call a benchmark times: ``variant`` of ``case.op`` on ``case``'s inputs."""
    return get_variant(case.op, variant).bind(case.inputs())


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _as_float64_cpu(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        upcast = value.to(torch.float64) if value.is_floating_point() else value
        return upcast.cpu()
    return value


def reference_output(case: Case, inputs: Inputs) -> torch.Tensor:
    """The reference variant, evaluated in float64 on the CPU from the same inputs."""
    reference = get_variant(case.op, get_op(case.op).reference)
    cpu_inputs = tuple(_as_float64_cpu(value) for value in inputs)
    with torch.no_grad():
        return _as_float64_cpu(reference.bind(cpu_inputs)())


def verify(case: Case, variant: str) -> float:
    """Check ``variant`` against the op's reference on ``case``; return the max abs error.

    Raises AssertionError with the case, the error and the tolerance when they disagree.
    """
    chosen = get_variant(case.op, variant)
    inputs = case.inputs()
    with torch.no_grad():
        output = chosen.bind(inputs)()
    _synchronize(case.torch_device)
    expected = reference_output(case, inputs)
    label = f"{case} variant {variant!r}"
    if tuple(output.shape) != tuple(expected.shape):
        raise AssertionError(f"{label}: shape {tuple(output.shape)} != {tuple(expected.shape)}")
    expected_dtype = chosen.output_dtype or case.torch_dtype
    if output.dtype != expected_dtype:
        raise AssertionError(f"{label}: output dtype {output.dtype} != {expected_dtype}")
    if chosen.equivalence == "distribution":
        return _verify_standard_normal(label, output)
    actual = _as_float64_cpu(output)
    rtol, atol = TOLERANCES[output.dtype]
    scale = max(float(expected.abs().max()), 1e-30) if expected.numel() else 1.0
    allowed_abs = atol * scale + chosen.approximation_error * scale
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
