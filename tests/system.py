"""Debian programs some tests need beyond Python (`.ci/run` installs them): present, or the test is skipped -- and
under CI (`CI` set, as `.ci/run` and CI services set it) a failure instead, so a run that lost its browser or
compiler cannot pass by skipping."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = "/usr/bin/chromium"  # Debian's, never a downloaded browser


def require(program: str, package: str) -> str:
    """The path of `program` (a name on PATH or an absolute path); else a skip, or under CI a failure."""
    found = shutil.which(program)
    if found:
        return found
    why = f"needs Debian's {package} (`sudo apt-get install {package}`; .ci/run installs it)"
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{program} is missing and CI={os.environ['CI']}: this run {why}")
    pytest.skip(why)
