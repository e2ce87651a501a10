"""aclnn phase 2: `aclnnXxx(workspace, workspaceSize, executor, stream)` launches one kernel.

Phase 1 ran on the host (`proto.aclnn`) and produced an executor holding a KernelDesc. A remote client sends
the KernelDesc; an in-process caller may pass the aclOpExecutor itself, which is then consumed here exactly as
the client would (single use unless repeatable). The device never trusts the description: it runs the
operator's declaration over it again, checks that every tensor and the workspace lie inside live device memory
of the stream's device, and queues a KernelTask. Errors are aclnn statuses (161001/161002), as the real
phase-2 call returns. One method per operator, named `aclnn<Op>`, is generated from the declarations (a
user-declared operator's, `proto.operators`, on first use).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from proto.aclnn import OPS, KernelDesc, aclOpExecutor, consume, revalidate
from proto.errors import ACL_ERROR_RT_OVER_LIMIT, ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclError
from server.npu.context import Context, acl_call, require
from server.npu.device import Device
from server.npu.memory.arena import MemoryFault
from server.npu.ops.work import elements_computed
from server.npu.tasks.kernel import CheckedLaunch, KernelTask

# Elements a tensor of one kernel may view. The NPU would grind through more; on numpy, 2**31 float32 elements take
# seconds, and a zero-stride view can name 2**62 of them over 4 bytes of memory.
MAX_ELEMENTS = 1 << 31
CHECKED_KEPT = 1024  # checked launches a context remembers (forgotten all at once past that)


class AclnnCalls(Context):
    def __getattr__(self, name: str) -> Callable[..., None]:
        """`aclnn<Op>` of an operator declared after this module was imported (`proto.operators`)."""
        if name.startswith("aclnn") and name[5:] in OPS:
            return functools.partial(_phase2(name), self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @acl_call
    def launch_kernel(
        self,
        api: str,
        workspace: int | None,
        workspace_size: int,
        executor: KernelDesc | aclOpExecutor | None,
        stream: int | None,
    ) -> None:
        """The phase-2 call `api` (e.g. "aclnnAdd") with the kernel its executor describes."""
        try:
            kernel = consume(executor, api) if isinstance(executor, aclOpExecutor) else executor
            self._launch(api, workspace or 0, workspace_size, kernel, stream)
        except AclError as error:
            error.api = api
            raise

    def _launch(
        self, api: str, workspace: int, workspace_size: int, executor: KernelDesc | None, stream: int | None
    ) -> None:
        if executor is None:
            raise AclError(ACLNN_ERR_PARAM_NULLPTR, "executor is NULL")
        target = self.stream(stream)
        self.issue(target, self.kernel_task(api, workspace, workspace_size, executor, target.device))

    def kernel_task(
        self, api: str, workspace: int, workspace_size: int, executor: KernelDesc, device: Device
    ) -> KernelTask:
        """The task of the phase-2 call `api`: the description checked again, its memory pinned on `device`.

        A launch repeated with the same description and workspace (an eager loop, a replay's update) is checked
        once per memory epoch: nothing the checks depend on changes until some memory is freed or unmapped,
        which moves the epoch (as `KernelTask.run` relies on). Only launches whose memory is all plain
        allocations of this context are remembered; one over mapped, imported or registered memory is checked
        every time."""
        epoch = self.machine.epoch.value
        key = (id(executor), api, workspace, workspace_size, device.index)
        known = self.checked_launches.get(key)
        if known is not None and known.kernel is executor and known.epoch == epoch:
            return KernelTask(api, executor, workspace, workspace_size, known.pins, known.work, epoch)
        task, plain = self._kernel_task(api, workspace, workspace_size, executor, device)
        if plain:
            if len(self.checked_launches) >= CHECKED_KEPT:
                self.checked_launches.clear()
            self.checked_launches[key] = CheckedLaunch(executor, epoch, task.pins, task.work)
        return task

    def _kernel_task(
        self, api: str, workspace: int, workspace_size: int, executor: KernelDesc, device: Device
    ) -> tuple[KernelTask, bool]:
        """The task, and whether all its memory is plain allocations of this context (see `kernel_task`)."""
        kernel = revalidate(executor)
        if api != f"aclnn{kernel.op}":
            raise AclError(ACLNN_ERR_PARAM_INVALID, f"the executor describes aclnn{kernel.op}, not {api}")
        need = kernel.workspace_size
        bad = ACLNN_ERR_PARAM_INVALID
        require(workspace_size >= need, f"workspaceSize {workspace_size} is smaller than the {need} bytes needed", bad)
        if workspace_size:
            require(workspace != 0, f"workspace is NULL but workspaceSize is {workspace_size}", bad)
        pins = [self._pin(device, "workspace", workspace, workspace_size)] if workspace_size else []
        plain = all(self._allocated(device, ptr, workspace_size) for ptr, _ in pins)
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
                pins.append(self._pin(device, name, start, nbytes))
                plain = plain and self._allocated(device, start, nbytes)
        self._check_work(api, kernel)
        checked = self.machine.epoch.value  # the pins hold until memory is freed
        return KernelTask(api, kernel, workspace, workspace_size, tuple(pins), work, checked), plain

    def _check_work(self, api: str, kernel: KernelDesc) -> None:
        """207012 for a launch beyond the machine's bounds on one launch's work, before anything is done."""
        machine = self.machine
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

    def _pin(self, device: Device, name: str, ptr: int, nbytes: int) -> tuple[int, object]:
        """(ptr, the allocation it lies in) once [ptr, ptr + nbytes) is checked to be live memory of this context
        on `device` (see `tasks.Pins`)."""
        if self._allocated(device, ptr, nbytes):  # the common case first
            return ptr, device.arena.find(ptr)
        self._check_memory(device, name, ptr, nbytes)  # mapped, imported or registered memory; else raises
        return ptr, device.find(ptr)

    def _allocated(self, device: Device, ptr: int, nbytes: int) -> bool:
        """Whether [ptr, ptr + nbytes) lies in one aclrtMalloc allocation of this context on `device`."""
        if ptr not in device.arena:
            return False
        block = device.arena.find(ptr)
        return block is not None and block.ptr in self.allocations and ptr + nbytes <= block.end

    def _check_memory(self, device: Device, name: str, ptr: int, nbytes: int) -> None:
        if nbytes == 0:
            return
        try:
            if ptr not in device:
                raise MemoryFault(f"{ptr:#x} is not device memory of device {device.index}")
            self.region(ptr, nbytes)
        except MemoryFault as fault:
            raise AclError(
                ACLNN_ERR_PARAM_INVALID, f"{name} is not inside live memory of device {device.index}: {fault}"
            ) from None


def _phase2(api: str) -> Callable[..., None]:
    def launch(
        self: AclnnCalls,
        workspace: int | None,
        workspace_size: int,
        executor: KernelDesc | aclOpExecutor | None,
        stream: int | None,
    ) -> None:
        self.launch_kernel(api, workspace, workspace_size, executor, stream)

    launch.__name__ = launch.__qualname__ = api
    launch.__doc__ = f"{api}(workspace, workspaceSize, executor, stream): phase 2, queues the kernel on the stream."
    return launch


for _op in OPS:
    setattr(AclnnCalls, f"aclnn{_op}", _phase2(f"aclnn{_op}"))
