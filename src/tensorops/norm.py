"""Normalisation over the last dimension: manual formulas vs fused ``layer_norm`` / ``rms_norm``.

Case shape: ``(*batch, features)``; the NLP case is ``(32, 512, 768)``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._registry import define_op, variant
from .cases import Case, flops_per_element, random_inputs
from .compiled import register_compiled_variant

EPS = 1e-5


def _norm_inputs(case: Case) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    features = case.shape[-1]
    x, weight, bias = random_inputs(case, case.shape, (features,), (features,))
    return x, weight, bias


# layer_norm: (x - mean) / sqrt(var + eps) * weight + bias over the last dimension;
# rms_norm: x / sqrt(mean(x²) + eps) * weight (bias unused). Nominal FLOPs per element:
# layer_norm = mean (1) + centred square (2) + variance sum (1) + normalise (2) + affine (2);
# rms_norm = square (1) + sum (1) + scale (1) + weight (1). Bytes: the default, x, weight
# and bias read and y written.
define_op(
    "layer_norm", make_inputs=_norm_inputs, flops=flops_per_element(8), reference="functional"
)
define_op("rms_norm", make_inputs=_norm_inputs, flops=flops_per_element(4), reference="functional")


@variant("layer_norm", "functional")
def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """F.layer_norm: one fused kernel, statistics accumulated in float32."""
    return F.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


@variant("layer_norm", "manual")
def layer_norm_manual(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Mean, biased variance, normalise and affine as separate tensor ops."""
    mean = x.mean(dim=-1, keepdim=True)
    centred = x - mean
    variance = (centred * centred).mean(dim=-1, keepdim=True)
    return centred * torch.rsqrt(variance + EPS) * weight + bias


@variant("rms_norm", "functional")
def rms_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """F.rms_norm (torch >= 2.4), with eps given explicitly (its default depends on dtype)."""
    return F.rms_norm(x, (x.shape[-1],), weight, EPS)


@variant("rms_norm", "manual")
def rms_norm_manual(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The usual hand-written RMSNorm: x * rsqrt(mean(x²) + eps) * weight."""
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * weight


register_compiled_variant("rms_norm", rms_norm_manual)
