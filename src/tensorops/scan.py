"""Scans and selection over the last dimension: cumulative sums, top-k and sort.

Case shape: ``(*batch, features)``; ``topk`` keeps the ``TOP_K`` largest of each row.
topk and sort are compared by their values (sorted), which pins down the selection; the
indices of equal values may legitimately differ between implementations in low precision.
"""

from __future__ import annotations

import torch

from ._registry import define_op, variant
from .cases import Case, flops_per_element, random_inputs

TOP_K = 8  # a beam search's or a router's k


def _rows(case: Case) -> tuple[torch.Tensor]:
    (x,) = random_inputs(case, case.shape)
    return (x,)


# cumsum: one add per element; bytes: the default, x read and the running sums written.
define_op("cumsum", make_inputs=_rows, flops=flops_per_element(1), reference="cumsum")
# topk and sort: comparisons, no arithmetic; bytes: x read, the selected values written.
define_op("topk", make_inputs=_rows, reference="topk")
define_op("sort", make_inputs=_rows, reference="sort")


@variant("cumsum", "cumsum")
def cumsum(x: torch.Tensor) -> torch.Tensor:
    """torch.cumsum: a sequential scan kernel."""
    return torch.cumsum(x, dim=-1)


def _with_triangle(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    features = x.shape[-1]
    return x, torch.ones(features, features, dtype=x.dtype, device=x.device).triu()


@variant("cumsum", "triangular_matmul", prepare=_with_triangle)
def cumsum_matmul(x: torch.Tensor, upper: torch.Tensor) -> torch.Tensor:
    """x @ triu(ones): the scan as a matrix product, O(F²) work but a GEMM's speed."""
    return x @ upper


@variant("topk", "topk")
def topk(x: torch.Tensor) -> torch.Tensor:
    """torch.topk(sorted=True).values: a partial selection."""
    return torch.topk(x, TOP_K, dim=-1).values


@variant("topk", "sort_slice")
def topk_by_sort(x: torch.Tensor) -> torch.Tensor:
    """torch.sort(descending)[..., :k]: a full sort, then a slice."""
    return torch.sort(x, dim=-1, descending=True).values[..., :TOP_K]


@variant("sort", "sort")
def sort(x: torch.Tensor) -> torch.Tensor:
    """torch.sort(...).values."""
    return torch.sort(x, dim=-1).values


@variant("sort", "stable")
def sort_stable(x: torch.Tensor) -> torch.Tensor:
    """torch.sort(stable=True): a merge-based sort that keeps equal values in order."""
    return torch.sort(x, dim=-1, stable=True).values


@variant("sort", "argsort_gather")
def sort_by_argsort(x: torch.Tensor) -> torch.Tensor:
    """torch.argsort, then gather: indices first, values second, two passes."""
    return torch.gather(x, -1, torch.argsort(x, dim=-1))
