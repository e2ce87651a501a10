"""The kernels of CANN's runtime samples (spec cann-samples section 3), as numpy: examples of the registry, and
what lets those samples run unchanged on vnpu."""

from __future__ import annotations

import time

import numpy as np

from server.npu.kernels.registry import Block, f32, i32, kernel, ptr, u32

LONG_OP_SECONDS = 1.5  # LongOPf's ~2.5e8 iterations: it must outlast a 1000 ms synchronize timeout (stream/2)


@kernel("VectorAddKernel", ptr("float32"), ptr("float32"), ptr("float32"), f32, u32, grid=True)
def vector_add(k: Block, a: np.ndarray, b: np.ndarray, dst: np.ndarray, alpha: float, n: int) -> None:
    """dst[:n] = a[:n] + alpha * b[:n] (each block computes all of it, as the sample's kernel does)."""
    np.add(a[:n], np.float32(alpha) * b[:n], out=dst[:n])


@kernel("AddKernel", ptr("float32"), ptr("float32"), ptr("float32"), u32)
def add(k: Block, a: np.ndarray, b: np.ndarray, dst: np.ndarray, total: int) -> None:
    """dst = a + b over `total` floats, split evenly over the blocks."""
    assert k.block_idx is not None
    per = total // k.block_num
    part = slice(k.block_idx * per, (k.block_idx + 1) * per)
    np.add(a[part], b[part], out=dst[part])


ADD_CUSTOM_BLOCK = 2048  # add_custom.cpp: 8 blocks x 2048 halves


@kernel("add_custom", ptr("float16"), ptr("float16"), ptr("float16"))
def add_custom(k: Block, x: np.ndarray, y: np.ndarray, z: np.ndarray) -> None:
    """z = x + y in fp16, ADD_CUSTOM_BLOCK elements per block."""
    assert k.block_idx is not None
    part = slice(k.block_idx * ADD_CUSTOM_BLOCK, (k.block_idx + 1) * ADD_CUSTOM_BLOCK)
    np.add(x[part], y[part], out=z[part])


@kernel("add_custom", ptr("float16"), ptr("float16"), ptr("float16"), ptr("int32"), ptr("int32"))
def add_custom_tiling(
    k: Block, x: np.ndarray, y: np.ndarray, z: np.ndarray, total: np.ndarray, tiles: np.ndarray
) -> None:
    """add_custom_tiling.cpp: z = x + y over totalLength (a placeholder) halves, 8 blocks (no work if tileNum is 0)."""
    assert k.block_idx is not None
    per = int(total[0]) // 8
    if int(tiles[0]) != 0:
        part = slice(k.block_idx * per, (k.block_idx + 1) * per)
        np.add(x[part], y[part], out=z[part])


@kernel("EasyOPf", ptr("uint32"))
def easy_op(k: Block, x: np.ndarray) -> None:
    x[k.block_idx] += 1


@kernel("ShortOPf", ptr("uint32"))
def short_op(k: Block, x: np.ndarray) -> None:
    x[k.block_idx] *= 2


@kernel("LongOPf", ptr("uint32"))
def long_op(k: Block, x: np.ndarray) -> None:
    """Its duration is what matters (event/0 expects NOT_READY right after the record)."""
    time.sleep(LONG_OP_SECONDS)
    x[k.block_idx] += 1


@kernel("ErrorOPf")
def error_op(k: Block) -> None:
    k.trap("ErrorOPf executes trap()")


@kernel("DeviceWrite", ptr("int32"), i32)
def device_write(k: Block, p: np.ndarray, value: int) -> None:
    p[k.block_idx] = value
    k.printf("Source data: %d\n", value)


@kernel("DeviceRead", ptr("int32"))
def device_read(k: Block, p: np.ndarray) -> None:
    k.printf("Destination data: %d\n", int(p[k.block_idx]))


@kernel("KernelPrint")
def kernel_print(k: Block) -> None:
    k.printf("Hello World\n")
