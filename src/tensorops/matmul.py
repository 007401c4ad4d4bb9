"""Matrix products: ``torch.mm`` vs ``torch.matmul`` vs ``torch.einsum``, and batched ``bmm``.

Case shapes: ``matmul`` is ``(m, k, n)`` for ``(m, k) @ (k, n)``; ``bmm`` is
``(b, m, k, n)``.
"""

from __future__ import annotations

import math

import torch

from ._registry import define_op, variant
from .autocast import register_autocast_variants
from .cases import Case, random_inputs


def _product_inputs(case: Case) -> tuple[torch.Tensor, torch.Tensor]:
    *batch, m, k, n = case.shape
    # k**-0.25 on each factor keeps outputs O(1), so low-precision tolerances stay meaningful.
    a, b = random_inputs(case, (*batch, m, k), (*batch, k, n), scale=k**-0.25)
    return a, b


def _product_flops(case: Case) -> int:
    return 2 * math.prod(case.shape)


# C = A @ B for 2-D A (m, k) and B (k, n); batched C[i] = A[i] @ B[i] for A (b, m, k) and
# B (b, k, n). Bytes: the default, A and B read and C written.
define_op("matmul", make_inputs=_product_inputs, flops=_product_flops, reference="mm")
define_op("bmm", make_inputs=_product_inputs, flops=_product_flops, reference="bmm")


@variant("matmul", "mm")
def mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch.mm: 2-D only, no broadcasting logic to dispatch through."""
    return torch.mm(a, b)


@variant("matmul", "matmul")
def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch.matmul: the general entry point (the @ operator)."""
    return torch.matmul(a, b)


@variant("matmul", "einsum")
def einsum(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch.einsum('ik,kj->ij'): parses the equation, then lowers to a product."""
    return torch.einsum("ik,kj->ij", a, b)


register_autocast_variants("matmul", torch.matmul)


@variant("bmm", "bmm")
def bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch.bmm: 3-D only."""
    return torch.bmm(a, b)


@variant("bmm", "matmul")
def batched_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch.matmul on 3-D inputs: broadcasts batch dimensions, then calls bmm."""
    return torch.matmul(a, b)


@variant("bmm", "einsum")
def batched_einsum(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """torch.einsum('bik,bkj->bij')."""
    return torch.einsum("bik,bkj->bij", a, b)
