"""2-D convolution: ``nn.Conv2d`` module vs ``F.conv2d``, in NCHW or channels_last.

Case shape: ``(batch, in_channels, height, width, out_channels, kernel)``; stride 1,
no padding, with bias. The case's ``layout`` ("contiguous" = NCHW, or
"channels_last" = NHWC in memory) applies to the input and the weight.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ._registry import UnsupportedCase, define_op, variant
from .autocast import register_autocast_variants
from .cases import Case, random_inputs


def _output_size(case: Case) -> tuple[int, int]:
    _, _, height, width, _, kernel = case.shape
    return height - kernel + 1, width - kernel + 1


def _conv_inputs(case: Case) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    batch, in_channels, height, width, out_channels, kernel = case.shape
    if case.layout not in ("contiguous", "channels_last"):
        raise UnsupportedCase(f"conv2d takes contiguous or channels_last inputs, not {case.layout}")
    fan_in = in_channels * kernel * kernel
    x, weight, bias = random_inputs(
        case,
        (batch, in_channels, height, width),
        (out_channels, in_channels, kernel, kernel),
        (out_channels,),
        scale=fan_in**-0.25,
    )
    if case.layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
        weight = weight.contiguous(memory_format=torch.channels_last)
    return x, weight, bias


def _conv_flops(case: Case) -> int:
    batch, in_channels, _, _, out_channels, kernel = case.shape
    out_h, out_w = _output_size(case)
    outputs = batch * out_channels * out_h * out_w
    return 2 * outputs * in_channels * kernel * kernel + outputs


# y = conv2d(x, weight) + bias, stride 1, no padding; bytes: the default, x, weight and
# bias read and y written.
define_op("conv2d", make_inputs=_conv_inputs, flops=_conv_flops, reference="functional")


@variant("conv2d", "functional")
def functional(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """F.conv2d called directly with the weight and bias tensors."""
    return F.conv2d(x, weight, bias)


def _as_module(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> tuple:
    out_channels, in_channels, kernel, _ = weight.shape
    module = nn.Conv2d(in_channels, out_channels, kernel, device=x.device, dtype=x.dtype)
    # Frozen parameters: a timed forward must not record an autograd graph.
    module.weight = nn.Parameter(weight, requires_grad=False)
    module.bias = nn.Parameter(bias, requires_grad=False)
    return module, x


@variant("conv2d", "module", prepare=_as_module)
def module(conv: nn.Conv2d, x: torch.Tensor) -> torch.Tensor:
    """nn.Conv2d.__call__: module hooks and dispatch on top of F.conv2d."""
    return conv(x)


register_autocast_variants("conv2d", F.conv2d)
