"""What the C types and the call table do not say about a parameter, for the generated marshalling (SCUDA's
`annotations.h` plays this part there).

The call table names each argument and out-parameter and gives its wire type; the prototype table gives the C
parameter and its C type. Most functions need nothing more: an argument is read from its C parameter of the same
name, an out-parameter written through its pointer after a NULL check. These tables hold the exceptions.
"""

from __future__ import annotations

from typing import Final

# C parameter names that differ from the call table's argument names: (function, call-table name) -> C name
C_NAMES: Final[dict[tuple[str, str], str]] = {
    ("aclrtEventElapsedTime", "start"): "startEvent",
    ("aclrtEventElapsedTime", "end"): "endEvent",
}
# a string out-parameter's buffer length: (function, out name) -> the C parameter holding the buffer's size
STRING_LENGTH: Final[dict[tuple[str, str], str]] = {
    ("aclrtIpcMemGetExportKey", "key"): "len",
    ("aclrtNotifyGetExportKey", "key"): "len",
}
# bytes read from program memory: (function, call-table argument) -> (C pointer parameter, C length parameter)
BYTES: Final[dict[tuple[str, str], tuple[str, str]]] = {
    ("vnpuLaunchKernel", "args"): ("args", "argsSize"),
    ("aclrtLaunchKernel", "argsData"): ("argsData", "argsSize"),
    ("aclrtBinaryLoadFromData", "data"): ("data", "length"),
    ("acltdtEnqueueData", "data"): ("data", "dataSize"),
    ("acltdtEnqueueData", "userData"): ("userData", "userDataSize"),
}
# a struct passed by value whose bytes are the argument: (function, argument) -> C parameter
BYTES_VALUE: Final[dict[tuple[str, str], str]] = {("aclrtIpcOpenEventHandle", "handle"): "handle"}
# bytes written back into the program's memory: (function, out) -> (C pointer parameter, its size or "" for the
# size of what it points to)
BYTES_OUT: Final[dict[tuple[str, str], tuple[str, str]]] = {
    ("aclrtIpcGetEventHandle", "handle"): ("handle", ""),
}
# arrays of numbers: (function, argument) -> (C pointer parameter, C count parameter, most elements read)
LISTS: Final[dict[tuple[str, str], tuple[str, str, int]]] = {
    ("aclrtCreateLabelList", "labels"): ("labels", "num", 65535),
    ("aclrtNotifySetImportPid", "pid"): ("pid", "num", 1 << 16),
    ("aclrtIpcMemSetImportPid", "pid"): ("pid", "num", 1 << 16),
    ("aclrtMemSetPidToShareableHandle", "pid"): ("pid", "pidNum", 1 << 16),
    ("aclrtMemSetAccess", "desc"): ("desc", "count", 1 << 16),
}
# launches whose argument block may hold pointers into managed memory (translated to the daemon's)
KERNEL_BLOCKS: Final = frozenset({"vnpuLaunchKernel", "aclrtLaunchKernel"})
MAX_BYTES: Final = 256 << 20  # a larger block is refused (100000) before it is read: the daemon's message limit
# out-parameters that are the fields of one C struct: function -> (the struct's C parameter, a pointer field that
# must be NULL or None); the struct is zeroed, then its fields written
STRUCT_OUTS: Final[dict[str, tuple[str, str | None]]] = {
    "aclrtGetErrorVerbose": ("errorInfo", None),
    "aclrtGetDeviceUtilizationRate": ("utilizationInfo", "utilizationExtend"),
}
# calls that may make the device read host memory: remote pinned buffers are sent first
PUSH_BEFORE: Final = frozenset(
    {
        "aclrtMemset",
        "aclrtMemsetAsync",
        "aclmdlRIExecuteAsync",
        "aclmdlRIExecute",
        "aclrtSynchronizeStream",
        "aclrtSynchronizeStreamWithTimeout",
        "aclrtSynchronizeDevice",
        "aclrtSynchronizeEvent",
        "aclrtSynchronizeEventWithTimeout",
    }
)
# calls that complete device work: remote pinned buffers are read back after
PULL_AFTER: Final = PUSH_BEFORE - {"aclrtMemsetAsync", "aclmdlRIExecuteAsync"}
# functions CANN's C++ runtime does not export (programs look them up with dlsym and skip when absent)
NOT_EXPORTED: Final = frozenset(
    {
        "aclrtCreateStreamConfigHandle",
        "aclrtDestroyStreamConfigHandle",
        "aclrtSetStreamConfigOpt",
        "aclrtCreateStreamV2",
    }
)
# the reason a function answers 207000, where it is not just "not implemented yet"
_A2_HAS_NO = "{} is not supported on Ascend910B/C (the SoC vnpu presents), as the runtime says: use aclrtLaunchHostFunc"
_NO_KERNEL_DETAIL = (
    "{} has nothing to give in vnpu: its kernels are numpy functions, with no device argument block and no "
    "function handle (custom kernels loaded with aclrtBinaryLoadFromFile are not there yet)"
)
UNSUPPORTED: Final[dict[str, str]] = {
    **{
        name: _A2_HAS_NO.format(name)
        for name in ("aclrtSubscribeHostFunc", "aclrtProcessHostFunc", "aclrtUnSubscribeHostFunc")
    },
    **{
        name: _NO_KERNEL_DETAIL.format(name)
        for name in ("aclrtGetArgsFromExceptionInfo", "aclrtGetFuncHandleFromExceptionInfo")
    },
}
