"""The C toolkit, built once per test session into a temporary directory, and helpers to build and run C/C++
programs against it and a real daemon process."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.daemons import Daemon, clean_env, serving

PROGRAMS = Path(__file__).parent / "programs"
RUN_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with serving(tmp_path_factory.mktemp("daemon")) as running:
        yield running


def compile_program(toolkit: Path, source: Path, out: Path, *extra: str) -> Path:
    """`g++ source -I$T/include -L$T/lib64 -lascendcl -lnnopbase -lopapi`, as CANN users build."""
    binary = out / source.stem
    args = ["g++", "-std=c++17", "-Wall", "-Werror", str(source), f"-I{toolkit}/include", f"-L{toolkit}/lib64"]
    args += ["-lascendcl", "-lnnopbase", "-lopapi", "-lpthread", *extra, "-o", str(binary)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return binary


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def run_program(
    toolkit: Path, binary: Path, daemon: Daemon | None, *args: str, fresh_shell: bool = False, **variables: str
) -> Run:
    """Run `binary` as a user would after `source $T/bin/setenv.bash` (from `env -i` when `fresh_shell`)."""
    if daemon is not None:
        daemon.check_alive()
        variables.setdefault("VNPU_ENDPOINT", daemon.url)
    base = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")} if fresh_shell else clean_env()
    exports = " ".join(f"{k}={_quote(v)}" for k, v in variables.items())
    command = f"source {toolkit}/bin/setenv.bash && {exports} exec {binary} {' '.join(map(_quote, args))}"
    done = subprocess.run(["bash", "-c", command], env=base, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    return Run(done.returncode, done.stdout, done.stderr)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"
