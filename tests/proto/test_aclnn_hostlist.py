"""The host objects that hold several values (aclTensorList, aclScalarList, aclBoolArray, aclFloatArray), the new
argument kinds in phase 1 and their wire form."""

from __future__ import annotations

import math

import pytest
from aclnn_kit import scalar, tensor

import proto.aclnn as nn
from proto.aclnn import Arg, ArgKind, KernelDesc, OpDecl
from proto.aclnn.kernel import wire_of
from proto.aclnn.phase1 import phase1
from proto.aclnn.rules import Checked
from proto.constants import aclDataType
from proto.errors import (
    ACLNN_ERR_INNER_FIND_KERNEL,
    ACLNN_ERR_PARAM_INVALID,
    ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_SUCCESS,
    AclError,
)

DT = aclDataType
A = ArgKind


def test_lists_and_arrays_keep_cann_names_and_sizes() -> None:
    a, b = tensor([2]), tensor([3])
    tensors = nn.aclCreateTensorList([a, None, b])
    assert nn.aclGetTensorListSize(tensors) == 3 and tensors.tensors == (a, None, b)
    scalars = nn.aclCreateScalarList([scalar(1.0), scalar(2, DT.ACL_INT32)])
    assert nn.aclGetScalarListSize(scalars) == 2
    flags = nn.aclCreateBoolArray([True, False])
    assert nn.aclGetBoolArraySize(flags) == 2 and flags.values == (True, False)
    floats = nn.aclCreateFloatArray([0.1, math.inf, 3])
    assert floats.values[0] == pytest.approx(0.1, rel=1e-7) and floats.values[0] != 0.1  # a C float
    assert floats.values[1:] == (math.inf, 3.0) and nn.aclGetFloatArraySize(floats) == 3
    assert nn.aclGetIntArraySize(nn.aclCreateIntArray([1, 2])) == 2
    assert nn.aclGetViewShape(a) == [2] and nn.aclGetViewStrides(a) == [1] and nn.aclGetViewOffset(a) == 0
    assert nn.aclGetDataType(a) is DT.ACL_FLOAT and nn.aclGetStorageShape(b) == [3]


@pytest.mark.parametrize(
    ("create", "value", "message"),
    [
        (nn.aclCreateTensorList, [1], "value[0] must be an aclTensor"),
        (nn.aclCreateTensorList, "ab", "value must be a sequence"),
        (nn.aclCreateScalarList, [None], "value[0] must be an aclScalar"),
        (nn.aclCreateBoolArray, [1], "value[0] must be a bool"),
        (nn.aclCreateFloatArray, ["x"], "value[0] must be a number"),
        (nn.aclCreateFloatArray, [True], "value[0] must be a number"),
    ],
)
def test_creation_refuses_what_c_could_not_hold(create: object, value: object, message: str) -> None:
    with pytest.raises(AclError) as caught:
        create(value)  # type: ignore[operator]
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID and message in caught.value.message


def test_destroying_a_list_destroys_what_it_holds() -> None:
    a = tensor([2])
    tensors = nn.aclCreateTensorList([a])
    assert nn.aclDestroyTensorList(tensors) == ACLNN_SUCCESS
    assert tensors.destroyed and a.destroyed
    with pytest.raises(AclError, match="already destroyed"):
        nn.aclDestroyTensorList(tensors)
    with pytest.raises(AclError, match="already destroyed"):
        nn.aclDestroyTensor(a)  # the list owned it
    with pytest.raises(AclError, match="already destroyed"):
        nn.aclCreateTensorList([a])
    s = scalar(1.0)
    scalars = nn.aclCreateScalarList([s])
    nn.aclDestroyScalarList(scalars)
    assert s.destroyed
    pairs = ((nn.aclCreateBoolArray, nn.aclDestroyBoolArray), (nn.aclCreateFloatArray, nn.aclDestroyFloatArray))
    for create, destroy in pairs:
        made = create([])
        assert destroy(made) == ACLNN_SUCCESS
        with pytest.raises(AclError, match="already destroyed"):
            destroy(made)
    with pytest.raises(AclError) as null:
        nn.aclDestroyTensorList(None)
    assert null.value.code == ACLNN_ERR_PARAM_NULLPTR


ALL_KINDS = OpDecl(
    "EveryKind",
    (
        Arg("x", A.TENSOR),
        Arg("xs", A.TENSOR_LIST),
        Arg("maybe", A.TENSOR, optional=True),
        Arg("maybes", A.TENSOR_LIST, optional=True),
        Arg("s", A.SCALAR),
        Arg("ss", A.SCALAR_LIST),
        Arg("ints", A.INT_ARRAY),
        Arg("flags", A.BOOL_ARRAY),
        Arg("floats", A.FLOAT_ARRAY),
        Arg("i64", A.INT),
        Arg("i32", A.INT32),
        Arg("i8", A.INT8),
        Arg("u64", A.UINT64),
        Arg("u32", A.UINT32),
        Arg("eps", A.DOUBLE),
        Arg("scale", A.FLOAT),
        Arg("on", A.BOOL),
        Arg("layout", A.STRING),
        Arg("dtype", A.DTYPE),
        Arg("out", A.OUT),
        Arg("outs", A.OUT_LIST),
    ),
    Checked(lambda args: None),
)


def every_kind() -> dict[str, object]:
    return {
        "x": tensor([2, 3]),
        "xs": nn.aclCreateTensorList([tensor([2]), tensor([3], DT.ACL_FLOAT16)]),
        "maybe": None,
        "maybes": None,
        "s": scalar(2.5),
        "ss": nn.aclCreateScalarList([scalar(1, DT.ACL_INT64), scalar(math.nan)]),
        "ints": nn.aclCreateIntArray([1, -2]),
        "flags": nn.aclCreateBoolArray([True]),
        "floats": nn.aclCreateFloatArray([-math.inf, 0.5]),
        "i64": -(2**63),
        "i32": 2**31 - 1,
        "i8": -128,
        "u64": 2**64 - 1,
        "u32": 2**32 - 1,
        "eps": 1e-300,
        "scale": 1 / 3,
        "on": True,
        "layout": "BNSD",
        "dtype": DT.ACL_BF16,
        "out": tensor([2, 3]),
        "outs": nn.aclCreateTensorList([tensor([4])]),
    }


def test_every_kind_passes_phase1_and_round_trips_through_json() -> None:
    args = ALL_KINDS.normalize(every_kind())
    assert args["scale"] == pytest.approx(1 / 3, rel=1e-7) and args["scale"] != 1 / 3  # a C float
    wire = {name: wire_of(value) for name, value in args.items()}
    assert wire["xs"][1]["data_type"] == "ACL_FLOAT16" and wire["ss"][1] == {"value": "nan", "data_type": "ACL_FLOAT"}
    assert wire["floats"] == ["-inf", 0.5] and wire["layout"] == "BNSD" and wire["maybes"] is None
    nn.OPS["EveryKind"] = ALL_KINDS
    try:
        decoded = KernelDesc.from_wire({"op": "EveryKind", "args": wire, "workspace_size": 0})
        assert decoded.to_wire()["args"] == wire
        assert list(decoded.tensors) == ["x", "xs[0]", "xs[1]", "maybe", "out", "outs[0]"]
        assert decoded.outputs == ("out", "outs")
    finally:
        nn.OPS.pop("EveryKind")


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("i32", 2**31, "i32 must be an int32"),
        ("i8", 128, "i8 must be an int8"),
        ("u64", -1, "u64 must be a uint64"),
        ("u32", True, "u32 must be a uint32"),
        ("eps", "1e-5", "eps must be a number (a C double)"),
        ("scale", None, "scale is a null pointer"),
        ("layout", b"BNSD", "layout must be a string attr"),
        ("layout", "BN\0SD", "layout holds a NUL character"),
        ("xs", [tensor([2])], "xs must be a tensor list (aclTensorList)"),
        ("ss", nn.aclCreateTensorList([]), "ss must be a scalar list (aclScalarList)"),
        ("flags", (True,), "flags must be a bool array (aclBoolArray)"),
        ("floats", nn.aclCreateIntArray([1]), "floats must be a float array (aclFloatArray)"),
    ],
)
def test_each_kind_refuses_what_it_is_not(name: str, value: object, message: str) -> None:
    with pytest.raises(Exception) as caught:
        ALL_KINDS.normalize(every_kind() | {name: value})
    assert message in str(caught.value)


def test_a_null_entry_of_a_list_is_161001_naming_it() -> None:
    with pytest.raises(Exception) as caught:
        ALL_KINDS.normalize(every_kind() | {"xs": nn.aclCreateTensorList([tensor([2]), None])})
    assert caught.value.code == ACLNN_ERR_PARAM_NULLPTR and "xs[1] is a null pointer" in str(caught.value)  # type: ignore[attr-defined]


def test_a_destroyed_member_of_a_remembered_list_is_refused() -> None:
    values = every_kind()
    every = phase1(ALL_KINDS)
    nn.OPS["EveryKind"] = ALL_KINDS
    try:
        every(*values.values())
        every(*values.values())  # remembered: the same objects skip the checks
        nn.aclDestroyTensor(values["xs"].tensors[0])  # type: ignore[attr-defined]
        with pytest.raises(AclError, match=r"xs\[0\] is an aclTensor that was destroyed"):
            every(*values.values())
    finally:
        nn.OPS.pop("EveryKind")


def test_an_operator_vnpu_does_not_implement_checks_its_arguments_then_is_561003() -> None:
    decl = nn.OPS["Ndtri"]
    assert decl.tier in ("declared", "ruled") and not decl.implemented
    with pytest.raises(AclError) as null:
        nn.aclnnNdtriGetWorkspaceSize(None, tensor([2]))
    assert null.value.code == ACLNN_ERR_PARAM_NULLPTR
    with pytest.raises(AclError) as missing:
        nn.aclnnNdtriGetWorkspaceSize(tensor([2]), tensor([2]))
    assert missing.value.code == ACLNN_ERR_INNER_FIND_KERNEL
    assert missing.value.message == "vnpu does not implement aclnnNdtri yet"
    assert missing.value.api == "aclnnNdtriGetWorkspaceSize"


def test_every_catalog_operator_is_declared_with_its_c_prototype() -> None:
    from proto.aclnn.catalog import catalog

    ops = catalog().ops
    assert set(nn.OPS) >= set(ops) and len(ops) == 1213
    for name in ("RmsNorm", "FusedInferAttentionScoreV4", "Cat", "GroupedMatmulV4", "MoeFusedTopk"):
        decl, op = nn.OPS[name], ops[name]
        assert [(a.name, a.ctype) for a in decl.args] == [(p.name, p.ctype) for p in op.params]
        assert all(a.optional >= p.optional for a, p in zip(decl.args, op.params, strict=True))  # docs add nullables
        assert getattr(nn, op.ws_name).__name__ == op.ws_name
