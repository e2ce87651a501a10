"""CANN's OpDef files (`op_host/<op>_def.cpp`) read as data: inputs, outputs, attributes, dtypes and formats.

An OpDef is a C++ class whose constructor chains calls:
`this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ...}).Format({ge::FORMAT_ND, ...})`,
`this->Output("y")...`, `this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-6)`, then `OP_ADD(RmsNorm)`.
Only the `this->` chains are read (the defaults; per-chip `OpAICoreConfig` overrides are not). A list or
constant named by an identifier is resolved with the nearest definition before its use in the same file
(`static const std::vector<ge::DataType> dataType = {...}`, `constexpr uint32_t VERSION_TWO = 2`); what
cannot be resolved is kept as its source text and reported by `OpDef.unresolved`.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from proto.aclnn.catalog.cheader import strip_comments
from proto.constants import aclDataType

REPEAT = "__repeat__"
Value = str | int | float | bool | list["Value"] | None

CLASS = re.compile(r"\bclass\s+(\w+)\s*:\s*public\s+(?:ops::)?OpDef\b")
OP_ADD = re.compile(r"\bOP_ADD\s*\(\s*(\w+)")
DEFINITION = re.compile(r"\b([A-Za-z_]\w*)\s*(?:\[\s*\w*\s*\])?\s*(=(?!=)|\{)")
DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(.+?)\s*$", re.M)
REPEATED = re.compile(r"\b(\w+)\s*\(\s*(\w+)\s*\.\s*size\s*\(\s*\)\s*,\s*([^();]+?)\s*\)\s*;")
NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?[fFlLuU]*")
ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], int | float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
LIMITS: dict[str, int | float] = {
    "INT64_MAX": 2**63 - 1,
    "INT64_MIN": -(2**63),
    "INT32_MAX": 2**31 - 1,
    "INT32_MIN": -(2**31),
    "UINT32_MAX": 2**32 - 1,
    "FLT_MAX": 3.4028234663852886e38,
}


@dataclass(frozen=True)
class OpDefParam:
    """One `Input` or `Output` of an OpDef."""

    name: str
    param_type: str  # REQUIRED, OPTIONAL or DYNAMIC
    dtypes: tuple[str, ...] = ()  # ge::DT_ names without the prefix: FLOAT16, BF16, INT8 (ACL_ + name)
    dtypes_independent: bool = False  # DataTypeList: any of them, whatever the other parameters' dtypes
    formats: tuple[str, ...] = ()  # ge::FORMAT_ names without the prefix: ND, NCHW, FRACTAL_NZ
    formats_independent: bool = False
    value_depend: bool = False
    scalar: str = ""  # "scalar" (.Scalar()) or "scalar_list" (.ScalarList()): the input is a host aclScalar
    follow: str = ""  # .Follow("x"): dtype and format follow another parameter
    version: int = 0


@dataclass(frozen=True)
class OpDefAttr:
    name: str
    attr_type: str  # Int, Float, Bool, String, ListInt, ListFloat, ListBool, ListListInt, Type, ...
    required: bool
    default: Value = None
    version: int = 0


@dataclass(frozen=True)
class OpDef:
    op_type: str
    inputs: tuple[OpDefParam, ...]
    outputs: tuple[OpDefParam, ...]
    attrs: tuple[OpDefAttr, ...]
    unresolved: tuple[str, ...] = field(default=())  # source text that could not be read as a value


def read_opdefs(text: str) -> list[OpDef]:
    """Every OpDef class of a `_def.cpp` file that the file registers with OP_ADD."""
    text = strip_comments(text).replace("\\\n", " ")
    registered = set(OP_ADD.findall(text))
    constants = _Constants(text)
    defs = []
    for match in CLASS.finditer(text):
        if match.group(1) in registered:
            body = _block_after(text, match.end())
            defs.append(_read_class(match.group(1), body, text.index(body), constants))
    return defs


class _Constants:
    """Named values of a file, each resolved with the nearest definition before the place it is used."""

    def __init__(self, text: str) -> None:
        self.definitions: dict[str, list[tuple[int, str]]] = {}
        for match in DEFINE.finditer(text):
            self.definitions.setdefault(match.group(1), []).append((match.start(), match.group(2)))
        for match in DEFINITION.finditer(text):
            start = match.end() - (1 if match.group(2) == "{" else 0)
            rhs = _expression(text, start)
            if rhs is not None:
                self.definitions.setdefault(match.group(1), []).append((match.start(), rhs))
        for match in REPEATED.finditer(text):  # std::vector<ge::Format> formats(dtypes.size(), ge::FORMAT_ND);
            repeated = f"{REPEAT}({match.group(2)}, {match.group(3)})"
            self.definitions.setdefault(match.group(1), []).append((match.start(), repeated))
        for entries in self.definitions.values():
            entries.sort()

    def lookup(self, name: str, at: int) -> str | None:
        before = [rhs for position, rhs in self.definitions.get(name, ()) if position < at]
        return before[-1] if before else None


def _expression(text: str, start: int) -> str | None:
    """The initializer starting at `start` up to its `;` (or the matching brace), or None."""
    depth, i = 0, start
    while i < len(text):
        char = text[i]
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0 and char == "}" and text[start] == "{":
                return text[start : i + 1].strip()
        elif char == ";" and depth == 0:
            return text[start:i].lstrip("=").strip()
        elif char == '"':
            i = _string_end(text, i)
            continue
        i += 1
    return None


def _string_end(text: str, start: int) -> int:
    i = start + 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _block_after(text: str, start: int) -> str:
    """The text of the first {...} block after `start` (the class body)."""
    open_at = text.index("{", start)
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[open_at : i + 1]
    return text[open_at:]


def _read_class(op_type: str, body: str, offset: int, constants: _Constants) -> OpDef:
    inputs: list[OpDefParam] = []
    outputs: list[OpDefParam] = []
    attrs: list[OpDefAttr] = []
    unresolved: list[str] = []
    for match in re.finditer(r"\bthis\s*->\s*(Input|Output|Attr)\s*\(", body):
        calls = _chain(body, match.start() + body[match.start() :].index(match.group(1)))
        reader = _Reader(constants, offset + match.start(), unresolved)
        if match.group(1) == "Attr":
            attrs.append(reader.attr(calls))
        else:
            (inputs if match.group(1) == "Input" else outputs).append(reader.param(calls))
    return OpDef(op_type, tuple(inputs), tuple(outputs), tuple(attrs), tuple(unresolved))


def _chain(text: str, start: int) -> list[tuple[str, str]]:
    """The calls of `Input("x").ParamType(REQUIRED)...` as (method, argument text) pairs."""
    calls: list[tuple[str, str]] = []
    i = start
    while True:
        match = re.compile(r"\s*\.?\s*(\w+)\s*\(").match(text, i)
        if match is None:
            return calls
        depth, j = 1, match.end()
        while depth and j < len(text):
            if text[j] == '"':
                j = _string_end(text, j)
                continue
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        calls.append((match.group(1), text[match.end() : j - 1].strip()))
        following = re.compile(r"\s*\.").match(text, j)
        if following is None:
            return calls
        i = j


class _Reader:
    """Turns one chain of calls into a parameter or an attribute, resolving names as of `at`."""

    def __init__(self, constants: _Constants, at: int, unresolved: list[str]) -> None:
        self.constants, self.at, self.unresolved = constants, at, unresolved

    def param(self, calls: list[tuple[str, str]]) -> OpDefParam:
        param = OpDefParam(self.text(calls[0][1]), "REQUIRED")
        for method, argument in calls[1:]:
            if method == "ParamType":
                param = replace(param, param_type=argument.split("::")[-1])
            elif method in ("DataType", "DataTypeList"):
                independent = method == "DataTypeList"
                param = replace(param, dtypes=self.names(argument, "DT_"), dtypes_independent=independent)
            elif method in ("Format", "FormatList"):
                independent = method == "FormatList"
                param = replace(param, formats=self.names(argument, "FORMAT_"), formats_independent=independent)
            elif method == "ValueDepend":
                param = replace(param, value_depend=True)
            elif method in ("Scalar", "ScalarList"):
                param = replace(param, scalar="scalar" if method == "Scalar" else "scalar_list")
            elif method == "Follow":
                param = replace(param, follow=self.text(argument.split(",")[0]))
            elif method == "Version":
                param = replace(param, version=self.integer(argument))
        return param

    def attr(self, calls: list[tuple[str, str]]) -> OpDefAttr:
        attr = OpDefAttr(self.text(calls[0][1]), "", True)
        for method, argument in calls[1:]:
            if method == "AttrType":
                attr = replace(attr, required=argument.split("::")[-1] == "REQUIRED")
            elif method == "Version":
                attr = replace(attr, version=self.integer(argument))
            elif method not in ("Comment", "Doc"):
                default = self.value(argument) if argument else None
                if isinstance(default, str) and default.startswith("DT_"):  # .Int(ge::DT_INT8): a dtype's value
                    default = dtype_value(default[3:]) if dtype_value(default[3:]) is not None else default
                attr = replace(attr, attr_type=method, default=default)
        return attr

    def text(self, argument: str) -> str:
        return str(self.value(argument))

    def integer(self, argument: str) -> int:
        value = self.value(argument)
        if isinstance(value, int):
            return value
        self.unresolved.append(argument)
        return 0

    def names(self, argument: str, prefix: str) -> tuple[str, ...]:
        """A list of `ge::DT_*` or `ge::FORMAT_*` without the prefix; () if any entry cannot be read."""
        items = _flattened(self.value(argument))
        unreadable = [str(item) for item in items if not (isinstance(item, str) and item.startswith(prefix))]
        if unreadable:
            self.unresolved.append(argument)
            return ()
        return tuple(str(item).removeprefix(prefix) for item in items)

    def value(self, text: str, depth: int = 0) -> Value:
        """A C++ initializer as a value: literals, {lists}, ge:: enumerators and named constants."""
        text = re.sub(r"^(static_cast<[^>]*>|std::vector\s*<[^{(]*>|\(\s*\w+\s*\))\s*", "", text.strip())
        if text.startswith("(") and text.endswith(")"):
            return self.value(text[1:-1], depth)
        if text.startswith(REPEAT):
            like, item = _split_top(text[len(REPEAT) + 1 : -1])
            model = self.value(like, depth + 1)
            return [self.value(item, depth + 1)] * (len(model) if isinstance(model, list) else 1)
        if text.startswith("{") and text.endswith("}"):
            return [self.value(item, depth) for item in _split_top(text[1:-1])]
        if text.startswith('"') and text.endswith('"'):
            return text[1:-1]
        if text in ("true", "false"):
            return text == "true"
        if NUMBER.fullmatch(text):
            number = text.rstrip("fFlLuU")
            return float(number) if re.search(r"[.eE]", number) else int(number)
        if text in LIMITS:
            return LIMITS[text]
        arithmetic = _arithmetic(text)
        if arithmetic is not None:
            return arithmetic
        if "::DT_" in text or text.startswith("DT_"):
            return text.split("::")[-1]
        if "::FORMAT_" in text or text.startswith("FORMAT_"):
            return text.split("::")[-1]
        definition = self.constants.lookup(text, self.at) if re.fullmatch(r"\w+", text) else None
        if definition is not None and depth < 8:
            return self.value(definition, depth + 1)
        self.unresolved.append(text)
        return text


def _arithmetic(text: str) -> int | float | None:
    """The value of a constant expression of number literals (`1.0f / 6.0f`), or None."""
    try:
        tree = ast.parse(re.sub(r"(?<=[\d.])[fFlLuU]+\b", "", text), mode="eval")
        return _evaluate(tree.body)
    except (SyntaxError, ArithmeticError, ValueError):
        return None


def _evaluate(node: ast.expr) -> int | float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        return ARITHMETIC[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    raise ValueError("not a constant expression")


def _flattened(value: Value) -> list[Value]:
    """The leaves of nested lists: C++ lets `{{a, b}}` initialise a vector of a, b."""
    if not isinstance(value, list):
        return [value]
    return [leaf for item in value for leaf in _flattened(item)]


def _split_top(text: str) -> list[str]:
    """Comma-separated items at bracket depth 0 (empty items dropped)."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char in "({[<":
            depth += 1
        elif char in ")}]>":
            depth -= 1
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


def dtype_value(name: str) -> int | None:
    """The aclDataType value of a ge::DT_ name without its prefix (FLOAT -> ACL_FLOAT = 0)."""
    member = aclDataType.__members__.get(f"ACL_{name}")
    return int(member) if member is not None else None
