"""The optimizer step: AdamW over a model's list of parameters, as a for-loop over the
tensors, with ``foreach`` (multi-tensor kernels) and ``fused`` (one fused kernel).

Case shape: ``(layers, width, vocabulary)``: the parameters of a transformer encoder of
that many layers and width with a token embedding of that vocabulary (BERT-mini is
``(4, 256, 30522)``, 11 M parameters in 69 tensors), each with a seeded gradient.

A step updates the parameters and the optimizer's state in place, as training does: the
one op whose calls change their inputs. Its work does not depend on the values, so each
timed call costs the same. ``verify`` compares one step from the same start: parameters,
``exp_avg`` and ``exp_avg_sq``, every tensor of them.
"""

from __future__ import annotations

import torch
from torch import nn

from ._registry import UnsupportedCase, define_op, variant
from .cases import Case, random_inputs

LEARNING_RATE = 1e-3
WEIGHT_DECAY = 0.01
# Per element: weight decay (2), first moment (3), second moment (4), the bias-corrected
# update (5).
FLOPS_PER_PARAMETER = 14


def parameter_shapes(case: Case) -> list[tuple[int, ...]]:
    layers, width, vocabulary = case.shape
    per_layer = [
        (3 * width, width), (3 * width,),  # attention's query, key, value
        (width, width), (width,),  # attention's output
        (4 * width, width), (4 * width,), (width, 4 * width), (width,),  # the MLP
        (width,), (width,), (width,), (width,),  # two layer norms
    ]  # fmt: skip
    return [(vocabulary, width), *(per_layer * layers), (width,), (width,)]


def _parameters_and_gradients(case: Case) -> tuple[list, list]:
    if case.torch_dtype == torch.float16:
        # Its second moment (1e-3 g²) underflows in float16 and the step divides by zero:
        # float16 training keeps float32 master weights (bfloat16 has the range).
        raise UnsupportedCase("AdamW on float16 parameters underflows; use float32 masters")
    shapes = parameter_shapes(case)
    parameters = random_inputs(case, *shapes)
    gradients = random_inputs(case.__class__(case.op, case.shape, case.dtype, case.device,
                                             case.layout, case.seed + 1), *shapes)  # fmt: skip
    return parameters, gradients


def _elements(case: Case) -> int:
    return sum(torch.Size(shape).numel() for shape in parameter_shapes(case))


define_op(
    "adamw",
    make_inputs=_parameters_and_gradients,
    flops=lambda case: FLOPS_PER_PARAMETER * _elements(case),
    # Parameters, gradients and both moments read; parameters and moments written.
    bytes_moved=lambda case: 7 * _elements(case) * case.torch_dtype.itemsize,
    reference="for_loop",
)


def _optimizer(**mode: bool):
    def prepare(parameters: list, gradients: list) -> tuple:
        wrapped = [nn.Parameter(p, requires_grad=True) for p in parameters]  # shares storage
        for parameter, gradient in zip(wrapped, gradients, strict=True):
            parameter.grad = gradient
        optimizer = torch.optim.AdamW(wrapped, lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY,
                                      **mode)  # fmt: skip
        return optimizer, wrapped

    return prepare


def _step(optimizer: torch.optim.Optimizer, parameters: list) -> tuple:
    with torch.no_grad():
        optimizer.step()
    state = [optimizer.state[p] for p in parameters]
    return (
        *(p.detach() for p in parameters),
        *(s["exp_avg"] for s in state),
        *(s["exp_avg_sq"] for s in state),
    )


@variant("adamw", "for_loop", prepare=_optimizer(foreach=False), updates_inputs=True)
def adamw_for_loop(optimizer: torch.optim.Optimizer, parameters: list) -> tuple:
    """AdamW(foreach=False): a Python loop over the tensors, a few kernels each."""
    return _step(optimizer, parameters)


@variant("adamw", "foreach", prepare=_optimizer(foreach=True), updates_inputs=True)
def adamw_foreach(optimizer: torch.optim.Optimizer, parameters: list) -> tuple:
    """AdamW(foreach=True): torch._foreach_* kernels over all tensors at once."""
    return _step(optimizer, parameters)


@variant("adamw", "fused", prepare=_optimizer(fused=True), updates_inputs=True)
def adamw_fused(optimizer: torch.optim.Optimizer, parameters: list) -> tuple:
    """AdamW(fused=True): one fused kernel per tensor for the whole update."""
    return _step(optimizer, parameters)
