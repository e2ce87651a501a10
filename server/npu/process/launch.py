"""An aclnn launch checked on the device: the description revalidated, its memory pinned, its work bounded -- the
task phase 2 queues (aclnnXxx) and a task update or aclmdlRITaskSetParams puts in a model."""

from __future__ import annotations

from proto.aclnn import KernelDesc, revalidate
from proto.aclnn.extents import resolving
from proto.errors import ACL_ERROR_RT_OVER_LIMIT, ACLNN_ERR_PARAM_INVALID, AclError, require
from server.npu.device import Device
from server.npu.memory.arena import MemoryFault
from server.npu.ops.work import elements_computed
from server.npu.process.context import Context
from server.npu.tasks.kernel import CheckedLaunch, KernelTask

# Elements a tensor of one kernel may view. The NPU would grind through more; on numpy, 2**31 float32 elements take
# seconds, and a zero-stride view can name 2**62 of them over 4 bytes of memory.
MAX_ELEMENTS = 1 << 31
CHECKED_KEPT = 1024  # checked launches a context remembers (forgotten all at once past that)


def kernel_task(
    ctx: Context, api: str, workspace: int, workspace_size: int, executor: KernelDesc, device: Device
) -> KernelTask:
    """The task of the phase-2 call `api`: the description checked again, its memory pinned on `device`.

    A launch repeated with the same description and workspace (an eager loop, a replay's update) is checked
    once per memory epoch: nothing the checks depend on changes until some memory is freed or unmapped,
    which moves the epoch (as `KernelTask.run` relies on). Only launches whose memory is all plain
    allocations of this context are remembered; one over mapped, imported or registered memory is checked
    every time."""
    epoch = ctx.machine.epoch.value
    key = (id(executor), api, workspace, workspace_size, device.index)
    known = ctx.checked_launches.get(key)
    if known is not None and known.kernel is executor and known.epoch == epoch:
        return KernelTask(api, executor, workspace, workspace_size, known.pins, known.work, epoch)
    task, plain = checked_task(ctx, api, workspace, workspace_size, executor, device)
    if plain:
        if len(ctx.checked_launches) >= CHECKED_KEPT:
            ctx.checked_launches.clear()
        ctx.checked_launches[key] = CheckedLaunch(executor, epoch, task.pins, task.work)
    return task


def checked_task(
    ctx: Context, api: str, workspace: int, workspace_size: int, executor: KernelDesc, device: Device
) -> tuple[KernelTask, bool]:
    """The task, and whether all its memory is plain allocations of this context (see `kernel_task`)."""
    with resolving(lambda ptr: _block_of(ctx, device, ptr)):  # a tensor past its block is named as that
        kernel = revalidate(executor)
    if api != f"aclnn{kernel.op}":
        raise AclError(ACLNN_ERR_PARAM_INVALID, f"the executor describes aclnn{kernel.op}, not {api}")
    need = kernel.workspace_size
    bad = ACLNN_ERR_PARAM_INVALID
    require(workspace_size >= need, f"workspaceSize {workspace_size} is smaller than the {need} bytes needed", bad)
    if workspace_size:
        require(workspace != 0, f"workspace is NULL but workspaceSize is {workspace_size}", bad)
    pins = [pin(ctx, device, "workspace", workspace, workspace_size)] if workspace_size else []
    plain = all(allocated(ctx, device, ptr, workspace_size) for ptr, _ in pins)
    work = workspace_size
    for name, tensor in kernel.tensors.items():
        if tensor is None:
            continue
        if tensor.numel > MAX_ELEMENTS:
            raise AclError(
                ACLNN_ERR_PARAM_INVALID,
                f"{name} views {tensor.numel} elements, more than the {MAX_ELEMENTS} a vnpu kernel computes "
                "(a broadcast view can name far more elements than its memory holds)",
            )
        work += tensor.numel * tensor.itemsize
        start, nbytes = tensor.byte_range()
        if nbytes:
            pins.append(pin(ctx, device, name, start, nbytes))
            plain = plain and allocated(ctx, device, start, nbytes)
    check_work(ctx, api, kernel)
    checked = ctx.machine.epoch.value  # the pins hold until memory is freed
    return KernelTask(api, kernel, workspace, workspace_size, tuple(pins), work, checked), plain


def check_work(ctx: Context, api: str, kernel: KernelDesc) -> None:
    """207012 for a launch beyond the machine's bounds on one launch's work, before anything is done."""
    machine = ctx.machine
    if kernel.workspace_size > machine.max_launch_workspace:
        raise AclError(
            ACL_ERROR_RT_OVER_LIMIT,
            f"{api} needs a {kernel.workspace_size}-byte workspace, more than the {machine.max_launch_workspace} "
            "bytes one launch may use (VNPU_MAX_LAUNCH_WORKSPACE)",
        )
    figure, counted = elements_computed(kernel)
    if figure > machine.max_launch_elements:
        raise AclError(
            ACL_ERROR_RT_OVER_LIMIT,
            f"{api} computes {figure} elements ({counted}), more than the {machine.max_launch_elements} one "
            "launch may compute (VNPU_MAX_LAUNCH_ELEMENTS)",
        )


def pin(ctx: Context, device: Device, name: str, ptr: int, nbytes: int) -> tuple[int, object]:
    """(ptr, the allocation it lies in) once [ptr, ptr + nbytes) is checked to be live memory of this context
    on `device` (see `tasks.Pins`)."""
    if allocated(ctx, device, ptr, nbytes):  # the common case first
        return ptr, device.arena.find(ptr)
    check_memory(ctx, device, name, ptr, nbytes)  # mapped, imported or registered memory; else raises
    return ptr, device.find(ptr)


def _block_of(ctx: Context, device: Device, ptr: int) -> tuple[int, int] | None:
    """(base, size) of this context's aclrtMalloc allocation on `device` that holds `ptr`."""
    block = device.arena.find(ptr) if ptr in device.arena else None
    return (block.ptr, block.size) if block is not None and block.ptr in ctx.memory.allocations else None


def block_in_context(ctx: Context, ptr: int) -> tuple[int, int] | None:
    """(base, size) of this context's aclrtMalloc allocation on any device that holds `ptr`: phase 1 names no
    device (the native toolkit's phase 1, `vnpuWorkspaceSize`)."""
    for device in ctx.machine.devices:
        if (found := _block_of(ctx, device, ptr)) is not None:
            return found
    return None


def allocated(ctx: Context, device: Device, ptr: int, nbytes: int) -> bool:
    """Whether [ptr, ptr + nbytes) lies in one aclrtMalloc allocation of this context on `device`."""
    if ptr not in device.arena:
        return False
    block = device.arena.find(ptr)
    return block is not None and block.ptr in ctx.memory.allocations and ptr + nbytes <= block.end


def check_memory(ctx: Context, device: Device, name: str, ptr: int, nbytes: int) -> None:
    if nbytes == 0:
        return
    try:
        if ptr not in device:
            raise MemoryFault(f"{ptr:#x} is not device memory of device {device.index}")
        ctx.memory.region(ptr, nbytes)
    except MemoryFault as fault:
        raise AclError(
            ACLNN_ERR_PARAM_INVALID, f"{name} is not inside live memory of device {device.index}: {fault}"
        ) from None
