"""tensorops: PyTorch tensor ops in several implementation strategies.

Every op names a reference variant; every variant is proven equal to it per dtype
(``tensorops.verify``). Benchmarks ask for "op X, variant Y"::

    case = tensorops.Case("matmul", (512, 512, 512), dtype="float32", device="cpu")
    call = tensorops.bind(case, "einsum")   # raises VariantUnavailable if absent
    call()

``VariantUnavailable`` is a LookupError, so code written against a newer
tensorops can read it as "not available at this version" rather than a crash.
"""

from . import (
    activation,
    attention,
    conv,
    creation,
    elementwise,
    indexing,
    linear,
    loss,
    matmul,
    movement,
    norm,
    optim,
    reduction,
    scan,
    spatial,
)
from ._registry import (
    Op,
    UnsupportedCase,
    Variant,
    VariantUnavailable,
    get_op,
    get_variant,
    op_names,
    variant_names,
)
from .cases import DTYPES, LAYOUTS, TOLERANCES, Case, bind, reference_output, verify

__version__ = "0.1.0"

__all__ = [
    "DTYPES",
    "LAYOUTS",
    "TOLERANCES",
    "Case",
    "Op",
    "UnsupportedCase",
    "Variant",
    "VariantUnavailable",
    "activation",
    "attention",
    "bind",
    "conv",
    "creation",
    "elementwise",
    "get_op",
    "get_variant",
    "indexing",
    "linear",
    "loss",
    "matmul",
    "movement",
    "norm",
    "op_names",
    "optim",
    "reduction",
    "reference_output",
    "scan",
    "spatial",
    "variant_names",
    "verify",
]
