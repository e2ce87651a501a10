"""The toolkit's libraries in a Python process: they load after `import torch` (CFFI's start-up on Python 3.11
used to spin for ever there), and a Python whose environment cannot import vnpu's client says so in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.daemons import ROOT, clean_env

pytestmark = pytest.mark.timeout(300)  # a torch process: ~10 s to start, more on a loaded machine

LOAD = "import ctypes, sys; ctypes.CDLL(sys.argv[1]); print('loaded')"


def test_the_libraries_load_after_import_torch(toolkit: Path) -> None:
    code = "import torch; print(torch.__version__); " + LOAD
    env = clean_env() | {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(toolkit / "lib64" / "libascendcl.so")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "loaded"


def test_a_python_without_vnpu_says_so_in_one_line(toolkit: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-S", "-c", LOAD, str(toolkit / "lib64" / "libascendcl.so")],
        cwd=tmp_path,  # not the source tree: nothing of vnpu is importable
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 127
    lines = [line for line in done.stderr.splitlines() if line.startswith("vnpu:")]
    assert len(lines) == 1, done.stderr
    assert "cannot import vnpu's client" in lines[0] and "install vnpu there" in lines[0]
