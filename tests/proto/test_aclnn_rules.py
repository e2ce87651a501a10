"""Each operator family's phase-1 rules: dtypes, shapes, outputs, attributes, workspace sizes."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from aclnn_kit import refused, scalar, tensor

import proto.aclnn as nn
from proto.aclnn import aclCreateIntArray
from proto.constants import aclDataType

DT = aclDataType
F32, F16, BF16, F64 = DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE
S8, S32, S64, U8, U16, BOOL = DT.ACL_INT8, DT.ACL_INT32, DT.ACL_INT64, DT.ACL_UINT8, DT.ACL_UINT16, DT.ACL_BOOL


def t(*shape: int, dtype: aclDataType = F32) -> nn.aclTensor:
    return tensor(list(shape), dtype)


def dims(*values: int) -> nn.aclIntArray:
    return aclCreateIntArray(list(values))


ONE = scalar(1.0)


def test_binary_promotion_failure_names_other() -> None:
    refused(
        lambda: nn.aclnnAddGetWorkspaceSize(t(2, 3), t(2, 3, dtype=U16), ONE, t(2, 3)),
        "other has dtype ACL_UINT16, which cannot be promoted with self's ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnAddsGetWorkspaceSize(t(2, dtype=U16), ONE, ONE, t(2)),
        "other has dtype ACL_FLOAT, which cannot be promoted with self's ACL_UINT16",
    )


def test_binary_refuses_unsupported_dtypes_broadcast_and_output_mismatches() -> None:
    supported = (
        "ACL_BF16, ACL_BOOL, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, ACL_INT16, ACL_INT32, ACL_INT64, ACL_INT8, ACL_UINT8"
    )
    refused(
        lambda: nn.aclnnMulGetWorkspaceSize(t(2, dtype=U16), t(2, dtype=U16), t(2, dtype=U16)),
        f"self has dtype ACL_UINT16; supported: {supported}",
    )
    refused(
        lambda: nn.aclnnMulGetWorkspaceSize(t(2, 3), t(4), t(2, 3)),
        "other has shape [4], which does not broadcast with self's [2, 3]",
    )
    refused(
        lambda: nn.aclnnMulGetWorkspaceSize(t(2, 1), t(3), t(2, 1)),
        "out has shape [2, 1], but the result has shape [2, 3]",
    )
    refused(
        lambda: nn.aclnnMulGetWorkspaceSize(t(2, dtype=S32), t(2), t(2, dtype=S32)),
        "out has dtype ACL_INT32, which the result dtype ACL_FLOAT cannot be cast to",
    )
    refused(
        lambda: nn.aclnnMulGetWorkspaceSize(t(2, dtype=S8), t(2, dtype=S8), t(2, dtype=BOOL)),
        "out has dtype ACL_BOOL, which the result dtype ACL_INT8 cannot be cast to",
    )


def test_binary_accepts_castable_outputs_and_broadcasting() -> None:
    assert nn.aclnnMulGetWorkspaceSize(t(4, 1, 3, dtype=S8), t(2, 1, dtype=U8), t(4, 2, 3, dtype=F16))[0] == 0
    assert nn.aclnnAddGetWorkspaceSize(t(2, dtype=F16), t(2, dtype=F16), ONE, t(2, dtype=F64))[0] == 0


def test_alpha_must_cast_to_the_promoted_dtype() -> None:
    refused(
        lambda: nn.aclnnAddGetWorkspaceSize(t(2, dtype=S32), t(2, dtype=S8), scalar(2.5), t(2, dtype=S32)),
        "alpha has dtype ACL_FLOAT, which cannot be cast to the promoted dtype ACL_INT32",
    )
    refused(
        lambda: nn.aclnnSubsGetWorkspaceSize(t(2, dtype=S32), scalar(1, S64), scalar(1.0, F16), t(2, dtype=S32)),
        "alpha has dtype ACL_FLOAT16, which cannot be cast to the promoted dtype ACL_INT32",
    )
    assert nn.aclnnAddGetWorkspaceSize(t(2, dtype=S32), t(2), scalar(2.5), t(2))[0] == 0
    assert nn.aclnnAddGetWorkspaceSize(t(2), t(2), scalar(True, BOOL), t(2))[0] == 0
    assert nn.aclnnAddGetWorkspaceSize(t(2, dtype=S8), t(2, dtype=S8), scalar(300, S64), t(2, dtype=S8))[0] == 0


def test_subtraction_refuses_bool_operands() -> None:
    refused(
        lambda: nn.aclnnSubGetWorkspaceSize(t(2, dtype=BOOL), t(2), ONE, t(2)),
        "self is ACL_BOOL: subtraction with a bool operand is not supported",
    )
    refused(
        lambda: nn.aclnnSubsGetWorkspaceSize(t(2), scalar(True, BOOL), ONE, t(2)),
        "other is ACL_BOOL: subtraction with a bool operand is not supported",
    )


def test_tensor_scalar_results_and_true_division() -> None:
    refused(
        lambda: nn.aclnnMulsGetWorkspaceSize(t(2, dtype=S32), scalar(0.5), t(2, dtype=S32)),
        "out has dtype ACL_INT32, which the result dtype ACL_FLOAT cannot be cast to",
    )
    assert nn.aclnnMulsGetWorkspaceSize(t(2, dtype=BOOL), scalar(3, S8), t(2, dtype=S8))[0] == 0
    refused(
        lambda: nn.aclnnDivGetWorkspaceSize(t(2, dtype=S32), t(2, dtype=S32), t(2, dtype=S32)),
        "out has dtype ACL_INT32, which the result dtype ACL_FLOAT cannot be cast to",
    )
    assert nn.aclnnDivGetWorkspaceSize(t(2, dtype=BOOL), t(2, dtype=U8), t(2, dtype=F16))[0] == 0


def test_inplace_results_must_fit_self_ref() -> None:
    refused(
        lambda: nn.aclnnInplaceAddGetWorkspaceSize(t(3), t(2, 3), ONE),
        "selfRef has shape [3], but the result has shape [2, 3]",
    )
    refused(
        lambda: nn.aclnnInplaceMulGetWorkspaceSize(t(3, dtype=S32), t(3)),
        "selfRef has dtype ACL_INT32, which the result dtype ACL_FLOAT cannot be cast to",
    )
    assert nn.aclnnInplaceMulGetWorkspaceSize(t(2, 3, dtype=F16), t(3))[0] == 0


@pytest.mark.parametrize(
    ("phase1", "dtype", "supported"),
    [
        (nn.aclnnGeluGetWorkspaceSize, S32, "ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16"),
        (nn.aclnnSiluGetWorkspaceSize, BOOL, "ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16"),
        (
            nn.aclnnReluGetWorkspaceSize,
            BOOL,
            "ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, ACL_INT16, ACL_INT32, ACL_INT64, ACL_INT8, ACL_UINT8",
        ),
        (
            nn.aclnnNegGetWorkspaceSize,
            BOOL,
            "ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, ACL_INT16, ACL_INT32, ACL_INT64, ACL_INT8, ACL_UINT8",
        ),
    ],
)
def test_unary_dtype_support(phase1: Callable[..., object], dtype: aclDataType, supported: str) -> None:
    refused(
        lambda: phase1(t(2, dtype=dtype), t(2, dtype=dtype)), f"self has dtype {dtype.name}; supported: {supported}"
    )


def test_unary_results_and_outputs() -> None:
    assert nn.aclnnAbsGetWorkspaceSize(t(2, dtype=BOOL), t(2, dtype=BOOL))[0] == 0
    assert nn.aclnnExpGetWorkspaceSize(t(2, dtype=S32), t(2, dtype=F16))[0] == 0
    refused(
        lambda: nn.aclnnExpGetWorkspaceSize(t(2, dtype=S32), t(2, dtype=S32)),
        "out has dtype ACL_INT32, which the result dtype ACL_FLOAT cannot be cast to",
    )
    refused(
        lambda: nn.aclnnReluGetWorkspaceSize(t(2, 3), t(3, 2)), "out has shape [3, 2], but the result has shape [2, 3]"
    )


def test_softmax_dim_and_workspace() -> None:
    refused(
        lambda: nn.aclnnSoftmaxGetWorkspaceSize(t(2, 3), 2, t(2, 3)),
        "dim 2 is out of range for a 2-D self (expected -2 to 1)",
    )
    refused(
        lambda: nn.aclnnSoftmaxGetWorkspaceSize(t(2, 3), -3, t(2, 3)),
        "dim -3 is out of range for a 2-D self (expected -2 to 1)",
    )
    refused(
        lambda: nn.aclnnSoftmaxGetWorkspaceSize(t(), 1, t()), "dim 1 is out of range for a 0-D self (expected -1 to 0)"
    )
    assert nn.aclnnSoftmaxGetWorkspaceSize(t(), -1, t())[0] == 512
    assert nn.aclnnSoftmaxGetWorkspaceSize(t(1000, dtype=F16), 0, t(1000, dtype=F16))[0] == 4096
    assert nn.aclnnSoftmaxGetWorkspaceSize(t(10, 100, dtype=F64), 1, t(10, 100, dtype=F64))[0] == 8192
    assert nn.aclnnSoftmaxGetWorkspaceSize(t(0, 5), 1, t(0, 5))[0] == 0


def test_cast_needs_out_of_the_named_dtype() -> None:
    assert nn.aclnnCastGetWorkspaceSize(t(2, dtype=F32), S8, t(2, dtype=S8))[0] == 0
    assert nn.aclnnCastGetWorkspaceSize(t(2, dtype=BOOL), "ACL_BF16", t(2, dtype=BF16))[0] == 0
    refused(
        lambda: nn.aclnnCastGetWorkspaceSize(t(2), F32, t(2, dtype=F16)),
        "out has dtype ACL_FLOAT16, but the result has dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnCastGetWorkspaceSize(t(2), U16, t(2, dtype=U16)),
        "dtype ACL_UINT16 is not supported; supported: ACL_BF16, ACL_BOOL, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, "
        "ACL_INT16, ACL_INT32, ACL_INT64, ACL_INT8, ACL_UINT8",
    )


def test_inplace_copy_broadcasts_src_into_self_ref() -> None:
    assert nn.aclnnInplaceCopyGetWorkspaceSize(t(2, 3, dtype=S8), t(2, 1, dtype=F64))[0] == 0
    refused(
        lambda: nn.aclnnInplaceCopyGetWorkspaceSize(t(2, 3), t(4)),
        "src has shape [4], which does not broadcast to selfRef's [2, 3]",
    )
    refused(
        lambda: nn.aclnnInplaceCopyGetWorkspaceSize(t(2, 3), t(3, 2, 3)),
        "src has shape [3, 2, 3], which does not broadcast to selfRef's [2, 3]",
    )


@pytest.mark.parametrize(
    ("shape", "dim", "keep", "out"),
    [
        ((2, 3, 4), (), False, ()),
        ((2, 3, 4), (), True, (1, 1, 1)),
        ((2, 3, 4), (1,), False, (2, 4)),
        ((2, 3, 4), (-1, 0), True, (1, 3, 1)),
        ((), (), False, ()),
        ((), (0,), True, ()),
        ((), (-1,), False, ()),
        ((0, 3), (0,), False, (3,)),
    ],
)
def test_reduction_output_shapes(
    shape: tuple[int, ...], dim: tuple[int, ...], keep: bool, out: tuple[int, ...]
) -> None:
    for phase1 in (nn.aclnnReduceSumGetWorkspaceSize, nn.aclnnMeanGetWorkspaceSize):
        assert phase1(t(*shape), dims(*dim), keep, F32, t(*out))[0] == 0


def test_reduction_refusals() -> None:
    refused(
        lambda: nn.aclnnReduceSumGetWorkspaceSize(t(2, 3), dims(0, -2), False, F32, t(3)),
        "dims [0, -2] names a dim more than once",
    )
    refused(
        lambda: nn.aclnnMeanGetWorkspaceSize(t(2, 3), dims(2), False, F32, t(2)),
        "dim 2 is out of range for a 2-D self (expected -2 to 1)",
    )
    refused(
        lambda: nn.aclnnMeanGetWorkspaceSize(t(2, 3, dtype=S32), dims(0), False, S32, t(3, dtype=S32)),
        "dtype ACL_INT32 is not supported; supported: ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16",
    )
    refused(
        lambda: nn.aclnnReduceSumGetWorkspaceSize(t(2, 3), dims(0), False, F32, t(1, 3)),
        "out has shape [1, 3], but the result has shape [3]",
    )
    refused(
        lambda: nn.aclnnReduceSumGetWorkspaceSize(t(2, 3), dims(0), False, F32, t(3, dtype=F64)),
        "out has dtype ACL_DOUBLE, but the result has dtype ACL_FLOAT",
    )
    assert nn.aclnnReduceSumGetWorkspaceSize(t(2, 3), dims(0), False, S8, t(3, dtype=S8))[0] == 0


@pytest.mark.parametrize(
    ("a", "b", "out"),
    [
        ((3,), (3,), ()),
        ((3,), (3, 4), (4,)),
        ((2, 3), (3,), (2,)),
        ((2, 3), (3, 4), (2, 4)),
        ((5, 2, 3), (3, 4), (5, 2, 4)),
        ((2, 1, 2, 3), (3, 3, 4), (2, 3, 2, 4)),
        ((1, 1, 1, 1, 2, 3), (7, 3, 4), (1, 1, 1, 7, 2, 4)),
    ],
)
def test_matmul_shapes(a: tuple[int, ...], b: tuple[int, ...], out: tuple[int, ...]) -> None:
    size = nn.aclnnMatmulGetWorkspaceSize(t(*a), t(*b), t(*out), 1)[0]
    count = 1
    for d in out:
        count *= d
    assert size == -(-count * 4 // 512) * 512


def test_matmul_refusals() -> None:
    mm = nn.aclnnMatmulGetWorkspaceSize
    refused(lambda: mm(t(), t(3), t(), 0), "self has 0 dims; aclnnMatmul takes 1 to 6")
    refused(
        lambda: mm(t(1, 1, 1, 1, 1, 1, 3), t(3), t(1, 1, 1, 1, 1, 1), 0), "self has 7 dims; aclnnMatmul takes 1 to 6"
    )
    refused(
        lambda: mm(t(2, 3, dtype=F64), t(3, 2), t(2, 2), 0),
        "self has dtype ACL_DOUBLE; supported: ACL_BF16, ACL_FLOAT, ACL_FLOAT16",
    )
    refused(
        lambda: mm(t(2, 3, dtype=BF16), t(3, 2, dtype=F16), t(2, 2), 0),
        "mat2 has dtype ACL_FLOAT16, which cannot be promoted with self's ACL_BF16 "
        "(matmul mixes ACL_BF16 with no other dtype)",
    )
    refused(
        lambda: mm(t(2, 3), t(2, 4), t(2, 4), 0),
        "mat2 has shape [2, 4], whose reduce dim 2 differs from self's 3 (self is [2, 3])",
    )
    refused(lambda: mm(t(2, 2, 3), t(3, 3, 4), t(2, 2, 4), 0), "mat2's batch dims [3] do not broadcast with self's [2]")
    refused(
        lambda: mm(t(2, 3), t(3, 4), t(2, 4), 5),
        "cubeMathType 5 is not one of 0 (KEEP_DTYPE), 1 (ALLOW_FP32_DOWN_PRECISION), 2 (USE_FP16), "
        "3 (USE_HF32), 4 (USE_FP32_ADD)",
    )
    refused(
        lambda: mm(t(2, 3, dtype=BF16), t(3, 4, dtype=BF16), t(2, 4, dtype=BF16), 2),
        "cubeMathType 2 (USE_FP16) does not support ACL_BF16 inputs",
    )
    refused(
        lambda: mm(t(2, 3, dtype=F16), t(3, 4, dtype=F16), t(2, 4, dtype=F16), 3),
        "cubeMathType 3 (USE_HF32) needs ACL_FLOAT inputs, not ACL_FLOAT16",
    )
    refused(
        lambda: mm(t(2, 3), t(3, 4), t(2, 4, dtype=F16), 0),
        "out has dtype ACL_FLOAT16, but the result has dtype ACL_FLOAT",
    )
    refused(
        lambda: mm(t(2, 3, dtype=F16), t(3, 4, dtype=F16), t(2, 4, dtype=BF16), 0),
        "out has dtype ACL_BF16, but the result has dtype ACL_FLOAT16",
    )
    refused(lambda: mm(t(2, 3), t(3, 4), t(4, 2), 0), "out has shape [4, 2], but the result has shape [2, 4]")


def test_matmul_accepts_half_inputs_with_float_output_and_ignores_modes_for_dot_products() -> None:
    mm = nn.aclnnMatmulGetWorkspaceSize
    assert mm(t(2, 3, dtype=F16), t(3, 4, dtype=F16), t(2, 4, dtype=F32), 0)[0] == 512
    assert mm(t(2, 3, dtype=BF16), t(3, 4, dtype=BF16), t(2, 4, dtype=F32), 1)[0] == 512
    assert mm(t(2, 3, dtype=F16), t(3, 4), t(2, 4), 3)[0] == 512
    assert mm(t(3, dtype=BF16), t(3, dtype=BF16), t(dtype=BF16), 2)[0] == 512


def test_whole_reductions_write_one_value_shaped_1_or_0d() -> None:
    """Max, Min and Prod of all of self: out (1) as CANN's documentation and examples have it, or 0-D; any other
    shape is 161002 naming out."""
    for op, extra in (("Max", ()), ("Min", ()), ("Prod", (F32,))):
        phase1 = getattr(nn, f"aclnn{op}GetWorkspaceSize")
        for shape in ((1,), ()):
            size, _ = phase1(t(3, 4), *extra, t(*shape))
            assert size == 0
        refused(lambda p=phase1, e=extra: p(t(3, 4), *e, t(2)), "out has shape [2], but the result has shape []")
        refused(lambda p=phase1, e=extra: p(t(3, 4), *e, t(1, 1)), "out has shape [1, 1], but the result has shape []")


def test_arange_and_roll_take_the_built_in_packages_dtypes_on_atlas_a2() -> None:
    """The shipped operators (ops-math math/range, conversion/roll) refuse on Atlas A2/A3 what only their experimental
    variants (the custom package, libcust_opapi.so) take: an INT8 range, a COMPLEX64 roll (docs/operators.md)."""
    step = scalar(1.0)
    refused(
        lambda: nn.aclnnArangeGetWorkspaceSize(ONE, scalar(5.0), step, t(4, dtype=S8)),
        "out has dtype ACL_INT8; supported: ACL_BF16, ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT64",
    )
    supported = (
        "ACL_BF16, ACL_BOOL, ACL_FLOAT, ACL_FLOAT16, ACL_INT16, ACL_INT32, ACL_INT64, ACL_INT8, ACL_UINT32, ACL_UINT8"
    )
    for dtype in (DT.ACL_COMPLEX64, F64):
        refused(
            lambda dtype=dtype: nn.aclnnRollGetWorkspaceSize(
                t(2, 3, dtype=dtype), dims(1), dims(1), t(2, 3, dtype=dtype)
            ),
            f"x has dtype {dtype.name}; supported: {supported}",
        )
    refused(
        lambda: nn.aclnnRollGetWorkspaceSize(t(2, 3), dims(1), dims(1), t(2, 3, dtype=F16)),
        "out has dtype ACL_FLOAT16, but the result has dtype ACL_FLOAT",
    )
    assert nn.aclnnRollGetWorkspaceSize(t(2, 3, dtype=DT.ACL_UINT32), dims(1), dims(1), t(2, 3, dtype=DT.ACL_UINT32))
