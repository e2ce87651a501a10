"""A tensor larger than its allocation, over blocks that sit next to each other (issue 40, 6b; newcomer-3's
mistake 2d): phase 1 names the tensor, its bytes and the allocation's size, not an overlap of two tensors that
only meet because one runs into the next block. The daemon's revalidation says the same for a description that
never passed the client's phase 1. A real overlap inside one block is still called an overlap."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

import client.acl as acl
from client import aio
from client.config import Config
from client.session import Session
from proto.aclnn import KernelDesc, aclCreateScalar, aclCreateTensor, aclnnAddGetWorkspaceSize
from proto.aclnn import extents as aclnn_extents
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError

F32 = acl.ACL_FLOAT


@pytest.fixture(params=["ws", "http"])
def session(daemon: str, request: pytest.FixtureRequest) -> Iterator[Session]:
    s = Session(Config(endpoint=daemon, transport=request.param))
    s.call("aclInit", None)
    s.call("aclrtSetDevice", 0)
    try:
        yield s
    finally:
        s.call("aclrtResetDevice", 0)
        s.close()


def tensor(n: int, ptr: int, offset: int = 0) -> acl.aclTensor:
    return aclCreateTensor([n], F32, [1], offset, acl.ACL_FORMAT_ND, [n + offset], ptr)


def adjacent(s: Session) -> list[int]:
    """Three 32-byte blocks; the arena puts them 64 bytes apart (32 rounded up, plus the runtime's 32 of padding)."""
    blocks = [s.call("aclrtMalloc", 32, 0) for _ in range(3)]
    assert blocks[1] - blocks[0] == blocks[2] - blocks[1] == 64
    return blocks


def test_a_tensor_past_its_block_is_named_as_that_in_phase_1(session: Session) -> None:
    a, b, c = adjacent(session)
    with pytest.raises(AclError) as caught:
        aclnnAddGetWorkspaceSize(tensor(64, a), tensor(64, b), aclCreateScalar(1.0, F32), tensor(64, c))
    error = caught.value
    assert error.code == ACLNN_ERR_PARAM_INVALID
    assert "overlap" not in error.message
    assert (
        f"out is larger than its allocation: its 256 bytes at {c:#x} (offset 0 in the 32-byte allocation at {c:#x}) "
        "run 224 bytes past its end" in error.message
    )
    for block in (a, b, c):
        session.call("aclrtFree", block)
    # the output fits in the block that follows, the input runs into it: the input is named
    small = session.call("aclrtMalloc", 32, 0)
    large = session.call("aclrtMalloc", 1024, 0)
    assert large - small == 64
    with pytest.raises(AclError, match=rf"self is larger than its allocation: its 128 bytes at {small:#x}"):
        aclnnAddGetWorkspaceSize(
            tensor(32, small), tensor(32, large + 512), aclCreateScalar(1.0, F32), tensor(32, large)
        )
    session.call("aclrtFree", small)
    session.call("aclrtFree", large)


def test_an_overlap_inside_one_block_is_still_an_overlap(session: Session) -> None:
    block = session.call("aclrtMalloc", 1024, 0)
    with pytest.raises(AclError, match="out and self partially overlap in memory"):
        aclnnAddGetWorkspaceSize(tensor(64, block), tensor(64, block), aclCreateScalar(1.0, F32), tensor(64, block, 1))
    session.call("aclrtFree", block)
    # once freed, the block is no longer known: its tensors are judged as any phase 1 judges them
    assert aclnn_extents.KNOWN.find(block) is None


def test_the_daemon_names_a_tensor_past_its_block_in_a_description_phase_1_never_saw(session: Session) -> None:
    a, b, c = adjacent(session)
    args = {"self": tensor(64, a), "other": tensor(64, b), "alpha": aclCreateScalar(1.0, F32), "out": tensor(64, c)}
    forged = KernelDesc("Add", args, 0)  # as a program that skipped phase 1 (or a raw REST client) sends it
    stream = session.call("aclrtCreateStream")
    aclnn_extents.KNOWN.clear()  # this daemon runs in the test's process: only its own view of the blocks counts
    with pytest.raises(AclError, match=r"out is larger than its allocation: its 256 bytes") as caught:
        session.call("aclnnAdd", 0, 0, forged, stream)  # over HTTP the error comes here, over the WebSocket at the sync
        session.call("aclrtSynchronizeStream", stream)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID
    assert "overlap" not in caught.value.message
    session.call("aclrtDestroyStream", stream)
    for block in (a, b, c):
        session.call("aclrtFree", block)


def test_the_asyncio_client_knows_its_blocks_too(daemon: str) -> None:
    async def main() -> str:
        session = await aio.AsyncSession.connect(Config(endpoint=daemon))
        try:
            await session.call("aclInit", None)
            await session.call("aclrtSetDevice", 0)
            a, b, c = [await session.call("aclrtMalloc", 32, 0) for _ in range(3)]
            try:
                aclnnAddGetWorkspaceSize(tensor(64, a), tensor(64, b), aclCreateScalar(1.0, F32), tensor(64, c))
            except AclError as error:
                return error.message
            finally:
                await session.call("aclrtResetDevice", 0)
            return "accepted"
        finally:
            await session.close()

    assert "out is larger than its allocation: its 256 bytes" in asyncio.run(main())
