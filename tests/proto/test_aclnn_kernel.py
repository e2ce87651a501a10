"""KernelDesc: structure checks, the JSON wire form both ways, malformed input, revalidation of tampering."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from typing import Any

import pytest
from aclnn_kit import scalar, tensor, valid_args

from proto.aclnn import DECLS, KernelDesc, OpDecl, aclCreateIntArray, get_workspace_size, revalidate
from proto.constants import aclDataType
from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclError

DT = aclDataType


def kernel_of(decl: OpDecl) -> KernelDesc:
    return get_workspace_size(decl, valid_args(decl))[1].kernel


def add_wire() -> dict[str, Any]:
    x = tensor([2, 3], data=0x1000)
    kernel = get_workspace_size(DECLS[0], {"self": x, "other": x, "alpha": scalar(2.0), "out": x})[1].kernel
    return kernel.to_wire()


@pytest.mark.parametrize("decl", DECLS, ids=lambda d: d.name)
def test_every_operator_round_trips_through_json(decl: OpDecl) -> None:
    kernel = kernel_of(decl)
    wire = json.loads(json.dumps(kernel.to_wire(), allow_nan=False))
    back = KernelDesc.from_wire(wire)
    assert back == kernel and hash(back) == hash(kernel)
    assert revalidate(back) is back


def test_the_wire_form_is_readable() -> None:
    wire = add_wire()
    assert wire["op"] == "Add" and wire["workspace_size"] == 0
    assert list(wire["args"]) == ["self", "other", "alpha", "out"]
    assert wire["args"]["self"] == {
        "view_dims": [2, 3],
        "data_type": "ACL_FLOAT",
        "strides": [3, 1],
        "offset": 0,
        "format": "ACL_FORMAT_ND",
        "storage_dims": [6],
        "data": 0x1000,
    }
    assert wire["args"]["alpha"] == {"value": 2.0, "data_type": "ACL_FLOAT"}
    reduce = kernel_of(DECLS[19]).to_wire()["args"]
    assert (reduce["dim"], reduce["keepDim"], reduce["dtype"]) == ([1], False, "ACL_FLOAT")


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 1e300, -0.0])
def test_non_finite_scalars_survive_strict_json(value: float) -> None:
    x = tensor([2], DT.ACL_DOUBLE)
    args = {"self": x, "other": scalar(value, DT.ACL_DOUBLE), "alpha": scalar(1.0), "out": x}
    kernel = get_workspace_size(DECLS[1], args)[1].kernel
    text = json.dumps(kernel.to_wire(), allow_nan=False)
    other = KernelDesc.from_wire(json.loads(text)).args["other"]
    assert isinstance(other, type(args["other"]))
    got = other.value  # type: ignore[union-attr]
    assert (math.isnan(got) and math.isnan(value)) or (
        got == value and math.copysign(1, got) == math.copysign(1, value)
    )


def test_from_wire_accepts_dtype_values_as_ints() -> None:
    wire = add_wire()
    wire["args"]["self"]["data_type"] = 0
    wire["args"]["alpha"]["data_type"] = 0
    assert KernelDesc.from_wire(wire) == KernelDesc.from_wire(add_wire())


def _set(path: str, value: object) -> dict[str, Any]:
    wire = add_wire()
    *parents, last = path.split(".")
    node = wire
    for key in parents:
        node = node[key]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return wire


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ([], "malformed kernel description: kernel: must be an object with fields op, args, workspace_size; got list"),
        ({**add_wire(), "extra": 1}, "kernel: unknown field 'extra'; expected exactly op, args, workspace_size"),
        (_set("op", "Foo"), "op: unknown operator 'Foo'"),
        (_set("op", 3), "op: unknown operator 3"),
        (_set("args", [1]), "args: must be an object with fields self, other, alpha, out; got list"),
        (_set("args.beta", 1), "args: unknown field 'beta'; expected exactly self, other, alpha, out"),
        (_set("args.alpha", KeyError), "args: missing field 'alpha'"),
        (_set("args.self.viewDims", [2, 3]), "args.self: unknown field 'viewDims'"),
        (_set("args.self.strides", KeyError), "args.self: missing field 'strides'"),
        (_set("args.self.view_dims", [2, "3"]), "args.self: view_dims[1] must be an int, got '3'"),
        (_set("args.self.view_dims", [2, True]), "args.self: view_dims[1] must be an int, got True"),
        (_set("args.self.data_type", "FLOAT"), "args.self: data_type 'FLOAT' is not an aclDataType"),
        (_set("args.self.format", "ND"), "args.self: format 'ND' is not an aclFormat"),
        (_set("args.self.data", -1), "args.self: data must be an int64 >= 0, got -1"),
        (_set("args.self.offset", 100), "args.self: the view"),
        (_set("args.alpha.value", "one"), "args.alpha: value 'one' must be a number for ACL_FLOAT"),
        (_set("args.alpha", 1.0), "args.alpha: must be an object with fields value, data_type; got float"),
        (_set("args.alpha.data_type", "ACL_STRING"), "args.alpha: data_type ACL_STRING is not supported for scalars"),
        (_set("args.self", [1]), "args.self: must be an object with fields view_dims"),
    ],
)
def test_from_wire_refuses_malformed_input_naming_the_field(wire: object, message: str) -> None:
    with pytest.raises(AclError) as caught:
        KernelDesc.from_wire(wire)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID
    assert message in caught.value.message


def test_from_wire_checks_attributes_and_nulls_through_the_declaration() -> None:
    reduce = kernel_of(DECLS[19]).to_wire()
    for field, value, message in (
        ("keepDim", 1, "keepDim must be a bool attr (bool), got int"),
        ("dtype", "ACL_NOPE", "dtype: 'ACL_NOPE' is not an aclDataType name"),
        ("dim", [0.5], "args.dim: values[0] must be an int, got 0.5"),
        ("workspace_size", -1, "workspace_size must be an int >= 0, got -1"),
    ):
        wire = copy.deepcopy(reduce)
        if field == "workspace_size":
            wire[field] = value
        else:
            wire["args"][field] = value
        with pytest.raises(AclError) as caught:
            KernelDesc.from_wire(wire)
        assert caught.value.code == ACLNN_ERR_PARAM_INVALID
        assert message in caught.value.message
    wire = add_wire()
    wire["args"]["other"] = None
    with pytest.raises(AclError) as null:
        KernelDesc.from_wire(wire)
    assert (null.value.code, null.value.api, null.value.message) == (
        ACLNN_ERR_PARAM_NULLPTR,
        "aclnnAdd",
        "aclnnAdd: other is a null pointer",
    )


def test_construction_checks_structure() -> None:
    kernel = KernelDesc.from_wire(add_wire())
    with pytest.raises(AclError, match="unknown operator 'Nope'"):
        KernelDesc("Nope", {}, 0)
    with pytest.raises(AclError, match="alpha must be a scalar"):
        dataclasses.replace(kernel, args={**kernel.args, "alpha": 1.0})
    with pytest.raises(AclError, match="beta is not an argument"):
        dataclasses.replace(kernel, args={**kernel.args, "beta": 1})
    with pytest.raises(TypeError):
        kernel.args["alpha"] = scalar(3.0)  # type: ignore[index]


def test_revalidate_catches_a_tampered_description() -> None:
    kernel = KernelDesc.from_wire(add_wire())
    wrong_out = dataclasses.replace(kernel, args={**kernel.args, "out": tensor([3, 2])})
    with pytest.raises(AclError) as caught:
        revalidate(wrong_out)
    assert (caught.value.code, caught.value.api) == (ACLNN_ERR_PARAM_INVALID, "aclnnAdd")
    assert caught.value.message == "aclnnAdd: out has shape [3, 2], but the result has shape [2, 3]"
    wire = add_wire()
    wire["args"]["other"]["data_type"] = "ACL_UINT16"
    with pytest.raises(AclError, match="cannot be promoted"):
        revalidate(KernelDesc.from_wire(wire))
    with pytest.raises(AclError, match="workspace_size is 64, but the arguments need 0 bytes"):
        revalidate(dataclasses.replace(kernel, workspace_size=64))
    with pytest.raises(AclError, match="expected a KernelDesc, got dict"):
        revalidate(add_wire())  # type: ignore[arg-type]


def test_revalidate_catches_a_shrunken_matmul_workspace() -> None:
    kernel = kernel_of(DECLS[-1])
    assert kernel.workspace_size == 512
    with pytest.raises(AclError, match="workspace_size is 0, but the arguments need 512 bytes"):
        revalidate(dataclasses.replace(kernel, workspace_size=0))


def test_kernel_properties_for_the_device() -> None:
    x, y = tensor([2, 3], data=0x1000), tensor([3], DT.ACL_FLOAT16, data=0x2000)
    kernel = get_workspace_size(DECLS[7], {"selfRef": x, "other": y, "alpha": scalar(1.0)})[1].kernel
    assert kernel.tensors == {"selfRef": x, "other": y}
    assert kernel.outputs == ("selfRef",)
    assert kernel.kernel_kind == "vector"
    assert kernel.nbytes() == 24 + 6
    assert kernel.tensor("other") is y
    matmul = kernel_of(DECLS[-1])
    assert matmul.kernel_kind == "cube"
    assert matmul.nbytes() == (6 + 12 + 8) * 4 + 512
    reduce = kernel_of(DECLS[19])
    assert list(reduce.tensors) == ["self", "out"]
    assert reduce.args["dim"] == aclCreateIntArray([1])


def test_the_checks_run_once_per_description() -> None:
    kernel = KernelDesc.from_wire(add_wire())
    assert "needed_workspace" not in vars(kernel)
    assert revalidate(kernel) is kernel and vars(kernel)["needed_workspace"] == 0
    broken = dataclasses.replace(kernel, args={**kernel.args, "out": tensor([3, 2])})
    for _ in range(2):  # an error is not remembered: it is raised again
        with pytest.raises(AclError, match="out has shape"):
            revalidate(broken)
    assert "needed_workspace" not in vars(broken)
