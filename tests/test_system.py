"""tests/system.py: a Debian program a test needs is found, or the test skips -- or fails under CI."""

from __future__ import annotations

import shutil

import pytest

from tests.system import require


def test_a_missing_program_skips_and_under_ci_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    for unset in (None, "", "false", "0"):
        if unset is None:
            monkeypatch.delenv("CI", raising=False)
        else:
            monkeypatch.setenv("CI", unset)
        with pytest.raises(pytest.skip.Exception, match=r"needs Debian's nosuch \(`sudo apt-get install nosuch`"):
            require("/nonexistent/nosuch", "nosuch")
    for ci in ("true", "1"):
        monkeypatch.setenv("CI", ci)
        with pytest.raises(pytest.fail.Exception, match=f"nosuch is missing and CI={ci}"):
            require("/nonexistent/nosuch", "nosuch")
    assert require("sh", "dash") == shutil.which("sh")
