"""A decode-style loop that changes one kernel's parameter at every step, done the two ways CANN offers.

    model:  h = x * scale_step     (the kernel that changes: its scalar is the step's value)
            h = h + bias           (fixed)

1. Editing the model (aclmdlRITaskGetParams, change the kernel's scalar, aclmdlRITaskSetParams, aclmdlRIUpdate),
   then executing: the model is READY -> UPDATING -> READY at every step, and an execution in between would be
   refused (507011).
2. A task group (aclmdlRICaptureTaskGrpBegin/End around that kernel, rewritten with
   aclmdlRICaptureTaskUpdateBegin/End on an update stream before each execution): no model state changes.

Both loops must give the same results, each checked against float64.

    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/edit_model_per_step.py
"""

# ruff: noqa: F403, F405
# (the C names come from the star import, as from acl/acl.h)

from __future__ import annotations

import sys

import numpy as np

import proto.aclnn as nn
from client.acl import *

N, BIAS = 8, 0.5
SCALES = [0.5, 1.5, -2.0, 3.0]


def ACL_LOG(fmt: str, *args: object) -> None:
    print("[INFO] " + fmt % args, flush=True)


class Buffers:
    def __init__(self, x: np.ndarray) -> None:
        self.x, self.h = (aclrtMalloc(x.nbytes, ACL_MEM_MALLOC_HUGE_FIRST) for _ in range(2))
        aclrtMemcpy(self.x, x.nbytes, x, x.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
        self.xt, self.ht = (aclCreateTensor([N], ACL_FLOAT, [1], 0, ACL_FORMAT_ND, [N], p) for p in (self.x, self.h))

    def scale(self, value: float, stream: int) -> None:
        ws, ex = aclnnMulsGetWorkspaceSize(self.xt, aclCreateScalar(value, ACL_FLOAT), self.ht)
        aclnnMuls(None, ws, ex, stream)

    def bias(self, stream: int) -> None:
        one = aclCreateScalar(1.0, ACL_FLOAT)
        ws, ex = aclnnAddsGetWorkspaceSize(self.ht, aclCreateScalar(BIAS, ACL_FLOAT), one, self.ht)
        aclnnAdds(None, ws, ex, stream)

    def read(self) -> np.ndarray:
        out = np.empty(N, np.float32)
        aclrtMemcpy(out, out.nbytes, self.h, out.nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
        return out


def by_editing(buf: Buffers, stream: int) -> list[np.ndarray]:
    aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    buf.scale(SCALES[0], stream)
    buf.bias(stream)
    model = aclmdlRICaptureEnd(stream)
    (lane,), _ = aclmdlRIGetStreams(model, True, 1)
    (scale_task, _), _ = aclmdlRIGetTasksByStream(lane, True, 2)
    results = []
    for step, value in enumerate(SCALES):
        params = aclmdlRITaskGetParams(scale_task)
        desc = params.kernelTaskParams.desc
        params.kernelTaskParams.desc = nn.KernelDesc(desc.op, {**desc.args, "other": aclCreateScalar(value, ACL_FLOAT)})
        aclmdlRITaskSetParams(scale_task, params)
        aclmdlRIUpdate(model)
        aclmdlRIExecuteAsync(model, stream)
        aclrtSynchronizeStream(stream)
        results.append(buf.read())
        ACL_LOG("edit step %d: scale %g set with aclmdlRITaskSetParams + aclmdlRIUpdate", step, value)
    aclmdlRIDestroy(model)
    return results


def by_task_group(buf: Buffers, stream: int, update_stream: int) -> list[np.ndarray]:
    aclmdlRICaptureBegin(stream, ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    aclmdlRICaptureTaskGrpBegin(stream)
    buf.scale(SCALES[0], stream)
    group = aclmdlRICaptureTaskGrpEnd(stream)
    buf.bias(stream)
    model = aclmdlRICaptureEnd(stream)
    results = []
    for step, value in enumerate(SCALES):
        aclmdlRICaptureTaskUpdateBegin(update_stream, group)
        buf.scale(value, update_stream)
        aclmdlRICaptureTaskUpdateEnd(update_stream)
        aclrtSynchronizeStream(update_stream)
        aclmdlRIExecuteAsync(model, stream)
        aclrtSynchronizeStream(stream)
        results.append(buf.read())
        ACL_LOG("group step %d: scale %g set with a task update", step, value)
    aclmdlRIDestroy(model)
    return results


def main() -> int:
    aclInit(None)
    aclrtSetDevice(0)
    x = np.random.default_rng(17).standard_normal(N).astype(np.float32)
    buf = Buffers(x)
    stream, update_stream = aclrtCreateStream(), aclrtCreateStream()
    edited = by_editing(buf, stream)
    grouped = by_task_group(buf, stream, update_stream)
    expected = [x.astype(np.float64) * value + BIAS for value in SCALES]
    ok = all(np.allclose(e, want, rtol=1e-5, atol=1e-6) for e, want in zip(edited, expected, strict=True))
    same = all(np.array_equal(a, b) for a, b in zip(edited, grouped, strict=True))
    ACL_LOG("both loops match float64: %s; they agree bit for bit: %s", ok, same)
    for stream_ in (stream, update_stream):
        aclrtDestroyStream(stream_)
    aclrtFree(buf.x)
    aclrtFree(buf.h)
    aclrtResetDevice(0)
    aclFinalize()
    return 0 if ok and same else 1


if __name__ == "__main__":
    sys.exit(main())
