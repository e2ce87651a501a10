"""IPC memory (spec-breadth 10, the memory/10 and memory/11 samples): device memory one process shares by key.

aclrtIpcMemGetExportKey names a range of one of this context's allocations with an unguessable key. A process
that imports the key gets its own device address for exactly that range -- a window onto the same bytes
(`server.npu.memory.vmem.Window`) in its current device's address zone, as the importer's address differs from the
exporter's on the device. With ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT only the processes on the exporter's list
(aclrtIpcMemSetImportPid, pids from aclrtDeviceGetBareTgid) may import; DISABLE_PID_VALIDATION admits any. An
importer on another device needs ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS. aclrtIpcMemClose closes an
importer's window, or (in the exporter) the key. Freeing the exported allocation closes the key and every window
onto it, so no process keeps a view of memory that may be handed to someone else.
"""

from __future__ import annotations

import secrets

from proto.constants import (
    ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
    ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS,
)
from proto.errors import ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID, AclError
from server.npu.area import Area, acl_call, require
from server.npu.memory.allocator import OutOfSpace
from server.npu.memory.arena import Allocation
from server.npu.memory.ipc import KEY_BYTES, PREFIX, IpcMemory
from server.npu.process.ipc import check_importer, check_peer, close_import


class IpcMemoryCalls(Area):
    @acl_call
    def aclrtIpcMemGetExportKey(self, dev_ptr: int | None, size: int, len_: int, flags: int) -> str:
        """The key (a C string of at most `len` bytes with its NUL); the range's latest export's flags hold."""
        require(bool(dev_ptr), "devPtr is NULL")
        assert dev_ptr is not None
        bad = ACL_ERROR_RT_PARAM_INVALID
        require(size > 0, "size is 0", bad)
        require(len_ > 0, "len is 0", bad)
        why = f"flags {flags:#x} is neither ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT nor ..._DISABLE_PID_VALIDATION"
        require(flags <= ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION, why, bad)
        owner = self.machine.owner(dev_ptr)
        if not (isinstance(owner, Allocation) and owner.ptr in self.ctx.memory.allocations):
            raise AclError(
                bad, f"devPtr must be aclrtMalloc memory of this process: {self.ctx.memory.explain(dev_ptr)}"
            )
        require(dev_ptr + size <= owner.end, f"{size} bytes at {owner.describe(dev_ptr)} run past its end", bad)
        require(len_ >= KEY_BYTES, f"key holds {len_} bytes; the key needs {KEY_BYTES}", bad)
        live = self.machine.ipc.memory
        export = next(
            (e for e in self.ctx.memory.ipc_exports.values() if (e.ptr, e.size) == (dev_ptr, size) and e.open(live)),
            None,
        )
        if export is None:
            key = PREFIX + secrets.token_hex(16)
            export = IpcMemory(key, self.ctx.memory.allocations[owner.ptr], owner, dev_ptr, size, pid_validation=True)
            self.ctx.memory.ipc_exports[key] = export
            self.machine.ipc.memory[key] = export
        export.pid_validation = not flags & ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION
        return export.key

    @acl_call
    def aclrtIpcMemSetImportPid(self, key: str | None, pid: list[int] | None) -> None:
        require(key is not None, "key is NULL")
        require(pid is not None, "pid is NULL")
        assert key is not None and pid is not None
        require(len(pid) > 0, "num must be more than 0", ACL_ERROR_RT_PARAM_INVALID)
        export = self.ctx.memory.ipc_exports.get(key)
        if export is None or not export.open(self.machine.ipc.memory):
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"{key!r} is not a key this process exported (or it is closed)")
        export.import_pids.update(pid)

    @acl_call
    def aclrtIpcMemImportByKey(self, key: str | None, flags: int) -> int:
        require(key is not None, "key is NULL")
        assert key is not None
        bad = ACL_ERROR_RT_PARAM_INVALID
        why = f"flags {flags:#x} is neither ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT nor ..._ENABLE_PEER_ACCESS"
        require(flags <= ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS, why, bad)
        device = self.ctx.device()
        export = self.machine.ipc.memory.get(key)
        if export is None:
            raise AclError(bad, f"{key!r} is not the key of live IPC memory (its exporter may have closed or freed it)")
        if key in self.ctx.memory.ipc_imports:
            raise AclError(bad, f"{export} is already imported here (at {self.ctx.memory.ipc_imports[key][1].va:#x})")
        check_importer(str(export), export.pid_validation, export.import_pids, "aclrtIpcMemSetImportPid",
                       "ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION")  # fmt: skip
        peer = bool(flags & ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS) or self.ctx.has_peer_access(export.device)
        check_peer(str(export), export.device, device, peer, "ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS")
        start = export.ptr - export.device.arena.base
        try:
            window = device.virtual.open_window(
                export.device.arena.buffer[start : start + export.size], f"IPC memory imported by key {key!r}"
            )
        except OutOfSpace as full:
            raise AclError(ACL_ERROR_RT_MEMORY_ALLOCATION, f"no device addresses left for {export}: {full}") from None
        export.windows.append((device.virtual, window))
        self.ctx.memory.ipc_imports[key] = (export, window)
        self.ctx.memory.windows[window.va] = window
        return window.va

    @acl_call
    def aclrtIpcMemClose(self, key: str | None) -> None:
        require(key is not None, "key is NULL")
        assert key is not None
        imported = self.ctx.memory.ipc_imports.pop(key, None)
        if imported is not None:
            close_import(self.ctx, *imported)
            return
        export = self.ctx.memory.ipc_exports.get(key)
        if export is None or not export.open(self.machine.ipc.memory):
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, f"{key!r} is neither imported nor exported by this process, "
                           "or it is closed already")  # fmt: skip
        del self.machine.ipc.memory[key]  # importers keep their windows while the memory lives
