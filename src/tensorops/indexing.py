"""Indexing with integer tensors: lookups (embedding, embedding_bag), gathers
(index_select, gather) and scatters (index_add, scatter_add), each by its torch function
against a formulation from other indexing ops.

Indices are int64, drawn uniformly from the case's seed (``random_indices``), on a
stream independent of the float inputs. Case shapes are given per op below.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._registry import define_op, variant
from .cases import Case, random_indices, random_inputs

INDEX_BYTES = 8  # int64

# ---------------------------------------------------------------- lookups
# embedding: (batch, tokens, vocabulary, features): a (vocabulary, features) table looked
# up at (batch, tokens). embedding_bag: (bags, bag_size, vocabulary, features): bags of
# equal size, each summed (a recommender's pooled lookup).


def _table_and_indices(case: Case) -> tuple[torch.Tensor, torch.Tensor]:
    rows, columns, vocabulary, features = case.shape
    (table,) = random_inputs(case, (vocabulary, features))
    (indices,) = random_indices(case, (rows, columns), high=vocabulary)
    return table, indices


def _lookup_bytes(case: Case, written_rows: int) -> int:
    # Only the looked-up rows of the table are read (the default would count the whole
    # table): the indices and the rows read, the output rows written.
    rows, columns, _, features = case.shape
    element = case.torch_dtype.itemsize
    return rows * columns * (INDEX_BYTES + features * element) + written_rows * features * element


define_op(
    "embedding",
    make_inputs=_table_and_indices,
    bytes_moved=lambda case: _lookup_bytes(case, case.shape[0] * case.shape[1]),
    reference="functional",
)
define_op(
    "embedding_bag",
    make_inputs=_table_and_indices,
    flops=lambda case: math.prod(case.shape[:2]) * case.shape[3],  # an add per looked-up value
    bytes_moved=lambda case: _lookup_bytes(case, case.shape[0]),
    reference="embedding_sum",
)


@variant("embedding", "functional")
def embedding(table: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """F.embedding(indices, table): what nn.Embedding calls."""
    return F.embedding(indices, table)


@variant("embedding", "index_select")
def embedding_index_select(table: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """table.index_select(0, flat indices), reshaped: the gather by hand."""
    rows = table.index_select(0, indices.reshape(-1))
    return rows.view(*indices.shape, table.shape[1])


@variant("embedding", "advanced_indexing")
def embedding_advanced_indexing(table: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """table[indices]: Python's indexing, through torch's advanced-indexing path."""
    return table[indices]


@variant("embedding_bag", "functional")
def embedding_bag(table: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """F.embedding_bag(mode="sum"): the lookup and the sum fused."""
    return F.embedding_bag(indices, table, mode="sum")


@variant("embedding_bag", "embedding_sum")
def embedding_then_sum(table: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """F.embedding, then a sum over each bag: the looked-up rows materialised first."""
    return F.embedding(indices, table).sum(dim=1)


# ---------------------------------------------------------------- gathers
# index_select: (rows, features, picked): `picked` rows of a (rows, features) matrix.
# gather: (*batch, features, picked): `picked` values of each row along the last dimension.


def _matrix_and_rows(case: Case) -> tuple[torch.Tensor, torch.Tensor]:
    rows, features, picked = case.shape
    (x,) = random_inputs(case, (rows, features))
    (index,) = random_indices(case, (picked,), high=rows)
    return x, index


def _rows_and_columns(case: Case) -> tuple[torch.Tensor, torch.Tensor]:
    *batch, features, picked = case.shape
    (x,) = random_inputs(case, (*batch, features))
    (index,) = random_indices(case, (*batch, picked), high=features)
    return x, index


def _picked_bytes(values: int, case: Case) -> int:
    """The picked values read and written, and an index read for each."""
    return values * (2 * case.torch_dtype.itemsize + INDEX_BYTES)


define_op(
    "index_select",
    make_inputs=_matrix_and_rows,
    bytes_moved=lambda case: (
        case.shape[2] * (2 * case.shape[1] * case.torch_dtype.itemsize + INDEX_BYTES)
    ),
    reference="index_select",
)
define_op(
    "gather",
    make_inputs=_rows_and_columns,
    bytes_moved=lambda case: _picked_bytes(math.prod(case.shape[:-2]) * case.shape[-1], case),
    reference="gather",
)


@variant("index_select", "index_select")
def index_select(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """torch.index_select(x, 0, index)."""
    return torch.index_select(x, 0, index)


@variant("index_select", "advanced_indexing")
def index_select_indexing(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x[index]."""
    return x[index]


@variant("index_select", "gather")
def index_select_gather(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """torch.gather with the index broadcast over the columns: a general gather doing a
    row selection."""
    return torch.gather(x, 0, index[:, None].expand(-1, x.shape[1]))


@variant("gather", "gather")
def gather(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """torch.gather(x, -1, index)."""
    return torch.gather(x, -1, index)


@variant("gather", "take_along_dim")
def take_along_dim(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """torch.take_along_dim: numpy's name for it."""
    return torch.take_along_dim(x, index, dim=-1)


@variant("gather", "flat_take")
def gather_flat(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Offsets into the flattened tensor, then torch.take: the gather by hand."""
    rows = torch.arange(math.prod(index.shape[:-1]), device=x.device).view(*index.shape[:-1], 1)
    return torch.take(x, rows * x.shape[-1] + index)


# ---------------------------------------------------------------- scatters
# index_add: (rows, features, added): `added` rows of a (added, features) source added into
# a zero (rows, features) matrix at row indices (a sparse gradient's accumulation).
# scatter_add: (rows, sources, targets): each row's `sources` values added into `targets`
# bins at indices (a histogram per row). Both start from zeros each call, so the call is
# idempotent.


def _source_rows(case: Case) -> tuple[torch.Tensor, torch.Tensor, int]:
    rows, features, added = case.shape
    (source,) = random_inputs(case, (added, features))
    (index,) = random_indices(case, (added,), high=rows)
    return source, index, rows


def _row_values(case: Case) -> tuple[torch.Tensor, torch.Tensor, int]:
    rows, sources, targets = case.shape
    (values,) = random_inputs(case, (rows, sources))
    (index,) = random_indices(case, (rows, sources), high=targets)
    return values, index, targets


define_op(
    "index_add",
    make_inputs=_source_rows,
    flops=lambda case: case.shape[2] * case.shape[1],
    reference="index_add",
)
define_op(
    "scatter_add",
    make_inputs=_row_values,
    flops=lambda case: case.shape[0] * case.shape[1],
    reference="scatter_add",
)


def _zeros(rows: int, columns: int, like: torch.Tensor) -> torch.Tensor:
    return torch.zeros(rows, columns, dtype=like.dtype, device=like.device)


@variant("index_add", "index_add")
def index_add(source: torch.Tensor, index: torch.Tensor, rows: int) -> torch.Tensor:
    """zeros(...).index_add_(0, index, source)."""
    return _zeros(rows, source.shape[1], source).index_add_(0, index, source)


@variant("index_add", "index_put_accumulate")
def index_add_put(source: torch.Tensor, index: torch.Tensor, rows: int) -> torch.Tensor:
    """zeros(...).index_put_((index,), source, accumulate=True): advanced indexing."""
    return _zeros(rows, source.shape[1], source).index_put_((index,), source, accumulate=True)


@variant("index_add", "scatter_add")
def index_add_scatter(source: torch.Tensor, index: torch.Tensor, rows: int) -> torch.Tensor:
    """scatter_add_ with the row index broadcast over the columns."""
    spread = index[:, None].expand(-1, source.shape[1])
    return _zeros(rows, source.shape[1], source).scatter_add_(0, spread, source)


@variant("scatter_add", "scatter_add")
def scatter_add(values: torch.Tensor, index: torch.Tensor, targets: int) -> torch.Tensor:
    """zeros(...).scatter_add_(1, index, values)."""
    return _zeros(values.shape[0], targets, values).scatter_add_(1, index, values)


@variant("scatter_add", "index_put_accumulate")
def scatter_index_put(values: torch.Tensor, index: torch.Tensor, targets: int) -> torch.Tensor:
    """zeros(...).index_put_((rows, index), values, accumulate=True)."""
    rows = torch.arange(values.shape[0], device=values.device)[:, None].expand_as(index)
    return _zeros(values.shape[0], targets, values).index_put_(
        (rows, index), values, accumulate=True
    )
