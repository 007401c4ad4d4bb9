"""Tensor creation: ``randn`` and ``zeros`` made on the target device vs made on the
host and then moved with ``.to(device)``.

Case shape: the shape of the created tensor.
"""

from __future__ import annotations

import torch

from ._registry import define_op, variant
from .cases import Case


def _creation_inputs(case: Case) -> tuple[tuple[int, ...], torch.dtype, torch.device]:
    return case.shape, case.torch_dtype, case.torch_device


# Standard-normal samples, and all zeros. No FLOPs; bytes: the default, which for inputs
# that are no tensors is the output written.
define_op("randn", make_inputs=_creation_inputs, reference="on_device")
define_op("zeros", make_inputs=_creation_inputs, reference="on_device")


# Different devices draw from different RNG streams, so randn variants are checked
# for distribution, not elementwise.
@variant("randn", "on_device", equivalence="distribution")
def randn_on_device(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device):
    """torch.randn(..., device=device): generated where it is used."""
    return torch.randn(shape, dtype=dtype, device=device)


@variant("randn", "host_then_to", equivalence="distribution")
def randn_host_then_to(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device):
    """torch.randn(...).to(device): generated on the host, then copied."""
    return torch.randn(shape, dtype=dtype).to(device)


@variant("zeros", "on_device")
def zeros_on_device(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device):
    """torch.zeros(..., device=device): a memset where the tensor lives."""
    return torch.zeros(shape, dtype=dtype, device=device)


@variant("zeros", "host_then_to")
def zeros_host_then_to(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device):
    """torch.zeros(...).to(device): a host memset, then a copy."""
    return torch.zeros(shape, dtype=dtype).to(device)
