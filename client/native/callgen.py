"""The generated marshalling of a call-table function (`plan.Plan` "call") and the stub of an unsupported one.

Each argument is read from the C parameter of its name into the envelope, each out-parameter NULL-checked first and
written back through its pointer; calls that only queue work are pipelined (`annotations` holds what the types do
not say). A stub answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000), saying so in aclGetRecentErrMsg (a pointer
result is NULL, a void one returns).
"""

from __future__ import annotations

from client.capi.prototypes import Prototype
from client.native import annotations as notes
from client.native.plan import c_param, element_model, kind_of, kind_of_list, model_of
from proto.calltable import CALLS, WireModel

ERROR_RESULTS = frozenset({"aclError", "aclnnStatus"})


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
        param = c_param(proto, call, name)
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
            param = c_param(proto, call, name)
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
        param = c_param(proto, call, name)
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
            param = c_param(proto, call, name)
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
