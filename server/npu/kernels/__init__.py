"""Custom kernels as numpy (`registry`): the Python API a user's kernel module imports.

from server.npu import kernels as K

@K.kernel("add_custom", K.ptr("float16"), K.ptr("float16"), K.ptr("float16"))
def add_custom(k, x, y, z): ...
"""

from server.npu.kernels.registry import (
    ArgType,
    Block,
    Kernel,
    KernelTrap,
    f16,
    f32,
    f64,
    i8,
    i16,
    i32,
    i64,
    kernel,
    load,
    lookup,
    names,
    ptr,
    register,
    u8,
    u16,
    u32,
    u64,
    unregister,
)

__all__ = [
    "ArgType",
    "Block",
    "Kernel",
    "KernelTrap",
    "f16",
    "f32",
    "f64",
    "i8",
    "i16",
    "i32",
    "i64",
    "kernel",
    "load",
    "lookup",
    "names",
    "ptr",
    "register",
    "u8",
    "u16",
    "u32",
    "u64",
    "unregister",
]
