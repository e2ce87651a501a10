"""`vnpu toolkit`: a directory laid out like an installed CANN package, built on first use.

    include/acl/acl.h ...          the headers (`client.capi.headers`)
    include/aclnnop/aclnn_<x>.h    CANN's operator headers, from the catalog (`client.capi.opheaders`), and one
                                   per user-declared operator built in
    lib64/libascendcl.so           the runtime (libacl_rt.so, libacl_rt_impl.so, libacl_tdt_channel.so,
                                   libacl_tdt_queue.so, libmsprofiler.so, libprofapi.so and libascend_dump.so
                                   name it too)
    lib64/libnnopbase.so           the aclnn host objects
    lib64/libopapi.so              every operator of the catalog, both phases (NEEDs libnnopbase.so, as CANN's;
                                   libopapi_math.so, libopapi_nn.so, ..., libaclnn_ops_infer.so, ... name it too)
    lib64/libacl_op_compiler.so    the legacy operator compiler's options (aclop execution is refused)
    lib64/libhccl.so               HCCL for one rank (hccl/hccl.h)
    lib64/libge_runner.so, libgraph.so   empty: torch_npu links them and calls nothing in them
    lib64/libc_sec.so              the secure C functions (securec.h), plain C
    opp/include/aclnnop            include/aclnnop again (ops-transformer's build line includes it)
    opp/vendors/custom_<repo>/op_api/lib/libcust_opapi.so   libopapi.so, where the repositories' experimental
                                   examples link their custom package from
    bin/setenv.bash                what CANN's environment script sets, pointing here
    share/info/<package>/version.info    the version each package reports (aclsysGetVersionStr, ...)
    ascend_toolkit_install.info    the same version, where torch_npu's import check reads it
    opp/ runtime/ compiler/        the directories torch_npu's import check requires (empty)

The libraries are CFFI embedding-mode libraries: each exported C function is implemented in Python by
`client.capi.bridge`, inside the program, in the interpreter that built the toolkit (its path is compiled in, so a
program runs from a fresh shell without a virtual environment being active). libopapi.so's 2,400 functions are
generated C entering Python through one callback instead (`client.capi.opcalls`): one callback each would cost
build and load time. The directory lives in the user's cache (`$VNPU_TOOLKIT_DIR`, else
`$XDG_CACHE_HOME/vnpu/toolkit-<key>`), keyed by the toolkit's sources and this interpreter, never in the source
tree; `--rebuild` builds it again. A library whose interpreter is gone (the virtual environment that built it was
moved or deleted) stops the program at load saying so (`c/boot.c`). `--clean` removes the toolkits of the cache
that nothing will use again: those built by an interpreter that no longer exists, and this interpreter's others
(older sources, other operators; rebuilt on demand).

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
from typing import Any

from client.capi import headers as _headers
from client.capi import opcalls, opheaders
from client.capi.prototypes import HEADER_LIBRARIES, LIBRARIES, Prototype, PrototypeError, Table, read_table
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
# the operator libraries' other names: those the repositories' example build lines link (-lopapi_nn ...) and the
# feature libraries torch_npu dlopens after libopapi.so (one library here, so one embedded client)
OPAPI_NAMES: tuple[str, ...] = ("opapi_math", "opapi_nn", "opapi_cv", "opapi_transformer")
OPAPI_NAMES += ("aclnn_ops_infer", "aclnn_ops_train", "aclnn_math", "aclnn_rand", "aclnn_sparse", "aclnn_fft")
ALIASES.update({name: "opapi" for name in OPAPI_NAMES})
# the custom operator packages CANN's repositories build their experimental operators into (`build.sh --pkg
# --experimental`, vendor "custom"), whose examples link -lcust_opapi from there: here, libopapi.so again
VENDORS = ("custom_math", "custom_nn", "custom_cv", "custom_transformer")
# the libraries whose functions are generated C entering Python through one callback (`client.capi.opcalls`)
GENERATED = frozenset({"opapi"})
ENTRY_HEADERS = (
    "acl/acl.h",
    "acl/acl_op_compiler.h",
    "hccl/hccl.h",
    "acl/acl_rt_allocator.h",
    "acl/acl_tdt.h",
    "acl/acl_tdt_queue.h",
    "aclnn/aclnn_base.h",
    "vnpu/vnpu.h",
    *("acl/acl_prof.h", "acl/acl_dump.h", "profiling/aprof_pub.h", "mstx/ms_tools_ext.h"),  # profiling, dump
)


# libraries a library NEEDs (built first: `build_order`), so that dlsym through its handle finds their functions
# too, as in CANN: torch_npu looks the host objects up through libopapi's handle, the runtime's SysParamOpt
# functions through libacl_op_compiler's
NEEDS: dict[str, tuple[str, ...]] = {"acl_op_compiler": ("ascendcl",), "hccl": ("ascendcl",), "opapi": ("nnopbase",)}
# functions a library exports from its C part (c/boot.c) with no prototype in the headers: the runtime's internal
# rt* entry points torch_npu links, refused there (no public header declares them)
NATIVE_EXPORTS = {
    "ascendcl": frozenset({"rtDevBinaryRegister", "rtFunctionRegister", "rtKernelLaunch", "rtGetC2cCtrlAddr"})
}
EMPTY_LIBRARIES = ("ge_runner", "graph")  # only their names are needed: torch_npu calls nothing in them
# the packages whose version.info the toolkit holds (share/info/<name>): CANN's names for the runtime (also the
# whole of CANN), HCCL, the compiler and the tools (aclsysGetCANNVersion reads them by aclCANNPackageName), and the
# four operator packages vnpu's aclnn library is declared from (torch_npu asks for ops_math ... ops_cv); not
# ops-legacy: vnpu has no legacy operators
PACKAGES = ("runtime", "hccl", "bisheng-compiler", "oam-tools", "ops-math", "ops-nn", "ops-transformer", "ops-cv")
LAYOUT_DIRECTORIES = ("opp", "runtime", "compiler")  # torch_npu's import requires them under ASCEND_HOME_PATH


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
        generated = opheaders.paths()  # their prototypes come from the catalog they were written from
        parsed = read_table(
            include, [*ENTRY_HEADERS, *(h for h in _operator_headers(include) if h not in generated)], cc
        )
        table = Table(parsed.prototypes + tuple(opheaders.prototypes()), parsed.cdef_types)
    except (_headers.HeaderError, PrototypeError) as error:
        raise ToolkitError(str(error)) from None
    lib64 = staging / "lib64"
    lib64.mkdir(parents=True)
    for library in build_order(set(LIBRARIES.values()) | set(HEADER_LIBRARIES.values())):
        _compile(table, library, include, lib64, staging / "build", cc)
    for alias, target in ALIASES.items():
        (lib64 / f"lib{alias}.so").symlink_to(f"lib{target}.so")
    write_layout(staging)
    _compile_securec(include, lib64, cc)
    for library in EMPTY_LIBRARIES:
        _compile_plain(f"/* lib{library}.so: empty (vnpu) */\n", library, include, lib64, cc)
    _write_files(staging)
    shutil.rmtree(staging / "build", ignore_errors=True)


def write_layout(staging: Path) -> None:
    """opp/: the operator headers where the newer packages also put them, and the custom packages' libopapi."""
    include, lib64 = staging / "include", staging / "lib64"
    opp_include = staging / "opp" / "include"
    opp_include.mkdir(parents=True)
    (opp_include / "aclnnop").symlink_to(os.path.relpath(include / "aclnnop", opp_include))
    for vendor in VENDORS:
        lib = staging / "opp" / "vendors" / vendor / "op_api" / "lib"
        lib.mkdir(parents=True)
        (lib / "libcust_opapi.so").symlink_to(os.path.relpath(lib64 / "libopapi.so", lib))


def build_order(libraries: set[str]) -> list[str]:
    """The libraries in name order, each after the ones it NEEDs."""
    ordered: list[str] = []

    def visit(library: str) -> None:
        for need in NEEDS.get(library, ()):
            visit(need)
        if library not in ordered:
            ordered.append(library)

    for library in sorted(libraries):
        visit(library)
    return ordered


def _operator_headers(include: Path) -> list[str]:
    return sorted(p.relative_to(include).as_posix() for p in (include / "aclnnop").glob("*.h"))


def _compile(table: Table, library: str, include: Path, lib64: Path, build: Path, cc: str) -> None:
    import cffi  # a build-time dependency only: programs never import it from here

    module = f"_vnpu_{library}"
    ready = f"vnpu_ready_{library}"
    generated = list(table.of_library(library)) if library in GENERATED else []  # plain C, one callback
    in_python = [p for p in table.of_library(library) if not p.variadic and p.name not in NOT_EXPORTED]
    in_python = [] if generated else in_python
    extra = [f"int {ready}(void);", *([opcalls.ENTRY_DECLARATION] if generated else [])]
    ffi = cffi.FFI()
    ffi.cdef(table.cdef_types + ("\n" + opcalls.ARG_TYPE if generated else ""))
    ffi.embedding_api("\n".join([*(p.declaration for p in in_python), *extra]))
    # the headers that define the types (all, through the entry headers) and declare this library's callbacks
    headers = "".join(f'#include "{h}"\n' for h in sorted({*ENTRY_HEADERS, *(p.header for p in in_python)}))
    objects = [str(_compile_generated(ffi, generated, include, build, library, cc))] if generated else []
    needs = NEEDS.get(library, ())
    ffi.set_source(
        module,
        headers
        + (opcalls.ARG_TYPE + "\n" if generated else "")
        + (PACKAGE / "c" / "boot.c").read_text().replace("VNPU_READY", ready),
        include_dirs=[str(include)],
        define_macros=[
            ("VNPU_PYTHON", f'L"{sys.executable}"'),
            ("VNPU_PYTHON_PATH", f'"{sys.executable}"'),
            ("VNPU_LIBRARY", f'"lib{library}.so"'),
            ("VNPU_SOURCE", _c_string(str(PACKAGE.parent.parent))),
            (f"VNPU_LIBRARY_{library}", "1"),
        ],
        extra_compile_args=["-Wno-deprecated-declarations"],
        extra_link_args=[f"-Wl,-soname,lib{library}.so", f"-Wl,-rpath,{sysconfig.get_config_var('LIBDIR')}"]
        + (["-Wl,--no-as-needed", f"-L{lib64}", *(f"-l{n}" for n in needs), "-Wl,-rpath,$ORIGIN"] if needs else []),
        extra_objects=objects,
    )
    exported = [(p.name, p.result, [(q.ctype, q.name) for q in p.params]) for p in in_python]
    if generated:
        exported.append((opcalls.ENTRY, "int64_t", [("const char *", "name"), ("const char *", "signature")]))
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


def _c_string(text: str) -> str:
    """`text` as a C string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _compile_generated(
    ffi: Any, prototypes: list[Prototype], include: Path, build: Path, library: str, cc: str
) -> Path:
    """The object file of the library's generated C functions (`client.capi.opcalls`), built on its own: without
    the debug information and optimisation of Python's flags, which only slow 2,400 small functions down."""
    import subprocess

    build.mkdir(parents=True, exist_ok=True)
    source = build / f"lib{library}_calls.c"
    source.write_text(opcalls.source(ffi, prototypes, [p.header for p in prototypes]))
    target = source.with_suffix(".o")
    args = [cc, "-O0", "-fPIC", "-fvisibility=default", f"-I{include}", "-c", str(source), "-o", str(target)]
    done = subprocess.run(args, capture_output=True)
    if done.returncode != 0:
        raise ToolkitError(f"building lib{library}.so's C functions failed: {done.stderr.decode(errors='replace')}")
    return target


def _compile_securec(include: Path, lib64: Path, cc: str) -> None:
    """libc_sec.so, plain C (`c/securec.c`): the secure C functions are no ACL calls, so no Python is behind them."""
    _compile_plain((PACKAGE / "c" / "securec.c").read_text(), "c_sec", include, lib64, cc)


def _compile_plain(source: str, library: str, include: Path, lib64: Path, cc: str) -> None:
    """lib<library>.so from plain C (no Python behind it)."""
    import subprocess

    target = lib64 / f"lib{library}.so"
    args = [cc, "-std=c11", "-D_GNU_SOURCE", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", f"-I{include}"]
    command = [*args, "-x", "c", "-", "-o", str(target), f"-Wl,-soname,lib{library}.so"]
    done = subprocess.run(command, input=source.encode(), capture_output=True)
    if done.returncode != 0:
        raise ToolkitError(f"building lib{library}.so failed: {done.stderr.decode(errors='replace')}")


def _write_files(staging: Path) -> None:
    bin_dir = staging / "bin"
    bin_dir.mkdir()
    (bin_dir / "setenv.bash").write_text((PACKAGE / "setenv.bash").read_text())
    cmake = staging / "tikcpp" / "ascendc_kernel_cmake"  # where the samples' set_sample_env.sh looks
    cmake.mkdir(parents=True)
    (cmake / "ascendc.cmake").write_text((PACKAGE / "ascendc.cmake").read_text())
    for package in PACKAGES:
        info = staging / "share" / "info" / package
        info.mkdir(parents=True)
        (info / "version.info").write_text(f"Version={VERSION}\nversion_dir=vnpu\n")
    (staging / "ascend_toolkit_install.info").write_text(f"package_name=vnpu\nversion={VERSION}\n")
    for directory in LAYOUT_DIRECTORIES:
        (staging / directory).mkdir(exist_ok=True)  # opp/ also holds the operator headers and vendors
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
