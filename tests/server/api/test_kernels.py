"""Kernel descriptions as phase-2 calls carry them: msgpack bytes decoded once, the JSON form every time."""

from __future__ import annotations

import msgpack
import pytest

import proto.aclnn as nn
from proto.constants import aclDataType, aclFormat
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.api.kernels import CACHE_SIZE, _decoded, kernel_of


def add_wire(ptr: int = 4096) -> dict[str, object]:
    t = nn.aclCreateTensor([2, 3], aclDataType.ACL_FLOAT, [3, 1], 0, aclFormat.ACL_FORMAT_ND, [2, 3], ptr)
    _, executor = nn.aclnnAddGetWorkspaceSize(t, t, nn.aclCreateScalar(1.0, aclDataType.ACL_FLOAT), t)
    return executor.kernel.to_wire()


def test_equal_bytes_give_one_shared_description() -> None:
    wire = add_wire()
    first = kernel_of(msgpack.packb(wire, use_bin_type=True))
    again = kernel_of(bytes(msgpack.packb(wire, use_bin_type=True)))  # another bytes object, equal content
    assert again is first and first == kernel_of(wire) and kernel_of(wire) is not first
    assert kernel_of(msgpack.packb(add_wire(8192), use_bin_type=True)) is not first


def test_bad_bytes_are_161002_every_time() -> None:
    wire = add_wire()
    wire["op"] = "Nope"
    for data in (b"\xc1\xc1", msgpack.packb(wire), msgpack.packb([1, 2])):
        for _ in range(2):
            with pytest.raises(AclError) as caught:
                kernel_of(data)
            assert caught.value.code == ACLNN_ERR_PARAM_INVALID
            assert "malformed kernel description" in caught.value.message or "unknown operator" in caught.value.message


def test_the_cache_is_bounded() -> None:
    for i in range(CACHE_SIZE + 10):
        kernel_of(msgpack.packb(add_wire(4096 + 64 * i), use_bin_type=True))
    assert _decoded.cache_info().currsize == CACHE_SIZE
