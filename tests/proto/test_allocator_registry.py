"""The custom allocator registry (spec-breadth 17), through the Python client's exports."""

from __future__ import annotations

import pytest

from client import acl
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError


def fails(call: object, *args: object) -> str:
    with pytest.raises(AclError) as info:
        assert callable(call)
        call(*args)
    assert info.value.code == ACL_ERROR_INVALID_PARAM
    return info.value.message


def test_register_fetch_and_unregister() -> None:
    pool: list[int] = []

    def alloc(obj: list[int], size: int) -> int:
        obj.append(size)
        return len(obj)

    desc = acl.aclrtAllocatorCreateDesc()
    acl.aclrtAllocatorSetObjToDesc(desc, pool)
    acl.aclrtAllocatorSetAllocFuncToDesc(desc, alloc)
    acl.aclrtAllocatorSetFreeFuncToDesc(desc, lambda obj, block: obj.remove(block))
    assert "getAddrFromBlockFunc" in fails(acl.aclrtAllocatorRegister, 0x77, desc)  # one is still missing
    acl.aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, lambda block: block * 16)
    acl.aclrtAllocatorRegister(0x77, desc)
    acl.aclrtAllocatorSetAllocFuncToDesc(desc, lambda obj, size: -1)  # the registration kept a copy
    got, obj, alloc_fn, free_fn, advise, get_addr = acl.aclrtAllocatorGetByStream(0x77)
    assert got is desc and obj is pool and alloc_fn is alloc and advise is None
    block = alloc_fn(obj, 256)
    assert pool == [256] and get_addr(block) == 16
    free_fn(obj, 256)
    assert pool == []
    acl.aclrtAllocatorDestroyDesc(desc)
    assert acl.aclrtAllocatorGetByStream(0x77)[2] is alloc  # outlives its descriptor
    acl.aclrtAllocatorUnregister(0x77)
    acl.aclrtAllocatorUnregister(0x77)  # absent: no error
    assert "no allocator is registered" in fails(acl.aclrtAllocatorGetByStream, 0x77)


def test_null_arguments() -> None:
    desc = acl.aclrtAllocatorCreateDesc()
    assert "default stream" in fails(acl.aclrtAllocatorRegister, 0, desc)
    fails(acl.aclrtAllocatorRegister, 0x78, None)
    fails(acl.aclrtAllocatorSetObjToDesc, None, object())
    fails(acl.aclrtAllocatorSetFreeFuncToDesc, desc, None)
    fails(acl.aclrtAllocatorDestroyDesc, None)
    fails(acl.aclrtAllocatorUnregister, 0)
    fails(acl.aclrtAllocatorGetByStream, 0)
