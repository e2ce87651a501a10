"""The generated C of libopapi.so: every operator function of CANN's operator library (`client.capi.opheaders`,
from the catalog), as the native toolkit's codegen emits it (`client.native.codegen`).

- an operator vnpu implements (`proto.aclnn.OPS`): phase 1 calls `vn_phase1` over the operator's argument table
  (kinds and names in C order: every kind of `proto.aclnn.ArgKind`, tensor lists to strings), phase 2 `vn_phase2`;
- any other function of the library answers ACLNN_ERR_INNER_FIND_KERNEL (561003) with "vnpu does not implement
  aclnnXxx yet", a phase 1 first clearing `*workspaceSize` and `*executor` (as the Python client did), so that a
  program that ignores the status hands its phase 2 a NULL executor, which fails the same way.
"""

from __future__ import annotations

from client.capi.prototypes import Prototype
from proto.aclnn import OPS, ArgKind
from proto.aclnn.phase1 import max_workspace_name
from proto.errors import ACLNN_ERR_INNER_FIND_KERNEL

WORKSPACE_SUFFIX = "GetWorkspaceSize"
PHASE1_TAIL = ("uint64_t *", "aclOpExecutor **")


def _signature(proto: Prototype) -> str:
    params = ", ".join(f"{p.ctype} {p.name}" for p in proto.params) or "void"
    return f"VN_EXPORT {proto.result} {proto.name}({params})"


_KINDS = {
    ArgKind.TENSOR: "VN_TENSOR",
    ArgKind.OUT: "VN_OUT",
    ArgKind.INPLACE: "VN_INPLACE",
    ArgKind.TENSOR_LIST: "VN_TENSOR_LIST",
    ArgKind.OUT_LIST: "VN_OUT_LIST",
    ArgKind.INPLACE_LIST: "VN_INPLACE_LIST",
    ArgKind.SCALAR: "VN_SCALAR",
    ArgKind.SCALAR_LIST: "VN_SCALAR_LIST",
    ArgKind.INT_ARRAY: "VN_INT_ARRAY",
    ArgKind.BOOL_ARRAY: "VN_BOOL_ARRAY",
    ArgKind.FLOAT_ARRAY: "VN_FLOAT_ARRAY",
    ArgKind.INT: "VN_INT",
    ArgKind.INT32: "VN_INT",
    ArgKind.INT8: "VN_INT",
    ArgKind.UINT64: "VN_UINT",
    ArgKind.UINT32: "VN_UINT",
    ArgKind.DOUBLE: "VN_DOUBLE",
    ArgKind.FLOAT: "VN_DOUBLE",
    ArgKind.BOOL: "VN_BOOL",
    ArgKind.STRING: "VN_STRING",
    ArgKind.DTYPE: "VN_DTYPE",
}
_HANDLE_KINDS = frozenset(
    {
        ArgKind.TENSOR,
        ArgKind.OUT,
        ArgKind.INPLACE,
        ArgKind.TENSOR_LIST,
        ArgKind.OUT_LIST,
        ArgKind.INPLACE_LIST,
        ArgKind.SCALAR,
        ArgKind.SCALAR_LIST,
        ArgKind.INT_ARRAY,
        ArgKind.BOOL_ARRAY,
        ArgKind.FLOAT_ARRAY,
    }
)
_FIELDS = {ArgKind.DOUBLE: ("d", "(double)"), ArgKind.FLOAT: ("d", "(double)"), ArgKind.STRING: ("s", "")}


def emit_ops() -> str:
    out = []
    for decl in OPS.implemented():
        args = ", ".join(f'{{"{a.name}", {_KINDS[a.kind]}, {int(a.optional)}}}' for a in decl.args)
        out.append(f"static const vn_op_arg args_{decl.name}[] = {{{args}}};")
        out.append(
            f'static const vn_op op_{decl.name} = {{"{decl.name}", "{decl.ws_name}", "{decl.c_name}", '
            f"{len(decl.args)}, args_{decl.name}}};"
        )
    return "\n".join(out)


def emit_phase1(proto: Prototype) -> str:
    decl = next(d for d in OPS.implemented() if proto.name in (d.ws_name, max_workspace_name(d.name)))
    values = []
    for arg, param in zip(decl.args, proto.params, strict=False):
        handle = ("handle", "(const void *)")
        field, cast = handle if arg.kind in _HANDLE_KINDS else _FIELDS.get(arg.kind, ("i", "(int64_t)"))
        values.append(f"{{.{field} = {cast}{param.name}}}")
    ws, ex = proto.params[-2].name, proto.params[-1].name
    return (
        f"{_signature(proto)}\n{{\n    const vn_opval vn_values_[] = {{{', '.join(values)}}};\n"
        f"    return vn_phase1(&op_{decl.name}, vn_values_, {ws}, (void **){ex});\n}}"
    )


def emit_phase2(proto: Prototype) -> str:
    decl = next(d for d in OPS.implemented() if d.c_name == proto.name)
    names = [p.name for p in proto.params]
    return (
        f"{_signature(proto)}\n{{\n    return vn_phase2(&op_{decl.name}, {names[0]}, {names[1]}, (void *){names[2]}, "
        f"(void *){names[3]});\n}}"
    )


# the public functions of the library that are not operators, where vnpu has them: the random operators' mode, 0
# (compatible with A2/A3, the default) or 1 (as PyTorch draws), a process-wide value as ops-math keeps it; any
# other value is 161002. vnpu's random kernels draw one way whatever the mode, so it is only kept and read back.
SPECIAL = {
    "aclnnSetPytorchRandom": """
    vn_enter("aclnnSetPytorchRandom");
    if (pytorchRandom != 0 && pytorchRandom != 1)
        return vn_fail(161002, "aclnnSetPytorchRandom", "pytorchRandom must be 0 or 1, got %d", (int)pytorchRandom);
    __atomic_store_n(&vn_pytorch_random, (int)pytorchRandom, __ATOMIC_RELAXED);
    return 0;""",
    "aclnnGetPytorchRandom": """
    vn_enter("aclnnGetPytorchRandom");
    return __atomic_load_n(&vn_pytorch_random, __ATOMIC_RELAXED);""",
}
SPECIAL_STATE = "static int vn_pytorch_random;"


def emit_special(proto: Prototype) -> str:
    return f"{_signature(proto)}\n{{{SPECIAL[proto.name]}\n}}"


def emit_not_implemented(proto: Prototype) -> str:
    """A function of the operator library vnpu has no kernel for: 561003, naming the operator."""
    operator = proto.name.removesuffix(WORKSPACE_SUFFIX)
    lines = [_signature(proto), "{", f'    vn_enter("{proto.name}");']
    types = tuple(p.ctype.replace(" ", "") for p in proto.params[-2:])
    if proto.name.endswith(WORKSPACE_SUFFIX) and types == tuple(t.replace(" ", "") for t in PHASE1_TAIL):
        ws, ex = proto.params[-2].name, proto.params[-1].name
        lines.append(f"    if ({ws}) *{ws} = 0;")
        lines.append(f"    if ({ex}) *{ex} = NULL;")
    fail = f'vn_fail({ACLNN_ERR_INNER_FIND_KERNEL}, "{proto.name}", "vnpu does not implement {operator} yet")'
    if proto.result == "void":
        lines.append(f"    (void){fail};")
    elif proto.result.rstrip().endswith("*"):
        lines.append(f"    (void){fail};\n    return NULL;")
    else:
        lines.append(f"    return ({proto.result}){fail};")
    lines.append("}")
    return "\n".join(lines)
