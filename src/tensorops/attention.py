"""Causal self-attention: a naive softmax(QKᵀ/√d)V vs ``F.scaled_dot_product_attention``.

Case shape: ``(batch, heads, seq_len, head_dim)`` for each of Q, K and V.
FLOPs count the causal half of both products (4·B·H·L²·D / 2), the convention
FlashAttention's benchmarks use, so naive and fused report the same useful work.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._registry import define_op, variant
from .cases import Case, random_inputs
from .compiled import register_compiled_variant


def _attention_inputs(case: Case) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    q, k, v = random_inputs(case, case.shape, case.shape, case.shape)
    return q, k, v


def _attention_flops(case: Case) -> int:
    batch, heads, seq_len, head_dim = case.shape
    return 2 * batch * heads * seq_len * seq_len * head_dim


# Causal softmax(Q Kᵀ / sqrt(d)) V; bytes: the default, Q, K, V read and the output written.
define_op("attention", make_inputs=_attention_inputs, flops=_attention_flops, reference="naive")


def _with_causal_mask(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple:
    seq_len = q.shape[-2]
    # Built once, as a model would keep it in a buffer; True marks a masked (future) key.
    future = torch.ones(seq_len, seq_len, dtype=torch.bool, device=q.device).triu(1)
    return q, k, v, future


@variant("attention", "naive", prepare=_with_causal_mask)
def naive(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, future: torch.Tensor) -> torch.Tensor:
    """Materialises the (L, L) score matrix, masks, softmaxes, then multiplies by V."""
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
    return weights @ v


@variant("attention", "sdpa")
def sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """F.scaled_dot_product_attention(is_causal=True): fused (flash / memory-efficient) kernels."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


register_compiled_variant("attention", naive, prepare=_with_causal_mask)
