"""Losses: cross-entropy of logits against integer class targets, as one fused call, as
log_softmax then nll_loss, and written out.

Case shape: ``(rows, classes)``: the logits; the targets are ``rows`` int64 classes drawn
from the case's seed. The output is the mean loss, a 0-d tensor of the logits' dtype.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ._registry import define_op, variant
from .cases import Case, flops_per_element, random_indices, random_inputs


def _logits_and_targets(case: Case) -> tuple[torch.Tensor, torch.Tensor]:
    rows, classes = case.shape
    (logits,) = random_inputs(case, case.shape)
    (targets,) = random_indices(case, (rows,), high=classes)
    return logits, targets


# FLOPs per logit: max, subtract, exp, sum (log-sum-exp); bytes: the default, the logits
# and targets read.
define_op(
    "cross_entropy",
    make_inputs=_logits_and_targets,
    flops=flops_per_element(4),
    reference="functional",
)


@variant("cross_entropy", "functional")
def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """F.cross_entropy: log-softmax and the target's negative log-likelihood fused."""
    return F.cross_entropy(logits, targets)


@variant("cross_entropy", "log_softmax_nll")
def cross_entropy_two_calls(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """F.log_softmax, then F.nll_loss: a full-size log-probability tensor in between."""
    return F.nll_loss(F.log_softmax(logits, dim=-1), targets)


@variant("cross_entropy", "manual")
def cross_entropy_manual(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """logsumexp(logits) - logits[target], averaged: only the targets' logits gathered."""
    picked = logits.gather(-1, targets[:, None]).squeeze(-1)
    return (torch.logsumexp(logits, dim=-1) - picked).mean()
