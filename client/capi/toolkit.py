"""`vnpu toolkit`: a directory laid out like an installed CANN package, built on first use.

    include/acl/acl.h ...          the headers (`client.capi.headers`)
    include/aclnnop/aclnn_<op>.h   one per operator vnpu has, and one per user-declared operator built in
    lib64/libascendcl.so           the runtime (libacl_rt.so, libacl_rt_impl.so, libacl_tdt_channel.so,
                                   libacl_tdt_queue.so, libmsprofiler.so, libprofapi.so and libascend_dump.so
                                   name it too)
    lib64/libnnopbase.so           the aclnn host objects
    lib64/libopapi.so              the operators
    lib64/libc_sec.so              the secure C functions (securec.h), plain C
    bin/setenv.bash                what CANN's environment script sets, pointing here
    share/info/runtime/version.info

The libraries are CFFI embedding-mode libraries: each exported C function is implemented in Python by
`client.capi.bridge`, inside the program, in the interpreter that built the toolkit (its path is compiled in, so a
program runs from a fresh shell without a virtual environment being active). The directory lives in the user's
cache (`$VNPU_TOOLKIT_DIR`, else `$XDG_CACHE_HOME/vnpu/toolkit-<key>`), keyed by the toolkit's sources and this
interpreter, never in the source tree; `--rebuild` builds it again. A library whose interpreter is gone (the
virtual environment that built it was moved or deleted) stops the program at load saying so (`c/boot.c`).
`--clean` removes the toolkits of the cache that nothing will use again: those built by an interpreter that no
longer exists, and this interpreter's others (older sources, other operators; rebuilt on demand).

`--operators mypkg.ops,...` (or VNPU_OPERATORS, and the entry points of group vnpu.operators) builds user-declared
operators in (`proto.operators`): their headers, their two exported functions, and the libraries load the same
modules inside the program (from where the build found them). The directory's key covers those modules' sources.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

from client.capi import headers as _headers
from client.capi.prototypes import LIBRARIES, PrototypeError, Table, read_table
from proto import operators as _operators
from proto.identity import CANN_VERSION

PACKAGE = Path(__file__).parent
VERSION = CANN_VERSION  # share/info/runtime/version.info
# functions the real runtime's C++ library does not export (programs look them up with dlsym and skip when absent)
NOT_EXPORTED = frozenset(
    {
        "aclrtCreateStreamConfigHandle",
        "aclrtDestroyStreamConfigHandle",
        "aclrtSetStreamConfigOpt",
        "aclrtCreateStreamV2",
    }
)
# other names programs link the runtime by (the TDT samples link acl_tdt_channel / acl_tdt_queue beside ascendcl;
# the profiling, mstx and dump libraries of CANN are exported by libascendcl here)
_RUNTIME_NAMES = ("acl_rt", "acl_rt_impl", "acl_tdt_channel", "acl_tdt_queue", "msprofiler", "profapi", "ascend_dump")
ALIASES = {name: "ascendcl" for name in _RUNTIME_NAMES}
ENTRY_HEADERS = (
    "acl/acl.h",
    "acl/acl_rt_allocator.h",
    "acl/acl_tdt.h",
    "acl/acl_tdt_queue.h",
    "aclnn/aclnn_base.h",
    "vnpu/vnpu.h",
    *("acl/acl_prof.h", "acl/acl_dump.h", "profiling/aprof_pub.h", "mstx/ms_tools_ext.h"),  # profiling, dump
)


class ToolkitError(Exception):
    """The toolkit cannot be built here (no compiler, a header that does not parse, ...)."""


def default_dir() -> Path:
    explicit = os.environ.get("VNPU_TOOLKIT_DIR")
    if explicit:
        return Path(explicit)
    return cache_dir() / f"toolkit-{source_key()}"


def cache_dir() -> Path:
    """Where the toolkits of every interpreter live, one `toolkit-<key>` each."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vnpu"


def clean() -> list[tuple[Path, str]]:
    """Remove the toolkits of the cache that nothing will use again; each removed one with the reason."""
    keep, removed = default_dir(), []
    for root in sorted(cache_dir().glob("toolkit-*")):
        record = root / "share" / "vnpu" / "python"
        python = record.read_text().strip() if record.exists() else None
        if root == keep or python is None:
            continue  # the current one, or a directory this code did not make
        if not Path(python).exists():
            why = f"built by {python}, which no longer exists"
        elif python == sys.executable:
            why = "built by this interpreter from other sources or operators"
        else:
            continue  # another interpreter's, which may still use it
        shutil.rmtree(root)
        removed.append((root, why))
    return removed


def source_key() -> str:
    """A digest of what the toolkit is made of: its sources, proto's tables and this interpreter."""
    digest = hashlib.sha256(sys.executable.encode())
    roots = [PACKAGE, PACKAGE.parent.parent / "proto"]
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix in {".py", ".h", ".c", ".bash", ".cmake"} and "__pycache__" not in path.parts:
                digest.update(path.as_posix().encode())
                digest.update(path.read_bytes())
    for module, origin in operator_modules():
        digest.update(module.encode())
        digest.update(Path(origin).read_bytes() if origin else b"")
    return digest.hexdigest()[:12]


def operator_modules() -> list[tuple[str, str]]:
    """(name, source file) of each module that declared the user operators now known (what a build puts in)."""
    found = []
    for module in _operators.user_modules():
        loaded = sys.modules.get(module)
        found.append((module, str(getattr(loaded, "__file__", "") or "")))
    return found


def _search_root(module: str, origin: str) -> str:
    """The sys.path entry the module `module` was found under (its file, up one directory per dotted part)."""
    path = Path(origin)
    if path.name == "__init__.py":
        path = path.parent
    for _ in module.split("."):
        path = path.parent
    return str(path)


def compiler() -> str:
    named = os.environ.get("CC")
    if named:
        found = shutil.which(named)
        if not found:
            raise ToolkitError(f"CC is {named!r}, which is not a compiler found on PATH (unset CC to use cc or gcc)")
        return found
    found = shutil.which("cc") or shutil.which("gcc")
    if not found:
        raise ToolkitError(
            "no C compiler found: vnpu builds the toolkit's libraries with this machine's compiler "
            "(install one, e.g. `apt-get install g++`, or set CC)"
        )
    return found


def ensure(root: Path | None = None, rebuild: bool = False) -> Path:
    """The toolkit directory, built first when it is missing or incomplete (or `rebuild`)."""
    root = root or default_dir()
    stamp = root / "share" / "vnpu" / "built"
    if not rebuild and stamp.exists() and stamp.read_text().strip() == source_key():
        return root  # complete, and built from these sources (a toolkit of another vnpu version is rebuilt)
    cc = compiler()
    with tempfile.TemporaryDirectory(prefix="vnpu-toolkit-", dir=root.parent if root.parent.exists() else None) as t:
        staging = Path(t) / "toolkit"
        _build(staging, cc)
        if root.exists():
            shutil.rmtree(root)
        root.parent.mkdir(parents=True, exist_ok=True)
        staging.rename(root)
    _stamp(root)
    return root


def _build(staging: Path, cc: str) -> None:
    include = staging / "include"
    try:
        _headers.write_tree(include)
        table = read_table(include, [*ENTRY_HEADERS, *_operator_headers(include)], cc)
    except (_headers.HeaderError, PrototypeError) as error:
        raise ToolkitError(str(error)) from None
    lib64 = staging / "lib64"
    lib64.mkdir(parents=True)
    for library in sorted(set(LIBRARIES.values())):
        _compile(table, library, include, lib64, staging / "build", cc)
    for alias, target in ALIASES.items():
        (lib64 / f"lib{alias}.so").symlink_to(f"lib{target}.so")
    _compile_securec(include, lib64, cc)
    _write_files(staging)
    shutil.rmtree(staging / "build", ignore_errors=True)


def _operator_headers(include: Path) -> list[str]:
    return sorted(p.relative_to(include).as_posix() for p in (include / "aclnnop").glob("*.h"))


def _compile(table: Table, library: str, include: Path, lib64: Path, build: Path, cc: str) -> None:
    import cffi  # a build-time dependency only: programs never import it from here

    module = f"_vnpu_{library}"
    ready = f"vnpu_ready_{library}"
    ffi = cffi.FFI()
    ffi.cdef(table.cdef_types)
    ffi.embedding_api(table.cdef_functions(library, NOT_EXPORTED) + f"\nint {ready}(void);")
    headers = "".join(f'#include "{h}"\n' for h in sorted({p.header for p in table.prototypes}))
    ffi.set_source(
        module,
        headers + (PACKAGE / "c" / "boot.c").read_text().replace("VNPU_READY", ready),
        include_dirs=[str(include)],
        define_macros=[
            ("VNPU_PYTHON", f'L"{sys.executable}"'),
            ("VNPU_PYTHON_PATH", f'"{sys.executable}"'),
            ("VNPU_LIBRARY", f'"lib{library}.so"'),
            (f"VNPU_LIBRARY_{library}", "1"),
        ],
        extra_compile_args=["-Wno-deprecated-declarations"],
        extra_link_args=[f"-Wl,-soname,lib{library}.so", f"-Wl,-rpath,{sysconfig.get_config_var('LIBDIR')}"],
    )
    exported = [
        (p.name, p.result, [(q.ctype, q.name) for q in p.params])
        for p in table.of_library(library)
        if not p.variadic and p.name not in NOT_EXPORTED
    ]
    modules = operator_modules()
    roots = sorted({_search_root(name, origin) for name, origin in modules if origin})
    ffi.embedding_init_code(
        f"from {module} import ffi\n"
        "import sys\n"
        f"sys.path.extend(r for r in {roots!r} if r not in sys.path)\n"  # where the build found the operator modules
        "import proto.operators\n"
        f"proto.operators.load({[name for name, _ in modules]!r}, entry_points_too=False)\n"
        "import client.capi.bridge\n"
        f"client.capi.bridge.bind(ffi, {library!r}, {ready!r}, {exported!r})\n"
    )
    build.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("CC", cc)
    try:
        ffi.compile(tmpdir=str(build), target=str(lib64 / f"lib{library}.so"))
    except Exception as error:  # distutils' CompileError / LinkError carry the compiler's output
        raise ToolkitError(f"building lib{library}.so failed: {error}") from None


def _compile_securec(include: Path, lib64: Path, cc: str) -> None:
    """libc_sec.so, plain C (`c/securec.c`): the secure C functions are no ACL calls, so no Python is behind them."""
    import subprocess

    source = PACKAGE / "c" / "securec.c"
    target = lib64 / "libc_sec.so"
    args = [cc, "-std=c11", "-D_GNU_SOURCE", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", f"-I{include}"]
    done = subprocess.run([*args, str(source), "-o", str(target), "-Wl,-soname,libc_sec.so"], capture_output=True)
    if done.returncode != 0:
        raise ToolkitError(f"building libc_sec.so failed: {done.stderr.decode(errors='replace')}")


def _write_files(staging: Path) -> None:
    bin_dir = staging / "bin"
    bin_dir.mkdir()
    (bin_dir / "setenv.bash").write_text((PACKAGE / "setenv.bash").read_text())
    cmake = staging / "tikcpp" / "ascendc_kernel_cmake"  # where the samples' set_sample_env.sh looks
    cmake.mkdir(parents=True)
    (cmake / "ascendc.cmake").write_text((PACKAGE / "ascendc.cmake").read_text())
    info = staging / "share" / "info" / "runtime"
    info.mkdir(parents=True)
    (info / "version.info").write_text(f"Version={VERSION}\nversion_dir=vnpu\n")
    stamp = staging / "share" / "vnpu"
    stamp.mkdir(parents=True)
    (stamp / "python").write_text(sys.executable + "\n")


def _stamp(root: Path) -> None:
    """The last step: the mark that says the directory is complete."""
    (root / "share" / "vnpu" / "built").write_text(source_key() + "\n")


def main(argv: list[str]) -> int:
    if "--clean" in argv:
        for root, why in clean():
            print(f"removed {root} ({why})")
        return 0
    rebuild = "--rebuild" in argv
    named = [a.removeprefix("--operators=") for a in argv if a.startswith("--operators=")]
    try:
        _operators.load([*named, os.environ.get(_operators.SETTING, "")])
        path = ensure(rebuild=rebuild)
    except _operators.OperatorError as error:
        print(f"vnpu toolkit: {error}", file=sys.stderr)
        return 1
    except ToolkitError as error:
        print(f"vnpu toolkit: {error}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
