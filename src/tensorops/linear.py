"""Affine layer y = x Wᵀ + b: ``F.linear`` vs an explicit matmul plus bias; and the same
layer followed by gelu, eager vs compiled (a transformer MLP's first half).

Case shape: ``(*batch, in_features, out_features)``; ``x`` is ``(*batch, in_features)``.
The NLP case ``(32, 512, 768, 768)`` is a 768-wide projection over 32×512 tokens.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._registry import define_op, variant
from .autocast import register_autocast_variants
from .cases import Case, random_inputs
from .compiled import register_compiled_variant


def _linear_inputs(case: Case) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    *batch, in_features, out_features = case.shape
    x, weight, bias = random_inputs(
        case,
        (*batch, in_features),
        (out_features, in_features),
        (out_features,),
        scale=in_features**-0.25,
    )
    return x, weight, bias


def _linear_flops(case: Case) -> int:
    *batch, in_features, out_features = case.shape
    rows = math.prod(batch)
    return 2 * rows * in_features * out_features + rows * out_features


# y = x @ weight.T + bias; bytes: the default, x, weight and bias read and y written.
define_op("linear", make_inputs=_linear_inputs, flops=_linear_flops, reference="functional")


@variant("linear", "functional")
def functional(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """F.linear: one fused addmm where the backend has it."""
    return F.linear(x, weight, bias)


@variant("linear", "matmul_bias")
def matmul_bias(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """x @ weight.T + bias: a product, then a separate elementwise add."""
    return x @ weight.T + bias


@variant("linear", "addmm")
def addmm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """torch.addmm on the flattened batch: the bias folded into the GEMM epilogue."""
    rows = x.reshape(-1, x.shape[-1])
    return torch.addmm(bias, rows, weight.T).reshape(*x.shape[:-1], weight.shape[0])


register_autocast_variants("linear", F.linear)


def _linear_gelu_flops(case: Case) -> int:
    *batch, _, out_features = case.shape
    return _linear_flops(case) + 5 * math.prod(batch) * out_features  # gelu: 5 per element


# y = gelu(x @ weight.T + bias), gelu in its exact (erf) form.
define_op("linear_gelu", make_inputs=_linear_inputs, flops=_linear_gelu_flops, reference="eager")


@variant("linear_gelu", "eager")
def linear_gelu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """F.linear then F.gelu: a GEMM, then a pass over its full-size output."""
    return F.gelu(F.linear(x, weight, bias))


register_compiled_variant("linear_gelu", linear_gelu)
