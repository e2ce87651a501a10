"""A user-declared operator from C++: a toolkit built with --operators tests.user_operators (its generated header
and exported functions), a daemon started with the same module, phase 1's exact codes, an eager launch and a
captured replay updated in place; values against a float64 reference."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR
from tests.capi.conftest import PROGRAMS, compile_program, run_program
from tests.daemons import ROOT, Daemon, build_toolkit, clean_env, serving

MODULE = "tests.user_operators"
M, N = 5, 7


@pytest.fixture(scope="module")
def operator_toolkit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_toolkit(tmp_path_factory.mktemp("toolkit-ops") / "cann", "--operators", MODULE)


@pytest.fixture(scope="module")
def operator_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with serving(tmp_path_factory.mktemp("daemon-ops"), "--operators", MODULE) as running:
        yield running


def test_the_toolkit_generates_the_operators_header(operator_toolkit: Path) -> None:
    header = (operator_toolkit / "include" / "aclnnop" / "aclnn_outer_scaled_add.h").read_text()
    assert "from its operator declaration (the module tests.user_operators)" in header
    assert "aclnnOuterScaledAddGetWorkspaceSize(\n    const aclTensor *self,\n    const aclTensor *other," in header
    assert "    const aclScalar *scale,\n    aclTensor *out,\n    uint64_t *workspaceSize," in header
    symbols = subprocess.run(["nm", "-D", str(operator_toolkit / "lib64" / "libopapi.so")], capture_output=True)
    exported = symbols.stdout.decode()
    assert " T aclnnOuterScaledAdd\n" in exported and " T aclnnOuterScaledAddGetWorkspaceSize\n" in exported


def test_a_cpp_program_launches_the_user_operator(
    operator_toolkit: Path, operator_daemon: Daemon, tmp_path: Path
) -> None:
    binary = compile_program(operator_toolkit, PROGRAMS / "user_operator.cpp", tmp_path)
    done = run_program(operator_toolkit, binary, operator_daemon)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    said = dict(line.split(" ", 1) for line in lines)
    assert said["workspace"] == "512"
    assert int(said["null-out"]) == ACLNN_ERR_PARAM_NULLPTR
    phase1 = "aclnnOuterScaledAddGetWorkspaceSize"
    assert (
        said["null-out-message"]
        == f"{phase1}: ACLNN_ERR_PARAM_NULLPTR (161001): aclnnOuterScaledAdd: out is a null pointer"
    )
    assert int(said["2d-self"]) == ACLNN_ERR_PARAM_INVALID
    assert said["2d-self-message"] == (
        f"{phase1}: ACLNN_ERR_PARAM_INVALID (161002): aclnnOuterScaledAdd: self has shape [5, 7]; it must be 1-D"
    )
    a = (3.0 * np.sin(np.float32(0.7) * np.arange(M, dtype=np.float32))).astype(np.float32).astype(np.float64)
    b = (2.0 * np.cos(np.float32(1.3) * np.arange(N, dtype=np.float32))).astype(np.float32).astype(np.float64)
    for label, scale in (("eager", 1.5), ("replay", -2.0), ("updated", 0.25)):
        row = next(line for line in lines if line.startswith(f"{label} "))
        got = np.array(row.split()[2:], dtype=np.float64).reshape(M, N)
        np.testing.assert_allclose(got, a[:, None] + scale * b[None, :], rtol=1e-6, atol=1e-6)


def test_the_toolkit_refuses_an_operator_module_that_fails(tmp_path: Path) -> None:
    env = {**clean_env(), "VNPU_TOOLKIT_DIR": str(tmp_path / "cann"), "VNPU_OPERATORS": "no_such_operators_19"}
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "toolkit"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and not (tmp_path / "cann").exists()
    assert done.stderr.strip() == (
        "vnpu toolkit: the operator module 'no_such_operators_19' (VNPU_OPERATORS): failed to import: "
        "ModuleNotFoundError(\"No module named 'no_such_operators_19'\")"
    )
