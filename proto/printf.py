"""Kernel printf (AscendC::printf) reaches the program at its next synchronizing call: which calls those are, and
which calls may run a kernel that prints (custom kernels, and models that may hold them)."""

from __future__ import annotations

LAUNCHES = frozenset({"aclrtLaunchKernel", "aclrtLaunchKernelWithConfig", "vnpuLaunchKernel", "aclmdlRIExecuteAsync"})
LAUNCHES |= {"aclmdlRIExecute"}
SYNCHRONIZING = frozenset(
    {
        "aclrtSynchronizeStream",
        "aclrtSynchronizeStreamWithTimeout",
        "aclrtSynchronizeDevice",
        "aclrtSynchronizeDeviceWithTimeout",
        "aclrtSynchronizeEvent",
        "aclrtSynchronizeEventWithTimeout",
        "aclrtMemcpy",
        "aclmdlRIExecute",
        "aclrtResetDevice",
        "aclrtResetDeviceForce",
        "aclrtDestroyStream",
        "aclrtDestroyStreamForce",
    }
)
