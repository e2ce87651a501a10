"""vnpu's own C/C++ examples (examples/c/), each built the three ways CANN users build -- plain g++, CMake with
-DASCEND_CANN_PACKAGE_PATH, the example's run.sh with ASCEND_INSTALL_PATH -- and run against a live daemon, with
the daemon's host memory mapped here and reached through the wire. Each program checks its own values against a
float64 reference computed in it and ends with `[INFO] <name> passed`."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from client.native import inventory
from tests.capi.conftest import compile_program, run_program
from tests.daemons import ROOT, Daemon, clean_env, serving

EXAMPLES = ROOT / "examples" / "c"
# an example of an operator vnpu does not implement yet: expected to fail until it does (strict: then it must pass)
NEEDS = {"fia_decode_update": "aclnnFusedInferAttentionScoreV4"}


def _example(name: str) -> object:
    needed = NEEDS.get(name)
    if needed is None or inventory.is_implemented(needed):
        return name
    return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=f"vnpu does not implement {needed} yet"))


NAMES = [_example(p.name) for p in sorted(EXAMPLES.iterdir()) if (p / "main.cpp").is_file()]


def passed(stdout: str, name: str) -> bool:
    return f"[INFO] {name} passed" in stdout.splitlines()


def test_every_flow_of_the_seed_page_has_an_example() -> None:
    expected = {"concurrent_update", "update_then_execute", "split_models", "cross_stream_capture"}
    names = {p.name for p in EXAMPLES.iterdir() if (p / "main.cpp").is_file()}
    assert expected | {"update_from_another_process", "multi_thread", "fia_decode_update"} <= names


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("host_memory", ["auto", "remote"])
def test_plain_gpp(toolkit: Path, daemon: Daemon, tmp_path: Path, name: str, host_memory: str) -> None:
    binary = compile_program(toolkit, EXAMPLES / name / "main.cpp", tmp_path)
    done = run_program(toolkit, binary, daemon, VNPU_HOST_MEMORY=host_memory)
    assert done.returncode == 0 and passed(done.stdout, name), done.stdout + done.stderr


@pytest.mark.parametrize("name", NAMES)
def test_cmake(toolkit: Path, daemon: Daemon, tmp_path: Path, name: str) -> None:
    build = tmp_path / "build"
    for step in (
        ["cmake", "-S", str(EXAMPLES / name), "-B", str(build), f"-DASCEND_CANN_PACKAGE_PATH={toolkit}"],
        ["cmake", "--build", str(build)],
    ):
        done = subprocess.run(step, env=clean_env(), capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stdout + done.stderr
    run = run_program(toolkit, build / "main", daemon)
    assert run.returncode == 0 and passed(run.stdout, name), run.stdout + run.stderr


@pytest.mark.parametrize("name", NAMES)
def test_run_sh(toolkit: Path, daemon: Daemon, tmp_path: Path, name: str) -> None:
    """The example's own script, from a fresh shell, as a CANN sample is run (a copy: it builds in its folder)."""
    copy = tmp_path / name
    shutil.copytree(EXAMPLES / name, copy, ignore=shutil.ignore_patterns("build"))
    env = {"PATH": "/usr/bin:/bin", "HOME": "/root", "ASCEND_INSTALL_PATH": str(toolkit), "VNPU_ENDPOINT": daemon.url}
    done = subprocess.run(["bash", str(copy / "run.sh")], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert passed(done.stdout, name) and f"[INFO] {name} ran successfully" in done.stdout


IN_ONE_PROCESS = [name for name in NAMES if name != "update_from_another_process"]


@pytest.mark.parametrize("name", IN_ONE_PROCESS)
def test_embedded_device(toolkit: Path, tmp_path: Path, name: str) -> None:
    """The examples that run in one process, on the device embedded in the program (VNPU_ENDPOINT=embedded): no
    daemon, the same values."""
    binary = compile_program(toolkit, EXAMPLES / name / "main.cpp", tmp_path)
    done = run_program(toolkit, binary, None, VNPU_ENDPOINT="embedded", VNPU_MEMORY="256MiB")
    assert done.returncode == 0 and passed(done.stdout, name), done.stdout + done.stderr


@pytest.fixture(scope="module")
def unix_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    logs = tmp_path_factory.mktemp("uds")
    with serving(logs, uds=logs / "vnpu.sock") as running:
        yield running


@pytest.mark.parametrize("name", ["update_from_another_process", "concurrent_update"])
def test_over_a_unix_socket(toolkit: Path, unix_daemon: Daemon, tmp_path: Path, name: str) -> None:
    """VNPU_ENDPOINT=unix:PATH (`vnpu serve --uds PATH`): the same programs, two processes sharing a context too."""
    binary = compile_program(toolkit, EXAMPLES / name / "main.cpp", tmp_path)
    done = run_program(toolkit, binary, unix_daemon)
    assert done.returncode == 0 and passed(done.stdout, name), done.stdout + done.stderr
