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
    return f"{_signature(proto)}\n{{\n    const vn_opval vn_values_[] = {{{', '.join(values)}}};\n" + (
        f'    return vn_phase1_max(&op_{decl.name}, "{proto.name}", vn_values_, {ws}, (void **){ex});\n}}'
        if proto.name == max_workspace_name(decl.name)
        else f"    return vn_phase1(&op_{decl.name}, vn_values_, {ws}, (void **){ex});\n}}"
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
    # ops-nn quant/trans_quant_param (docs/aclnnTransQuantParam.md, its op_api): a host function. Each scale's float32
    # bits | 1 << 46; each offset rounded half away from zero, clamped to [-256, 255], its 9 bits at 37-45 (bits 32-45
    # but 46 cleared first); max(scaleSize, offsetSize) values, a count other than 1 rounded up to 16 (zeros), in a
    # calloc'd array the caller frees.
    "aclnnTransQuantParam": """
    vn_enter("aclnnTransQuantParam");
    const char *api = "aclnnTransQuantParam";
    unsigned long long offsets = offsetSize;
    if (offsetArray != NULL && offsetSize < 1)
        return vn_fail(161002, api, "offsetSize must be > 0 with offsetArray, got %llu", offsets);
    if (offsetArray == NULL && offsetSize != 0)
        return vn_fail(161002, api, "offsetSize must be 0 without offsetArray, got %llu", offsets);
    if (scaleArray == NULL)
        return vn_fail(161001, api, "scaleArray is NULL");
    if (scaleSize < 1)
        return vn_fail(161002, api, "scaleSize must be > 0, got %llu", (unsigned long long)scaleSize);
    if (quantParam == NULL)
        return vn_fail(161001, api, "quantParam is NULL");
    if (quantParamSize == NULL)
        return vn_fail(161001, api, "quantParamSize is NULL");
    uint64_t count = scaleSize > offsetSize ? scaleSize : offsetSize;
    if (count != 1 && count % 16)
        count += 16 - count % 16;
    uint64_t *packed = calloc(count, sizeof(uint64_t));
    if (packed == NULL) {
        *quantParamSize = 0;
        return vn_fail(561103, api, "cannot allocate %llu values", (unsigned long long)count);
    }
    for (uint64_t i = 0; i < scaleSize; ++i) {
        uint32_t bits;
        memcpy(&bits, &scaleArray[i], sizeof bits);
        packed[i] = (uint64_t)bits | (1ULL << 46);
    }
    for (uint64_t i = 0; offsetArray != NULL && i < offsetSize; ++i) {
        double v = offsetArray[i];
        int64_t nine = v >= 255.0 ? 255 : v <= -256.0 ? -256 : (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
        packed[i] = (packed[i] & 0x4000FFFFFFFFULL) | (((uint64_t)nine & 0x1FFULL) << 37);
    }
    *quantParam = packed;
    *quantParamSize = count;
    return 0;""",
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
