"""The C functions a public aclnn header declares, read with pycparser after a light preprocessing.

CANN's `op_api/aclnn_*.h` are C declarations wrapped in C++ guards, visibility macros and deprecation
attributes, and a few carry C++ helpers (namespaces, inline functions). The preprocessing here drops
comments, preprocessor lines, `extern "C"`, `ACLNN_API`-style macros and attributes (noting deprecation),
keeps only the top-level statements outside any brace block, and hands each statement that declares an
`acl*` function to pycparser with a prelude typedef-ing the aclnn host types. A developer tool: the
catalog loader never imports it.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from pycparser import c_ast, c_generator, c_parser

from proto.aclnn.catalog import CParam

HOST_TYPES = (
    "aclTensor",
    "aclScalar",
    "aclIntArray",
    "aclFloatArray",
    "aclBoolArray",
    "aclTensorList",
    "aclScalarList",
    "aclOpExecutor",
)
PRELUDE = (
    "typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;"
    "typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;"
    "typedef unsigned long uint64_t; typedef unsigned long size_t; typedef _Bool bool;"
    "typedef int aclnnStatus; typedef void *aclrtStream; typedef int aclDataType; typedef void *HcclComm;"
    + "".join(f"typedef struct {name} {name};" for name in HOST_TYPES)
    + "\n"
)
VISIBILITY_MACROS = re.compile(r"\b(ACLNN_API|ACL_FUNC_VISIBILITY|ACLNN_EXPORT)\b")
DEPRECATION = re.compile(r"__attribute__\s*\(\(\s*deprecated|ACL_DEPRECATED_MESSAGE|\[\[\s*deprecated")
FUNCTION_NAME = re.compile(r"\b(acl\w*)\s*\(")


class HeaderError(Exception):
    """A statement of a header could not be read as a C declaration."""


@dataclass(frozen=True)
class DeclaredFunction:
    """A function as a header declares it; parameter types in pycparser's spelling (`const aclTensor *`)."""

    name: str
    result: str
    params: tuple[CParam, ...]
    deprecated: bool = False


def read_header(text: str) -> list[DeclaredFunction]:
    """The `acl*` functions declared at the top level of a header, in order."""
    functions = []
    for statement in top_level_statements(strip_preprocessor(strip_comments(text))):
        declaration = remove_attributes(statement)
        if FUNCTION_NAME.search(declaration) is not None:
            deprecated = DEPRECATION.search(statement) is not None
            functions.append(parse_declaration(declaration, deprecated))
    return functions


def strip_comments(text: str) -> str:
    """The text without /* */ and // comments; string and character literals are kept whole."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        two = text[i : i + 2]
        if two == "/*":
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif two == "//":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text[i] in "\"'":
            end = _literal_end(text, i)
            out.append(text[i:end])
            i = end
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _literal_end(text: str, start: int) -> int:
    quote, i = text[start], start + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def strip_preprocessor(text: str) -> str:
    """The text without preprocessor lines (continued lines included) and `extern "C"` wrappers."""
    kept, continued = [], False
    for line in text.splitlines():
        directive = continued or line.lstrip().startswith("#")
        continued = directive and line.rstrip().endswith("\\")
        if not directive:
            kept.append(line)
    return re.sub(r'extern\s+"C"\s*\{?', " ", "\n".join(kept))


def top_level_statements(text: str) -> list[str]:
    """Statements ending with `;` at brace depth 0; a statement holding a brace block is dropped whole."""
    statements: list[str] = []
    current: list[str] = []
    depth, had_block = 0, False
    for char in text:
        if char == "{":
            depth += 1
            had_block = True
        elif char == "}":
            if depth == 0:  # the closing brace of an `extern "C" {` removed above
                current = []
                continue
            depth -= 1
            if depth == 0 and not _continues_after_block(current):
                current, had_block = [], False
                continue
        current.append(char)
        if char == ";" and depth == 0:
            statement = "".join(current).strip()
            if not had_block:
                statements.append(statement)
            current, had_block = [], False
    return statements


def _continues_after_block(current: list[str]) -> bool:
    """Whether the block just closed is a type body followed by a declarator (`struct {...} x;`)."""
    head = "".join(current).split("{", 1)[0]
    return re.search(r"\b(struct|union|enum|typedef)\b", head) is not None


def remove_attributes(statement: str) -> str:
    text = VISIBILITY_MACROS.sub(" ", statement)
    text = re.sub(r"\[\[.*?\]\]", " ", text, flags=re.S)
    for macro in ("__attribute__", "ACL_DEPRECATED_MESSAGE"):
        while (start := text.find(macro)) >= 0:
            text = text[:start] + " " + text[_balanced_end(text, text.index("(", start)) :]
    return text


def _balanced_end(text: str, open_at: int) -> int:
    depth, i = 0, open_at
    while i < len(text):
        if text[i] in "\"'":
            i = _literal_end(text, i)
            continue
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return i
    raise HeaderError(f"unbalanced parentheses in {text!r}")


_PARSER = c_parser.CParser()
_GENERATOR = c_generator.CGenerator()
_PRELUDE_LENGTH = len(_PARSER.parse(PRELUDE).ext)


def parse_declaration(statement: str, deprecated: bool = False) -> DeclaredFunction:
    """One C function declaration (`aclnnStatus aclnnAdd(...);`)."""
    try:
        tree = _PARSER.parse(PRELUDE + statement, filename="<header>")
    except Exception as error:  # pycparser's ParseError names the place
        raise HeaderError(f"cannot parse {' '.join(statement.split())!r}: {error}") from None
    declarations = tree.ext[_PRELUDE_LENGTH:]
    if len(declarations) != 1 or not isinstance(declarations[0].type, c_ast.FuncDecl):
        raise HeaderError(f"not one function declaration: {' '.join(statement.split())!r}")
    node: c_ast.Decl = declarations[0]
    func: c_ast.FuncDecl = node.type
    params = []
    for index, param in enumerate(func.args.params if func.args else ()):
        ctype = type_text(param.type)
        if ctype == "void" and not param.name:
            continue
        params.append(CParam(param.name or f"arg{index}", ctype))
    return DeclaredFunction(node.name, type_text(func.type), tuple(params), deprecated)


def type_text(node: c_ast.Node) -> str:
    """A declarator's type without its identifier, in pycparser's one spelling: `const aclTensor *`."""
    clone = copy.deepcopy(node)
    inner = clone
    while not isinstance(inner, c_ast.TypeDecl):
        inner = inner.type
    inner.declname = None
    text: str = _GENERATOR.visit(clone)
    return text
