"""`vnpu toolkit`: the toolkit directory, its libraries native C (see `client.native`).

    lib64/libascendcl.so   the core (src/) and the generated runtime functions; libacl_rt.so ... name it too
    lib64/libnnopbase.so   the aclnn host objects and phase 1 (src/hostobj.c, hostlist.c, phases.c); NEEDs
                           libascendcl.so
    lib64/libopapi.so      every function of CANN's operator library, generated (`opgen`); NEEDs libnnopbase.so
                           and libascendcl.so; libopapi_math.so, ..., libaclnn_ops_infer.so, ... name it too
    lib64/libhccl.so       HCCL for one rank (src/hccl/); NEEDs libascendcl.so
    lib64/libacl_op_compiler.so   the legacy compiler's options and refusals (src/opcompiler/); NEEDs libascendcl.so
    lib64/libge_runner.so, libgraph.so        empty: torch_npu links them and calls nothing in them
    lib64/libc_sec.so      the secure C functions (securec.h)

The headers and the rest of the layout (opp/, share/info, bin/setenv.bash) are `client.capi.toolkit`'s.
Built with one compiler
invocation per library (CC, else cc or gcc), `-O2 -fvisibility=hidden`; no library links libpython. The
directory lives in the user's cache ($VNPU_TOOLKIT_DIR, else $XDG_CACHE_HOME/vnpu/native-<key>), keyed by the
sources; `--rebuild` builds it again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from client.capi import headers as _headers
from client.capi import opheaders as _opheaders
from client.capi import toolkit as _capi
from client.capi.prototypes import PrototypeError, Table, read_table
from client.native import codegen, legacygen
from proto import operators as _operators
from proto.identity import SOC_NAME

PACKAGE = Path(__file__).parent
SOURCES = PACKAGE / "src"
# the aclnn host objects and phases; every other source of src/ is libascendcl.so's core
NNOPBASE = ("hostobj.c", "hostlist.c", "phases.c")
CORE = tuple(sorted(p.name for p in SOURCES.glob("*.c") if p.name not in NNOPBASE))
FLAGS = (
    "-std=gnu11",
    "-O2",
    "-g",
    "-fPIC",
    "-shared",
    "-fvisibility=hidden",
    "-pthread",
    "-Wall",
    "-Wno-unused-function",
)
LIBRARIES = codegen.LIBRARIES  # in order: each links those before it
LINKS: dict[str, list[str]] = {
    "ascendcl": [],
    "nnopbase": ["-lascendcl"],
    "opapi": ["-lnnopbase", "-lascendcl"],
    "hccl": ["-lascendcl"],
    "acl_op_compiler": ["-lascendcl"],
}


class ToolkitError(Exception):
    """The native toolkit cannot be built here."""


def default_dir() -> Path:
    explicit = os.environ.get("VNPU_TOOLKIT_DIR")
    if explicit:
        return Path(explicit)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "vnpu" / f"native-{source_key()}"


def source_key() -> str:
    digest = hashlib.sha256(sys.executable.encode())
    for root in (PACKAGE, _capi.PACKAGE, PACKAGE.parent.parent / "proto"):
        for path in sorted(root.rglob("*")):
            if path.suffix in {".py", ".h", ".c", ".bash", ".cmake"} and "__pycache__" not in path.parts:
                digest.update(path.as_posix().encode())
                digest.update(path.read_bytes())
    for module, origin in _capi.operator_modules():
        digest.update(module.encode())
        digest.update(Path(origin).read_bytes() if origin else b"")
    return digest.hexdigest()[:12]


def ensure(root: Path | None = None, rebuild: bool = False) -> Path:
    root = root or default_dir()
    stamp = root / "share" / "vnpu" / "built"
    if not rebuild and stamp.exists() and stamp.read_text().strip() == source_key():
        return root
    cc = _capi.compiler()
    parent = root.parent if root.parent.exists() else None
    with tempfile.TemporaryDirectory(prefix="vnpu-native-", dir=parent) as t:
        staging = Path(t) / "toolkit"
        build(staging, cc)
        if root.exists():
            shutil.rmtree(root)
        root.parent.mkdir(parents=True, exist_ok=True)
        staging.rename(root)
    (root / "share" / "vnpu" / "built").write_text(source_key() + "\n")
    return root


def read_prototypes(include: Path, cc: str | None = None) -> tuple[Table, list[str]]:
    """The prototype table of a written include/ (the operator library's from the catalog it was written from,
    the rest parsed from the headers), and the headers the generated C includes."""
    made = _opheaders.paths()
    operator_headers = sorted(p.relative_to(include).as_posix() for p in (include / "aclnnop").glob("*.h"))
    parsed = read_table(include, [*_capi.ENTRY_HEADERS, *(h for h in operator_headers if h not in made)], cc)
    table = Table((*parsed.prototypes, *_opheaders.prototypes(), *_opheaders.unlisted()), parsed.cdef_types)
    return table, [*_capi.ENTRY_HEADERS, *operator_headers]


def build(staging: Path, cc: str) -> codegen.Generated:
    include = staging / "include"
    try:
        _headers.write_tree(include)
        table, headers = read_prototypes(include, cc)
    except (_headers.HeaderError, PrototypeError) as error:
        raise ToolkitError(str(error)) from None
    generated = codegen.generate(table, headers)
    work = staging / "build"
    work.mkdir(parents=True)
    for name, text in {**generated.sources, "legacy": legacygen.emit()}.items():
        (work / f"gen_{name}.c").write_text(text)
    lib64 = staging / "lib64"
    lib64.mkdir()
    common = [cc, *FLAGS, f"-I{SOURCES}", f"-I{include}", f"-L{lib64}", "-Wl,--no-undefined", "-Wl,-rpath,$ORIGIN"]
    defines = [f'-DVNPU_PYTHON="{sys.executable}"', f'-DVNPU_SOC_NAME="{SOC_NAME}"']
    units = {
        "ascendcl": [
            *(str(SOURCES / c) for c in CORE),
            str(work / "gen_ascendcl.c"),
            str(work / "gen_tables.c"),
            str(work / "gen_host.c"),
            str(work / "gen_legacy.c"),
        ],
        "nnopbase": [*(str(SOURCES / c) for c in NNOPBASE), str(work / "gen_nnopbase.c")],
        "opapi": [str(work / "gen_opapi.c")],
        "hccl": [str(SOURCES / "hccl" / "hccl.c"), str(work / "gen_hccl.c")],
        "acl_op_compiler": [str(SOURCES / "opcompiler" / "opcompiler.c"), str(work / "gen_acl_op_compiler.c")],
    }
    for library in LIBRARIES:  # in order: each links the ones before it
        args = [
            *common,
            *defines,
            *units[library],
            "-o",
            str(lib64 / f"lib{library}.so"),
            f"-Wl,-soname,lib{library}.so",
        ]
        args += [*LINKS[library], "-lm"]
        done = subprocess.run(args, capture_output=True, text=True)
        if done.returncode != 0:
            raise ToolkitError(f"building lib{library}.so failed:\n{done.stderr[-4000:]}")
    for alias, target in _capi.ALIASES.items():
        (lib64 / f"lib{alias}.so").symlink_to(f"lib{target}.so")
    _capi.write_layout(staging)
    _capi._compile_securec(include, lib64, cc)
    for library in _capi.EMPTY_LIBRARIES:
        _capi._compile_plain(f"/* lib{library}.so: empty (vnpu) */\n", library, include, lib64, cc)
    _capi._write_files(staging)
    (staging / "share" / "vnpu" / "native").write_text("1\n")
    shutil.rmtree(work, ignore_errors=True)
    return generated


def main(argv: list[str]) -> int:
    if "--clean" in argv:
        for root, why in _capi.clean(default_dir()):
            print(f"removed {root} ({why})")
        return 0
    rebuild = "--rebuild" in argv
    named = [a.removeprefix("--operators=") for a in argv if a.startswith("--operators=")]
    try:
        _operators.load([*named, os.environ.get(_operators.SETTING, "")])
        path = ensure(rebuild=rebuild)
    except (_operators.OperatorError, ToolkitError, _capi.ToolkitError) as error:
        print(f"vnpu toolkit: {error}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
