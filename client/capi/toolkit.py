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
    opp/vendors/custom_<repo>/op_api/include   the custom package's headers that differ from include/aclnnop's
                                   (`opheaders.vendor_tree`), and `aclnnop`, a link to itself, as the repositories'
                                   scripts/build_example.sh makes it for `#include "aclnnop/..."`
    bin/setenv.bash                what CANN's environment script sets, pointing here
    share/info/<package>/version.info    the version each package reports (aclsysGetVersionStr, ...)
    ascend_toolkit_install.info    the same version, where torch_npu's import check reads it
    opp/ runtime/ compiler/        the directories torch_npu's import check requires (empty)

What is shared by the toolkit's build (`client.native.build`, which compiles the libraries as native C): the
library names and their aliases, the layout (opp/, bin/setenv.bash, share/info), the plain-C libraries
(libc_sec.so, the empty ones), the compiler, and `--clean` of the cache. Until issue 38 the libraries were CFFI
embedding-mode libraries running vnpu's Python client inside the program; that path is retired.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

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


EMPTY_LIBRARIES = ("ge_runner", "graph")  # only their names are needed: torch_npu calls nothing in them
# the packages whose version.info the toolkit holds (share/info/<name>): CANN's names for the runtime (also the
# whole of CANN), HCCL, the compiler and the tools (aclsysGetCANNVersion reads them by aclCANNPackageName), and the
# four operator packages vnpu's aclnn library is declared from (torch_npu asks for ops_math ... ops_cv); not
# ops-legacy: vnpu has no legacy operators
PACKAGES = ("runtime", "hccl", "bisheng-compiler", "oam-tools", "ops-math", "ops-nn", "ops-transformer", "ops-cv")
LAYOUT_DIRECTORIES = ("opp", "runtime", "compiler")  # torch_npu's import requires them under ASCEND_HOME_PATH


class ToolkitError(Exception):
    """The toolkit cannot be built here (no compiler, a header that does not parse, ...)."""


def cache_dir() -> Path:
    """Where the toolkits live, one `native-<key>` each."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vnpu"


def clean(keep: Path) -> list[tuple[Path, str]]:
    """Remove the toolkits of the cache that nothing will use again (all but `keep`, the current one); each removed
    one with the reason."""
    removed = []
    for root in sorted(cache_dir().glob("toolkit-*")):
        if (root / "share" / "vnpu" / "python").exists():  # a directory this code made
            shutil.rmtree(root)
            removed.append((root, "a CFFI toolkit: retired by the native one"))
    for root in sorted(cache_dir().glob("native-*")):
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


def operator_modules() -> list[tuple[str, str]]:
    """(name, source file) of each module that declared the user operators now known (what a build puts in)."""
    found = []
    for module in _operators.user_modules():
        loaded = sys.modules.get(module)
        found.append((module, str(getattr(loaded, "__file__", "") or "")))
    return found


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


def operator_headers(include: Path) -> list[str]:
    """The operator headers of a written include/ (aclnnop/*.h), as the build includes them."""
    return sorted(p.relative_to(include).as_posix() for p in (include / "aclnnop").glob("*.h"))


def write_layout(staging: Path) -> None:
    """opp/: the operator headers where the newer packages also put them, and the custom packages' libopapi."""
    include, lib64 = staging / "include", staging / "lib64"
    opp_include = staging / "opp" / "include"
    opp_include.mkdir(parents=True)
    (opp_include / "aclnnop").symlink_to(os.path.relpath(include / "aclnnop", opp_include))
    from client.capi import opheaders

    for vendor in VENDORS:
        lib = staging / "opp" / "vendors" / vendor / "op_api" / "lib"
        lib.mkdir(parents=True)
        (lib / "libcust_opapi.so").symlink_to(os.path.relpath(lib64 / "libopapi.so", lib))
        (lib.parent / "include").mkdir()
        (lib.parent / "include" / "aclnnop").symlink_to(".")
    for path, text in opheaders.vendor_tree().items():
        (staging / "opp" / "vendors" / path).write_text(text)


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
