"""The generated part of the native toolkit: C marshalling for every function of the prototype table.

For each prototype (`client.capi.prototypes`, read from the toolkit's headers):
- a function written by hand in `src/` (a `VN_EXPORT` definition there) is left to it;
- an operator's two phases (`proto.aclnn.OPS`) become calls of `vn_phase1` / `vn_phase2` over the operator's
  argument table (kinds and names, in C order);
- a function of the call table (`proto.calltable.CALLS`) whose arguments and out-parameters are plain (integers,
  enums, handles and pointers, strings, bool, float) gets its marshalling: each argument read from the C
  parameter of its name into the envelope, each out-parameter NULL-checked first and written back through its
  pointer; calls that only queue work are pipelined (`annotations` holds what the types do not say);
- every other declared function answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000), saying so in
  aclGetRecentErrMsg (a pointer result is NULL, a void one returns).
Also generated: the error codes' names (`vn_code_name`) and the dtypes' sizes (`vn_itemsize`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BeforeValidator

from client.capi.prototypes import Prototype, Table
from client.native import annotations as notes
from client.native import opgen
from proto.aclnn import OPS
from proto.aclnn import dtypes as _dtypes
from proto.aclnn.phase1 import max_workspace_name
from proto.calltable import BEFORE_INIT, CALLS, Call, WireModel
from proto.errors import ERROR_NAMES

SOURCES = Path(__file__).parent / "src"
_DEFINED = re.compile(r"^VN_EXPORT\s+[^;{(]*?\b(\w+)\(", re.MULTILINE)
# SETTER(aclrtAllocatorSet..., ...), OUT_U32(HcclGetRankSize, ...)
_DEFINED_BY_MACRO = re.compile(r"^[A-Z][A-Z0-9_]+\(((?:acl|Hccl)\w+),", re.MULTILINE)
LIBRARIES = ("ascendcl", "nnopbase", "opapi", "hccl", "acl_op_compiler")  # each has a generated source, if empty
ERROR_RESULTS = frozenset({"aclError", "aclnnStatus"})


HOST_EVALUATED = frozenset(
    {
        "aclDataTypeSize",
        "aclGetCannAttribute",
        "aclGetCannAttributeList",
        "aclrtCheckArchCompatibility",
        "aclrtGetVersion",
        "aclrtDeviceGetStreamPriorityRange",
        "aclrtGetRunMode",
        "aclrtDeviceGetBareTgid",
    }
)


def hand_written() -> frozenset[str]:
    """The exported functions the hand-written sources define (and those `emit_host` writes)."""
    names: set[str] = set(HOST_EVALUATED)
    for path in sorted(SOURCES.rglob("*.c")):
        names.update(_DEFINED.findall(path.read_text()), _DEFINED_BY_MACRO.findall(path.read_text()))
    return frozenset(names)


@dataclass(frozen=True)
class Plan:
    """What the generated C of one function does: `kind` is "call", "phase1", "phase2" or "stub"."""

    kind: str
    why: str = ""  # a stub's reason (for the docs and the count)


def model_of(field: Any) -> type[WireModel] | None:
    """The call-table struct (a WireModel) an argument is, Optional or not; None for anything else."""
    import typing

    annotation = field.annotation
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, WireModel):
            return candidate
    return None


def element_model(field: Any) -> type[WireModel] | None:
    """The struct an array argument holds (`list[Model] | None`), or None."""
    import typing

    for candidate in typing.get_args(field.annotation):
        for inner in typing.get_args(candidate):
            if isinstance(inner, type) and issubclass(inner, WireModel):
                return inner
    return None


def emit_struct(expr: str, model: type[WireModel], out: list[str], indent: str = "    ") -> bool:
    """Lines that put the C struct `expr` (an lvalue) as `model`'s map, field by field under the same names;
    False when a field is neither plain nor a nested struct."""
    fields = list(model.model_fields.items())
    out.append(f"{indent}mp_map(&r.b, {len(fields)});")
    for name, field in fields:
        nested = model_of(field)
        out.append(f'{indent}mp_key(&r.b, "{name}");')
        if nested is not None:
            if not emit_struct(f"{expr}.{name}", nested, out, indent):
                return False
            continue
        kind = kind_of(field)
        if kind is None:
            return False
        out.append(f"{indent}{_put(kind, f'{expr}.{name}')}")
    return True


def kind_of(field: Any) -> str | None:
    """A call-table field's wire kind, or None when it is not plain: addr, int, uint, str, bool, float."""
    annotation = field.annotation
    if any(isinstance(m, BeforeValidator) for m in field.metadata):
        return "addr"
    if annotation is int:
        low = next((m.ge for m in field.metadata if hasattr(m, "ge")), 0)
        return "int" if low < 0 else "uint"
    if annotation in (str, str | None):
        return "str"
    if annotation is bool:
        return "bool"
    if annotation is float:
        return "float"
    return None


def aggregates(table: Table) -> frozenset[str]:
    """The typedef names of structs and unions (an out-parameter of one is not a plain value)."""
    from pycparser import c_ast, c_parser

    from client.capi.prototypes import STD_TYPES

    tree = c_parser.CParser().parse(STD_TYPES + table.cdef_types)
    found = set()
    for node in tree.ext:
        is_type = isinstance(node, c_ast.Typedef) and isinstance(node.type, c_ast.TypeDecl)
        if is_type and isinstance(node.type.type, c_ast.Struct | c_ast.Union):
            found.add(node.name)
    return frozenset(found)


def kind_of_list(field: Any) -> str:
    """A list argument's element kind: "addr" for handles, "int" for numbers."""
    return "addr" if "BeforeValidator" in str(field.annotation) else "int"


def plan(proto: Prototype, written: frozenset[str], structs: frozenset[str] = frozenset()) -> Plan:
    if proto.name in written:
        return Plan("hand")
    for decl in OPS.implemented():
        if proto.name in (decl.ws_name, max_workspace_name(decl.name)):
            return Plan("phase1")
        if proto.name == decl.c_name:
            return Plan("phase2")
    if proto.name in opgen.SPECIAL:
        return Plan("special")
    if proto.library == "opapi":
        return Plan("kernel", "an operator vnpu has no kernel for")
    call = CALLS.get(proto.name)
    if call is None:
        return Plan("stub", notes.UNSUPPORTED.get(proto.name, "not in the call table"))
    problem = _unplain(call, proto, structs)
    return Plan("stub", problem) if problem else Plan("call")


def _param(proto: Prototype, call: Call, name: str) -> str:
    return notes.C_NAMES.get((call.name, name), name)


def _unplain(call: Call, proto: Prototype, structs: frozenset[str]) -> str:
    params = {p.name: p.ctype for p in proto.params}
    for name, field in call.request.model_fields.items():
        if (
            (call.name, name) in notes.BYTES
            or (call.name, name) in notes.BYTES_VALUE
            or (call.name, name) in notes.LISTS
        ):
            continue
        if _param(proto, call, name) not in params:
            return f"the C prototype has no parameter {name}"
        model = model_of(field)
        if model is not None:
            if not emit_struct("x", model, []):
                return f"struct argument {name} has a field that is not plain"
            continue
        if kind_of(field) is None:
            return f"argument {name} is not plain ({field.annotation})"
    if call.name in notes.STRUCT_OUTS:
        bad = [n for n, f in call.result.model_fields.items() if kind_of(f) not in ("int", "uint", "addr")]
        return f"struct fields {bad} are not plain" if bad else ""
    for name, field in call.result.model_fields.items():
        if (call.name, name) in notes.BYTES_OUT:
            continue
        c = _param(proto, call, name)
        if c not in params or not params[c].rstrip().endswith("*"):
            return f"out-parameter {name} is no C pointer"
        if params[c].replace("const ", "").rstrip(" *") in structs:
            return f"out-parameter {name} is a C struct or union"
        kind = kind_of(field)
        if kind is None or (kind == "str" and (call.name, name) not in notes.STRING_LENGTH):
            return f"out-parameter {name} is not plain ({field.annotation})"
    return ""


def _signature(proto: Prototype) -> str:
    params = ", ".join(f"{p.ctype} {p.name}" for p in proto.params) or "void"
    return f"VN_EXPORT {proto.result} {proto.name}({params})"


def _failure(proto: Prototype, code: str) -> str:
    if proto.result == "void":
        return f"(void){code}; return;"
    if proto.result in ERROR_RESULTS:
        return f"return {code};"
    if proto.result.rstrip().endswith("*"):
        return f"(void){code}; return NULL;"
    return f"(void){code}; return 0;"


def _put(kind: str, expr: str) -> str:
    return {
        "addr": f"mp_uint(&r.b, vn_to_daemon((const void *)(uintptr_t)({expr})));",
        "int": f"mp_int(&r.b, (int64_t)({expr}));",
        "uint": f"mp_uint(&r.b, (uint64_t)({expr}));",
        "bool": f"mp_bool(&r.b, ({expr}) != 0);",
        "float": f"mp_double(&r.b, (double)({expr}));",
        "str": f"if ({expr}) mp_str(&r.b, {expr}); else mp_nil(&r.b);",
    }[kind]


def emit_call(proto: Prototype) -> str:
    call = CALLS[proto.name]
    api = proto.name
    lines = [_signature(proto), "{", f'    static const char api[] = "{api}";', "    vn_enter(api);"]
    outs = list(call.result.model_fields.items())
    ins = list(call.request.model_fields.items())
    inout = {name for name, _ in outs if name in call.request.model_fields}
    struct = notes.STRUCT_OUTS.get(api)
    if struct is not None:
        param, reserved = struct
        lines.append(f"    if (!{param}) {_failure(proto, f'vn_null_out(api, {chr(34)}{param}{chr(34)})')}")
        if reserved:
            must = f'vn_fail(100000, api, "{param}->{reserved} must be NULL (it is reserved)")'
            lines.append(f"    if ({param}->{reserved}) {{ {_failure(proto, must)} }}")
    for name, _ in outs if struct is None else ():
        param = _param(proto, call, name)
        lines.append(f"    if (!{param}) {_failure(proto, f'vn_null_out(api, {param!r})'.replace(chr(39), chr(34)))}")
    if api in notes.PUSH_BEFORE:
        lines.append(f"    {{ int pushed = vn_push_pinned(); if (pushed) {{ {_failure(proto, 'pushed')} }} }}")
    lines.append("    vn_req r;")
    lines.append(f"    vn_req_begin(&r, api, {len(ins)}, {int(call.asynchronous)});")
    for name, field in ins:
        if (api, name) in notes.BYTES:
            pointer, length = notes.BYTES[(api, name)]
            nil = (
                f"if (!{pointer}) mp_nil(&r.b); else "
                if field.default is None or "None" in str(field.annotation)
                else ""
            )
            too_big = (
                f'vn_fail(100000, api, "{pointer} does not hold {length} (%zu) bytes of this program (at most '
                f'{notes.MAX_BYTES})", (size_t)({length}))'
            )
            limit = (
                f"    if ({pointer} && ((size_t)({length}) > {notes.MAX_BYTES}u || !vn_readable({pointer}, {length}))) "
                f"{{ {_failure(proto, too_big)} }}"
            )
            lines.insert(4, limit)
            if api in notes.KERNEL_BLOCKS:  # managed pointers in the block become the daemon's
                lines.append(f"    void *managed_ = vn_managed_block({pointer}, {pointer} ? (size_t)({length}) : 0);")
                block = f"(managed_ ? managed_ : (void *)({pointer}))"
                lines.append(
                    f'    mp_key(&r.b, "{name}"); {nil}mp_bin(&r.b, {block}, {pointer} ? (size_t)({length}) : 0);'
                )
                lines.append("    free(managed_);")
                continue
            lines.append(
                f'    mp_key(&r.b, "{name}"); {nil}mp_bin(&r.b, {pointer}, {pointer} ? (size_t)({length}) : 0);'
            )
            continue
        if (api, name) in notes.BYTES_VALUE:
            value = notes.BYTES_VALUE[(api, name)]
            lines.append(f'    mp_key(&r.b, "{name}"); mp_bin(&r.b, &{value}, sizeof({value}));')
            continue
        model = model_of(field)
        element = element_model(field)
        if (api, name) in notes.LISTS and element is not None:  # an array of structs
            pointer, count, most = notes.LISTS[(api, name)]
            short = f'vn_fail(100000, api, "{pointer} does not hold {count} structs")'
            lines.append(
                f"    if ({pointer} && (size_t)({count}) <= {most}u && !vn_readable({pointer}, (size_t)({count}) * "
                f"sizeof(*{pointer}))) {{ {_failure(proto, short)} }}"
            )
            lines.append(
                f'    mp_key(&r.b, "{name}"); if (!{pointer}) mp_nil(&r.b); else {{ size_t n_ = (size_t)({count}) <= '
                f"{most}u ? (size_t)({count}) : 0; mp_array(&r.b, (uint32_t)n_); for (size_t i_ = 0; i_ < n_; i_++) {{"
            )
            emit_struct(f"{pointer}[i_]", element, lines, "        ")
            lines.append("    } }")
            continue
        if model is not None:
            param = _param(proto, call, name)
            by_pointer = dict((p.name, p.ctype) for p in proto.params)[param].rstrip().endswith("*")
            lines.append(f'    mp_key(&r.b, "{name}");')
            if by_pointer:
                lines.append(f"    if (!{param}) mp_nil(&r.b); else {{")
            emit_struct(f"(*{param})" if by_pointer else param, model, lines, "        ")
            if by_pointer:
                lines.append("    }")
            continue
        if (api, name) in notes.LISTS:
            pointer, count, most = notes.LISTS[(api, name)]
            put = "mp_uint(&r.b, (uint64_t)(uintptr_t)" if kind_of_list(field) == "addr" else "mp_int(&r.b, (int64_t)"
            unreadable = f'vn_fail(100000, api, "{pointer} does not hold {count} (%zu) elements", (size_t)({count}))'
            lines.append(  # beyond what a message carries: refused before anything is read (was a MemoryError)
                f"    if ({pointer} && (size_t)({count}) > {notes.MAX_BYTES}u / sizeof(*{pointer})) "
                f"{{ {_failure(proto, unreadable)} }}"
            )
            lines.append(
                f"    if ({pointer} && (size_t)({count}) <= {most}u && !vn_readable({pointer}, "
                f"(size_t)({count}) * sizeof(*{pointer}))) {{ {_failure(proto, unreadable)} }}"
            )
            lines.append(
                f'    mp_key(&r.b, "{name}"); if (!{pointer}) mp_nil(&r.b); else {{ size_t n_ = (size_t)({count}) <= '
                f"{most}u ? (size_t)({count}) : 0; mp_array(&r.b, (uint32_t)n_); "
                f"for (size_t i_ = 0; i_ < n_; i_++) {put}{pointer}[i_]); }}"
            )
            continue
        param = _param(proto, call, name)
        expr = f"*{param}" if name in inout else param
        lines.append(f'    mp_key(&r.b, "{name}"); {_put(kind_of(field) or "", expr)}')
        if name == "stream":
            lines.append(f"    r.has_stream = 1, r.stream = (uint64_t)(uintptr_t)({param});")
    reply = "&reply" if outs else "NULL"
    if outs:
        lines.append("    vn_reply reply;")
    lines.append(f"    int code = vn_call(&r, {reply});")
    lines.append(f"    if (code) {{ {_failure(proto, 'code')} }}")
    if outs:
        lines.append("    if (reply.root) {")
        if struct is not None:
            lines.append(f"        memset({struct[0]}, 0, sizeof(*{struct[0]}));")
        for name, field in outs:
            if (api, name) in notes.BYTES_OUT:
                pointer, size = notes.BYTES_OUT[(api, name)]
                size = size or f"sizeof(*{pointer})"
                lines.append(
                    f'        {{ const mp_obj *b_ = vn_out(&reply, "{name}"); if (b_ && (b_->type == MP_BIN || '
                    f"b_->type == MP_STR)) memcpy({pointer}, b_->v.s, b_->n < {size} ? b_->n : {size}); }}"
                )
                continue
            param = _param(proto, call, name)
            target = f"{struct[0]}->{name}" if struct is not None else f"*{param}"
            kind = kind_of(field)
            value = f'vn_out(&reply, "{name}")'
            if kind == "float":
                lines.append(f"        {target} = (__typeof__({target}))mp_f64({value});")
            elif kind == "str":
                length = notes.STRING_LENGTH[(api, name)]
                lines.append(f"        {{ char *s = mp_strdup({value}); size_t n = strlen(s);")
                lines.append(
                    f"          if ((size_t)({length}) > 0) {{ if (n >= (size_t)({length})) n = (size_t)({length}) - 1;"
                )
                lines.append(f"          memcpy({param}, s, n); {param}[n] = 0; }} free(s); }}")
            else:
                lines.append(f"        {target} = (__typeof__({target}))(uintptr_t)mp_u64v({value});")
        lines.append("        vn_reply_free(&reply);")
        lines.append("    }")
    if api in notes.PULL_AFTER:
        lines.append(f"    {{ int pulled = vn_pull_pinned(); if (pulled) {{ {_failure(proto, 'pulled')} }} }}")
    lines.append("    return 0;" if proto.result in ERROR_RESULTS else _failure(proto, "0"))
    lines.append("}")
    return "\n".join(lines)


def emit_stub(proto: Prototype, why: str) -> str:
    message = notes.UNSUPPORTED.get(proto.name)
    fail = f'vn_fail(207000, "{proto.name}", "%s", "{message}")' if message else f'vn_not_implemented("{proto.name}")'
    body = _failure(proto, fail)
    return f'/* {why} */\n{_signature(proto)}\n{{\n    vn_enter("{proto.name}");\n    {body}\n}}'


def emit_tables() -> str:
    codes = "\n".join(f'    case {code}: return "{name}";' for code, name in sorted(ERROR_NAMES.items()))
    sizes = "\n".join(f"    case {int(dtype)}: return {info.itemsize};" for dtype, info in _dtypes.INFO.items())
    early = " || ".join(f'strcmp(api, "{name}") == 0' for name in sorted(BEFORE_INIT)) or "0"
    unknown = '    default: snprintf(unknown, sizeof(unknown), "UNKNOWN_ERROR_%d", code); return unknown;\n'
    return (
        '#include "core.h"\n#include <stdio.h>\n#include <string.h>\n\n'
        "const char *vn_code_name(int code)\n{\n    static __thread char unknown[32];\n"
        f"    switch (code) {{\n{codes}\n{unknown}    }}\n}}\n\n"
        "int vn_answered_before_init(const char *api)\n{\n"
        f"    return {early};\n}}\n\n"
        "VN_EXPORT_INTERNAL int vn_itemsize(int dtype)\n{\n"
        f"    switch (dtype) {{\n{sizes}\n    default: return 0;\n    }}\n}}\n"
    )


@dataclass
class Generated:
    """The C source of each library, and what each function became."""

    sources: dict[str, str]
    plans: dict[str, Plan]


def generate(table: Table, headers: Iterable[str]) -> Generated:
    written = hand_written()
    structs = aggregates(table)
    includes = "".join(f'#include "{h}"\n' for h in sorted(headers))
    prelude = (
        "/* Generated by client/native/codegen.py from the prototype table and the call table: do not edit. */\n"
        "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n"
        f"{includes}"
        '#include "core.h"\n#include "hostobj.h"\n\n'
    )
    sources: dict[str, list[str]] = {}
    plans: dict[str, Plan] = {}
    for proto in table.prototypes:
        if proto.variadic or proto.name in notes.NOT_EXPORTED:
            continue
        chosen = plan(proto, written, structs)
        plans[proto.name] = chosen
        if chosen.kind == "hand":
            continue
        if chosen.kind == "call":
            text = emit_call(proto)
        elif chosen.kind == "phase1":
            text = opgen.emit_phase1(proto)
        elif chosen.kind == "phase2":
            text = opgen.emit_phase2(proto)
        elif chosen.kind == "special":
            text = opgen.emit_special(proto)
        elif chosen.kind == "kernel":
            text = opgen.emit_not_implemented(proto)
        else:
            text = emit_stub(proto, chosen.why)
        sources.setdefault(proto.library, []).append(text)
    done = {}
    for library in LIBRARIES:
        sources.setdefault(library, [])
    for library, bodies in sources.items():
        ops = opgen.SPECIAL_STATE + "\n" + opgen.emit_ops() + "\n\n" if library == "opapi" else ""
        done[library] = prelude + ops + "\n\n".join(bodies) + "\n"
    done["tables"] = emit_tables()
    done["host"] = '#include "core.h"\n#include <stdint.h>\n#pragma GCC visibility push(default)\n' + emit_host()
    return Generated(done, plans)


def _host_error(call: Any, *args: Any) -> tuple[int, str]:
    """What a host function of `proto.host` answers for `args`: (0, "") or its AclError's code and message."""
    from proto.errors import AclError

    try:
        call(*args)
    except AclError as error:
        return error.code, error.message
    return 0, ""


def emit_host() -> str:
    """The host functions of `proto.host` whose answers depend only on their arguments' enum values or on nothing:
    evaluated here, over every value, so the C answers are the Python ones."""
    import proto.host as host
    from proto.constants import aclCannAttr, aclDataType
    from proto.identity import NPU_ARCHES

    def c_string(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    sizes = "\n".join(f"    case {int(t)}: return {host.aclDataTypeSize(int(t))};" for t in aclDataType)
    attrs = []
    for attr in aclCannAttr:
        code, _ = _host_error(host.aclGetCannAttribute, int(attr))
        value = host.aclGetCannAttribute(int(attr)) if not code else 0
        attrs.append(f"    case {int(attr)}: *value = {value}; return 0;")
    _, bad_attr = _host_error(host.aclGetCannAttribute, -1)
    available = ", ".join(str(a) for a in host.aclGetCannAttributeList()) or "0"
    count = len(host.aclGetCannAttributeList())
    socs = "\n".join(f"    {{{c_string(name)}, {host.aclrtCheckArchCompatibility(name)}}}," for name in NPU_ARCHES)
    from proto.randomnum import RT_DATA_TYPES

    random_types = "\n".join(f"    case {int(k)}: return {int(v)};" for k, v in RT_DATA_TYPES.items())
    major, minor, patch = host.aclrtGetVersion()
    least, greatest = host.aclrtDeviceGetStreamPriorityRange()
    return f"""
#include <string.h>
#include <unistd.h>
size_t aclDataTypeSize(int dataType)
{{
    switch (dataType) {{
{sizes}
    default: return {host.aclDataTypeSize(-1)};
    }}
}}
int aclGetCannAttribute(int cannAttr, int32_t *value)
{{
    vn_enter("aclGetCannAttribute");
    if (!value) return vn_null_out("aclGetCannAttribute", "value");
    switch (cannAttr) {{
{chr(10).join(attrs)}
    default:
        return vn_fail(100000, "aclGetCannAttribute", "cannAttr %d is not an aclCannAttr (0, 1 or 2)", cannAttr);
    }}
    (void){c_string(bad_attr)};
}}
static const int available_attributes[] = {{{available}}};
int aclGetCannAttributeList(const int **cannAttrList, size_t *num)
{{
    vn_enter("aclGetCannAttributeList");
    if (!cannAttrList || !num)
        return vn_fail(100000, "aclGetCannAttributeList", "%s is NULL: it must point to where the result goes",
                       !cannAttrList ? "cannAttrList" : "num");
    *cannAttrList = available_attributes, *num = {count};
    return 0;
}}
static const struct {{ const char *name; int same; }} socs[] = {{
{socs}
}};
int aclrtCheckArchCompatibility(const char *socVersion, int32_t *canCompatible)
{{
    const char *api = "aclrtCheckArchCompatibility";
    vn_enter(api);
    if (!canCompatible) return vn_null_out(api, "canCompatible");
    if (!socVersion || !*socVersion) return vn_fail(107000, api, "socVersion is NULL or empty");
    for (size_t i = 0; i < sizeof(socs) / sizeof(socs[0]); i++)
        if (!strcmp(socs[i].name, socVersion)) return *canCompatible = socs[i].same, 0;
    return vn_fail(107000, api, "'%s' is not a SoC name the runtime knows", socVersion);
}}
int aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion)
{{
    vn_enter("aclrtGetVersion");
    if (!majorVersion || !minorVersion || !patchVersion)
        return vn_fail(100000, "aclrtGetVersion", "%s is NULL: it must point to where the result goes",
                       !majorVersion ? "majorVersion" : !minorVersion ? "minorVersion" : "patchVersion");
    *majorVersion = {major}, *minorVersion = {minor}, *patchVersion = {patch};
    return 0;
}}
int aclrtDeviceGetStreamPriorityRange(int32_t *leastPriority, int32_t *greatestPriority)
{{
    vn_enter("aclrtDeviceGetStreamPriorityRange");
    if (leastPriority) *leastPriority = {least};
    if (greatestPriority) *greatestPriority = {greatest};
    return 0;
}}
int aclrtGetRunMode(int *runMode)
{{
    vn_enter("aclrtGetRunMode");
    if (!runMode) return vn_null_out("aclrtGetRunMode", "runMode");
    *runMode = {host.aclrtGetRunMode()};
    return 0;
}}
int vn_rt_random_data_type(int dtype)
{{
    switch (dtype) {{
{random_types}
    default: return -1;
    }}
}}
int aclrtDeviceGetBareTgid(int32_t *pid)
{{
    vn_enter("aclrtDeviceGetBareTgid");
    if (!pid) return vn_null_out("aclrtDeviceGetBareTgid", "pid");
    *pid = (int32_t)getpid();
    return 0;
}}
"""
