"""Custom kernels through client.acl against a live daemon: a binary file read by the client, an argument block
built on the host, placeholders, and kernel printf on the program's stdout at the next synchronize."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import client.acl as acl
from client.config import Config
from client.session import Session
from proto import fatbin
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID


def test_launch_with_config_and_printf(daemon: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = Session(Config(endpoint=daemon))
    acl.use(session)
    try:
        acl.aclInit(None)
        acl.aclrtSetDevice(0)
        with pytest.raises(acl.AclError) as info:
            acl.aclrtBinaryLoadFromFile(str(tmp_path / "missing.o"))
        assert info.value.code == ACL_ERROR_RT_PARAM_INVALID and "missing.o" in info.value.message
        path = tmp_path / "kernels.o"
        path.write_bytes(fatbin.dumps(["DeviceWrite", "VectorAddKernel"]))
        binary = acl.aclrtBinaryLoadFromFile(str(path))
        write = acl.aclrtBinaryGetFunction(binary, "DeviceWrite")
        rng = np.random.default_rng(5)
        value = int(rng.integers(-1000, 1000))
        words = acl.aclrtMalloc(16, 0)
        args = acl.aclrtKernelArgsInit(write)
        acl.aclrtKernelArgsAppend(args, struct.pack("<Q", words))
        param = acl.aclrtKernelArgsAppend(args, np.int32(0))
        acl.aclrtKernelArgsParaUpdate(args, param, np.int32(value))
        with pytest.raises(acl.AclError) as info:
            acl.aclrtKernelArgsParaUpdate(args, param, np.int64(value))
        assert info.value.code == ACL_ERROR_RT_PARAM_INVALID
        acl.aclrtKernelArgsFinalize(args)
        with pytest.raises(acl.AclError) as info:
            acl.aclrtKernelArgsAppend(args, b"x")
        assert info.value.code == ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        with pytest.raises(acl.AclError) as info:
            acl.aclrtKernelArgsAppend(None, b"x")
        assert info.value.code == ACL_ERROR_INVALID_PARAM
        stream = acl.aclrtCreateStream()
        acl.aclrtLaunchKernelWithConfig(write, 2, stream, None, args, None)
        assert "Source data" not in capsys.readouterr().out
        acl.aclrtSynchronizeStream(stream)
        assert capsys.readouterr().out == f"Source data: {value}\n" * 2
        got = np.zeros(2, np.int32)
        acl.aclrtMemcpy(got, 8, words, 8, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        assert got.tolist() == [value, value]
        acl.aclrtBinaryUnLoad(binary)
        acl.aclrtResetDevice(0)
        acl.aclFinalize()
    finally:
        acl.use(None)
        session.close()
