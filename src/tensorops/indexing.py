"""Indexing with integer tensors: an embedding lookup by F.embedding vs index_select vs
advanced indexing.

Case shape for ``embedding``: ``(batch, tokens, vocabulary, features)``: a table of
``vocabulary`` rows of width ``features``, looked up at ``batch × tokens`` int64 indices
drawn uniformly from the case's seed.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._registry import define_op, variant
from .cases import Case, random_indices, random_inputs


def _embedding_inputs(case: Case) -> tuple[torch.Tensor, torch.Tensor]:
    batch, tokens, vocabulary, features = case.shape
    (table,) = random_inputs(case, (vocabulary, features))
    (indices,) = random_indices(case, (batch, tokens), high=vocabulary)
    return table, indices


def _embedding_bytes(case: Case) -> int:
    # Only the looked-up rows of the table are read (the default would count the whole
    # table): indices read, rows read, rows written.
    batch, tokens, _, features = case.shape
    lookups = batch * tokens
    return lookups * 8 + 2 * lookups * features * case.torch_dtype.itemsize


# table[indices]: rows of a table at integer positions. No FLOPs.
define_op(
    "embedding",
    make_inputs=_embedding_inputs,
    bytes_moved=_embedding_bytes,
    reference="functional",
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
