"""The toolkit's libraries in a Python process: they load after `import torch` (the CFFI libraries' start-up on
Python 3.11 used to spin for ever there), and in a Python that cannot import vnpu at all."""

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


def test_the_libraries_need_nothing_of_python(toolkit: Path, tmp_path: Path) -> None:
    """A Python that cannot import vnpu (-S, outside the source tree, no environment) loads every library: they
    are native C and start no interpreter (the CFFI ones stopped such a process with rc 127)."""
    for name in ("ascendcl", "nnopbase", "opapi", "hccl", "acl_op_compiler"):
        done = subprocess.run(
            [sys.executable, "-S", "-c", LOAD, str(toolkit / "lib64" / f"lib{name}.so")],
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "loaded", ""), name
