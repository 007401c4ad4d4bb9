"""Spatial ops on images: pooling (max, average, adaptive average to 1x1) and upsampling
(nearest and bilinear), each by torch's fused kernel against a formulation from other ops.

Case shape: ``(batch, channels, height, width)``; pooling windows are 2x2 with stride 2
(height and width even), upsampling doubles height and width.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ._registry import UnsupportedCase, define_op, variant
from .cases import Case, flops_per_element, random_inputs

WINDOW = 2


def _images(case: Case) -> tuple[torch.Tensor]:
    if len(case.shape) != 4:
        raise UnsupportedCase(
            f"spatial ops take (batch, channels, height, width), not {case.shape}"
        )
    (x,) = random_inputs(case, case.shape)
    if case.layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    return (x,)


# FLOPs: a comparison or an add per input element (pooling), 3 per output element
# (bilinear: a weighted sum of 4); nearest copies. Bytes: the default, input and output.
define_op("max_pool2d", make_inputs=_images, reference="functional")
define_op("avg_pool2d", make_inputs=_images, flops=flops_per_element(1), reference="functional")
define_op(
    "adaptive_avg_pool2d", make_inputs=_images, flops=flops_per_element(1), reference="functional"
)
define_op("interpolate_nearest", make_inputs=_images, reference="functional")
define_op(
    "interpolate_bilinear",
    make_inputs=_images,
    flops=lambda case: 4 * 7 * case.shape[0] * case.shape[1] * case.shape[2] * case.shape[3],
    reference="functional",
)


@variant("max_pool2d", "functional")
def max_pool(x: torch.Tensor) -> torch.Tensor:
    """F.max_pool2d(2): a pooling kernel."""
    return F.max_pool2d(x, WINDOW)


@variant("max_pool2d", "unfold_max")
def max_pool_unfolded(x: torch.Tensor) -> torch.Tensor:
    """The 2x2 windows as a view (reshape), then amax over them."""
    batch, channels, height, width = x.shape
    windows = x.reshape(batch, channels, height // WINDOW, WINDOW, width // WINDOW, WINDOW)
    return windows.amax(dim=(3, 5))


def _as_max_pool(x: torch.Tensor) -> tuple[nn.Module, torch.Tensor]:
    return nn.MaxPool2d(WINDOW), x


@variant("max_pool2d", "module", prepare=_as_max_pool)
def max_pool_module(pool: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """nn.MaxPool2d: module dispatch on top of the kernel."""
    return pool(x)


@variant("avg_pool2d", "functional")
def avg_pool(x: torch.Tensor) -> torch.Tensor:
    """F.avg_pool2d(2)."""
    return F.avg_pool2d(x, WINDOW)


@variant("avg_pool2d", "reshape_mean")
def avg_pool_reshaped(x: torch.Tensor) -> torch.Tensor:
    """The 2x2 windows as a view, then mean over them."""
    batch, channels, height, width = x.shape
    windows = x.reshape(batch, channels, height // WINDOW, WINDOW, width // WINDOW, WINDOW)
    return windows.mean(dim=(3, 5))


def _depthwise_ones(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    channels = x.shape[1]
    weight = torch.full(
        (channels, 1, WINDOW, WINDOW), 1 / WINDOW**2, dtype=x.dtype, device=x.device
    )
    return x, weight


@variant("avg_pool2d", "depthwise_conv", prepare=_depthwise_ones)
def avg_pool_conv(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """A depthwise stride-2 convolution with weights 1/4: pooling as a convolution."""
    return F.conv2d(x, weight, stride=WINDOW, groups=x.shape[1])


@variant("adaptive_avg_pool2d", "functional")
def global_pool(x: torch.Tensor) -> torch.Tensor:
    """F.adaptive_avg_pool2d(1): a CNN's global average pooling."""
    return F.adaptive_avg_pool2d(x, 1)


@variant("adaptive_avg_pool2d", "mean")
def global_pool_mean(x: torch.Tensor) -> torch.Tensor:
    """x.mean over height and width, keeping the dimensions."""
    return x.mean(dim=(2, 3), keepdim=True)


@variant("interpolate_nearest", "functional")
def upsample_nearest(x: torch.Tensor) -> torch.Tensor:
    """F.interpolate(scale 2, nearest)."""
    return F.interpolate(x, scale_factor=2, mode="nearest")


@variant("interpolate_nearest", "repeat_interleave")
def upsample_repeat(x: torch.Tensor) -> torch.Tensor:
    """Each row, then each column, repeated: two copies through repeat_interleave."""
    return x.repeat_interleave(2, dim=2).repeat_interleave(2, dim=3)


@variant("interpolate_nearest", "expand_reshape")
def upsample_expand(x: torch.Tensor) -> torch.Tensor:
    """A broadcast view of each pixel as 2x2, materialised by one reshape."""
    batch, channels, height, width = x.shape
    grown = x[:, :, :, None, :, None].expand(batch, channels, height, 2, width, 2)
    return grown.reshape(batch, channels, 2 * height, 2 * width)


@variant("interpolate_bilinear", "functional")
def upsample_bilinear(x: torch.Tensor) -> torch.Tensor:
    """F.interpolate(scale 2, bilinear, align_corners=False)."""
    return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)


def _as_upsample(x: torch.Tensor) -> tuple[nn.Module, torch.Tensor]:
    return nn.Upsample(scale_factor=2, mode="bilinear"), x


@variant("interpolate_bilinear", "module", prepare=_as_upsample)
def upsample_module(upsample: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """nn.Upsample(bilinear): module dispatch on top of the same kernel."""
    return upsample(x)


def _centres(size: int) -> torch.Tensor:
    """The output pixels' centres in [-1, 1], as grid_sample reads them (align_corners
    False), for an output twice ``size`` wide."""
    return (torch.arange(2 * size, dtype=torch.float64) + 0.5) / size - 1


def _sampling_grid(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    batch, _, height, width = x.shape
    ys, xs = torch.meshgrid(_centres(height), _centres(width), indexing="ij")
    grid = torch.stack([xs, ys], dim=-1).expand(batch, 2 * height, 2 * width, 2)
    # Coordinates need float32: in 16 bits they miss the pixel centres by up to a pixel.
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    return x, grid.to(device=x.device, dtype=dtype).contiguous()


@variant("interpolate_bilinear", "grid_sample", prepare=_sampling_grid)
def upsample_grid_sample(x: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
    """F.grid_sample on a fixed grid of output pixel centres: general resampling (its
    coordinates in float32, so a 16-bit image is sampled in float32 and cast back)."""
    sampled = F.grid_sample(
        x.to(grid.dtype), grid, mode="bilinear", padding_mode="border", align_corners=False
    )
    return sampled.to(x.dtype)
