"""aclrtValueWrite / aclrtValueWait (spec-breadth 14): a stream blocked on a word until another stream, a copy
or the host makes the condition true; the four conditions on random words; bad input."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from proto.constants import (
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_STREAM_WAIT_VALUE_AND,
    ACL_STREAM_WAIT_VALUE_EQ,
    ACL_STREAM_WAIT_VALUE_GEQ,
    ACL_STREAM_WAIT_VALUE_NOR,
    aclrtStreamStatus,
)
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_ABORT, AclError
from server.npu import Runtime
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import read_bytes as read

BLOCKED = aclrtStreamStatus.ACL_STREAM_STATUS_NOT_READY
MASK = 2**64 - 1
REFERENCE = {
    ACL_STREAM_WAIT_VALUE_GEQ: lambda w, v: w >= v,
    ACL_STREAM_WAIT_VALUE_EQ: lambda w, v: w == v,
    ACL_STREAM_WAIT_VALUE_AND: lambda w, v: (w & v) != 0,
    ACL_STREAM_WAIT_VALUE_NOR: lambda w, v: (~(w | v) & MASK) != 0,
}


def put_word(rt: Runtime, ptr: int, word: int) -> None:
    data = np.array([word], np.uint64).view(np.uint8)
    rt.aclrtMemcpy(ptr, 8, data, 8, ACL_MEMCPY_HOST_TO_DEVICE)


async def test_wait_blocks_until_another_stream_writes(rt: Runtime) -> None:
    waiter, writer = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    flag, out = rt.aclrtMalloc(8, 0), rt.aclrtMalloc(8, 0)
    put_word(rt, flag, 0)
    rt.aclrtValueWait(flag, 100, ACL_STREAM_WAIT_VALUE_EQ, waiter)
    rt.aclrtMemsetAsync(out, 8, 0x7B, 8, waiter)
    await asyncio.sleep(0.02)
    assert rt.aclrtStreamQuery(waiter) == BLOCKED and read(rt, out, 8) != bytes([0x7B]) * 8
    rt.aclrtValueWrite(flag, 100, 0, writer)
    await rt.aclrtSynchronizeStream(writer)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(waiter), 5)
    assert read(rt, out, 8) == bytes([0x7B]) * 8
    assert int(np.frombuffer(read(rt, flag, 8), np.uint64)[0]) == 100


async def test_the_four_conditions_on_random_words(rt: Runtime) -> None:
    rng = np.random.default_rng(14)
    s = rt.aclrtCreateStream()
    word = rt.aclrtMalloc(8, 0)
    for _ in range(40):
        flag = int(rng.integers(0, 4))
        w, v = (int(x) for x in rng.integers(0, 2**64, 2, dtype=np.uint64))
        if rng.random() < 0.3:
            v = w  # make EQ and GEQ hold often
        put_word(rt, word, w)
        rt.aclrtValueWait(word, v, flag, s)
        await asyncio.sleep(0.002)
        holds = rt.aclrtStreamQuery(s) != BLOCKED
        assert holds == REFERENCE[flag](w, v), (flag, hex(w), hex(v))
        if not holds:  # release it: a word that satisfies every condition for v
            rt.aclrtStreamAbort(s)
            with pytest.raises(AclError) as info:
                await asyncio.wait_for(rt.aclrtSynchronizeStream(s), 5)
            assert info.value.code == ACL_ERROR_RT_STREAM_ABORT
        else:
            await rt.aclrtSynchronizeStream(s)


async def test_a_host_copy_releases_a_wait(rt: Runtime) -> None:
    s = rt.aclrtCreateStream()
    word = rt.aclrtMalloc(16, 0)
    put_word(rt, word + 8, 1)
    rt.aclrtValueWait(word + 8, 5, ACL_STREAM_WAIT_VALUE_GEQ, s)
    await asyncio.sleep(0.01)
    assert rt.aclrtStreamQuery(s) == BLOCKED
    put_word(rt, word + 8, 9)
    await asyncio.wait_for(rt.aclrtSynchronizeStream(s), 5)


async def test_bad_input(rt: Runtime) -> None:
    word = rt.aclrtMalloc(16, 0)
    host = rt.aclrtMallocHost(16)
    fails(ACL_ERROR_INVALID_PARAM, rt.aclrtValueWrite, 0, 1, 0, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtValueWrite, word, 1, 1, 0)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtValueWait, word, 1, 4, 0)
    error = fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtValueWrite, host, 1, 0, 0)
    assert "device memory" in error.message
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtValueWait, word + 4, 1, 0, 0)  # not aligned
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtValueWait, word + 16, 1, 0, 0)  # past the allocation
    rt.aclrtFree(word)
    fails(ACL_ERROR_RT_PARAM_INVALID, rt.aclrtValueWrite, word, 1, 0, 0)
