"""Conditional models: IF / WHILE / SWITCH sub-models chosen on the device by a 64-bit condition word.

Each model is captured on one stream; `aclmdlRIAddCondTask` makes the branches (sub-models), each captured on a
second stream with `aclmdlRICaptureToModelRIBegin` .. `aclmdlRICaptureEnd`. The word lives in device memory, so
the work inside the model sets it:

- WHILE: the model writes 3 into the word (aclrtValueWrite); the body doubles y and decrements the word with an
  int64 aclnnAdds kernel, so the body runs 3 times: y = 8 x.
- SWITCH: an aclnnReduceSum kernel sums a vote vector into the word; the branch with that index runs. The host
  changes the votes between executions and the same model takes another branch.
- IF with ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT: the runtime writes the default (0) into the word at every
  launch, so a value the host wrote before the launch is overwritten and the false branch runs -- what CANN's
  conditional sample shows.

    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/cond_model.py
"""

# ruff: noqa: F403, F405
# (the C names come from the star import, as from acl/acl.h)

from __future__ import annotations

import sys

import numpy as np

from client.acl import *

N = 8
RELAXED = ACL_MODEL_RI_CAPTURE_MODE_RELAXED


def ACL_LOG(fmt: str, *args: object) -> None:
    print("[INFO] " + fmt % args, flush=True)


def tensor(ptr: int, n: int, dtype: int) -> object:
    return aclCreateTensor([n], dtype, [1], 0, ACL_FORMAT_ND, [n], ptr)


def put(array: np.ndarray, ptr: int | None = None) -> int:
    ptr = aclrtMalloc(array.nbytes, ACL_MEM_MALLOC_HUGE_FIRST) if ptr is None else ptr
    aclrtMemcpy(ptr, array.nbytes, array, array.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
    return ptr


def get(ptr: int) -> np.ndarray:
    out = np.empty(N, np.float32)
    aclrtMemcpy(out, out.nbytes, ptr, out.nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
    return out


class Conditional:
    """A model captured on `s` whose one condition task has `size` branches, each captured by `branch(i, s2)`."""

    def __init__(self, s: int, s2: int, kind: int, size: int, default: int, flag: int, before, branch) -> None:
        aclmdlRICaptureBegin(s, RELAXED)
        _, parent = aclmdlRICaptureGetInfo(s)
        self.handle = aclmdlRICondHandleCreate(parent, default, flag)
        self.word = aclmdlRICondHandleGetCondPtr(self.handle)
        before(self.word, s)  # the tasks before the condition task: they may compute the word
        branches = aclmdlRIAddCondTask(aclmdlRICondTaskParams(handle=self.handle, type=kind, size=size), s, 0)
        for index, sub in enumerate(branches):
            aclmdlRICaptureToModelRIBegin(s2, sub, RELAXED)
            branch(index, s2, self.word)
            aclmdlRICaptureEnd(s2)
        self.model = aclmdlRICaptureEnd(s)

    def run(self, s: int) -> None:
        aclmdlRIExecuteAsync(self.model, s)
        aclrtSynchronizeStream(s)


def main() -> int:
    aclInit(None)
    aclrtSetDevice(0)
    s, s2 = aclrtCreateStream(), aclrtCreateStream()
    x_host = np.random.default_rng(23).standard_normal(N).astype(np.float32)
    x, y = put(x_host), put(np.zeros(N, np.float32))
    xt, yt = tensor(x, N, ACL_FLOAT), tensor(y, N, ACL_FLOAT)
    one, two = aclCreateScalar(1.0, ACL_FLOAT), aclCreateScalar(2.0, ACL_FLOAT)
    reference = x_host.astype(np.float64)
    ok = True

    def check(what: str, expected: np.ndarray) -> None:
        nonlocal ok
        matches = bool(np.allclose(get(y), expected, rtol=1e-5, atol=1e-6))
        ACL_LOG("%s, matches float64: %s", what, matches)
        ok &= matches

    def copy_x(s_: int) -> None:
        aclrtMemcpyAsync(y, 4 * N, x, 4 * N, ACL_MEMCPY_DEVICE_TO_DEVICE, s_)

    # WHILE: the body runs until the kernel in it has counted the word down to 0
    def count_from_3(word: int, s_: int) -> None:
        copy_x(s_)
        aclrtValueWrite(word, 3, 0, s_)

    def body(_: int, s_: int, word: int) -> None:
        ws, ex = aclnnMulsGetWorkspaceSize(yt, two, yt)
        aclnnMuls(None, ws, ex, s_)
        counter = tensor(word, 1, ACL_INT64)
        ws, ex = aclnnAddsGetWorkspaceSize(
            counter, aclCreateScalar(-1, ACL_INT64), aclCreateScalar(1, ACL_INT64), counter
        )
        aclnnAdds(None, ws, ex, s_)

    loop = Conditional(s, s2, ACL_MODEL_RI_COND_TYPE_WHILE, 1, 0, 0, count_from_3, body)
    loop.run(s)
    check("WHILE: the body ran while the word counted 3, 2, 1", reference * 8)

    # SWITCH: a kernel sums the votes into the word; branch i adds i + 1 to x
    votes = put(np.array([0, 1, 1], np.int64))

    def sum_votes(word: int, s_: int) -> None:
        copy_x(s_)
        ws, ex = aclnnReduceSumGetWorkspaceSize(
            tensor(votes, 3, ACL_INT64),
            aclCreateIntArray([0]),
            False,
            ACL_INT64,
            aclCreateTensor([], ACL_INT64, [], 0, ACL_FORMAT_ND, [], word),
        )
        aclnnReduceSum(None, ws, ex, s_)

    def case(index: int, s_: int, _: int) -> None:
        ws, ex = aclnnAddsGetWorkspaceSize(yt, aclCreateScalar(float(index + 1), ACL_FLOAT), one, yt)
        aclnnAdds(None, ws, ex, s_)

    switch = Conditional(s, s2, ACL_MODEL_RI_COND_TYPE_SWITCH, 3, 0, 0, sum_votes, case)
    for ballot in ([0, 1, 1], [1, 0, 0], [0, 0, 0]):
        put(np.array(ballot, np.int64), votes)
        switch.run(s)
        check(f"SWITCH: votes {ballot} chose case {sum(ballot)}", reference + sum(ballot) + 1)

    # IF with ASSIGN_DEFAULT: the launch resets the word to 0, whatever the host wrote
    def branch_if(index: int, s_: int, _: int) -> None:
        ws, ex = aclnnMulsGetWorkspaceSize(xt, aclCreateScalar(10.0 if index == 0 else -1.0, ACL_FLOAT), yt)
        aclnnMuls(None, ws, ex, s_)

    choose = Conditional(
        s, s2, ACL_MODEL_RI_COND_TYPE_IF, 2, 0, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, lambda w, s_: None, branch_if
    )
    aclrtMemcpy(choose.word, 8, np.ones(1, np.uint64), 8, ACL_MEMCPY_HOST_TO_DEVICE)  # overwritten at launch
    choose.run(s)
    check("IF: the host wrote 1, the launch's default 0 took the false branch", reference * -1)

    for model in (loop, switch, choose):
        aclmdlRIDestroy(model.model)  # its branches and its condition word go with it
    for ptr in (x, y, votes):
        aclrtFree(ptr)
    for stream in (s, s2):
        aclrtDestroyStream(stream)
    aclrtResetDevice(0)
    aclFinalize()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
