"""Binary elementwise with broadcasting and type promotion: a (batch, tokens, features)
activation plus a float32 (features,) bias. For a low-precision activation the sum is
float32 (torch's promotion rules), which every variant must produce.

Case shape: ``(batch, tokens, features)``.
"""

from __future__ import annotations

import torch

from ._registry import define_op, variant
from .cases import Case, flops_per_element, random_inputs


def _activation_and_bias(case: Case) -> tuple[torch.Tensor, torch.Tensor]:
    (x,) = random_inputs(case, case.shape)
    bias = random_inputs(case, (case.shape[-1],))[0].to(torch.float32)
    return x, bias


# One add per element; bytes: the default, x and the bias read, the float32 sum written.
define_op(
    "add_broadcast",
    make_inputs=_activation_and_bias,
    flops=flops_per_element(1),
    reference="operator",
)


@variant("add_broadcast", "operator", output_dtype=torch.float32)
def add(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x + bias: broadcasting and promotion inside one kernel."""
    return x + bias


@variant("add_broadcast", "upcast_first", output_dtype=torch.float32)
def add_upcast(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x.float() + bias: a full-size float32 copy first, then the add."""
    return x.float() + bias


@variant("add_broadcast", "expanded", output_dtype=torch.float32)
def add_expanded(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """torch.add(x, bias.expand_as(x)): the broadcast made explicit (a stride-0 view)."""
    return torch.add(x, bias.expand(x.shape))
