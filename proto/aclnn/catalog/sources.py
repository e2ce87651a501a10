"""Where a checkout of one of CANN's operator repositories keeps what the catalog reads.

- Public headers: `<op dir>/op_api/aclnn_*.h` or `<op dir>/op_host/op_api/aclnn_*.h` (and the two `acl_*.h`
  of ops-math, aclStft and aclRfft1D), experimental ones included: their examples build against
  `aclnn_<op>.h` through `-I include/aclnnop`. Skipped: anything under `tests/` (unit-test helpers),
  `3rd/` (ops-transformer's vendored copies of ops-nn operators), `common/` (stubs and utilities) and
  `examples/`, `scripts/` (programs, and the AddExample tutorial operator of the top-level examples).
- OpDefs: `<op dir>/op_host/<op type>_def*.cpp`, for the op types a CMakeLists.txt registers with
  `ACLNNTYPE aclnn` (CANN generates a public `aclnn_<op>.h` for those; `aclnn_inner` gives a private
  aclnnInner header, `aclnn_exclude` none), as `cmake/func.cmake` `add_modules_sources` globs them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from proto.aclnn.catalog.cheader import strip_comments

SKIPPED_DIRS = frozenset({"tests", "3rd", "common", "examples", "scripts", "build", "build_out", ".git"})
HEADER_NAME = re.compile(r"^acl(nn)?_\w+\.h$")
MODULE_CALL = re.compile(r"\b(add_modules_sources|add_all_modules_sources|add_mc2_modules_sources)\s*\(")
CMAKE_KEYWORDS = frozenset(
    {"HOSTNAME", "MODE", "DIR", "OPTYPE", "ACLNNTYPE", "DEPENDENCIES", "COMPUTE_UNIT", "TILING_DIR"}
    | {"DISABLE_IN_OPP", "HOSTCPU"}
)


@dataclass(frozen=True)
class OpDefSource:
    """An OpDef file of an op type registered as `aclnn` (public generated header)."""

    op_type: str  # snake_case, as CMake names it: rms_norm
    path: Path
    directory: str  # the operator directory, relative to the repository: norm/rms_norm


def walk(root: Path) -> Iterator[Path]:
    """Every file under `root`, in sorted order, skipping SKIPPED_DIRS."""
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            yield Path(current) / name


def public_headers(root: Path) -> list[Path]:
    return [path for path in walk(root) if path.parent.name == "op_api" and HEADER_NAME.match(path.name)]


def op_directory(path: Path, root: Path) -> str:
    """The operator directory of a file: the part of its path before `op_host` or `op_api`."""
    parts = path.relative_to(root).parts
    for index, part in enumerate(parts):
        if part in ("op_host", "op_api"):
            return "/".join(parts[:index])
    return "/".join(parts[:-1])


def aclnn_opdefs(root: Path) -> list[OpDefSource]:
    """The OpDef files of the op types the repository registers with ACLNNTYPE aclnn.

    When an operator directory's own CMakeLists.txt registers the operator and does not descend into
    subdirectories, an `op_host/CMakeLists.txt` beside it is never reached by CMake and is ignored.
    """
    found: dict[Path, OpDefSource] = {}
    for cmake in (path for path in walk(root) if path.name == "CMakeLists.txt"):
        if _unreachable(cmake):
            continue
        for op_type, aclnn_type in registrations(cmake.read_text(errors="replace"), _default_op_type(cmake)):
            if aclnn_type != "aclnn":
                continue
            host = cmake.parent if cmake.parent.name == "op_host" else cmake.parent / "op_host"
            for path in sorted(host.glob(f"{op_type}_def*.cpp")):
                found[path] = OpDefSource(op_type, path, op_directory(path, root))
    return [found[path] for path in sorted(found)]


def _unreachable(cmake: Path) -> bool:
    if cmake.parent.name != "op_host":
        return False
    parent = cmake.parent.parent / "CMakeLists.txt"
    text = parent.read_text(errors="replace") if parent.is_file() else ""
    return MODULE_CALL.search(text) is not None and "add_subdirectory" not in text


def _default_op_type(cmake: Path) -> str:
    """add_all_modules_sources without OPTYPE names the operator directory."""
    return cmake.parent.parent.name if cmake.parent.name == "op_host" else cmake.parent.name


def registrations(text: str, default_op_type: str) -> list[tuple[str, str]]:
    """(op type, ACLNNTYPE) pairs of the module calls of one CMakeLists.txt."""
    text = re.sub(r"#[^\n]*", "", strip_comments_cmake(text))
    pairs: list[tuple[str, str]] = []
    for match in MODULE_CALL.finditer(text):
        depth, i = 1, match.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        arguments: dict[str, list[str]] = {}
        current: list[str] | None = None
        for token in text[match.end() : i - 1].split():
            if token in CMAKE_KEYWORDS:
                current = arguments.setdefault(token, [])
            elif current is not None:
                current.append(token)
        op_types = arguments.get("OPTYPE") or [default_op_type]
        pairs.extend(zip(op_types, arguments.get("ACLNNTYPE", []), strict=False))
    return list(dict.fromkeys(pairs))


def strip_comments_cmake(text: str) -> str:
    """CMake bracket comments `#[[ ... ]]` removed (line comments are removed by the caller)."""
    return re.sub(r"#\[(=*)\[.*?\]\1\]", "", text, flags=re.S)


def implementation_files(root: Path) -> list[Path]:
    """The op_api C++ sources, where each GetWorkspaceSize names its inputs and outputs (L2_DFX_PHASE_1)."""
    return [path for path in walk(root) if path.suffix == ".cpp" and "op_api" in path.parts]


def read_source(path: Path) -> str:
    return strip_comments(path.read_text(errors="replace"))
