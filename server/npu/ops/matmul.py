"""Matmul on the cube unit: torch.matmul semantics (1-6 D, batch broadcasting), float32 accumulation.

The product is accumulated in float32 in the workspace (sized by phase 1 as out's element count × 4 bytes),
then rounded once into out. fp16/bf16 operands are widened to float32 first. cubeMathType: USE_FP16
rounds float32 operands to fp16 before the product, as the cube unit does; the HF32 modes
(1 ALLOW_FP32_DOWN_PRECISION and 3 USE_HF32 on A2/A3) are computed in full float32, since HF32's rounding is
not documented; a product of two 1-D operands ignores cubeMathType, as CANN's does.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from proto.aclnn.rules import USE_FP16, int_attr
from server.npu.ops.launch import Kernel, Launch, Plan

FLOAT32: Final = np.dtype(np.float32)


def _operand(x: np.ndarray, fp16: bool) -> np.ndarray:
    if x.dtype != FLOAT32:
        return x.astype(FLOAT32)
    return x.astype(np.float16).astype(FLOAT32) if fp16 else x


def matmul(launch: Launch) -> Plan:
    a, b, out = launch.read("self"), launch.read("mat2"), launch.write("out")
    fp16 = int_attr(launch.kernel.args, "cubeMathType") == USE_FP16 and not a.ndim == b.ndim == 1
    scratch = launch.scratch(FLOAT32, out.shape)

    def run() -> None:
        np.matmul(_operand(a, fp16), _operand(b, fp16), out=scratch)
        np.copyto(out, scratch, casting="unsafe")

    return run


KERNELS: Final[dict[str, Kernel]] = {"Matmul": matmul}
