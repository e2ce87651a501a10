"""A model built from bound streams (aclmdlRIBuildBegin .. aclmdlRIBuildEnd) that picks its path on the device.

    head:   y = x + 1                          (always: the HEAD stream starts with the model)
            switch to `big` if *selector == *one   (aclrtSwitchStream: int32 words compared when the task runs)
            activate `small`                   (reached only when the switch did not jump)
    big:    y = y * 10, then activate `end`
    small:  y = y * 2,  then activate `end`
    end:    the end task: the model ends here

The selector is device memory: the host writes it between executions, and the same model takes the other path.
Each result is checked against float64.

    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/built_model_switch.py
"""

# ruff: noqa: F403, F405
# (the C names come from the star import, as from acl/acl.h)

from __future__ import annotations

import sys

import numpy as np

from client.acl import *

N = 8


def ACL_LOG(fmt: str, *args: object) -> None:
    print("[INFO] " + fmt % args, flush=True)


def device(array: np.ndarray) -> int:
    ptr = aclrtMalloc(array.nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    aclrtMemcpy(ptr, array.nbytes, array, array.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
    return ptr


def main() -> int:
    aclInit(None)
    aclrtSetDevice(0)
    x_host = np.random.default_rng(11).standard_normal(N).astype(np.float32)
    x, y = device(x_host), device(np.zeros(N, np.float32))
    selector, one = device(np.zeros(1, np.int32)), device(np.ones(1, np.int32))
    xt, yt = (aclCreateTensor([N], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [N], p) for p in (x, y))
    head, big, small, end = (aclrtCreateStreamWithConfig(0, ACL_STREAM_PERSISTENT) for _ in range(4))
    model = aclmdlRIBuildBegin(0)
    aclmdlRIBindStream(model, head, ACL_MODEL_STREAM_FLAG_HEAD)
    for stream in (big, small, end):
        aclmdlRIBindStream(model, stream, ACL_MODEL_STREAM_FLAG_DEFAULT)
    # tasks on bound streams are kept, not run: they run at every execution of the model
    ws, ex = aclnnAddsGetWorkspaceSize(xt, aclCreateScalar(1.0, ACL_FLOAT), aclCreateScalar(1.0, ACL_FLOAT), yt)
    aclnnAdds(None, ws, ex, head)
    aclrtSwitchStream(selector, ACL_RT_EQUAL, one, ACL_RT_SWITCH_INT32, big, None, head)
    aclrtActiveStream(small, head)
    for stream, scale in ((big, 10.0), (small, 2.0)):
        ws, ex = aclnnMulsGetWorkspaceSize(yt, aclCreateScalar(scale, ACL_FLOAT), yt)
        aclnnMuls(None, ws, ex, stream)
        aclrtActiveStream(end, stream)
    aclmdlRIEndTask(model, end)
    aclmdlRIBuildEnd(model, None)
    aclmdlRISetName(model, "switch on a device word")

    run = aclrtCreateStream()
    ok = True
    for choice in (0, 1, 0):
        aclrtMemcpy(selector, 4, np.array([choice], np.int32), 4, ACL_MEMCPY_HOST_TO_DEVICE)
        aclmdlRIExecuteAsync(model, run)
        aclrtSynchronizeStream(run)
        out = np.empty(N, np.float32)
        aclrtMemcpy(out, out.nbytes, y, out.nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
        path, scale = ("big", 10.0) if choice == 1 else ("small", 2.0)
        matches = np.allclose(out, (x_host.astype(np.float64) + 1) * scale, rtol=1e-5, atol=1e-6)
        ACL_LOG("selector %d: took the %s path, matches float64: %s", choice, path, matches)
        ok &= bool(matches)

    aclmdlRIDestroy(model)  # unbinds its streams
    for stream in (head, big, small, end, run):
        aclrtDestroyStream(stream)
    for ptr in (x, y, selector, one):
        aclrtFree(ptr)
    aclrtResetDevice(0)
    aclFinalize()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
