"""Kernels of hicann/ops-nn's operators: index reads and writes, norms, activations, quantization, matmuls,
sampling.

Each module ends with FUNCTIONS (operator name without "aclnn" -> numpy kernel called by its C argument names);
FUNCTIONS here merges them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from server.npu.ops.nn import (
    activation,
    activation_more,
    activation_params,
    grad,
    index_fill,
    index_read,
    index_update,
    loss,
    matmul,
    norm,
    quant,
    quant_matmul,
    sampling,
    scatter,
)

MODULES = (
    activation,
    activation_more,
    activation_params,
    grad,
    index_fill,
    index_read,
    index_update,
    loss,
    matmul,
    norm,
    quant,
    quant_matmul,
    sampling,
    scatter,
)
FUNCTIONS: dict[str, Callable[..., Any]] = {name: f for module in MODULES for name, f in module.FUNCTIONS.items()}
