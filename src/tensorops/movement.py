"""Data movement: view vs reshape vs contiguous on non-contiguous inputs, and
host↔device copies from pageable vs pinned host memory.

Restride cases take shape ``(batch, tokens, features)`` for a contiguous tensor and
feed its transpose ``(batch, features, tokens)``, which is not contiguous.
Copy cases take any shape; the case's ``layout`` is "contiguous" (pageable host
memory) or "pinned" (page-locked, which allows truly asynchronous DMA).
"""

from __future__ import annotations

import math

import torch

from ._registry import UnsupportedCase, define_op, require_accelerator, variant
from .cases import Case, random_inputs


def _transposed_input(case: Case) -> tuple[torch.Tensor]:
    _, tokens, _ = case.shape
    if tokens % 2:
        raise UnsupportedCase(f"split_last_dim needs an even token count, not {tokens}")
    (base,) = random_inputs(case, case.shape)
    return (base.transpose(1, 2),)


# x (B, C, T), non-contiguous, to (B, C, T/2, 2). Splitting a dimension is expressible as
# a view even on this non-contiguous input, so no byte has to move; any traffic a variant
# causes is its own overhead.
define_op(
    "split_last_dim", make_inputs=_transposed_input, bytes_moved=lambda case: 0, reference="reshape"
)
# x (B, C, T), non-contiguous, to (B, C*T): no view can express it, a copy is required
# (bytes: the default, x read and the copy written).
define_op("flatten_transposed", make_inputs=_transposed_input, reference="reshape")


def _split_shape(x: torch.Tensor) -> tuple[int, int, int, int]:
    batch, features, tokens = x.shape
    return batch, features, tokens // 2, 2


@variant("split_last_dim", "view")
def split_view(x: torch.Tensor) -> torch.Tensor:
    """Tensor.view: metadata only; raises if the strides cannot express the shape."""
    return x.view(_split_shape(x))


@variant("split_last_dim", "reshape")
def split_reshape(x: torch.Tensor) -> torch.Tensor:
    """Tensor.reshape: a view when the strides allow it (here they do), else a copy."""
    return x.reshape(_split_shape(x))


@variant("split_last_dim", "contiguous")
def split_contiguous(x: torch.Tensor) -> torch.Tensor:
    """x.contiguous().view(...): the defensive idiom, which always copies a non-contiguous x."""
    return x.contiguous().view(_split_shape(x))


@variant("flatten_transposed", "reshape")
def flatten_reshape(x: torch.Tensor) -> torch.Tensor:
    """Tensor.reshape: falls back to a copy because no view exists."""
    return x.reshape(x.shape[0], -1)


@variant("flatten_transposed", "contiguous_view")
def flatten_contiguous_view(x: torch.Tensor) -> torch.Tensor:
    """x.contiguous().view(...): an explicit copy, then a view."""
    return x.contiguous().view(x.shape[0], -1)


@variant("flatten_transposed", "flatten")
def flatten(x: torch.Tensor) -> torch.Tensor:
    """torch.flatten(x, 1): reshape under another name."""
    return torch.flatten(x, 1)


def _copy_bytes(case: Case) -> int:
    # Each element crosses the host-device link once.
    return math.prod(case.shape) * case.torch_dtype.itemsize


def _host_buffer(case: Case, tensor: torch.Tensor) -> torch.Tensor:
    if case.layout == "pinned":
        return tensor.pin_memory()
    if case.layout != "contiguous":
        raise UnsupportedCase(f"host copies take pageable or pinned memory, not {case.layout}")
    return tensor


def _host_to_device_inputs(case: Case) -> tuple[torch.Tensor, torch.device]:
    require_accelerator(case.torch_device, "a host-to-device copy")
    (host,) = random_inputs(case, case.shape, device="cpu")
    return _host_buffer(case, host), case.torch_device


def _device_to_host_inputs(case: Case) -> tuple[torch.Tensor, torch.Tensor]:
    require_accelerator(case.torch_device, "a device-to-host copy")
    (on_device,) = random_inputs(case, case.shape)
    destination = torch.empty(case.shape, dtype=case.torch_dtype)
    return on_device, _host_buffer(case, destination)


# Copy a host tensor (pageable or pinned) to the case's device; copy a device tensor to
# host memory (a fresh pageable tensor, or a kept buffer).
define_op(
    "host_to_device", make_inputs=_host_to_device_inputs, bytes_moved=_copy_bytes, reference="to"
)
define_op(
    "device_to_host", make_inputs=_device_to_host_inputs, bytes_moved=_copy_bytes, reference="cpu"
)


@variant("host_to_device", "to")
def to_device(host: torch.Tensor, device: torch.device) -> torch.Tensor:
    """Tensor.to(device): blocks the host until the copy is done."""
    return host.to(device)


@variant("host_to_device", "to_non_blocking")
def to_device_non_blocking(host: torch.Tensor, device: torch.device) -> torch.Tensor:
    """Tensor.to(device, non_blocking=True): asynchronous only from pinned memory."""
    return host.to(device, non_blocking=True)


@variant("device_to_host", "cpu")
def to_host(on_device: torch.Tensor, destination: torch.Tensor) -> torch.Tensor:
    """Tensor.cpu(): allocates a fresh pageable host tensor on every call."""
    return on_device.cpu()


@variant("device_to_host", "copy_into")
def copy_into_host_buffer(on_device: torch.Tensor, destination: torch.Tensor) -> torch.Tensor:
    """destination.copy_(x, non_blocking=True) into a buffer kept across calls.

    It writes the same values on every call, so repeating it is idempotent.
    """
    return destination.copy_(on_device, non_blocking=True)


# ---------------------------------------------------------------- joining
# cat and stack: (parts, batch, tokens, features): `parts` tensors of (batch, tokens,
# features), joined along the features (cat, as multi-head outputs are) or along a new
# leading dimension (stack). No FLOPs; bytes: the default, every part read and the whole
# written.


def _parts(case: Case) -> tuple[list[torch.Tensor]]:
    parts, *each = case.shape
    return (random_inputs(case, *[tuple(each)] * parts),)


define_op("cat", make_inputs=_parts, reference="cat")
define_op("stack", make_inputs=_parts, reference="stack")


@variant("cat", "cat")
def cat(parts: list[torch.Tensor]) -> torch.Tensor:
    """torch.cat(parts, dim=-1)."""
    return torch.cat(parts, dim=-1)


@variant("cat", "stack_reshape")
def cat_by_stack(parts: list[torch.Tensor]) -> torch.Tensor:
    """torch.stack(dim=-2), then a reshape (a view) that merges the two last dimensions."""
    stacked = torch.stack(parts, dim=-2)
    return stacked.reshape(*stacked.shape[:-2], -1)


@variant("cat", "copy_into_slices")
def cat_by_copies(parts: list[torch.Tensor]) -> torch.Tensor:
    """torch.empty of the result, then one copy_ per part into its slice."""
    width = parts[0].shape[-1]
    joined = parts[0].new_empty(*parts[0].shape[:-1], width * len(parts))
    for index, part in enumerate(parts):
        joined[..., index * width : (index + 1) * width].copy_(part)
    return joined


@variant("stack", "stack")
def stack(parts: list[torch.Tensor]) -> torch.Tensor:
    """torch.stack(parts)."""
    return torch.stack(parts)


@variant("stack", "cat_unsqueezed")
def stack_by_cat(parts: list[torch.Tensor]) -> torch.Tensor:
    """torch.cat of each part unsqueezed (views): what stack is defined as."""
    return torch.cat([part.unsqueeze(0) for part in parts])


@variant("stack", "copy_into_slices")
def stack_by_copies(parts: list[torch.Tensor]) -> torch.Tensor:
    """torch.empty of the result, then one copy_ per part."""
    joined = parts[0].new_empty(len(parts), *parts[0].shape)
    for index, part in enumerate(parts):
        joined[index].copy_(part)
    return joined
