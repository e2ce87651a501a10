"""A process's side of IPC: the memory it exported or imported by key, and the checks on who may import."""

from __future__ import annotations

from proto.errors import ACL_ERROR_RT_PARAM_INVALID, AclError
from server.npu.core.caller import caller_pid
from server.npu.device import Device
from server.npu.memory.ipc import IpcMemory
from server.npu.memory.vmem import Window
from server.npu.process.context import Context


def close_import(ctx: Context, export: IpcMemory, window: Window) -> None:
    ctx.memory.windows.pop(window.va, None)
    export.windows = [(s, w) for s, w in export.windows if w is not window]
    device = ctx.machine.device_of(window.va)
    assert device is not None
    device.virtual.close_window(window)


def close_exports(ctx: Context, ptr: int) -> None:
    """The allocation at `ptr` is being freed: its keys close, and every window onto it in any process."""
    for key, export in list(ctx.memory.ipc_exports.items()):
        if export.block.ptr == ptr:
            del ctx.memory.ipc_exports[key]
            export.close(ctx.machine.ipc.memory)


def release_ipc_memory(ctx: Context) -> None:
    """A context's teardown: the windows it imported close; its exports go with its memory (`close_exports`)."""
    for export, window in list(ctx.memory.ipc_imports.values()):
        close_import(ctx, export, window)
    ctx.memory.ipc_imports.clear()


def check_importer(what: str, validating: bool, pids: set[int], lister: str, disable: str) -> None:
    """The calling process may import `what`: its exporter listed its pid (with `lister`) or exported with the
    `disable` flag (107000 otherwise)."""
    if validating and caller_pid() not in pids:
        raise AclError(
            ACL_ERROR_RT_PARAM_INVALID,
            f"this process (pid {caller_pid()}) is not on the import list of {what}: its exporter adds it with "
            f"{lister} (pids from aclrtDeviceGetBareTgid), or exports with {disable}",
        )


def check_peer(what: str, owner: Device, device: Device, peer_allowed: bool, flag: str) -> None:
    """`what` lives on `owner`; importing it on another device needs peer access to `owner`: enabled beforehand with
    aclrtDeviceEnablePeerAccess (`peer_allowed`), or by the import itself with the flag `flag` (as the runtime's
    import enables it)."""
    if owner is not device and not peer_allowed:
        raise AclError(
            ACL_ERROR_RT_PARAM_INVALID,
            f"{what} is on device {owner.index} and this thread's device is {device.index}: enable peer access first "
            f"(aclrtDeviceEnablePeerAccess({owner.index}, 0)) or import it with {flag}",
        )
