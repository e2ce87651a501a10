"""The declaration catalog of every public aclnn operator of CANN, loaded lazily from checked-in data.

`catalog()` reads `math.json`, `nn.json`, `transformer.json` and `cv.json` beside this file (written by
`python -m proto.aclnn.catalog.extract` from checkouts of hicann/ops-math, ops-nn, ops-transformer and
ops-cv) into frozen records: for each operator its C prototype exactly as CANN declares it (argument
order, C types, const, in/out/in-place), the header that declares it, and for operators whose header
CANN generates from an OpDef the dtype and format lists and attribute defaults; and the custom packages' headers
that differ from include/aclnnop's (`VendorHeader`: the experimental operators as their trees declare them).
Standard library only; see docs/operator-catalog.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias, get_args

Kind = Literal[
    "tensor",
    "tensor_list",
    "scalar",
    "scalar_list",
    "int_array",
    "bool_array",
    "float_array",
    "int64",
    "int32",
    "int8",
    "uint64",
    "double",
    "float",
    "bool",
    "string",
    "dtype",
    "other",
]
Direction = Literal["in", "out", "inplace"]
Source = Literal["header", "opdef"]
Value: TypeAlias = "str | int | float | bool | list[Value] | None"

KINDS: Final[frozenset[str]] = frozenset(get_args(Kind))
DIRECTIONS: Final[frozenset[str]] = frozenset(get_args(Direction))
REPOS: Final = ("math", "nn", "transformer", "cv")
"""The repositories, hicann/ops-<repo>; also the data files' names."""
DATA_DIR: Final = Path(__file__).resolve().parent


@dataclass(frozen=True, slots=True)
class CParam:
    """A parameter of a C function as declared: name and type in one spelling (`const aclTensor *`)."""

    name: str
    ctype: str


@dataclass(frozen=True, slots=True)
class CFunction:
    """A public function that is not one of an operator's two phases (aclnnTransQuantParam, ...)."""

    name: str
    result: str
    params: tuple[CParam, ...]
    header: str
    repo: str
    directory: str

    @property
    def declaration(self) -> str:
        return f"{self.result} {self.name}({_joined(self.params)})"


@dataclass(frozen=True, slots=True)
class CatalogParam:
    """A parameter of `aclnn<op>GetWorkspaceSize` (the trailing workspaceSize and executor left out)."""

    name: str
    ctype: str
    direction: Direction
    kind: Kind
    optional: bool = False  # the pointer may be NULL (an `...Optional` name, or an OPTIONAL OpDef parameter)
    dtypes: tuple[str, ...] = ()  # OpDef operators: the DataType column (ACL_ + entry is the aclDataType)
    formats: tuple[str, ...] = ()  # OpDef operators: the Format column (ACL_FORMAT_ + entry)
    any_dtype: bool = False  # DataTypeList: any listed dtype, whatever the other parameters' dtypes
    default: Value = None  # OpDef attributes: the default value


STANDARD_LAUNCH: Final = (
    CParam("workspace", "void *"),
    CParam("workspaceSize", "uint64_t"),
    CParam("executor", "aclOpExecutor *"),
    CParam("stream", "aclrtStream"),
)
"""The parameters of phase 2, `aclnn<op>(...)`, for all but a few operators (`CatalogOp.launch`)."""
_STANDARD_LAUNCH_ITEMS: Final = [[p.name, p.ctype] for p in STANDARD_LAUNCH]
WORKSPACE_TAIL: Final = (CParam("workspaceSize", "uint64_t *"), CParam("executor", "aclOpExecutor **"))
"""The last two parameters of every GetWorkspaceSize (left out of `CatalogOp.params`)."""


@dataclass(frozen=True, slots=True)
class CatalogOp:
    """One public operator: `<c_name>GetWorkspaceSize(<params>, workspaceSize, executor)`, `<c_name>(<launch>)`."""

    name: str  # Add for aclnnAdd
    repo: str  # math, nn, transformer or cv
    directory: str  # the operator's directory in its repository: math/add, norm/rms_norm, experimental/...
    header: str  # the header CANN installs it in: aclnn_add.h
    source: Source  # header: a hand-written op_api header; opdef: the header CANN generates from the OpDef
    params: tuple[CatalogParam, ...]
    launch: tuple[CParam, ...] = STANDARD_LAUNCH
    prefix: str = "aclnn"  # two ops-math operators are aclStft and aclRfft1D
    deprecated: bool = False  # declared with a deprecation attribute
    op_type: str = ""  # opdef operators: the OpDef class (RmsNorm; DequantSwigluQuant for DequantSwigluQuantV2)
    vendor: bool = False  # declared only in its repository's custom package header (`VendorHeader`), not include/

    @property
    def c_name(self) -> str:
        return f"{self.prefix}{self.name}"

    @property
    def ws_name(self) -> str:
        return f"{self.prefix}{self.name}GetWorkspaceSize"

    @property
    def area(self) -> str:
        """The category directory: math, norm, attention, ... (`experimental/` left out)."""
        parts = self.directory.split("/")
        return parts[1] if parts[0] == "experimental" and len(parts) > 1 else parts[0]

    @property
    def experimental(self) -> bool:
        return self.directory.startswith("experimental/")

    @property
    def ws_declaration(self) -> str:
        return f"aclnnStatus {self.ws_name}({_joined((*self.params, *WORKSPACE_TAIL))})"

    @property
    def launch_declaration(self) -> str:
        return f"aclnnStatus {self.c_name}({_joined(self.launch)})"


@dataclass(frozen=True, slots=True)
class VendorHeader:
    """A header of a repository's custom package (`opp/vendors/custom_<repo>/op_api/include/<header>`, where an
    experimental operator's header goes) whose declarations differ from those of the include/aclnnop file of that
    name, or whose name include/aclnnop lacks: its operators as the experimental tree declares them."""

    header: str
    repo: str
    directory: str
    ops: tuple[CatalogOp, ...]
    functions: tuple[CFunction, ...] = ()

    @property
    def vendor(self) -> str:
        return f"custom_{self.repo}"


@dataclass(frozen=True)
class Catalog:
    ops: Mapping[str, CatalogOp]  # by name (Add), in sorted order
    functions: tuple[CFunction, ...] = field(default=())  # the public functions that are not operators
    vendor: tuple[VendorHeader, ...] = field(default=())  # the custom packages' headers that differ from include/'s

    @cached_property
    def by_header(self) -> Mapping[str, tuple[CatalogOp, ...]]:
        """The operators of each header file of include/aclnnop (`aclnn_add.h`: Add, Adds, InplaceAdd, InplaceAdds);
        an operator declared only by a custom package's header (`CatalogOp.vendor`) is not in them."""
        return _grouped((op for op in self.ops.values() if not op.vendor), lambda op: op.header)

    @cached_property
    def by_repo(self) -> Mapping[str, tuple[CatalogOp, ...]]:
        return _grouped(self.ops.values(), lambda op: op.repo)

    def functions_in(self, header: str) -> tuple[CFunction, ...]:
        return tuple(function for function in self.functions if function.header == header)


@cache
def catalog() -> Catalog:
    """The catalog of all four repositories (read once)."""
    ops: dict[str, CatalogOp] = {}
    functions: list[CFunction] = []
    vendor: list[VendorHeader] = []
    for repo in REPOS:
        data = json.loads((DATA_DIR / f"{repo}.json").read_text(encoding="utf-8"))
        ops.update(decode_ops(repo, data["ops"]))
        functions.extend(decode_function(repo, entry) for entry in data["functions"])
        vendor.extend(decode_vendor(repo, header, entry) for header, entry in data.get("vendor", {}).items())
    return Catalog(dict(sorted(ops.items())), tuple(functions), tuple(vendor))


def decode_ops(repo: str, entries: Mapping[str, Any]) -> dict[str, CatalogOp]:
    """The records of one data file's `ops` (the format is written by `proto.aclnn.catalog.encode`)."""
    ops = {}
    interned: dict[tuple[str, ...], CatalogParam] = {}  # most parameters repeat (self, out, ...): one record each
    for name, entry in entries.items():
        params = []
        for item in entry["params"]:
            if len(item) == 5:
                key = tuple(item)
                param = interned.get(key)
                if param is None:
                    param = interned[key] = _param(item)
                params.append(param)
            else:
                params.append(_param(item))
        launch = entry.get("launch")
        ops[name] = CatalogOp(
            name,
            repo,
            entry["dir"],
            entry["header"],
            entry["source"],
            tuple(params),
            STANDARD_LAUNCH if launch is None else _cparams(launch),
            entry.get("prefix", "aclnn"),
            entry.get("deprecated", False),
            entry.get("op_type", ""),
            entry.get("vendor", False),
        )
    return ops


def decode_vendor(repo: str, header: str, entry: Mapping[str, Any]) -> VendorHeader:
    ops = decode_ops(repo, entry["ops"])
    functions = tuple(decode_function(repo, item) for item in entry.get("functions", ()))
    return VendorHeader(header, repo, entry["dir"], tuple(ops[name] for name in sorted(ops)), functions)


def c_abi(params: tuple[CParam | CatalogParam, ...]) -> tuple[str, ...]:
    """What a call through a prototype passes: the parameters' C types without `const` (`const aclTensor *` and
    `aclTensor *` are one pointer, names do not matter; `double` and `aclScalar *` are not)."""
    return tuple(re.sub(r"\bconst\s+", "", param.ctype).strip() for param in params)


def decode_function(repo: str, entry: Mapping[str, Any]) -> CFunction:
    return CFunction(entry["name"], entry["result"], _cparams(entry["params"]), entry["header"], repo, entry["dir"])


def _param(item: list[Any]) -> CatalogParam:
    """[name, ctype, direction, kind, flags] + optional {dtypes, formats, default}; flags: o(ptional), a(ny)."""
    name, ctype, direction, kind, flags = item[:5]
    extra = item[5] if len(item) > 5 else {}
    return CatalogParam(
        name,
        ctype,
        direction,
        kind,
        "o" in flags,
        tuple(extra.get("dtypes", ())),
        tuple(extra.get("formats", ())),
        "a" in flags,
        extra.get("default"),
    )


def _cparams(items: list[list[str]]) -> tuple[CParam, ...]:
    if items == _STANDARD_LAUNCH_ITEMS:
        return STANDARD_LAUNCH
    return tuple(CParam(name, ctype) for name, ctype in items)


def _joined(params: tuple[CParam | CatalogParam, ...]) -> str:
    return ", ".join(f"{p.ctype} {p.name}".replace("* ", "*") for p in params) or "void"


def _grouped(ops: Iterable[CatalogOp], key: Callable[[CatalogOp], str]) -> dict[str, tuple[CatalogOp, ...]]:
    groups: dict[str, list[CatalogOp]] = {}
    for op in ops:
        groups.setdefault(key(op), []).append(op)
    return {name: tuple(members) for name, members in sorted(groups.items())}
