"""Softmax and reductions over the last dimension: fused library calls vs manual formulas.

Case shape: ``(*batch, features)``; reductions run over ``features``.
"""

from __future__ import annotations

import torch

from ._registry import define_op, variant
from .cases import Case, flops_per_element, random_inputs


def _last_dim_inputs(case: Case) -> tuple[torch.Tensor]:
    (x,) = random_inputs(case, case.shape)
    return (x,)


# Bytes: the default, x read and the output written. FLOPs per element: softmax
# exp(x - max) / sum(exp(x - max)) = max, subtract, exp, sum, divide; logsumexp
# log(sum(exp(x))), computed stably = max, subtract, exp, sum (the log is per row);
# row_sum sum(x) = one add.
define_op(
    "softmax", make_inputs=_last_dim_inputs, flops=flops_per_element(5), reference="functional"
)
define_op(
    "logsumexp", make_inputs=_last_dim_inputs, flops=flops_per_element(4), reference="functional"
)
define_op("row_sum", make_inputs=_last_dim_inputs, flops=flops_per_element(1), reference="sum")


@variant("softmax", "functional")
def softmax(x: torch.Tensor) -> torch.Tensor:
    """torch.softmax: one fused, numerically stable kernel."""
    return torch.softmax(x, dim=-1)


@variant("softmax", "manual")
def softmax_manual(x: torch.Tensor) -> torch.Tensor:
    """Max-subtracted exp, then divide by the sum: four kernels and two intermediates."""
    shifted = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return shifted / shifted.sum(dim=-1, keepdim=True)


@variant("logsumexp", "functional")
def logsumexp(x: torch.Tensor) -> torch.Tensor:
    """torch.logsumexp."""
    return torch.logsumexp(x, dim=-1)


@variant("logsumexp", "manual")
def logsumexp_manual(x: torch.Tensor) -> torch.Tensor:
    """max + log(sum(exp(x - max))), written out."""
    peak = x.amax(dim=-1, keepdim=True)
    return (peak + torch.log(torch.exp(x - peak).sum(dim=-1, keepdim=True))).squeeze(-1)


@variant("row_sum", "sum")
def row_sum(x: torch.Tensor) -> torch.Tensor:
    """Tensor.sum over the last dimension: a vectorised reduction kernel."""
    return x.sum(dim=-1)


@variant("row_sum", "einsum")
def row_sum_einsum(x: torch.Tensor) -> torch.Tensor:
    """torch.einsum('...i->...'): equation parsing, then the same reduction."""
    return torch.einsum("...i->...", x)


def _with_ones(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x, torch.ones(x.shape[-1], dtype=x.dtype, device=x.device)


@variant("row_sum", "matmul_ones", prepare=_with_ones)
def row_sum_matmul(x: torch.Tensor, ones: torch.Tensor) -> torch.Tensor:
    """x @ ones: the reduction as a matrix-vector product (the BLAS trick)."""
    return x @ ones
