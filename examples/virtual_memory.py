"""A growable device pool on virtual memory, as torch_npu's expandable segments and the memory/7 sample do it.

reserve a large range of device addresses once (aclrtReserveMemAddress), back it with physical blocks as the
pool grows (aclrtMallocPhysical + aclrtMapMem, one granule at a time), and run a kernel on tensors that span
the seams between blocks -- the mapped range is one contiguous piece of device memory
then share the first block with another process: export a shareable handle, put the child's pid on its
whitelist, and let the child import it, map it at its own address and read what the kernel wrote

VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/virtual_memory.py
"""

# ruff: noqa: F403, F405
# (the C names come from the star import, as from acl/acl.h)

from __future__ import annotations

import subprocess
import sys

import numpy as np

from client.acl import *

N = 600_000  # floats per tensor: 2.4 MB, so each tensor crosses a 2 MiB seam
TIMEOUT_S = 30
PROP = aclrtPhysicalMemProp(
    handleType=ACL_MEM_HANDLE_TYPE_NONE,
    allocationType=ACL_MEM_ALLOCATION_TYPE_PINNED,
    memAttr=ACL_HBM_MEM_HUGE,
    location=aclrtMemLocation(id=0, type=ACL_MEM_LOCATION_TYPE_DEVICE),
)


def ACL_LOG(who: str, fmt: str, *args: object) -> None:
    print(f"[INFO] {who}: " + fmt % args, flush=True)


class Pool:
    """Device memory that grows by mapping one physical block after another into one reserved range."""

    def __init__(self, capacity: int) -> None:
        self.granule = aclrtMemGetAllocationGranularity(PROP, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM)
        self.base = aclrtReserveMemAddress(capacity, 0, None, 0)
        self.blocks: list[int] = []
        self.used = 0

    def allocate(self, size: int) -> int:
        while self.used + size > len(self.blocks) * self.granule:
            block = aclrtMallocPhysical(self.granule, PROP, 0)
            aclrtMapMem(self.base + len(self.blocks) * self.granule, self.granule, 0, block, 0)
            self.blocks.append(block)
        ptr, self.used = self.base + self.used, self.used + size
        return ptr

    def release(self) -> None:
        for i, block in enumerate(self.blocks):
            aclrtUnmapMem(self.base + i * self.granule)
            aclrtFreePhysical(block)
        aclrtReleaseMemAddress(self.base)


def tensor(ptr: int) -> aclTensor:
    return aclCreateTensor([N], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [N], ptr)


def child(shareable: int, granule: int, count: int) -> int:
    aclInit(None)
    aclrtSetDevice(0)
    print(aclrtDeviceGetBareTgid(), flush=True)  # the parent puts it on the handle's whitelist
    sys.stdin.readline()
    handle = aclrtMemImportFromShareableHandle(shareable, 0)
    va = aclrtReserveMemAddress(granule, 0, None, 0)
    aclrtMapMem(va, granule, 0, handle, 0)
    out = bytearray(count * 4)
    aclrtMemcpy(out, len(out), va, len(out), ACL_MEMCPY_DEVICE_TO_HOST)
    sys.stdout.write(np.frombuffer(out, np.float32).tobytes().hex() + "\n")
    aclrtUnmapMem(va)
    aclrtReleaseMemAddress(va)
    aclrtFreePhysical(handle)
    aclrtResetDevice(0)
    aclFinalize()
    return 0


def parent() -> int:
    aclInit(None)
    aclrtSetDevice(0)
    pool = Pool(64 << 20)
    x, y, out = (pool.allocate(N * 4) for _ in range(3))
    ACL_LOG("parent", "granule %d bytes; the pool mapped %d blocks for 3 tensors", pool.granule, len(pool.blocks))
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    aclrtMemcpy(x, a.nbytes, a, a.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
    aclrtMemcpy(y, b.nbytes, b, b.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
    stream = aclrtCreateStream()
    ws, executor = aclnnAddGetWorkspaceSize(tensor(x), tensor(y), aclCreateScalar(2.0, ACL_FLOAT), tensor(out))
    aclnnAdd(0, ws, executor, stream)
    aclrtSynchronizeStream(stream)
    got = np.empty(N, np.float32)
    aclrtMemcpy(got, got.nbytes, out, got.nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
    ok = np.allclose(got, a.astype(np.float64) + 2 * b.astype(np.float64), rtol=1e-6)
    ACL_LOG("parent", "x + 2 * y across the seams matches float64: %s", ok)

    shareable = aclrtMemExportToShareableHandle(pool.blocks[0], ACL_MEM_HANDLE_TYPE_NONE, 0)
    other = subprocess.Popen(
        [sys.executable, __file__, "--child", str(shareable), str(pool.granule), "8"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert other.stdin is not None and other.stdout is not None
    pid = int(other.stdout.readline())
    aclrtMemSetPidToShareableHandle(shareable, [pid])
    ACL_LOG("parent", "put the child's pid on the whitelist")
    try:
        line, _ = other.communicate("go\n", timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        other.kill()
        ACL_LOG("parent", "the child did not finish in %d s", TIMEOUT_S)
        return 1
    seen = np.frombuffer(bytes.fromhex(line.strip()), np.float32) if other.returncode == 0 else np.zeros(0)
    shared = seen.size == 8 and np.array_equal(seen, a[:8])
    ACL_LOG("parent", "the child mapped the first block and read x: %s", shared)
    aclrtDestroyStream(stream)
    pool.release()
    aclrtResetDevice(0)
    aclFinalize()
    return 0 if ok and shared else 1


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        sys.exit(child(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
    sys.exit(parent())
