"""The toolkit's `include/` tree: vnpu's authored headers with proto's constants filled in, CANN's operator headers
generated from the catalog (`client.capi.opheaders`), and one header per user-declared operator the catalog lacks.

The authored headers (`client/capi/include/`, laid out as in a CANN package) hold the typedefs, structs and
prototypes. What `proto` already knows is not written there again: a marker line asks for it.

    /* vnpu: enums aclDataType aclFormat */   typedef enum NAME { MEMBER = value, ... } NAME;  per listed enum
    /* vnpu: defines ACL_EVENT_* */           #define NAME 0x...U  per proto.constants flag that matches
    /* vnpu: codes ACL_ERROR_RT_* */          static const <type> NAME = value; (or #define) per matching code

A pattern ending in `*` is a prefix; a name goes to the marker whose pattern matches it most closely (an exact
name, else the longest prefix), so every constant appears exactly once in the tree. `expand_tree` fails when a
constant is placed nowhere or twice, or a marker names something proto lacks.

    python -m client.capi.headers OUTDIR    writes the expanded tree (what `vnpu toolkit` installs)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

import proto.constants as _constants
import proto.errors as _errors
from client.capi import opheaders
from proto.aclnn import OPS, ArgKind, OpDecl
from proto.aclnn.catalog import catalog
from proto.aclnn.decl import C_TYPES
from proto.operators import USER

SOURCE = Path(__file__).parent / "include"
MARKER = re.compile(r"^[ \t]*/\* vnpu: (enums|defines|codes) ([^*]*(?:\*(?!/)[^*]*)*)\*/[ \t]*$", re.MULTILINE)
# how a header declares its error codes (the real headers' choice): a C type, or "#define"
CODE_TYPES = {
    "acl/error_codes/rt_error_codes.h": "#define",
    "acl/error_codes/ge_error_codes.h": "uint32_t",
    "aclnn/aclnn_base.h": "aclnnStatus",
}


class HeaderError(Exception):
    """The authored headers and proto disagree about a constant."""


def enums() -> dict[str, type[IntEnum]]:
    return {enum.__name__: enum for enum in _constants.ENUMS}


def defines() -> dict[str, int]:
    """The `#define` flags: proto.constants' module-level ACL_* ints (enum members are not plain ints)."""
    return {n: v for n, v in vars(_constants).items() if n.startswith("ACL_") and type(v) is int}


def codes() -> dict[str, int]:
    return {n: v for n, v in vars(_errors).items() if n.startswith(("ACL_", "ACLNN_")) and type(v) is int}


@dataclass(frozen=True)
class Marker:
    header: str  # the path under include/
    kind: str  # enums | defines | codes
    patterns: tuple[str, ...]


def _matches(pattern: str, name: str) -> bool:
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else name == pattern


def _closeness(pattern: str) -> int:
    return 10_000 if not pattern.endswith("*") else len(pattern)


def assign(markers: list[Marker]) -> dict[tuple[str, str], list[str]]:
    """Which names each marker emits, keyed by (header, kind), in proto's order; checks the placement."""
    known = {"enums": list(enums()), "defines": list(defines()), "codes": list(codes())}
    placed: dict[tuple[str, str], list[str]] = {(m.header, m.kind): [] for m in markers}
    for kind, names in known.items():
        candidates = [(m, p) for m in markers if m.kind == kind for p in m.patterns]
        for pattern_marker, pattern in candidates:
            if not any(_matches(pattern, n) for n in names):
                raise HeaderError(f"{pattern_marker.header}: '{kind} {pattern}' matches nothing in proto")
        for name in names:
            best = [(m, p) for m, p in candidates if _matches(p, name)]
            if not best:
                raise HeaderError(f"{kind[:-1]} {name} of proto is placed in no header (add it to a marker)")
            top = max(_closeness(p) for _, p in best)
            winners = {m for m, p in best if _closeness(p) == top}
            if len(winners) > 1:
                raise HeaderError(f"{name} matches markers in {sorted(m.header for m in winners)} equally")
            (winner,) = winners
            placed[(winner.header, kind)].append(name)
    return placed


def _emit(header: str, kind: str, names: list[str]) -> str:
    if kind == "enums":
        return "\n".join(_enum_c(enums()[name]) for name in names)
    if kind == "defines":
        return "\n".join(_define_c(n, defines()[n]) for n in names)
    ctype = CODE_TYPES.get(header, "int")
    if ctype == "#define":
        return "\n".join(f"#define {n} {codes()[n]}" for n in names)
    suffix = "U" if ctype.startswith("u") else ""
    return "\n".join(f"static const {ctype} {n} = {codes()[n]}{suffix};" for n in names)


def _define_c(name: str, value: int) -> str:
    return f"#define {name} 0x{value:08X}" + ("U" if value <= 0xFFFFFFFF else "ULL")


def _enum_c(enum: type[IntEnum]) -> str:
    members = "\n".join(f"    {name} = {int(member)}," for name, member in enum.__members__.items())
    return f"typedef enum {enum.__name__} {{\n{members}\n}} {enum.__name__};\n"


def authored() -> Iterator[tuple[str, str]]:
    """(path under include/, text) of every authored header."""
    for path in sorted(SOURCE.rglob("*.h")):
        yield path.relative_to(SOURCE).as_posix(), path.read_text()


def markers_of(header: str, text: str) -> list[Marker]:
    return [Marker(header, m.group(1), tuple(m.group(2).split())) for m in MARKER.finditer(text)]


def op_header(decl: OpDecl) -> str:
    """`aclnnop/aclnn_<op>.h`: the operator's two phases, with the C types of its declaration."""
    params = [f"{_arg_ctype(arg.kind, arg.c_type)}{arg.name}" for arg in decl.args]
    phase1 = ",\n    ".join([*params, "uint64_t *workspaceSize", "aclOpExecutor **executor"])
    guard = f"VNPU_ACLNN_{_snake(decl.name).upper()}_H_"
    declared = USER.get(decl.name)
    where = f"the module {declared.module}" if declared is not None else "proto/aclnn/ops.py"
    return (
        f"/* aclnn{decl.name}: generated by vnpu from its operator declaration ({where}). */\n"
        f'#ifndef {guard}\n#define {guard}\n\n#include "aclnn/aclnn_base.h"\n\n'
        "#ifndef ACLNN_API\n#define ACLNN_API ACL_FUNC_VISIBILITY\n#endif\n\n"
        '#ifdef __cplusplus\nextern "C" {\n#endif\n\n'
        f"ACLNN_API aclnnStatus {decl.ws_name}(\n    {phase1});\n\n"
        f"ACLNN_API aclnnStatus {decl.c_name}(\n    void *workspace,\n    uint64_t workspaceSize,\n"
        "    aclOpExecutor *executor,\n    aclrtStream stream);\n\n"
        "#ifdef __cplusplus\n}\n#endif\n\n"
        f"#endif /* {guard} */\n"
    )


_ARG_CTYPES = {
    ArgKind.TENSOR: "const aclTensor *",
    ArgKind.OUT: "aclTensor *",
    ArgKind.INPLACE: "const aclTensor *",  # aclTensor * converts to it, so both spellings of the docs compile
    ArgKind.SCALAR: "const aclScalar *",
    ArgKind.INT_ARRAY: "const aclIntArray *",
    ArgKind.INT: "int64_t ",
    ArgKind.BOOL: "bool ",
    ArgKind.DTYPE: "aclDataType ",
}


def _arg_ctype(kind: ArgKind, override: str) -> str:
    """The C type of a user-declared operator's argument: as declared, else the kind's usual one (`C_TYPES`)."""
    ctype = (override or _ARG_CTYPES.get(kind) or C_TYPES[kind]).strip()
    return ctype if ctype.endswith("*") else f"{ctype} "


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def op_header_path(decl: OpDecl) -> str:
    """The header of an operator: the catalog's for CANN's operators, `aclnn_<snake name>.h` for a user's."""
    known = catalog().ops.get(decl.name)
    return f"aclnnop/{known.header}" if known is not None else f"aclnnop/aclnn_{_snake(decl.name)}.h"


def expand_tree() -> dict[str, str]:
    """Every header of the toolkit's include/ by path: the authored ones expanded, the operators' generated."""
    sources = dict(authored())
    markers = [m for header, text in sources.items() for m in markers_of(header, text)]
    placed = assign(markers)

    def expand(header: str, text: str) -> str:
        def replace(match: re.Match[str]) -> str:
            return _emit(header, match.group(1), placed[(header, match.group(1))])

        return MARKER.sub(replace, text)

    tree = {header: expand(header, text) for header, text in sources.items()}
    tree.update(opheaders.tree())
    declared = catalog().ops
    tree.update({op_header_path(decl): op_header(decl) for decl in OPS.user().values() if decl.name not in declared})
    return tree


def write_tree(root: Path) -> list[Path]:
    written = []
    for header, text in expand_tree().items():
        path = root / header
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "include")
    print(f"{len(write_tree(out))} headers written under {out}")
