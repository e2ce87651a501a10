"""The table of C prototypes: every function the toolkit's headers declare, read from the headers themselves.

The expanded headers are the one source: the C preprocessor (with VNPU_CDEF, which empties the visibility and
deprecation macros, and stand-ins for the standard headers) flattens them, pycparser reads the result, and each
function declaration becomes a `Prototype` (name, C result type, parameters with their C types and names, the
header it comes from, the library that exports it). The same text, without the functions, is the type
declarations (`Table.cdef_types`) the native toolkit's code generator and the tests parse.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from pycparser import c_ast, c_generator, c_parser

STD_TYPES = (
    "typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;"
    "typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;"
    "typedef unsigned long uint64_t; typedef unsigned long size_t; typedef unsigned long uintptr_t;"
    "typedef long intptr_t; typedef long ptrdiff_t; typedef _Bool bool; typedef int wchar_t;\n"
)
STD_HEADERS = ("stdint.h", "stddef.h", "stdlib.h", "stdbool.h", "string.h", "stdio.h")
# the library that exports a header's functions, by the first part of its path
LIBRARIES = {"acl": "ascendcl", "vnpu": "ascendcl", "aclnn": "nnopbase", "aclnnop": "opapi"}
LIBRARIES.update({"mstx": "ascendcl", "profiling": "ascendcl", "hccl": "hccl"})
VENDOR_PREFIX = "vendors"  # `vendors/custom_<repo>/<header>`: an operator only a custom package's header declares
LIBRARIES[VENDOR_PREFIX] = "opapi"
# headers whose functions another library exports than their directory's (CANN's legacy operator compiler)
HEADER_LIBRARIES = {"acl/acl_op_compiler.h": "acl_op_compiler"}


class PrototypeError(Exception):
    """The headers could not be read as a prototype table."""


@dataclass(frozen=True)
class Param:
    ctype: str
    name: str


@dataclass(frozen=True)
class Prototype:
    name: str
    result: str
    params: tuple[Param, ...]
    header: str
    variadic: bool = False

    @property
    def library(self) -> str:
        return HEADER_LIBRARIES.get(self.header) or LIBRARIES[self.header.split("/", 1)[0]]


@dataclass(frozen=True)
class Table:
    prototypes: tuple[Prototype, ...]
    cdef_types: str

    @cached_property
    def by_name(self) -> dict[str, Prototype]:
        return {p.name: p for p in self.prototypes}

    def of_library(self, library: str) -> tuple[Prototype, ...]:
        return tuple(p for p in self.prototypes if p.library == library)


def preprocess(include: Path, headers: list[str], cc: str) -> str:
    """The headers flattened by the C preprocessor, line markers kept (they name each declaration's header)."""
    with tempfile.TemporaryDirectory(prefix="vnpu-cdef-") as tmp:
        std = Path(tmp) / "std"
        std.mkdir()
        for name in STD_HEADERS:
            (std / name).write_text("")
        root = Path(tmp) / "all.c"
        root.write_text("".join(f'#include "{h}"\n' for h in headers))
        done = subprocess.run(
            [cc, "-E", "-nostdinc", "-DVNPU_CDEF", "-I", str(std), "-I", str(include), str(root)],
            capture_output=True,
            text=True,
        )
    if done.returncode != 0:
        raise PrototypeError(f"the C preprocessor failed on the toolkit headers:\n{done.stderr}")
    return done.stdout


def read_table(include: Path, headers: list[str], cc: str | None = None) -> Table:
    """The prototype table of `headers` (paths under `include`, as a program includes them)."""
    compiler = cc or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise PrototypeError("no C compiler found (cc or gcc): install one, e.g. `apt-get install g++`")
    text = preprocess(include, headers, compiler)
    try:
        tree = c_parser.CParser().parse(STD_TYPES + text, filename="<headers>")
    except Exception as error:  # pycparser raises ParseError with the place
        raise PrototypeError(f"cannot parse the toolkit headers: {error}") from None
    generator = c_generator.CGenerator()
    prelude = len(c_parser.CParser().parse(STD_TYPES).ext)
    prototypes: list[Prototype] = []
    types: list[str] = []
    for node in tree.ext[prelude:]:
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl):
            prototypes.append(_prototype(node, generator, include))
        elif not (isinstance(node, c_ast.Decl) and "static" in node.storage):  # constants stay in C
            types.append(generator.visit(node) + ";")
    names = [p.name for p in prototypes]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise PrototypeError(f"declared twice: {', '.join(twice)}")
    return Table(tuple(prototypes), "\n".join(types))


def _prototype(node: c_ast.Decl, generator: c_generator.CGenerator, include: Path) -> Prototype:
    func: c_ast.FuncDecl = node.type
    params: list[Param] = []
    variadic = False
    for index, param in enumerate(func.args.params if func.args else ()):
        if isinstance(param, c_ast.EllipsisParam):
            variadic = True
            continue
        ctype = _type_text(param.type, generator)
        if ctype == "void" and not param.name:
            continue
        params.append(Param(ctype, param.name or f"arg{index}"))
    result = _type_text(func.type, generator)
    return Prototype(node.name, result, tuple(params), _header_of(node, include), variadic)


def _type_text(node: c_ast.Node, generator: c_generator.CGenerator) -> str:
    """A declarator's type without its identifier: `const aclTensor *` for `const aclTensor *x` (the name is
    taken out for the generator and put back: a copy of each node cost most of the toolkit's parse time)."""
    inner = node
    while not isinstance(inner, c_ast.TypeDecl):
        if not hasattr(inner, "type"):
            return str(generator.visit(node))
        inner = inner.type
    name, inner.declname = inner.declname, None
    try:
        return str(generator.visit(node))
    finally:
        inner.declname = name


def _header_of(node: c_ast.Node, include: Path) -> str:
    file = str(node.coord.file) if node.coord else ""
    try:
        return Path(file).resolve().relative_to(include.resolve()).as_posix()
    except ValueError:
        raise PrototypeError(f"{getattr(node, 'name', '?')} is declared outside the toolkit headers ({file})") from None
