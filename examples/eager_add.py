"""The seed's aclnnAdd, run eagerly on a virtual NPU, in the order of the C example (no capture yet).

    outtmp = self + alpha * other
    out    = outtmp + alpha * other          (alpha = 1.1; then again with alpha = 5.5)

The device itself is driven here, in this process, through `server.npu.Runtime` (one client context): the
device's own surface, which the daemon serves and vnpu's device tests use; its calls are async where the
device's are. A program uses the Python client instead, with the same names, against a daemon (`vnpu serve`) or
with no daemon at all (`VNPU_ENDPOINT=embedded`): see the other examples and the README. Prints the outputs and
checks them against float64.
"""

from __future__ import annotations

import asyncio

import numpy as np

from proto.aclnn import aclCreateScalar, aclCreateTensor, aclnnAddGetWorkspaceSize
from proto.constants import (
    ACL_FLOAT,
    ACL_FORMAT_ND,
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from server.npu import Machine, Runtime


async def main() -> None:
    machine = Machine(devices=1, memory_bytes=64 << 20)
    rt = Runtime(machine)
    rt.aclInit(None)
    rt.aclrtSetDevice(0)
    shape, n = [4, 2], 8
    size = n * 4

    def tensor() -> tuple[object, int]:
        ptr = rt.aclrtMalloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        return aclCreateTensor(shape, ACL_FLOAT, [2, 1], 0, ACL_FORMAT_ND, shape, ptr), ptr

    (self_t, self_d), (other_t, other_d), (out_t, out_d), (tmp_t, _) = (tensor() for _ in range(4))
    rng = np.random.default_rng(0)
    self_h, other_h = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    stream = rt.aclrtCreateStream()
    await rt.aclrtMemcpyAsync(self_d, size, self_h, size, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    await rt.aclrtMemcpyAsync(other_d, size, other_h, size, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    for alpha_value in (1.1, 5.5):
        alpha = aclCreateScalar(alpha_value, ACL_FLOAT)
        ws, executor = aclnnAddGetWorkspaceSize(self_t, other_t, alpha, tmp_t)
        rt.aclnnAdd(0, ws, executor, stream)
        ws, executor = aclnnAddGetWorkspaceSize(tmp_t, other_t, alpha, out_t)
        rt.aclnnAdd(0, ws, executor, stream)
        await rt.aclrtSynchronizeStream(stream)
        out_h = np.empty(n, np.float32)
        rt.aclrtMemcpy(out_h, size, out_d, size, ACL_MEMCPY_DEVICE_TO_HOST)
        a = np.float64(np.float32(alpha_value))
        expected = self_h.astype(np.float64) + 2 * a * other_h.astype(np.float64)
        np.testing.assert_allclose(out_h, expected, rtol=1e-6)
        print(f"alpha={alpha_value}: out = {np.array2string(out_h, precision=4)}  (matches float64)")
    await rt.aclrtDestroyStream(stream)
    await rt.aclrtResetDevice(0)
    await rt.aclFinalize()
    machine.close()


if __name__ == "__main__":
    asyncio.run(main())
