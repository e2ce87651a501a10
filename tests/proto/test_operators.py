"""User-declared operators (`proto.operators`): a declaration reaches OPS, the call table, the docs and the client;
phase 1 gives its exact codes and messages; a malformed declaration, a clash and a module that fails to import are
each refused with one message naming the module and the problem."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import client.acl as acl
import client.aio as aio
import proto.aclnn as nn
from client.capi import headers
from proto import operators
from proto.aclnn import OPS, Arg, ArgKind, OpDecl
from proto.aclnn.rules import Unary
from proto.calldocs import DOCS
from proto.calltable import CALLS
from proto.constants import aclDataType
from proto.errors import ACLNN_ERR_INNER, ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclError
from tests.server.npu.devicekit import tensor_at

F32, I32, F16 = aclDataType.ACL_FLOAT, aclDataType.ACL_INT32, aclDataType.ACL_FLOAT16
BASE = 0x12C000000000
WS = "aclnnOuterScaledAddGetWorkspaceSize"


@pytest.fixture
def declared() -> Iterator[operators.Operator]:
    operators.load(["tests.user_operators"], entry_points_too=False)
    yield operators.USER["OuterScaledAdd"]
    operators.undeclare("OuterScaledAdd")


def test_a_declaration_reaches_every_table_and_leaves_with_undeclare(declared: operators.Operator) -> None:
    assert OPS["OuterScaledAdd"] is declared.decl and declared.module == "tests.user_operators"
    assert CALLS["aclnnOuterScaledAdd"].asynchronous
    assert CALLS["aclnnOuterScaledAdd"].arg_names == ("workspace", "workspaceSize", "executor", "stream")
    assert DOCS["aclnnOuterScaledAdd"] == "out[i, j] = self[i] + scale * other[j] (a test's user-declared operator)."
    assert acl.aclnnOuterScaledAddGetWorkspaceSize is declared.ws_function  # declared after client.acl's import
    assert acl.aclnnOuterScaledAdd.__name__ == "aclnnOuterScaledAdd"
    assert aio.aclnnOuterScaledAddGetWorkspaceSize is declared.ws_function
    assert (
        inspect.iscoroutinefunction(aio.aclnnOuterScaledAdd)
        and aio.aclnnOuterScaledAdd.__name__ == "aclnnOuterScaledAdd"
    )
    tree = headers.expand_tree()
    assert "aclnnOuterScaledAdd(\n    void *workspace," in tree["aclnnop/aclnn_outer_scaled_add.h"]
    operators.undeclare("OuterScaledAdd")
    assert "OuterScaledAdd" not in OPS and "aclnnOuterScaledAdd" not in CALLS and "aclnnOuterScaledAdd" not in DOCS
    with pytest.raises(AttributeError):
        acl.aclnnOuterScaledAddGetWorkspaceSize  # noqa: B018
    assert operators.load(["tests.user_operators"], entry_points_too=False) == ["tests.user_operators"]  # anew
    assert OPS["OuterScaledAdd"].name == "OuterScaledAdd" and "aclnnOuterScaledAdd" in CALLS


def phase1_error(*args: Any) -> tuple[int, str]:
    with pytest.raises(AclError) as info:
        acl.aclnnOuterScaledAddGetWorkspaceSize(*args)
    assert info.value.api == WS
    return info.value.code, info.value.message


def test_phase1_checks_the_users_rule_with_exact_codes(declared: operators.Operator) -> None:
    a, b = tensor_at(BASE, (5,), F32), tensor_at(BASE + 0x100, (7,), F32)
    out, scale = tensor_at(BASE + 0x200, (5, 7), F32), nn.aclCreateScalar(2.0, F32)
    size, executor = acl.aclnnOuterScaledAddGetWorkspaceSize(a, b, scale, out)
    assert size == 512 and executor.kernel.op == "OuterScaledAdd" and executor.kernel.workspace_size == 512
    big = tensor_at(BASE + 0x1000, (40, 30), F32)
    assert (
        acl.aclnnOuterScaledAddGetWorkspaceSize(tensor_at(BASE, (40,), F32), tensor_at(BASE, (30,), F32), scale, big)[0]
        == 5120
    )  # 4800 bytes, rounded up
    prefix = "aclnnOuterScaledAdd: "
    assert phase1_error(None, b, scale, out) == (ACLNN_ERR_PARAM_NULLPTR, prefix + "self is a null pointer")
    assert phase1_error(a, b, None, out) == (ACLNN_ERR_PARAM_NULLPTR, prefix + "scale is a null pointer")
    assert phase1_error(out, b, scale, out) == (
        ACLNN_ERR_PARAM_INVALID,
        prefix + "self has shape [5, 7]; it must be 1-D",
    )
    assert phase1_error(a, b, scale, tensor_at(BASE + 0x200, (7, 5), F32)) == (
        ACLNN_ERR_PARAM_INVALID,
        prefix + "out has shape [7, 5], but the result has shape [5, 7]",
    )
    code, message = phase1_error(tensor_at(BASE, (5,), I32), b, scale, out)
    assert code == ACLNN_ERR_PARAM_INVALID and message.startswith(prefix + "self has dtype ACL_INT32; supported: ")
    assert phase1_error(a, b, a, out) == (
        ACLNN_ERR_PARAM_INVALID,
        prefix + "scale must be a scalar (aclScalar), got aclTensor",
    )
    code, message = phase1_error(a, b, scale, tensor_at(BASE + 0x200, (5, 7), I32))
    assert code == ACLNN_ERR_PARAM_INVALID and message.startswith(prefix + "out has dtype ACL_INT32; supported: ")
    half = tensor_at(BASE + 0x200, (5, 7), F16)
    assert acl.aclnnOuterScaledAddGetWorkspaceSize(a, b, scale, half)[0] == 512  # float32 casts into a float16 out
    kernel = executor.kernel
    assert nn.KernelDesc.from_wire(kernel.to_wire()) == kernel  # the wire form round-trips, as for vnpu's own
    with pytest.raises(AclError) as info:
        nn.revalidate(nn.KernelDesc(kernel.op, kernel.args, 0))
    assert info.value.code == ACLNN_ERR_PARAM_INVALID
    assert info.value.message == "aclnnOuterScaledAdd: workspace_size is 0, but the arguments need 512 bytes"


def kernel(self: Any, out: Any, workspace: Any) -> None:
    pass


OUT = Arg("out", ArgKind.OUT)
GOOD = OpDecl("Twice", (Arg("self", ArgKind.TENSOR), OUT), Unary())
REFUSED = [
    ("not a decl", "expected an OpDecl (proto.aclnn.decl), got str"),
    (OpDecl("twice", GOOD.args, Unary()), "the operator name 'twice' must be a C identifier in CamelCase"),
    (OpDecl("aclnnTwice", GOOD.args, Unary()), "the operator name 'aclnnTwice' must be a C identifier in CamelCase"),
    (
        OpDecl("Matmul", GOOD.args, Unary()),
        "aclnnMatmul is one of CANN's operators, which vnpu declares: choose another name",
    ),
    (OpDecl("AddGetWorkspaceSize", GOOD.args, Unary()), "ends in GetWorkspaceSize, which names a phase 1"),
    (OpDecl("Twice", (), Unary()), "aclnnTwice: args must be a non-empty tuple of Arg, in C order"),
    (
        OpDecl("Twice", (Arg("self", ArgKind.TENSOR), Arg("self", ArgKind.OUT)), Unary()),
        "the argument self is declared twice",
    ),
    (OpDecl("Twice", (Arg("workspace", ArgKind.TENSOR), OUT), Unary()), "'workspace' is one of the two phases' own"),
    (
        OpDecl("Twice", (Arg("self-x", ArgKind.TENSOR), OUT), Unary()),
        "the argument name 'self-x' is not a C identifier",
    ),
    (OpDecl("Twice", (Arg("self", ArgKind.TENSOR),), Unary()), "no argument is written (declare an ArgKind.OUT"),
    (OpDecl("Twice", GOOD.args, object()), "its rule object lacks result_dtype, check, workspace"),  # type: ignore[arg-type]
    (OpDecl("Twice", GOOD.args, Unary(), "scalar"), "kernel_kind 'scalar' is not 'vector' or 'cube'"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("decl", "words"), REFUSED, ids=[w for _, w in REFUSED])
def test_a_malformed_declaration_is_refused_naming_the_module(decl: Any, words: str) -> None:
    with pytest.raises(operators.OperatorError) as info:
        operators.declare(decl, kernel, module="my.ops")
    assert str(info.value).startswith("the operator module 'my.ops' (VNPU_OPERATORS): ")
    assert words in str(info.value)
    assert "Twice" not in OPS and "aclnnTwice" not in CALLS


def test_a_kernel_of_the_wrong_form_is_refused() -> None:
    for bad, what in (
        (lambda self, out: None, "'<lambda>' must take the arguments self, out, workspace"),
        (3, "a function"),
    ):
        with pytest.raises(operators.OperatorError) as info:
            operators.declare(GOOD, bad, module="my.ops")  # type: ignore[arg-type]
        assert what in str(info.value)


def test_two_modules_cannot_declare_one_name() -> None:
    operators.declare(GOOD, kernel, module="first.ops")
    try:
        with pytest.raises(operators.OperatorError) as info:
            operators.declare(GOOD, kernel, module="second.ops")
        assert str(info.value) == (
            "the operator module 'second.ops' (VNPU_OPERATORS): aclnnTwice is already declared by 'first.ops'"
        )
        assert operators.declare(GOOD, kernel, module="first.ops").module == "first.ops"  # the same module: replaced
    finally:
        operators.undeclare("Twice")


def test_a_module_that_fails_to_import_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_ops_19.py").write_text("import no_such_package_19\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(operators.OperatorError) as info:
        operators.load(" broken_ops_19 , ", entry_points_too=False)
    assert str(info.value) == (
        "the operator module 'broken_ops_19' (VNPU_OPERATORS): failed to import: "
        "ModuleNotFoundError(\"No module named 'no_such_package_19'\")"
    )
    assert operators.modules_of(" a.b, ,c ") == ["a.b", "c"]


@dataclass(frozen=True)
class FaultyRule:
    """A rule with a bug in each method, as asked."""

    fault: str

    def result_dtype(self, args: Any) -> Any:
        return None if self.fault == "dtype" else F32

    def check(self, args: Any) -> None:
        if self.fault == "check":
            raise KeyError("dims")
        self.result_dtype(args)

    def workspace(self, args: Any) -> int:
        return -1 if self.fault == "workspace" else 0


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ("check", "FaultyRule.check (my.ops) failed: KeyError('dims')"),
        ("dtype", "FaultyRule.result_dtype (my.ops) returned None, not an aclDataType vnpu computes in"),
        ("workspace", "FaultyRule.workspace (my.ops) returned -1, not a byte count (an int >= 0)"),
    ],
)
def test_a_fault_of_the_users_rule_is_561000_naming_it(fault: str, words: str) -> None:
    found = operators.declare(OpDecl("Twice", GOOD.args, FaultyRule(fault)), kernel, module="my.ops")
    try:
        x = tensor_at(BASE, (3,), F32)
        with pytest.raises(AclError) as info:  # the dtype too: phase 1 asks it, for the kernel's launch
            found.ws_function(x, x)
        assert info.value.code == ACLNN_ERR_INNER and info.value.api == "aclnnTwiceGetWorkspaceSize"
        assert info.value.message == f"aclnnTwice: the operator's rule {words}"
    finally:
        operators.undeclare("Twice")


def test_an_entry_point_of_group_vnpu_operators_is_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = tmp_path / "my_ops_dist-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-ops-dist\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[vnpu.operators]\nmine = entry_ops_19\n")
    (tmp_path / "entry_ops_19.py").write_text(
        "from proto.aclnn.decl import Arg, ArgKind, OpDecl\nfrom proto.aclnn.rules import Unary\n"
        "from proto.operators import operator\n\n"
        "@operator(OpDecl('EntryTwice', (Arg('self', ArgKind.TENSOR), Arg('out', ArgKind.OUT)), Unary()))\n"
        "def twice(self, out, workspace):\n    out[...] = 2 * self\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert "entry_ops_19" in operators.load("")
        assert operators.USER["EntryTwice"].module == "entry_ops_19" and "aclnnEntryTwice" in CALLS
        assert "entry_ops_19" in operators.user_modules()
    finally:
        operators.undeclare("EntryTwice")
