"""A C++ program with custom kernels built against the toolkit and run against a daemon: both launch forms,
kernel printf in its place on stdout, a trap's code, and a kernel captured in a task group and updated; values
against a float64 reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from proto import fatbin
from proto.errors import (
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_VECTOR_CORE_EXCEPTION,
)
from tests.capi.conftest import PROGRAMS, compile_program, run_program
from tests.daemons import Daemon

N = 16


def test_custom_kernels_from_cpp(toolkit: Path, daemon: Daemon, tmp_path: Path) -> None:
    binary = compile_program(toolkit, PROGRAMS / "kernels_launch.cpp", tmp_path)
    kernels = tmp_path / "kernels.o"
    kernels.write_bytes(fatbin.dumps(["VectorAddKernel"]))
    done = run_program(toolkit, binary, daemon, str(kernels))
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    pairs = [line.split() for line in lines]
    codes = {p[0]: int(p[1]) for p in pairs if len(p) == 2 and p[1].lstrip("-").isdigit()}
    assert codes["missing-file"] == codes["missing-kernel"] == ACL_ERROR_RT_PARAM_INVALID
    assert codes["append-after-finalize"] == ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    assert codes["trap"] == ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
    assert codes["unregistered"] == 0  # pipelined: its 207000 comes at the next waiting call
    assert codes["unregistered-reported"] == ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    i = np.arange(N, dtype=np.float32)
    a = (3.0 * np.sin(np.float32(0.7) * i)).astype(np.float32).astype(np.float64)
    b = (2.0 * np.cos(np.float32(1.3) * i)).astype(np.float32).astype(np.float64)
    for label, alpha in (("with-config", 1.5), ("replay", -2.25), ("updated", 4.0)):
        row = next(line for line in lines if line.startswith(f"{label} "))
        got = np.array(row.split()[2:], dtype=np.float64)
        np.testing.assert_allclose(got, a + alpha * b, rtol=1e-5, atol=1e-5)
    start, end = lines.index("host before kernels"), lines.index("host after kernels")
    assert lines[start + 1 : end] == ["Source data: 123"] * 2 + ["Hello World"] * 3  # in stream order, in place
