"""Every tensorops variant equals its op's reference, per dtype, on small seeded cases."""

from __future__ import annotations

import pytest
import torch

import tensorops
from tensorops._registry import (
    _OPS,
    UnsupportedCase,
    VariantUnavailable,
    define_op,
    get_op,
    variant,
)
from tensorops.cases import tensors_in

# Ops over images (batch, channels, height, width), in NCHW and channels_last.
SPATIAL_OPS = [
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "interpolate_nearest",
    "interpolate_bilinear",
    "batch_norm",
    "group_norm",
]
# Small shapes in each op's own convention (see the op modules' docstrings).
SMALL_SHAPES = {
    "matmul": (33, 47, 29),
    "bmm": (3, 17, 24, 9),
    "linear": (4, 6, 40, 24),
    "linear_gelu": (4, 6, 40, 24),
    "conv2d": (2, 3, 12, 11, 8, 3),
    "attention": (2, 3, 16, 8),
    "embedding": (3, 5, 40, 8),
    "embedding_bag": (3, 4, 40, 8),
    "gather": (4, 6, 40, 5),
    "index_select": (40, 8, 12),
    "index_add": (40, 8, 12),
    "scatter_add": (4, 30, 16),
    "cat": (3, 2, 5, 8),
    "stack": (3, 2, 5, 8),
    "cross_entropy": (16, 40),
    "adamw": (1, 8, 30),
    **dict.fromkeys(SPATIAL_OPS, (2, 8, 12, 12)),
    "host_to_device": (64, 3),
    "device_to_host": (64, 3),
}
DEFAULT_SMALL_SHAPE = (4, 6, 40)
DTYPES = ["float32", "float16", "bfloat16"]
DEVICES = ["cpu", "cuda"]
# Variants that cannot run on the CPU by construction, with the reason they give.
ACCELERATOR_ONLY = {"host_to_device", "device_to_host"}


def all_variants() -> list[tuple[str, str]]:
    return [(op, name) for op in tensorops.op_names() for name in tensorops.variant_names(op)]


def small_case(op: str, dtype: str, device: str, layout: str = "contiguous") -> tensorops.Case:
    return tensorops.Case(op, SMALL_SHAPES.get(op, DEFAULT_SMALL_SHAPE), dtype, device, layout)


def layouts_of(op: str) -> list[str]:
    if op in ["conv2d", *SPATIAL_OPS]:
        return ["contiguous", "channels_last"]
    if op in ACCELERATOR_ONLY:
        return ["contiguous", "pinned"]
    return ["contiguous"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("op", "name"), all_variants())
def test_variant_equals_reference(op, name, dtype, device):
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine")
    for layout in layouts_of(op):
        case = small_case(op, dtype, device, layout)
        try:
            error = tensorops.verify(case, name)
        except UnsupportedCase as why:
            if name.startswith("autocast_") and dtype != "float32":
                assert "float32" in str(why)
                continue
            if op == "adamw" and dtype == "float16":
                assert "underflows" in str(why)
                continue
            if op in ACCELERATOR_ONLY and device == "cpu":
                assert "accelerator" in str(why)
                continue
            raise
        assert error >= 0.0


@pytest.mark.parametrize(("op", "name"), all_variants())
def test_variants_leave_their_inputs_untouched(op, name):
    """asv repeats a timed call many times per sample: it must not change its own inputs."""
    case = small_case(op, "float32", "cpu")
    try:
        inputs = case.inputs()
    except UnsupportedCase:
        assert op in ACCELERATOR_ONLY
        return
    if tensorops.get_variant(op, name).updates_inputs:
        pytest.skip("an optimizer step updates its parameters in place, as training does")
    before = [value.clone() if isinstance(value, torch.Tensor) else value for value in inputs]
    call = tensorops.get_variant(op, name).bind(inputs)
    first, second = call(), call()
    for original, value in zip(before, inputs, strict=True):
        if isinstance(value, torch.Tensor):
            assert torch.equal(original, value)
            assert original.stride() == value.stride()
    if tensorops.get_variant(op, name).equivalence == "close":
        for a, b in zip(tensors_in(first), tensors_in(second), strict=True):
            assert torch.equal(a, b)


def test_the_check_catches_a_wrong_variant():
    """A variant that drops the bias must fail verify, with the case in the message."""

    @variant("linear", "missing_bias")
    def missing_bias(x, weight, bias):
        return x @ weight.T

    try:
        with pytest.raises(AssertionError, match=r"missing_bias.*max abs error"):
            tensorops.verify(small_case("linear", "float32", "cpu"), "missing_bias")
    finally:
        del _OPS["linear"].variants["missing_bias"]


def test_the_check_catches_a_transpose():
    @variant("matmul", "transposed")
    def transposed(a, b):
        return (b.T @ a.T).T.contiguous() * 1.001

    try:
        with pytest.raises(AssertionError):
            tensorops.verify(tensorops.Case("matmul", (8, 8, 8)), "transposed")
    finally:
        del _OPS["matmul"].variants["transposed"]


def test_the_check_catches_a_silent_upcast():
    @variant("silu", "upcast")
    def upcast(x):
        return torch.nn.functional.silu(x.float())

    try:
        with pytest.raises(AssertionError, match=r"output dtype torch\.float32 != torch\.bfloat16"):
            tensorops.verify(tensorops.Case("silu", (4, 8), dtype="bfloat16"), "upcast")
    finally:
        del _OPS["silu"].variants["upcast"]


def test_distribution_check_rejects_a_wrong_distribution():
    define_op(
        "uniform_probe",
        make_inputs=lambda case: (case.shape,),
        reference="uniform",
    )
    variant("uniform_probe", "uniform", equivalence="distribution")(lambda shape: torch.rand(shape))
    try:
        with pytest.raises(AssertionError, match="not N"):
            tensorops.verify(tensorops.Case("uniform_probe", (4096,)), "uniform")
    finally:
        del _OPS["uniform_probe"]


def test_missing_variant_is_a_lookup_error_naming_what_exists():
    with pytest.raises(VariantUnavailable, match=r"no variant 'winograd'.*einsum, matmul, mm"):
        tensorops.get_variant("matmul", "winograd")
    with pytest.raises(LookupError, match="op 'fft' is not in this version"):
        tensorops.bind(tensorops.Case("fft", (8,)), "rfft")


def test_inputs_are_reproducible_from_the_seed():
    first = tensorops.Case("linear", (2, 8, 4)).inputs()
    again = tensorops.Case("linear", (2, 8, 4)).inputs()
    other = tensorops.Case("linear", (2, 8, 4), seed=1).inputs()
    for a, b in zip(first, again, strict=True):
        assert torch.equal(a, b)
    assert not torch.equal(first[0], other[0])


def test_low_precision_inputs_round_the_same_numbers():
    full = tensorops.Case("matmul", (4, 4, 4)).inputs()[0]
    half = tensorops.Case("matmul", (4, 4, 4), dtype="bfloat16").inputs()[0]
    assert torch.equal(full.to(torch.bfloat16), half)


def test_channels_last_case_is_channels_last():
    x, weight, _ = tensorops.Case("conv2d", (2, 3, 8, 8, 4, 3), layout="channels_last").inputs()
    assert x.is_contiguous(memory_format=torch.channels_last)
    assert not x.is_contiguous()
    assert weight.is_contiguous(memory_format=torch.channels_last)


def test_restride_inputs_are_not_contiguous():
    (x,) = tensorops.Case("split_last_dim", (2, 6, 4)).inputs()
    assert not x.is_contiguous()
    assert tensorops.bind(tensorops.Case("split_last_dim", (2, 6, 4)), "view")().shape == (
        2,
        4,
        3,
        2,
    )


@pytest.mark.parametrize(
    ("case", "flops", "bytes_moved"),
    [
        (tensorops.Case("matmul", (512, 512, 512)), 2 * 512**3, 3 * 512 * 512 * 4),
        (
            tensorops.Case("bmm", (2, 3, 4, 5), dtype="bfloat16"),
            2 * 2 * 3 * 4 * 5,
            2 * (12 + 20 + 15) * 2,
        ),
        # Conv2d(3, 64, 3) on 1x3x224x224: 222x222 outputs, 27 MACs each, plus bias.
        (
            tensorops.Case("conv2d", (1, 3, 224, 224, 64, 3)),
            2 * 64 * 222 * 222 * 27 + 64 * 222 * 222,
            (3 * 224 * 224 + 64 * 27 + 64 + 64 * 222 * 222) * 4,
        ),
        (tensorops.Case("attention", (1, 2, 8, 4)), 2 * 2 * 8 * 8 * 4, 4 * 64 * 4),
        (tensorops.Case("split_last_dim", (2, 4, 6)), None, 0),
        # 2 x 3 lookups of 5-wide rows: the indices (int64) and the rows read, rows written.
        (tensorops.Case("embedding", (2, 3, 100, 5)), None, 6 * 8 + 2 * 6 * 5 * 4),
    ],
)
def test_cases_state_flops_and_bytes(case, flops, bytes_moved):
    assert case.flops == flops
    assert case.bytes_moved == bytes_moved


def test_every_op_states_positive_bytes_or_a_free_view():
    for op in tensorops.op_names():
        case = small_case(op, "float32", "cpu")
        assert case.bytes_moved > 0 or op == "split_last_dim", op
        assert case.flops is None or case.flops > 0, op


@pytest.mark.parametrize(
    "op", [op for op in tensorops.op_names() if get_op(op).bytes_moved is None]
)
def test_default_bytes_are_every_input_and_the_output_once(op):
    """The default traffic, computed from shapes on the meta device, equals the inputs'
    and the output's bytes of a real call."""
    case = small_case(op, "float32", "cpu")
    inputs = case.inputs()
    output = tensorops.bind(case, get_op(op).reference)()
    real = sum(t.nbytes for t in tensors_in((*inputs, output)))
    assert case.bytes_moved == real > 0


def test_index_inputs_are_seeded_in_range_and_independent_of_the_float_inputs():
    case = tensorops.Case("embedding", (2, 64, 10, 4))
    table, indices = case.inputs()
    again = tensorops.Case("embedding", (2, 64, 10, 4)).inputs()[1]
    other = tensorops.Case("embedding", (2, 64, 10, 4), seed=1).inputs()[1]
    assert indices.dtype == torch.int64 and indices.shape == (2, 64)
    assert int(indices.min()) >= 0 and int(indices.max()) < 10
    assert torch.equal(indices, again) and not torch.equal(indices, other)
    # The table is what random_inputs draws alone: the indices come from their own stream.
    assert torch.equal(table, tensorops.cases.random_inputs(case, (10, 4))[0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"dtype": "float8"}, "dtype must be one of"), ({"layout": "nhwc"}, "layout must be one of")],
)
def test_bad_case_is_a_one_line_error(kwargs, message):
    with pytest.raises(ValueError, match=message) as raised:
        tensorops.Case("matmul", (2, 2, 2), **kwargs)
    assert "\n" not in str(raised.value)
