from __future__ import annotations

import subprocess
import sys

import pytest

from server.cli import main, package_version


def test_version_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == f"vnpu {package_version()}"


def test_help_runs_as_a_process() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "--help"], capture_output=True, text=True, timeout=60, check=True
    )
    assert "usage: vnpu" in done.stdout and "version" in done.stdout
