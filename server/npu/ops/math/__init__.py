"""Kernels of hicann/ops-math's operators: comparisons, pointwise math, reductions, sorting, shapes, fills, random.

Each module ends with FUNCTIONS (operator name without "aclnn" -> numpy kernel called by its C argument names);
FUNCTIONS here merges them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.npu.ops.math import (
    binary,
    compare,
    fill,
    gamma,
    layout,
    pointwise,
    random,
    reduce,
    shape,
    sort,
    special,
    statistics,
    twins,
    unary,
)

MODULES = (
    compare,
    fill,
    pointwise,
    random,
    reduce,
    shape,
    sort,
    unary,
    binary,
    layout,
    statistics,
    special,
    gamma,
    twins,
)
FUNCTIONS: dict[str, Callable[..., Any]] = {name: f for module in MODULES for name, f in module.FUNCTIONS.items()}
