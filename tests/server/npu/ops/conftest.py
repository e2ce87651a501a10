"""Fixtures for the kernel tests: a seeded generator and a fake device memory over it."""

from __future__ import annotations

import numpy as np
import pytest
from aclnn_testkit import FakeMemory


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240607)


@pytest.fixture
def mem(rng: np.random.Generator) -> FakeMemory:
    return FakeMemory(rng)
