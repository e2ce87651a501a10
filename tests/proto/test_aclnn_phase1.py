"""Phase 1 for every operator: the C-named functions, null and wrong-kind arguments, formats, memory overlap."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from aclnn_kit import scalar, tensor, valid_args

import proto.aclnn as aclnn
from proto.aclnn import DECLS, OPS, ArgKind, OpDecl, aclCreateIntArray, aclOpExecutor
from proto.constants import aclDataType, aclFormat
from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclError

DT = aclDataType

SIGNATURES = {
    "Add": "self, other, alpha, out",
    "Adds": "self, other, alpha, out",
    "Sub": "self, other, alpha, out",
    "Subs": "self, other, alpha, out",
    "Mul": "self, other, out",
    "Muls": "self, other, out",
    "Div": "self, other, out",
    "InplaceAdd": "selfRef, other, alpha",
    "InplaceMul": "selfRef, other",
    "Relu": "self, out",
    "Gelu": "self, out",
    "Silu": "self, out",
    "Abs": "self, out",
    "Neg": "self, out",
    "Exp": "self, out",
    "Softmax": "self, dim, out",
    "Cast": "self, dtype, out",
    "InplaceCopy": "selfRef, src",
    "ReduceSum": "self, dims, keepDims, dtype, out",
    "Mean": "self, dim, keepDim, dtype, out",
    "Matmul": "self, mat2, out, cubeMathType",
}


def phase1(decl: OpDecl):  # type: ignore[no-untyped-def]
    return getattr(aclnn, decl.ws_name)


def test_every_operator_has_its_c_named_phase1_function_in_c_order() -> None:
    assert {d.name for d in DECLS} == set(SIGNATURES) and set(SIGNATURES) <= set(OPS)
    for decl in DECLS:
        fn = phase1(decl)
        assert fn.__name__ == decl.ws_name == f"aclnn{decl.name}GetWorkspaceSize"
        assert str(inspect.signature(fn)) == f"({SIGNATURES[decl.name]})"


def test_only_matmul_runs_on_the_cube_unit() -> None:
    assert {d.name for d in DECLS if d.kernel_kind == "cube"} == {"Matmul"}
    assert all(d.kernel_kind == "vector" for d in DECLS if d.name != "Matmul")


@pytest.mark.parametrize("decl", DECLS, ids=lambda d: d.name)
def test_phase1_returns_the_workspace_and_an_executor(decl: OpDecl) -> None:
    args = valid_args(decl)
    size, executor = phase1(decl)(*args.values())
    assert isinstance(executor, aclOpExecutor)
    assert not (executor.repeatable or executor.consumed or executor.destroyed)
    assert executor.kernel.op == decl.name
    assert dict(executor.kernel.args) == args
    assert executor.kernel.workspace_size == size
    assert (size > 0) == (decl.name in ("Matmul", "Softmax"))
    assert phase1(decl)(**args)[0] == size  # by C argument names too


@pytest.mark.parametrize(
    ("decl", "arg"), [(d, a.name) for d in DECLS for a in d.args if a.kind not in (ArgKind.INT, ArgKind.BOOL)]
)
def test_a_null_argument_is_161001_naming_it(decl: OpDecl, arg: str) -> None:
    args = {**valid_args(decl), arg: None}
    with pytest.raises(AclError) as caught:
        phase1(decl)(**args)
    assert caught.value.code == ACLNN_ERR_PARAM_NULLPTR
    assert caught.value.api == decl.ws_name
    assert caught.value.message == f"{decl.c_name}: {arg} is a null pointer"


@pytest.mark.parametrize(("decl", "arg"), [(d, a.name) for d in DECLS for a in d.args])
def test_an_argument_of_the_wrong_kind_is_161002_naming_it(decl: OpDecl, arg: str) -> None:
    args = {**valid_args(decl), arg: "text"}
    with pytest.raises(AclError) as caught:
        phase1(decl)(**args)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID
    assert caught.value.message.startswith(f"{decl.c_name}: {arg}")


def test_int_attributes_refuse_bools_and_bool_attributes_refuse_ints() -> None:
    x = tensor([2, 3])
    with pytest.raises(AclError, match="dim must be an int64, got True"):
        aclnn.aclnnSoftmaxGetWorkspaceSize(x, True, tensor([2, 3]))
    with pytest.raises(AclError, match=r"keepDim must be a bool attr \(bool\), got int"):
        aclnn.aclnnMeanGetWorkspaceSize(x, aclCreateIntArray([0]), 1, DT.ACL_FLOAT, tensor([3]))


def test_python_call_mistakes_are_type_errors() -> None:
    x = tensor([2])
    with pytest.raises(TypeError, match="takes 3 arguments"):
        aclnn.aclnnMulGetWorkspaceSize(x, x, x, x)
    with pytest.raises(TypeError, match="missing argument 'out'"):
        aclnn.aclnnMulGetWorkspaceSize(x, x)
    with pytest.raises(TypeError, match="unexpected or repeated argument 'other'"):
        aclnn.aclnnMulGetWorkspaceSize(x, x, other=x)


def test_private_formats_are_refused() -> None:
    nz = tensor([2, 3], fmt=aclFormat.ACL_FORMAT_FRACTAL_NZ)
    with pytest.raises(AclError, match="other has format ACL_FORMAT_FRACTAL_NZ"):
        aclnn.aclnnMulGetWorkspaceSize(tensor([2, 3]), nz, tensor([2, 3]))
    nchw = tensor([1, 2, 2, 3], fmt=aclFormat.ACL_FORMAT_NCHW)
    assert aclnn.aclnnReluGetWorkspaceSize(nchw, tensor([1, 2, 2, 3]))[0] == 0


def test_an_output_whose_elements_share_memory_is_refused() -> None:
    out = tensor([4, 3], strides=[0, 1])
    with pytest.raises(AclError, match="out has stride 0 on dim 0 of size 4"):
        aclnn.aclnnReluGetWorkspaceSize(tensor([4, 3]), out)
    broadcast_input = tensor([4, 3], strides=[0, 1])
    assert aclnn.aclnnReluGetWorkspaceSize(broadcast_input, tensor([4, 3]))[0] == 0


def test_full_overlap_is_allowed_and_partial_overlap_refused_as_torch() -> None:
    base = 0x5000_0000
    x = tensor([2, 3], data=base)
    same_view = tensor([2, 3], data=base)
    assert aclnn.aclnnInplaceAddGetWorkspaceSize(x, same_view, scalar(1.0))[0] == 0
    first_row = tensor([3], data=base)
    with pytest.raises(AclError, match="selfRef and other partially overlap") as caught:
        aclnn.aclnnInplaceAddGetWorkspaceSize(x, first_row, scalar(1.0))
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID
    shifted = tensor([2, 3], data=base + 4)
    with pytest.raises(AclError, match="out and self partially overlap"):
        aclnn.aclnnReluGetWorkspaceSize(shifted, x)
    transposed = tensor([3, 2], strides=[1, 3], data=base)
    with pytest.raises(AclError, match="out and self partially overlap"):
        aclnn.aclnnReluGetWorkspaceSize(transposed, tensor([3, 2], data=base))


def test_overlap_of_non_dense_views_is_left_to_the_kernel() -> None:
    evens = tensor([3], strides=[2], data=0x6000_0000)
    odds = tensor([3], strides=[2], offset=1, data=0x6000_0000)
    assert aclnn.aclnnInplaceMulGetWorkspaceSize(evens, odds)[0] == 0


def test_a_repeated_call_over_the_same_objects_reuses_the_checked_description() -> None:
    """Phase 1's memo: the very same host objects give the very same description, in a fresh executor each time
    (single use holds); other objects, keyword calls and mutable arguments are checked anew; failures are not
    remembered."""
    a, b, out, alpha = tensor([2, 3]), tensor([2, 3]), tensor([2, 3]), scalar(1.0)
    ws1, ex1 = aclnn.aclnnAddGetWorkspaceSize(a, b, alpha, out)
    ws2, ex2 = aclnn.aclnnAddGetWorkspaceSize(a, b, alpha, out)
    assert ws1 == ws2 == 0 and ex1 is not ex2 and ex2.kernel is ex1.kernel and not ex2.consumed
    twin = dataclasses.replace(b)  # an equal value, another object: checked anew, an equal description
    _, ex3 = aclnn.aclnnAddGetWorkspaceSize(a, twin, alpha, out)
    assert ex3.kernel is not ex1.kernel and ex3.kernel == ex1.kernel
    _, ex4 = aclnn.aclnnAddGetWorkspaceSize(self=a, other=b, alpha=alpha, out=out)
    assert ex4.kernel is not ex1.kernel
    bad = tensor([3, 2])
    for _ in range(2):  # a failing call raises every time
        with pytest.raises(AclError, match="out has shape"):
            aclnn.aclnnAddGetWorkspaceSize(a, b, alpha, bad)

    class Dim(int):  # a type phase 1 takes but the memo does not know to be immutable: checked every time
        pass

    _, soft = aclnn.aclnnSoftmaxGetWorkspaceSize(a, 1, out)
    assert aclnn.aclnnSoftmaxGetWorkspaceSize(a, 1, out)[1].kernel is soft.kernel
    dim = Dim(1)
    assert (
        aclnn.aclnnSoftmaxGetWorkspaceSize(a, dim, out)[1].kernel
        is not aclnn.aclnnSoftmaxGetWorkspaceSize(a, dim, out)[1].kernel
    )


def test_the_memo_is_bounded() -> None:
    from proto.aclnn import phase1 as module

    alpha = scalar(1.0)
    kept = [tensor([4]) for _ in range(module.MEMO_SIZE + 5)]
    executors = [aclnn.aclnnAddGetWorkspaceSize(t, t, alpha, t)[1] for t in kept]
    memo = next(
        cell.cell_contents
        for cell in aclnn.aclnnAddGetWorkspaceSize.__closure__ or ()
        if isinstance(cell.cell_contents, dict)
    )
    assert 0 < len(memo) <= module.MEMO_SIZE
    assert aclnn.aclnnAddGetWorkspaceSize(kept[-1], kept[-1], alpha, kept[-1])[1].kernel is executors[-1].kernel


def _fia_v4_args(kv_lengths: list[int]) -> list[object]:
    """Decode through FusedInferAttentionScoreV4: batch 1, one token, 2 query heads and 1 KV head of 4 (BSH), 5
    cached tokens, `kv_lengths` as actualSeqLengthsKv."""
    f16 = aclDataType.ACL_FLOAT16
    query, key, value, out = (
        tensor([1, 1, 8], f16),
        tensor([1, 5, 4], f16),
        tensor([1, 5, 4], f16),
        tensor([1, 1, 8], f16),
    )
    optional: list[object] = [None] * 26
    optional[3] = aclCreateIntArray(kv_lengths)
    return [query, aclnn.aclCreateTensorList([key]), aclnn.aclCreateTensorList([value]), *optional,
            2, 0.5, 2147483647, 2147483647, "BSH", 1, 0, 0, 0, 0, False, 0, 0, 0, out, None]  # fmt: skip


def test_get_max_workspace_size_reads_the_lengths_sizes_not_their_values() -> None:
    """CANN's aclnnFusedInferAttentionScoreV4GetMaxWorkspaceSize checks the sequence lengths as tensors of their
    size alone (its op_api's FakeArray): lengths past the cache pass there and fail phase 1; the executor keeps
    the values, which its launch checks."""
    most = aclnn.function("aclnnFusedInferAttentionScoreV4GetMaxWorkspaceSize")
    assert most is not None
    size, executor = most(*_fia_v4_args([9]))
    assert size == aclnn.aclnnFusedInferAttentionScoreV4GetWorkspaceSize(*_fia_v4_args([5]))[0]
    assert executor.kernel.args["actualSeqLengthsKvOptional"].values == (9,)
    with pytest.raises(AclError) as caught:
        aclnn.aclnnFusedInferAttentionScoreV4GetWorkspaceSize(*_fia_v4_args([9]))
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID and "actualSeqLengthsKvOptional[0] is 9" in caught.value.message
    with pytest.raises(AclError) as caught:
        executor.kernel.needed_workspace  # noqa: B018 -- what a launch checks
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID
    with pytest.raises(AclError) as caught:  # the other checks still run, naming the function called
        most(*_fia_v4_args([9])[:1], aclnn.aclCreateTensorList([]), *_fia_v4_args([9])[2:])
    assert caught.value.api == "aclnnFusedInferAttentionScoreV4GetMaxWorkspaceSize"
