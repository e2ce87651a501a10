"""The operator library in CANN's layout: every catalog operator declared in its family header with the catalog's
exact prototype (parsed back through the toolkit's own pycparser path), both phases exported by libopapi.so, which
NEEDs libnnopbase.so, the library names the repositories' build lines and torch_npu use, and an operator vnpu does
not implement answering with its status and message from a program built with an example's own build line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from client.capi import headers, opheaders
from client.capi import toolkit as tk
from client.capi.prototypes import Prototype, read_table
from client.native import inventory
from proto.aclnn.catalog import WORKSPACE_TAIL, catalog
from proto.errors import ACLNN_ERR_INNER_FIND_KERNEL
from tests.capi.conftest import PROGRAMS, run_program

pytestmark = pytest.mark.timeout(300)  # the first test to use it builds the session's toolkit


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Prototype]:
    """The generated headers as the toolkit writes them, read back by the C preprocessor and pycparser."""
    include = tmp_path_factory.mktemp("headers") / "include"
    headers.write_tree(include)
    names = sorted(opheaders.paths())
    return {p.name: p for p in read_table(include, [*tk.ENTRY_HEADERS, *names]).prototypes}


def spelled(ctype: str) -> str:
    return " ".join(ctype.replace("*", " * ").split())


def test_every_operator_is_declared_as_the_catalog_says(parsed: dict[str, Prototype]) -> None:
    ops = catalog().ops
    assert len(ops) == 1213
    for op in ops.values():
        if op.vendor:
            continue  # declared by its custom package's header only (tests/capi/test_custom_packages.py)
        for name, params in ((op.ws_name, (*op.params, *WORKSPACE_TAIL)), (op.c_name, op.launch)):
            found = parsed[name]
            assert found.header == f"aclnnop/{op.header}", name
            assert found.result == "aclnnStatus", name
            assert [(spelled(p.ctype), p.name) for p in found.params] == [(spelled(p.ctype), p.name) for p in params]


def test_every_other_public_function_is_declared(parsed: dict[str, Prototype]) -> None:
    for function in catalog().functions:
        found = parsed[function.name]
        assert found.header == f"aclnnop/{function.header}" and found.result == function.result
        assert [(spelled(p.ctype), p.name) for p in found.params] == [
            (spelled(p.ctype), p.name) for p in function.params
        ]


def test_the_build_takes_the_same_prototypes_from_the_catalog(parsed: dict[str, Prototype]) -> None:
    """The toolkit does not parse its 2,400 generated declarations back: it takes them from the catalog."""
    made = [p for p in opheaders.prototypes() if p.header in opheaders.paths()]
    assert {p.name for p in made} == {n for n, p in parsed.items() if p.header in opheaders.paths()}
    assert all(parsed[p.name] == p for p in made)


def test_a_header_holds_its_family() -> None:
    text = opheaders.tree()["aclnnop/aclnn_add.h"]
    for name in ("Add", "Adds", "InplaceAdd", "InplaceAdds"):
        assert f"aclnnStatus aclnn{name}GetWorkspaceSize(\n" in text and f"aclnnStatus aclnn{name}(\n" in text
    assert '#include "aclnn/aclnn_base.h"\n#include "aclnn_util.h"\n' in text
    assert "QuantMatmulV4 is" not in text
    quant = opheaders.tree()["aclnnop/aclnn_quant_matmul_v4.h"]
    assert 'ACL_DEPRECATED_MESSAGE("aclnnQuantMatmulV4GetWorkspaceSize is deprecated")\nACLNN_API' in quant


def test_level2_holds_the_hand_written_headers() -> None:
    tree = opheaders.tree()
    assert tree["aclnnop/level2/aclnn_add.h"].endswith('#include "../aclnn_add.h"\n')
    assert "aclnnop/level2/aclnn_rms_norm.h" not in tree  # generated from its OpDef: CANN has it in aclnnop/ only


def test_libopapi_exports_both_phases_of_every_operator(toolkit: Path) -> None:
    done = subprocess.run(["nm", "-D", "--defined-only", str(toolkit / "lib64/libopapi.so")], capture_output=True)
    symbols = {line.split()[-1] for line in done.stdout.decode().splitlines() if " T " in line}
    for op in catalog().ops.values():
        assert {op.ws_name, op.c_name} <= symbols, op.name
    assert {f.name for f in catalog().functions} <= symbols


def test_libopapi_needs_libnnopbase(toolkit: Path) -> None:
    dynamic = subprocess.run(["readelf", "-d", str(toolkit / "lib64/libopapi.so")], capture_output=True, text=True)
    needed = [line.split("[")[1].rstrip("]") for line in dynamic.stdout.splitlines() if "(NEEDED)" in line]
    assert "libnnopbase.so" in needed
    assert "Library soname: [libopapi.so]" in dynamic.stdout


def test_the_operator_library_names_are_libopapi(toolkit: Path) -> None:
    for name in tk.OPAPI_NAMES:
        assert (toolkit / "lib64" / f"lib{name}.so").resolve() == (toolkit / "lib64/libopapi.so").resolve(), name
    for vendor in tk.VENDORS:
        library = toolkit / "opp/vendors" / vendor / "op_api/lib/libcust_opapi.so"
        assert library.resolve() == (toolkit / "lib64/libopapi.so").resolve(), vendor
    header = toolkit / "opp/include/aclnnop/aclnn_add.h"
    assert header.resolve() == (toolkit / "include/aclnnop/aclnn_add.h").resolve()


def test_an_example_build_line_links_and_runs(toolkit: Path, tmp_path: Path) -> None:
    """ops-nn's own line (build.sh): -I include -I include/aclnnop -I include/aclnn -lopapi_nn -lopapi_math
    -lascendcl -lnnopbase; the program needs no daemon (no aclInit)."""
    include = toolkit / "include"
    binary = tmp_path / "operator_library"
    line = ["g++", str(PROGRAMS / "operator_library.cpp"), "-I", str(include), "-I", str(include / "aclnnop")]
    line += ["-I", str(include / "aclnn"), "-L", str(toolkit / "lib64")]
    line += ["-lopapi_nn", "-lopapi_math", "-lascendcl", "-lnnopbase", "-o", str(binary)]
    done = subprocess.run([*line, "-Wall", "-Werror"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    libraries = [f"lib{name}.so" for name in tk.OPAPI_NAMES]
    run = run_program(toolkit, binary, None, *libraries)
    assert run.returncode == 0, run.stdout + run.stderr
    said = dict(line.split(" ", 1) for line in run.stdout.splitlines() if not line.startswith("alias "))
    aliases = [line for line in run.stdout.splitlines() if line.startswith("alias ")]
    assert aliases == [f"alias {library} 1" for library in libraries]
    assert said["init"] == said["finalize"] == "0"
    assert said["host-object"] == said["host-list"] == "1"
    assert said["phase1"] == f"{ACLNN_ERR_INNER_FIND_KERNEL} 0 1"
    assert said["phase2"] == str(ACLNN_ERR_INNER_FIND_KERNEL)
    op = "aclnnAdaptiveMaxPool3dBackward"
    assert not inventory.is_implemented(op)  # the program's operator must be one vnpu does not implement
    assert said["phase1-message"] == (
        f"{op}GetWorkspaceSize: ACLNN_ERR_INNER_FIND_KERNEL (561003): vnpu does not implement {op} yet"
    )
    assert said["phase2-message"] == f"{op}: ACLNN_ERR_INNER_FIND_KERNEL (561003): vnpu does not implement {op} yet"
    assert said["read-once"] == "1"
    assert said["random-mode"] == "0 0 1 161002 1"  # aclnnSetPytorchRandom takes 0 or 1 only
    # aclnnTransQuantParam: float32 bits | 1 << 46, offsets rounded half away from zero into 9 bits at 37, clamped
    # to [-256, 255]; 3 values padded to 16, 1 kept as 1
    bits = [int(b) for b in np.array([1.0, 0.5, -2.0], np.float32).view(np.uint32)]
    nine = [1, -3 & 0x1FF, 255]
    packed = [f"{b | 1 << 46 | n << 37:x}" for b, n in zip(bits, nine, strict=True)] + ["0"] * 13
    assert said["trans-quant"] == "0 16 " + " ".join(packed)
    assert said["trans-quant-scale-only"] == f"0 1 {bits[1] | 1 << 46:x}"
    assert said["trans-quant-refused"] == "161001 161002"


def test_opbase_fp16_t_rounds_as_numpy(toolkit: Path, tmp_path: Path) -> None:
    """`aclnn/opdev/fp16_t.h` (op::fp16_t, which a few examples keep their fp16 data in) rounds to nearest even,
    saturates to inf and reads back as numpy's float16 does, subnormals included."""
    values = [0.1, -2.5, 65504.0, 65520.0, 70000.0, 6.1e-5, 1e-7, 3e-8, 2.98e-8, 1.0009765625, 1.00146484375]
    source = tmp_path / "fp16.cpp"
    line = '    printf("%04x %a\\n", op::fp16_t({0!r}f).val, static_cast<float>(op::fp16_t({0!r}f)));\n'
    body = "".join(line.format(v) for v in values)
    source.write_text(f'#include <cstdio>\n#include "aclnn/opdev/fp16_t.h"\nint main() {{\n{body}    return 0;\n}}\n')
    binary = tmp_path / "fp16"
    command = ["g++", "-std=c++17", "-Wall", "-Werror", f"-I{toolkit}/include", str(source), "-o", str(binary)]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    lines = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.splitlines()
    with np.errstate(over="ignore"):
        half = np.array(values, np.float32).astype(np.float16)
    assert [line.split()[0] for line in lines] == [f"{int(bits):04x}" for bits in half.view(np.uint16)]
    assert [float.fromhex(line.split()[1]) for line in lines] == [float(h) for h in half]
