"""The toolkit directory: its layout, headers that compile as C and C++ with proto's exact values, libraries that
export exactly the prototype table, and every function of the call table reachable from C."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from client.capi import headers, opheaders
from client.capi import toolkit as tk
from client.capi.prototypes import Table
from client.native import build, inventory
from proto.aclnn import DECLS
from proto.aclnn.catalog import catalog
from proto.calltable import CALLS
from tests.daemons import ROOT, clean_env


@pytest.fixture(scope="module")
def table(toolkit: Path) -> Table:
    return build.read_prototypes(toolkit / "include")[0]


def test_layout(toolkit: Path) -> None:
    for path in ("include/acl/acl.h", "include/acl/error_codes/rt_error_codes.h", "include/aclnn/acl_meta.h"):
        assert (toolkit / path).is_file(), path
    for decl in DECLS:
        assert (toolkit / "include" / headers.op_header_path(decl)).is_file()
    assert (toolkit / "include/aclnnop/aclnn_add.h").is_file()
    for name in ("ascendcl", "nnopbase", "opapi", "c_sec"):
        assert (toolkit / "lib64" / f"lib{name}.so").is_file()
    for alias in ("acl_rt", "acl_rt_impl", "acl_tdt_channel", "acl_tdt_queue", "msprofiler", "profapi", "ascend_dump"):
        assert (toolkit / "lib64" / f"lib{alias}.so").resolve() == (toolkit / "lib64/libascendcl.so").resolve()
    assert (toolkit / "share/info/runtime/version.info").read_text().startswith(f"Version={tk.VERSION}\n")


def test_setenv_points_here(toolkit: Path) -> None:
    script = f"source {toolkit}/bin/setenv.bash && env"
    done = subprocess.run(["bash", "-c", script], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
    env = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    for name in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_INSTALL_PATH"):
        assert env[name] == str(toolkit)
    assert env["LD_LIBRARY_PATH"].split(":")[0] == f"{toolkit}/lib64"


def test_a_second_call_reuses_the_toolkit(toolkit: Path) -> None:
    before = (toolkit / "lib64/libascendcl.so").stat().st_mtime_ns
    assert build.ensure(toolkit) == toolkit
    assert (toolkit / "lib64/libascendcl.so").stat().st_mtime_ns == before


@pytest.mark.parametrize(("compiler", "language"), [("gcc", "c"), ("g++", "c++")])
def test_every_header_compiles(toolkit: Path, tmp_path: Path, compiler: str, language: str) -> None:
    include = toolkit / "include"
    every = [p.relative_to(include).as_posix() for p in sorted(include.rglob("*.h"))]
    source = tmp_path / f"all.{'c' if language == 'c' else 'cpp'}"
    source.write_text("".join(f'#include "{h}"\n' for h in every) + "int main(void) { return 0; }\n")
    done = subprocess.run(
        [compiler, "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{include}", str(source)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_the_headers_hold_protos_values(toolkit: Path, tmp_path: Path) -> None:
    """A C program prints every enum member, flag and code as the compiler sees them; they equal proto's."""
    expected = {
        **{n: int(m) for e in headers.enums().values() for n, m in e.__members__.items()},
        **headers.defines(),
        **headers.codes(),
    }
    lines = "".join(f'    printf("{n} %lld\\n", (long long)({n}));\n' for n in expected)
    source = tmp_path / "values.c"
    includes = "".join(f'#include "{h}"\n' for h in tk.ENTRY_HEADERS)  # acl_tdt*.h are not in acl.h, as in CANN
    source.write_text(f"#include <stdio.h>\n{includes}int main(void) {{\n{lines}    return 0;\n}}\n")
    binary = tmp_path / "values"
    subprocess.run(["gcc", str(source), f"-I{toolkit}/include", "-o", str(binary)], check=True)
    printed = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    got = {name: int(value) for name, value in (line.split() for line in printed.splitlines())}
    assert got == expected


def exported(library: Path) -> set[str]:
    done = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True)
    return {line.split()[-1] for line in done.stdout.splitlines() if re.search(r" [TW] ", line)}


# the runtime's internal rt* entry points torch_npu links, with no prototype in the headers (src/rt.c)
RT_ENTRY_POINTS = {"rtDevBinaryRegister", "rtFunctionRegister", "rtKernelLaunch", "rtGetC2cCtrlAddr"}


@pytest.mark.parametrize("library", ["ascendcl", "nnopbase", "opapi", "hccl", "acl_op_compiler"])
def test_each_library_exports_its_prototypes(toolkit: Path, table: Table, library: str) -> None:
    """Each library exports its functions of the prototype table; beyond them only vnpu's internal vn_*, mp_* and
    ws_* (what the other libraries call) and, in libascendcl, the rt* entry points."""
    internal = ("_", "vn_", "mp_", "ws_")  # the core's helpers the other libraries call (msgpack, WebSocket, ...)
    symbols = {s for s in exported(toolkit / "lib64" / f"lib{library}.so") if not s.startswith(internal)}
    functions = {p.name for p in table.of_library(library)} - tk.NOT_EXPORTED
    if library == "opapi":  # what CANN's op_api exports with no header (GetMaxWorkspaceSize)
        functions |= {p.name for p in opheaders.unlisted()}
    extra = (RT_ENTRY_POINTS | {"vnpuPhase1RoundTrips"}) if library in ("ascendcl", "nnopbase") else set()
    assert functions <= symbols
    assert symbols - functions <= extra
    assert not symbols & tk.NOT_EXPORTED  # the samples look these up with dlsym and take their skip path


def test_the_tables_agree(table: Table) -> None:
    """Every function of the call table is declared in C, and each declared function has a plan."""
    acl_calls = [name for name in CALLS if not name.startswith("vnpu")]
    assert [n for n in acl_calls if n not in table.by_name] == []
    plans = inventory.plans()
    unplanned = [p.name for p in table.prototypes if p.name not in plans and p.name not in tk.NOT_EXPORTED]
    assert unplanned == ["aclAppLog"]  # variadic: written by hand (src/special.c), not generated


def test_the_docs_count_the_functions(table: Table) -> None:
    operators = {p.name for p in (*opheaders.prototypes(), *opheaders.unlisted())}
    runtime = [p for p in table.prototypes if p.name not in operators]
    implemented = sum(inventory.is_implemented(p.name) for p in runtime)
    missing = len(runtime) - implemented
    page = " ".join((ROOT / "docs" / "c-toolkit.md").read_text().split())
    said = f"{len(runtime)} C functions besides the operators: {implemented} implemented, {missing} not implemented yet"
    assert said in page
    ops = catalog().ops.values()
    with_kernel = sum(inventory.is_implemented(op.ws_name) for op in ops)
    assert f"{len(ops)} operators, {with_kernel} of them implemented" in page
    readme = (ROOT / "README.md").read_text()
    assert f"{implemented} of {len(runtime)} implemented" in readme  # the Status table


@pytest.mark.parametrize("variables", [{"CC": "/nonexistent/cc"}, {"PATH": "/nonexistent"}])
def test_no_compiler_is_a_clear_message(tmp_path: Path, variables: dict[str, str]) -> None:
    env = {**clean_env(), "VNPU_TOOLKIT_DIR": str(tmp_path / "cann"), **variables}
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "toolkit"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and done.stdout == ""
    assert "compiler" in done.stderr and ("CC is '/nonexistent/cc'" in done.stderr or "no C compiler" in done.stderr)
    assert not (tmp_path / "cann").exists()


def test_a_toolkit_of_other_sources_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "cann"
    (root / "share" / "vnpu").mkdir(parents=True)
    (root / "share" / "vnpu" / "built").write_text("0123456789ab\n")  # another vnpu's sources
    built: list[Path] = []

    def fake_build(staging: Path, cc: str) -> None:
        built.append(staging)
        (staging / "share" / "vnpu").mkdir(parents=True)

    monkeypatch.setattr(build, "build", fake_build)
    assert build.ensure(root) == root and len(built) == 1
    assert (root / "share" / "vnpu" / "built").read_text().strip() == build.source_key()
    assert build.ensure(root) == root and len(built) == 1  # now current: reused


def test_clean_removes_what_nothing_will_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`vnpu toolkit --clean`: the retired CFFI toolkits, toolkits of a vanished interpreter and this interpreter's
    stale ones go; the current one, a live interpreter's and directories vnpu did not make stay."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("VNPU_TOOLKIT_DIR", raising=False)
    current = build.default_dir()
    gone, live = tmp_path / "venv-gone" / "bin" / "python", Path(sys.executable).resolve()
    made = {"gone": gone, "stale": Path(sys.executable), "live": live, "current": Path(sys.executable)}
    for name, python in {**made, "cffi": Path(sys.executable)}.items():
        root = current if name == "current" else current.parent / f"{'toolkit' if name == 'cffi' else 'native'}-{name}"
        (root / "share" / "vnpu").mkdir(parents=True)
        (root / "share" / "vnpu" / "python").write_text(f"{python}\n")
    (current.parent / "native-foreign").mkdir()
    assert live != Path(sys.executable)  # a venv's python is a link of its own name to another interpreter
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "toolkit", "--clean"],
        cwd=ROOT,
        env={**clean_env(), "XDG_CACHE_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in current.parent.iterdir()) == sorted([current.name, "native-live", "native-foreign"])
    assert done.stdout.splitlines() == [
        f"removed {current.parent / 'toolkit-cffi'} (a CFFI toolkit: retired by the native one)",
        f"removed {current.parent / 'native-gone'} (built by {gone}, which no longer exists)",
        f"removed {current.parent / 'native-stale'} (built by this interpreter from other sources or operators)",
    ]
