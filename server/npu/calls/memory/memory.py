"""Memory calls: aclrtMalloc/Free, aclrtMallocHost/FreeHost, aclrtMemcpy[Async], aclrtMemset[Async], GetMemInfo.

A pointer argument is an int (device memory or pinned host memory; 0 is NULL) or, for host memory that is
not pinned ("pageable"), any Python buffer: bytes, bytearray, memoryview, a numpy array. A copy's `kind` is checked
against its pointers as the runtime checks it (`server.npu.memory.copykind`); the bytes move by the pointers.
"""

from __future__ import annotations

from typing import Any, Union, cast

import numpy as np

from proto.constants import aclrtMemAttr, aclrtMemcpyKind, aclrtMemMallocPolicy
from proto.enumtext import members, not_member
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC,
    ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.core import markers
from server.npu.core.caller import caller_thread
from server.npu.memory.arena import MemoryFault
from server.npu.memory.copykind import DEVICE, HOST, PAGEABLE, check_acl_kind, copy_kind
from server.npu.memory.vmem import Window
from server.npu.process.memory import free_device, free_managed, malloc_device, unregister_buffer
from server.npu.process.memory_tables import host_cost
from server.npu.tasks.memory import MemcpyTask, MemsetTask

Pointer = Union[int, None, bytes, bytearray, memoryview, np.ndarray]  # noqa: UP007 - a runtime alias

_POLICY_BASES = {int(p) for p in aclrtMemMallocPolicy if p < 0x100}
_POLICY_BITS = int(aclrtMemMallocPolicy.ACL_MEM_TYPE_LOW_BAND_WIDTH | aclrtMemMallocPolicy.ACL_MEM_TYPE_HIGH_BAND_WIDTH)
_POLICY_OR = members(aclrtMemMallocPolicy, {p for p in aclrtMemMallocPolicy if p & _POLICY_BITS})


class MemoryCalls(Area):
    @acl_call
    def aclrtMalloc(self, size: int, policy: int) -> int:
        """Device memory: 64-byte aligned, uninitialised, no synchronisation."""
        return self._malloc(size, policy, padding=True)

    @acl_call
    def aclrtMallocAlign32(self, size: int, policy: int) -> int:
        """aclrtMalloc without the runtime's 32 padding bytes: the size rounded up to 32 only (torch_npu's caching
        allocator takes its blocks this way)."""
        return self._malloc(size, policy, padding=False)

    def _malloc(self, size: int, policy: int, padding: bool) -> int:
        require(size > 0, f"size must be > 0, got {size}")
        if (policy & 0xFF) not in _POLICY_BASES or policy & ~(0xFF | _POLICY_BITS):
            taken = not_member("policy", policy, aclrtMemMallocPolicy, _POLICY_BASES, bits=True)
            raise AclError(ACL_ERROR_INVALID_PARAM, f"{taken}, optionally | {_POLICY_OR}")
        return malloc_device(self.ctx, size, policy, padding)

    @acl_call
    def aclrtFree(self, dev_ptr: int | None) -> None:
        """Immediate, without synchronisation, as in the runtime: tasks still queued must not use the memory."""
        require(bool(dev_ptr), "devPtr is NULL")
        assert dev_ptr is not None
        managed = self.ctx.memory.windows.get(dev_ptr)
        if managed is not None and managed.managed:
            free_managed(self.ctx, managed)
            return
        free_device(self.ctx, dev_ptr, "aclrtFree")

    @acl_call
    def aclrtMallocHost(self, size: int) -> int:
        require(size > 0, f"size must be > 0, got {size}")
        available = self.machine.host.available()
        if size > available:
            raise AclError(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                f"cannot pin {size} bytes of host memory: the shared memory (/dev/shm) has {available} bytes free",
            )
        self.ctx.memory.charge(host_cost(size))
        try:
            ptr = self.machine.host.malloc(size).ptr
        except (OSError, OverflowError) as error:
            self.ctx.memory.used -= host_cost(size)
            raise AclError(
                ACL_ERROR_RT_MEMORY_ALLOCATION, f"cannot allocate {size} bytes of host memory: {error}"
            ) from None
        self.ctx.memory.host_buffers.add(ptr)
        return ptr

    @acl_call
    def aclrtFreeHost(self, host_ptr: int | None) -> None:
        require(bool(host_ptr), "hostPtr is NULL")
        assert host_ptr is not None
        if host_ptr not in self.ctx.memory.host_buffers:
            why = (
                "it was already freed (double free)"
                if host_ptr in self.ctx.memory.freed
                else (
                    "it is not the start of an aclrtMallocHost buffer of this context "
                    f"({self.ctx.memory.explain(host_ptr)})"
                )
            )
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"cannot free host pointer {host_ptr:#x}: {why}")
        buffer = self.machine.host.find(host_ptr)
        assert buffer is not None
        unregister_buffer(self.ctx, buffer)
        size = self.machine.host.free(host_ptr).size
        self.ctx.memory.used -= host_cost(size)
        self.ctx.memory.host_buffers.discard(host_ptr)
        self.ctx.memory.forget(host_ptr, size, "aclrtFreeHost")

    @acl_call
    def vnpuHostWrite(self, host_ptr: int | None, data: bytes) -> None:
        """Store `data` into this context's aclrtMallocHost buffer at `host_ptr` (plain host code, no ACL rules)."""
        self._pinned(host_ptr, len(data))[:] = np.frombuffer(data, dtype=np.uint8)

    @acl_call
    def vnpuHostRead(self, host_ptr: int | None, count: int) -> bytes:
        return self._pinned(host_ptr, count).tobytes()

    @acl_call
    def vnpuHostInfo(self, host_ptr: int | None) -> tuple[str, int]:
        """(shared-memory segment name, size) of the buffer that starts at `host_ptr` (pinned or managed)."""
        self._pinned(host_ptr, 0)
        managed = self._managed(host_ptr or 0)
        buf = managed.host if managed is not None else self.machine.host.find(host_ptr or 0)
        assert buf is not None
        start = managed.va if managed is not None else buf.ptr
        require(start == host_ptr, f"{host_ptr:#x} is not the start of an aclrtMallocHost buffer")
        return buf.name, buf.size

    def _managed(self, ptr: int) -> Window | None:
        device = self.machine.device_of(ptr)
        window = device.virtual.find(ptr) if device is not None else None
        return window if isinstance(window, Window) and window.managed and self.ctx.memory.owns(window) else None

    def _pinned(self, host_ptr: int | None, count: int) -> np.ndarray:
        """Pinned host memory of this context, or managed memory (host code reaches both)."""
        require(bool(host_ptr), "hostPtr is NULL")
        assert host_ptr is not None
        managed = self._managed(host_ptr)
        if managed is not None:
            try:
                return managed.region(host_ptr, count)
            except MemoryFault as fault:
                raise AclError(ACL_ERROR_RT_PARAM_INVALID, str(fault)) from None
        buf = self.machine.host.find(host_ptr)
        if buf is None or buf.ptr not in self.ctx.memory.host_buffers:
            raise AclError(
                ACL_ERROR_RT_PARAM_INVALID, f"{host_ptr:#x} is not in an aclrtMallocHost buffer of this context"
            )
        try:
            return self.machine.host.region(host_ptr, count)
        except MemoryFault as fault:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, str(fault)) from None

    @acl_call
    def aclrtGetMemInfo(self, attr: int) -> tuple[int, int]:
        """(free, total) bytes of the current device; vnpu has one kind of memory, so every attr reports it."""
        if attr not in aclrtMemAttr._value2member_map_:
            raise AclError(ACL_ERROR_INVALID_PARAM, not_member("attr", attr, aclrtMemAttr))
        arena = self.ctx.device().arena
        return arena.free_bytes, arena.capacity

    @acl_call
    def aclrtMemcpy(self, dst: Pointer, dest_max: int, src: Pointer, count: int, kind: int) -> None:
        """Synchronous copy, now: it does not wait for the streams (as in the runtime). An unsafe call."""
        self._check_copy(dest_max, count, kind)
        self.ctx.check_unsafe(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, "aclrtMemcpy (a synchronous copy)")
        if count:
            dst_view, src_view = self._view(dst, count, "dst", writable=True), self._view(src, count, "src")
            self._kind(kind, src, dst, "aclrtMemcpy", asynchronous=False)
            dst_view[:] = src_view

    @acl_call
    async def aclrtMemcpyAsync(
        self, dst: Pointer, dest_max: int, src: Pointer, count: int, kind: int, stream: int | None
    ) -> None:
        """Queued on `stream`; the source is read when the task runs. With pageable host memory the runtime
        turns the copy synchronous: vnpu waits for the stream's earlier work, then copies."""
        target = self.ctx.stream(stream)
        self._check_copy(dest_max, count, kind)
        if not count:
            return
        if not (isinstance(dst, int) and isinstance(src, int)):
            if target in self.ctx.capturing:
                raise AclError(
                    ACL_ERROR_RT_PARAM_INVALID,
                    f"{target} is capturing: only aclrtMallocHost memory can be captured in an async copy, and "
                    f"{'dst' if not isinstance(dst, int) else 'src'} is pageable host memory",
                )
            self.ctx.check_unsafe(
                ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC,
                "aclrtMemcpyAsync with pageable host memory (the runtime makes it synchronous)",
            )
            dst_view, src_view = self._view(dst, count, "dst", writable=True), self._view(src, count, "src")
            self._kind(kind, src, dst, "aclrtMemcpyAsync", asynchronous=True)
            await target.reach(target.issued)
            dst_view[:] = src_view
            return
        self._view(dst, count, "dst", writable=True)
        self._view(src, count, "src")
        self._kind(kind, src, dst, "aclrtMemcpyAsync", asynchronous=True)
        if dst == src:
            return
        self.ctx.issue(target, MemcpyTask("aclrtMemcpyAsync", dst, src, count, self.ctx.memory.pins(dst, src)))

    @acl_call
    def aclrtMemset(self, dev_ptr: int | None, max_count: int, value: int, count: int) -> None:
        """Synchronous; an unsafe call."""
        require(count <= max_count, f"count {count} is larger than maxCount {max_count}")
        self.ctx.check_unsafe(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, "aclrtMemset (a synchronous memset)")
        if count:
            self._view(dev_ptr, count, "devPtr", writable=True).fill(value & 0xFF)

    @acl_call
    def aclrtMemsetAsync(self, dev_ptr: int | None, max_count: int, value: int, count: int, stream: int | None) -> None:
        target = self.ctx.stream(stream)
        require(count <= max_count, f"count {count} is larger than maxCount {max_count}")
        if count:
            self._view(dev_ptr, count, "devPtr", writable=True)
            assert isinstance(dev_ptr, int)
            self.ctx.issue(
                target, MemsetTask("aclrtMemsetAsync", dev_ptr, value & 0xFF, count, self.ctx.memory.pins(dev_ptr))
            )

    @staticmethod
    def _check_copy(dest_max: int, count: int, kind: int) -> None:
        require(count >= 0, f"count must be >= 0, got {count}")
        require(count <= dest_max, f"count {count} is larger than destMax {dest_max}")
        check_acl_kind(kind)

    def _kind(self, kind: int, src: Pointer, dst: Pointer, api: str, asynchronous: bool) -> None:
        """The copy's kind against its pointers (`memory.copykind`); one they override is noted in the trace."""
        where = self._where(src), self._where(dst)
        actual = copy_kind(kind, *where, asynchronous=asynchronous)
        if actual != kind and kind != aclrtMemcpyKind.ACL_MEMCPY_DEFAULT:
            given = aclrtMemcpyKind(kind).name
            how = "set to" if asynchronous else "ignored: the pointers say"
            note = f"{api}: kind {given} {how} {actual.name} ({where[0]} to {where[1]} memory)"
            markers.note(self.machine.tracer, self.ctx.device().index, self.ctx, caller_thread()[1], note)

    def _where(self, ptr: Pointer) -> str:
        """Where a copy's pointer lies, as the runtime tells its location types apart (memory of another process is
        like memory never allocated: pageable)."""
        if not isinstance(ptr, int) or not ptr or not self.ctx.memory.owns(self.machine.owner(ptr)):
            return PAGEABLE
        return DEVICE if self.machine.device_of(ptr) is not None else HOST

    def _view(self, ptr: Pointer, nbytes: int, arg: str, writable: bool = False) -> np.ndarray:
        """The bytes [ptr, ptr + nbytes) as a uint8 array: device or pinned memory, or a pageable buffer."""
        if ptr is None or isinstance(ptr, int):
            require(bool(ptr), f"{arg} is NULL")
            assert ptr is not None
            try:
                return self.ctx.memory.region(ptr, nbytes)
            except MemoryFault as fault:
                raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"{arg}: {fault}") from None
        try:
            view = memoryview(cast(Any, ptr)).cast("B")
        except TypeError as error:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"{arg} is not a contiguous host buffer: {error}") from None
        require(not (writable and view.readonly), f"{arg} is a read-only host buffer")
        require(len(view) >= nbytes, f"{arg} is a {len(view)}-byte host buffer, too small for {nbytes} bytes")
        return np.frombuffer(view, dtype=np.uint8, count=nbytes)
