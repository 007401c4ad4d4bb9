"""Normalisation over the last dimension: manual formulas vs fused ``layer_norm`` / ``rms_norm``.

Case shape: ``(*batch, features)``; the NLP case is ``(32, 512, 768)``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

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


def _image_norm_inputs(case: Case) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    channels = case.shape[1]
    x, weight, bias = random_inputs(case, case.shape, (channels,), (channels,))
    if case.layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    return x, weight, bias


# Over images (batch, channels, height, width): batch_norm normalises each channel over
# the batch and the image (training mode: the batch's own statistics, no running ones);
# group_norm each group of GROUPS-th of the channels over the image. FLOPs as layer_norm's.
define_op(
    "batch_norm", make_inputs=_image_norm_inputs, flops=flops_per_element(8), reference="manual"
)
define_op(
    "group_norm", make_inputs=_image_norm_inputs, flops=flops_per_element(8), reference="manual"
)
GROUPS = 8  # channels per group: channels / 8 (GroupNorm(32) needs 32 | channels)


def _per_channel(weight: torch.Tensor) -> torch.Tensor:
    return weight[None, :, None, None]


@variant("batch_norm", "functional")
def batch_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """F.batch_norm(training=True) without running statistics."""
    return F.batch_norm(x, None, None, weight, bias, training=True, eps=EPS)


@variant("batch_norm", "manual")
def batch_norm_manual(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Mean and biased variance over (batch, height, width), then normalise and scale."""
    mean = x.mean(dim=(0, 2, 3), keepdim=True)
    variance = (x - mean).square().mean(dim=(0, 2, 3), keepdim=True)
    return (x - mean) * torch.rsqrt(variance + EPS) * _per_channel(weight) + _per_channel(bias)


def _as_batch_norm_module(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> tuple:
    module = nn.BatchNorm2d(x.shape[1], eps=EPS, track_running_stats=False, device=x.device,
                            dtype=x.dtype)  # fmt: skip
    module.weight = nn.Parameter(weight, requires_grad=False)
    module.bias = nn.Parameter(bias, requires_grad=False)
    return module, x


@variant("batch_norm", "module", prepare=_as_batch_norm_module)
def batch_norm_module(norm: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """nn.BatchNorm2d(track_running_stats=False): module dispatch on top of the kernel."""
    return norm(x)


@variant("group_norm", "functional")
def group_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """F.group_norm: one fused kernel."""
    return F.group_norm(x, GROUPS, weight, bias, EPS)


@variant("group_norm", "manual")
def group_norm_manual(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The channels split into groups by a reshape; mean and variance per group."""
    batch = x.shape[0]
    grouped = x.reshape(batch, GROUPS, -1)
    mean = grouped.mean(dim=-1, keepdim=True)
    variance = (grouped - mean).square().mean(dim=-1, keepdim=True)
    normalised = ((grouped - mean) * torch.rsqrt(variance + EPS)).reshape(x.shape)
    return normalised * _per_channel(weight) + _per_channel(bias)
