"""libopapi.so's functions as generated C, all entering Python through one function.

CANN declares 1,212 public operators (2,424 functions) and a few other public functions, and vnpu exports every one
from libopapi.so, so that a program naming any of them links and a program that only reaches one on a side path
runs. Each is generated here as a C function of one line that hands its arguments to `vnpu_call`, which packs
them into an array of `vnpuArg` (a pointer, an integer or a double) and calls `vnpuAclnnCall(name, signature,
args)`, libopapi's one CFFI callback; `signature` is the function's C result and parameter types, from which the
Python side (`client.capi.opentry`) unpacks the arguments once it knows the function, and runs its implementation
(`client.capi.hostobj`: phase 1 in the program, phase 2 a launch) or, for an operator vnpu does not implement,
answers `ACLNN_ERR_INNER_FIND_KERNEL` (561003) with `vnpu does not implement aclnnXxx yet`.

Why not a CFFI callback each, as the runtime's functions are: CFFI's embedding mode writes a wrapper per exported
function into the library's one C file (compiled with Python's `-O2 -g`) and the embedded interpreter defines each
at load. For 2,400 functions that more than doubled the toolkit's build (3.7 s of CPU to 10.6) and cost every C
program 0.14 s and 40 MiB more at start; even for the 216 implemented operators alone it was 2 s more to build.
This file compiles at `-O0` in under a second whatever vnpu implements, and the Python side makes a function's
unpacking on its first call (docs/c-operators.md has the measurements).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from client.capi.prototypes import Prototype
from proto.errors import ACLNN_ERR_INNER_FIND_KERNEL

ENTRY = "vnpuAclnnCall"
ARG_TYPE = "typedef union vnpuArg { void *p; int64_t i; double d; } vnpuArg;"
ENTRY_DECLARATION = f"int64_t {ENTRY}(const char *name, const char *signature, vnpuArg *args);"
NOT_IMPLEMENTED = ACLNN_ERR_INNER_FIND_KERNEL
"""The status of a declared operator vnpu has no kernel for (561003, as CANN's when it finds no kernel)."""
SEPARATOR = "|"
MAX_ARGS = 64  # the most parameters a function may have (FusedInferAttentionScoreV4GetWorkspaceSize has 47)
RESULTS = frozenset({"aclnnStatus", "int32_t", "int", "int64_t", "void"})


def signature(p: Prototype) -> str:
    """`result|type of param 0|...`: what the entry needs to unpack the arguments."""
    return SEPARATOR.join([p.result, *(q.ctype for q in p.params)])


def member(ffi: Any, ctype: str) -> str:
    """The vnpuArg member an argument of `ctype` travels in: p (pointers), d (float, double), i (the rest)."""
    kind = ffi.typeof(ctype)
    if kind.kind == "pointer":
        return "p"
    return "d" if kind.kind == "primitive" and kind.cname in ("float", "double") else "i"


def code(ffi: Any, ctype: str) -> str:
    """How `vnpu_call` takes an argument of `ctype` from its variable arguments (as C promotes it): p a pointer, d a
    double (float too), l a 64-bit integer, u an unsigned int, i an int (bool, int8, int32, enums)."""
    slot = member(ffi, ctype)
    if slot != "i":
        return slot
    if ffi.sizeof(ctype) == 8:
        return "l"
    return "u" if ffi.sizeof(ctype) == 4 and ffi.typeof(ctype).cname.startswith(("unsigned", "uint")) else "i"


def _definition(ffi: Any, p: Prototype) -> str:
    if p.result not in RESULTS:
        raise ValueError(f"{p.name}: no generated C for a function returning {p.result}")
    if len(p.params) > MAX_ARGS:
        raise ValueError(f"{p.name}: {len(p.params)} parameters, more than {MAX_ARGS}")
    params = ", ".join(f"{q.ctype} {q.name}".replace("* ", "*") for q in p.params) or "void"
    codes = "".join(code(ffi, q.ctype) for q in p.params)
    passed = "".join(f", {q.name}" for q in p.params)
    call = f'vnpu_call("{p.name}", "{codes}", "{signature(p)}"{passed})'
    body = f"{call};" if p.result == "void" else f"return ({p.result}){call};"
    return f"{p.result} {p.name}({params})\n{{\n    {body}\n}}\n"


# the one C function every generated one calls: the arguments into a vnpuArg array, by their codes, then the entry
CALL = f"""#include <stdarg.h>
static int64_t vnpu_call(const char *name, const char *codes, const char *signature, ...)
{{
    vnpuArg args[{MAX_ARGS}];
    va_list list;
    va_start(list, signature);
    for (int i = 0; codes[i] != '\\0'; i++) {{
        switch (codes[i]) {{
        case 'p': args[i].p = va_arg(list, void *); break;
        case 'd': args[i].d = va_arg(list, double); break;
        case 'l': args[i].i = va_arg(list, int64_t); break;
        case 'u': args[i].i = (int64_t)va_arg(list, unsigned int); break;
        default: args[i].i = va_arg(list, int); break;
        }}
    }}
    va_end(list);
    return {ENTRY}(name, signature, args);
}}
"""


def source(ffi: Any, prototypes: Iterable[Prototype], headers: Iterable[str]) -> str:
    """The C file: the headers that declare the functions (the compiler checks each definition against its
    declaration), the entry's declaration, then one definition per function."""
    includes = "".join(f'#include "{h}"\n' for h in sorted(set(headers)))
    definitions = "\n".join(_definition(ffi, p) for p in prototypes)
    return (
        "/* Generated by vnpu (client/capi/opcalls.py): libopapi.so's functions, entering Python through one. */\n"
        f"#include <stdint.h>\n{includes}\n{ARG_TYPE}\n{ENTRY_DECLARATION}\n\n{CALL}\n{definitions}"
    )
