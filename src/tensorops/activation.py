"""Activations: gelu exact vs its tanh approximation vs a hand-written erf form, and silu.

Case shape: any; the NLP case is ``(32, 512, 768)``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._registry import define_op, variant
from .cases import Case, flops_per_element, random_inputs

# max |gelu_tanh(x) - gelu(x)| over all x is about 4.7e-4 (at |x| near 2); allowed
# relative to max |reference|, which is at least 1 for any but tiny standard-normal inputs.
TANH_APPROXIMATION_ERROR = 5e-4


def _elementwise_inputs(case: Case) -> tuple[torch.Tensor]:
    (x,) = random_inputs(case, case.shape)
    return (x,)


# Nominal FLOPs per element, a transcendental counted as one: gelu = x/√2, erf, +1, ×0.5, ×x;
# silu = negate, exp, +1, divide. Bytes: the default, x read and y written.

# gelu: x * Φ(x), Φ the standard normal CDF.
define_op("gelu", make_inputs=_elementwise_inputs, flops=flops_per_element(5), reference="exact")
# silu: x * sigmoid(x).
define_op(
    "silu", make_inputs=_elementwise_inputs, flops=flops_per_element(4), reference="functional"
)


@variant("gelu", "exact")
def gelu_exact(x: torch.Tensor) -> torch.Tensor:
    """F.gelu with the erf form."""
    return F.gelu(x)


@variant("gelu", "tanh", approximation_error=TANH_APPROXIMATION_ERROR)
def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """F.gelu(approximate='tanh'): cheaper on some backends, within 5e-4 of exact."""
    return F.gelu(x, approximate="tanh")


@variant("gelu", "manual_erf")
def gelu_manual(x: torch.Tensor) -> torch.Tensor:
    """0.5 * x * (1 + erf(x / √2)) as separate tensor ops."""
    return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))


@variant("silu", "functional")
def silu(x: torch.Tensor) -> torch.Tensor:
    """F.silu: one fused kernel."""
    return F.silu(x)


@variant("silu", "manual")
def silu_manual(x: torch.Tensor) -> torch.Tensor:
    """x * torch.sigmoid(x): two kernels and an intermediate."""
    return x * torch.sigmoid(x)
