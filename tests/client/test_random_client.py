"""aclrtRandomNumAsync through client.acl against a live daemon: the struct built as C builds it, the values in
range, and the ACL layer's overwrite of the caller's dataType -- which makes a reused struct mean another type,
as on the device -- over both transports."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import client.acl as acl
from client.config import Config
from client.session import Session
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError


def normal(out: int, counter: int, count: int) -> acl.aclrtRandomNumTaskInfo:
    """The sample's NormalFloatAsync(3.0, 2.0): a fresh struct."""
    info = acl.aclrtRandomNumTaskInfo()
    info.dataType = acl.ACL_FLOAT
    info.randomNumFuncParaInfo.funcType = acl.ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS
    info.randomCounterAddr, info.randomResultAddr = counter, out
    dist = info.randomNumFuncParaInfo.paramInfo.normalDisInfo
    dist.mean = acl.aclrtRandomParaInfo.immediate(struct.pack("<f", 3.0))
    dist.stddev = acl.aclrtRandomParaInfo.immediate(struct.pack("<f", 2.0))
    info.randomSeed = acl.aclrtRandomParaInfo.immediate((0).to_bytes(8, "little"))
    info.randomNum = acl.aclrtRandomParaInfo.immediate(count.to_bytes(8, "little"))
    return info


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_a_launch_rewrites_data_type_and_a_reused_struct_fails(daemon: str, transport: str) -> None:
    session = Session(Config(endpoint=daemon, transport=transport))
    try:
        call = session.call
        call("aclInit", None)
        call("aclrtSetDevice", 0)
        stream = call("aclrtCreateStream")
        out, counter = call("aclrtMalloc", 4 * 1000, 0), call("aclrtMalloc", 16, 0)
        call("aclrtMemset", counter, 16, 0, 16)
        info = normal(out, counter, 1000)
        call("aclrtRandomNumAsync", info, stream, None)
        assert info.dataType == 6  # RT_RANDOM_NUM_DATATYPE_FP32, written over ACL_FLOAT as the ACL layer does
        call("aclrtSynchronizeStream", stream)
        values = np.zeros(1000, np.float32)
        call("aclrtMemcpy", values, values.nbytes, out, values.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        assert abs(values.mean() - 3.0) < 0.25 and abs(values.std() - 2.0) < 0.2 and len(np.unique(values)) > 990
        with pytest.raises(AclError) as info_again:
            call("aclrtRandomNumAsync", info, stream, None)  # 6 is ACL_INT16 to the ACL layer
            call("aclrtSynchronizeStream", stream)
        assert info_again.value.code == ACL_ERROR_INVALID_PARAM and "ACL_INT16" in info_again.value.message
        assert info.dataType == 6  # refused: left as it was
        refilled = normal(out, counter, 8)
        call("aclrtRandomNumAsync", refilled.to_wire(), stream, None)  # the wire form: taken, nothing rewritten
        call("aclrtSynchronizeStream", stream)
        assert refilled.dataType == acl.ACL_FLOAT
        call("aclrtResetDevice", 0)
    finally:
        session.close()
