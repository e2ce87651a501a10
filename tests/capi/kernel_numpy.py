"""The numpy implementation of tests/capi/programs/kernel_sample's ScaleKernel (a user's kernel module)."""

from __future__ import annotations

import numpy as np

from server.npu import kernels as K


@K.kernel("ScaleKernel", K.ptr("float32"), K.ptr("float32"), K.f32, K.u32)
def scale(k: K.Block, x: np.ndarray, y: np.ndarray, factor: float, per: int) -> None:
    assert k.block_idx is not None
    part = slice(k.block_idx * per, (k.block_idx + 1) * per)
    np.multiply(x[part], np.float32(factor), out=y[part])
