"""The native toolkit (`client.native`), built once per test session into a temporary directory."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.daemons import ROOT, clean_env


@pytest.fixture(scope="session")
def native(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("g++") is None:
        pytest.fail("g++ is needed for the native toolkit tests (.ci/run installs it)")
    root = tmp_path_factory.mktemp("native") / "cann"
    env = {**clean_env(), "VNPU_TOOLKIT_DIR": str(root)}
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "toolkit"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == root
    return root
