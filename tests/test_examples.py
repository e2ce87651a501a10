"""The self-contained examples (they drive the device in-process) run as a user runs them; the examples that
talk to a daemon are run against a live one in tests/client/test_examples_live.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


SELF_CONTAINED = ["eager_add.py", "fia_decode_update.py"]


@pytest.mark.parametrize("script", SELF_CONTAINED)
def test_example_runs(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "matches float64" in done.stdout
