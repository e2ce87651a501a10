"""The native toolkit (`client.native`) is the toolkit: the session's one build (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def native(toolkit: Path) -> Path:
    return toolkit
