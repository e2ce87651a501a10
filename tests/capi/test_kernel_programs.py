"""A C++ program with custom kernels built against the toolkit and run against a daemon: both launch forms,
kernel printf in its place on stdout, a trap's code, and a kernel captured in a task group and updated; values
against a float64 reference."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from client.capi import ascendc
from proto import fatbin
from proto.errors import (
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_VECTOR_CORE_EXCEPTION,
)
from tests.capi.conftest import PROGRAMS, compile_program, run_program
from tests.daemons import Daemon, clean_env, serving

SAMPLE = PROGRAMS / "kernel_sample"

N = 16


@pytest.mark.parametrize("host_memory", ["local", "remote"])
def test_custom_kernels_from_cpp(toolkit: Path, daemon: Daemon, tmp_path: Path, host_memory: str) -> None:
    binary = compile_program(toolkit, PROGRAMS / "kernels_launch.cpp", tmp_path)
    kernels = tmp_path / "kernels.o"
    kernels.write_bytes(fatbin.dumps(["VectorAddKernel"]))
    done = run_program(toolkit, binary, daemon, str(kernels), VNPU_HOST_MEMORY=host_memory)
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
    # managed memory: written and read by the host through the pointers the kernel takes
    for label, alpha in (("with-config", 1.5), ("replay", -2.25), ("updated", 4.0), ("managed", 0.75),
                         ("managed-raw", -1.5)):  # fmt: skip
        row = next(line for line in lines if line.startswith(f"{label} "))
        got = np.array(row.split()[2:], dtype=np.float64)
        np.testing.assert_allclose(got, a + alpha * b, rtol=1e-5, atol=1e-5)
    start, end = lines.index("host before kernels"), lines.index("host after kernels")
    assert lines[start + 1 : end] == ["Source data: 123"] * 2 + ["Hello World"] * 3  # in stream order, in place


def test_a_sample_layout_builds_with_ascendc_cmake(toolkit: Path, tmp_path: Path) -> None:
    """ascendc_library (<<<>>> through the host wrappers, no ACL library linked by hand) and
    ascendc_fatbin_library, the kernel's numpy implementation from a VNPU_KERNELS module of the daemon."""
    build = tmp_path / "build"
    configure = f"source {toolkit}/bin/setenv.bash && cmake -S {SAMPLE} -B {build} -DASCEND_CANN_PACKAGE_PATH={toolkit}"
    for step in (configure, f"cmake --build {build}"):
        done = subprocess.run(["bash", "-c", step], env=clean_env(), capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (build / "out" / "fatbin" / "scale_fatbin" / "scale_fatbin.o").read_bytes() == fatbin.dumps(
        ["ScaleKernel", "KernelPrint"]
    )
    with serving(tmp_path, "--kernels", "tests.capi.kernel_numpy") as daemon:
        command = f"cd {build} && ./main"
        run = run_program(toolkit, Path("bash"), daemon, "-c", command)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    x = np.sin(np.float32(0.37) * np.arange(32, dtype=np.float32)).astype(np.float32) * np.float32(5.0)
    for label, factor in (("scaled", -1.75), ("updated", -0.5), ("fatbin", 3.0)):
        got = np.array(next(line for line in lines if line.startswith(label + " ")).split()[1:], dtype=np.float64)
        np.testing.assert_allclose(got, x.astype(np.float64) * factor, rtol=1e-6)
    start = lines.index("before hello")
    assert lines[start + 1 : start + 4] == ["Hello World"] * 2 + ["after hello"]  # the launch waited for it
    assert f"not-in-fatbin {ACL_ERROR_RT_PARAM_INVALID}" in lines


def test_ascendc_reads_kernels_and_refuses_a_launch_it_cannot_stub(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "ops.cpp"
    source.write_text(
        '#include "kernel_operator.h"\n#include <cstdint>\n'
        'extern "C" __global__ __aicore__ void Tiled(GM_ADDR x, __gm__ half* y, int32_t n) /* ) */ { }\n'
        "void TiledDo(uint32_t b, void* s, void* x, void* y) { Tiled<<<b, nullptr, s>>>(x, y, 7); }\n"
    )
    assert ascendc.kernels(ascendc._strip_comments(source.read_text())) == [
        ascendc.KernelDecl("Tiled", (("const void *", "x"), ("const void *", "y"), ("int32_t", "n")))
    ]
    host = ascendc.host_source([source])
    assert "kernel_operator.h" not in host and "#include <cstdint>" in host
    assert "vnpu_launch_Tiled(b, nullptr, s, x, y, 7);" in host and "<<<" not in host
    source.write_text(source.read_text() + "void OtherDo(void* s) { Other<<<1, nullptr, s>>>(); }\n")
    assert ascendc.main(["stub", str(tmp_path / "out.cpp"), str(source)]) == 1
    assert "Other<<<...>>> launches a kernel this source does not define" in capsys.readouterr().err
    assert ascendc.main(["fatbin", str(tmp_path / "k.o"), str(source)]) == 0
    assert fatbin.kernel_names((tmp_path / "k.o").read_bytes()) == ("Tiled",)
