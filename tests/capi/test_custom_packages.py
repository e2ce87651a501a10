"""The custom packages' include directories (`opp/vendors/custom_<repo>/op_api/include`): the experimental
operators' headers that differ from include/aclnnop's, as their trees declare them, first on an experimental
example's include path; aclnnPow, which only such a header declares, exported by libopapi.so; and a variant whose
prototype is not the one libopapi.so exports for its name refused at compile time, saying why."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from client.capi import headers, opheaders
from client.capi.prototypes import Prototype, read_table
from proto.aclnn.catalog import WORKSPACE_TAIL, c_abi, catalog
from proto.errors import ACLNN_ERR_INNER_FIND_KERNEL
from tests.capi.conftest import run_program

pytestmark = pytest.mark.timeout(300)  # the first test to use it builds the session's toolkit


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Prototype]]:
    """Each custom package's headers as the toolkit writes them, read back by the preprocessor and pycparser: by
    package, the functions they declare by name."""
    include = tmp_path_factory.mktemp("vendor") / "include"
    headers.write_tree(include)
    by_vendor: dict[str, list[str]] = {}
    for path, text in opheaders.vendor_tree().items():
        (include / "vendors" / path).parent.mkdir(parents=True, exist_ok=True)
        (include / "vendors" / path).write_text(text)
        if not path.endswith("/aclnn_util.h"):
            by_vendor.setdefault(path.split("/", 1)[0], []).append(f"vendors/{path}")
    return {
        vendor: {p.name: p for p in read_table(include, paths).prototypes if p.header.startswith("vendors/")}
        for vendor, paths in by_vendor.items()
    }


def spelled(ctype: str) -> str:
    return " ".join(ctype.replace("*", " * ").split())


def test_each_custom_header_declares_the_experimental_variants(parsed: dict[str, dict[str, Prototype]]) -> None:
    vendor = catalog().vendor
    assert len(vendor) == 46 and {h.vendor for h in vendor} == {"custom_math", "custom_nn", "custom_cv"}
    for header in vendor:
        for op in header.ops:
            for name, params in ((op.ws_name, (*op.params, *WORKSPACE_TAIL)), (op.c_name, op.launch)):
                found = parsed[header.vendor][name]
                assert found.header == f"vendors/{header.vendor}/op_api/include/{header.header}", name
                assert [(spelled(p.ctype), p.name) for p in found.params] == [
                    (spelled(p.ctype), p.name) for p in params
                ]
    names = {(h.repo, h.header): [op.name for op in h.ops] for h in vendor}
    assert names[("math", "aclnn_log_add_exp.h")] == ["LogAddExp"]  # the main tree's is in aclnn_logaddexp.h
    assert names[("cv", "aclnn_c_io_u.h")] == ["CIoU"]  # the main tree's is in aclnn_ciou.h
    assert names[("math", "aclnn_pow.h")] == ["Pow"]  # include/aclnnop's holds PowTensorScalar, ...
    assert ("nn", "aclnn_softplus.h") not in names  # softplus and softplus_v2 write it differently: neither


def test_pow_is_one_of_the_catalog_operators_declared_by_its_custom_package_only(toolkit: Path) -> None:
    pow_ = catalog().ops["Pow"]
    assert (pow_.vendor, pow_.directory, pow_.header, pow_.source) == (
        True,
        "experimental/math/pow",
        "aclnn_pow.h",
        "opdef",
    )
    assert [op.name for op in catalog().by_header["aclnn_pow.h"]] == [
        "InplacePowTensorScalar",
        "PowScalarTensor",
        "PowTensorScalar",
    ]
    assert "aclnnPow(" not in (toolkit / "include/aclnnop/aclnn_pow.h").read_text()
    assert "aclnnPowGetWorkspaceSize(" in (toolkit / "opp/vendors/custom_math/op_api/include/aclnn_pow.h").read_text()
    done = subprocess.run(["nm", "-D", "--defined-only", str(toolkit / "lib64/libopapi.so")], capture_output=True)
    assert {"aclnnPow", "aclnnPowGetWorkspaceSize"} <= {line.split()[-1] for line in done.stdout.decode().splitlines()}


def test_the_variants_libopapi_cannot_export_are_marked() -> None:
    """Nine experimental prototypes pass other arguments than the built-in operator of their name, which is the one
    the toolkit's single operator library exports: their declarations carry VNPU_UNAVAILABLE."""
    table = catalog()
    marked = {name for header in table.vendor for name in opheaders.vendor_unavailable(header, table)}
    assert marked == {
        f"aclnn{name}GetWorkspaceSize"
        for name in ("CIoU", "RoiAlignV2", "Range", "StridedSlice", "Celu", "Median", "Shrink", "Sleep", "Softshrink")
    }
    celu = next(h for h in table.vendor if h.header == "aclnn_celu.h")
    assert c_abi(celu.ops[0].params) == ("aclTensor *", "double", "double", "double", "aclTensor *")


def _build(toolkit: Path, tmp_path: Path, repo: str, source: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The conformance script's line for an experimental example (custom package first, `-lcust_opapi`)."""
    cust = toolkit / "opp/vendors" / f"custom_{repo}" / "op_api"
    program, binary = tmp_path / "program.cpp", tmp_path / "program"
    program.write_text(source)
    include = toolkit / "include"
    line = ["g++", str(program), "-I", str(cust / "include"), "-I", str(include), "-I", str(include / "aclnnop")]
    line += ["-L", str(cust / "lib"), "-L", str(toolkit / "lib64"), "-lcust_opapi", "-lascendcl", "-lnnopbase"]
    line += ["-o", str(binary), f"-Wl,-rpath={cust / 'lib'}"]
    return subprocess.run(line, capture_output=True, text=True, timeout=120), binary


def test_an_experimental_example_finds_its_headers_and_links(toolkit: Path, tmp_path: Path) -> None:
    assert (toolkit / "opp/vendors/custom_math/op_api/include/aclnnop").resolve() == (
        toolkit / "opp/vendors/custom_math/op_api/include"
    ).resolve()  # `#include "aclnnop/..."` reaches the package first too, as build_example.sh links it
    source = """#include <cstdio>
#include "acl/acl.h"
#include "aclnn_log_add_exp.h"
#include "aclnnop/aclnn_pow.h"
int main() {
    uint64_t size = 7;
    aclOpExecutor *executor = nullptr;
    int pow = aclnnPowGetWorkspaceSize(nullptr, nullptr, nullptr, &size, &executor);
    printf("%d %llu %d\\n", pow, (unsigned long long)size, executor == nullptr);
    return aclnnLogAddExpGetWorkspaceSize == nullptr;
}
"""
    built, binary = _build(toolkit, tmp_path, "math", source)
    assert built.returncode == 0, built.stderr
    run = run_program(toolkit, binary, None)
    assert run.returncode == 0 and run.stdout.split() == [str(ACLNN_ERR_INNER_FIND_KERNEL), "0", "1"], run


def test_a_call_of_a_variant_libopapi_does_not_export_does_not_compile(toolkit: Path, tmp_path: Path) -> None:
    source = """#include "aclnn_celu.h"
int main() {
    uint64_t size = 0;
    aclOpExecutor *executor = nullptr;
    return aclnnCeluGetWorkspaceSize(nullptr, 1.0, 1.0, 1.0, nullptr, &size, &executor);
}
"""
    built, _ = _build(toolkit, tmp_path, "nn", source)
    assert built.returncode != 0
    assert "libcust_opapi.so is vnpu's libopapi.so, whose aclnnCeluGetWorkspaceSize is the one of" in built.stderr
