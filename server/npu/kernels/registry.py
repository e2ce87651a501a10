"""The kernel registry: Ascend C kernels vnpu cannot run, given numpy implementations under their names.

A kernel is registered by its `extern "C"` name with its argument signature and an implementation:

    from server.npu import kernels as K

    @K.kernel("VectorAddKernel", K.ptr("float32"), K.ptr("float32"), K.ptr("float32"), K.f32, K.u32)
    def vector_add(k, a, b, dst, alpha, n):
        dst[:n] = a[:n] + np.float32(alpha) * b[:n]

The implementation gets a `Block` (`k.block_idx`, `k.block_num`, `k.printf`, `k.trap`) and one value per argument:
a pointer is a numpy view of the device memory from the pointer to the end of its allocation, in the pointer's
element type (a placeholder argument: a view of its host-provided bytes); a scalar is a Python number. It runs
once per block, block indices in order, unless registered with `grid=True` (once, `k.block_idx` None). In an
argument block each argument starts at an 8-byte boundary, as aclrtKernelArgsAppend places them.

Modules that register kernels are imported by `load` (the setting VNPU_KERNELS=module,... and the entry point
group `vnpu.kernels`); vnpu's own examples are `server.npu.kernels.samples`.
"""

from __future__ import annotations

import importlib
import struct
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Final

import ml_dtypes
import numpy as np

ENTRY_POINT_GROUP: Final = "vnpu.kernels"
HOW_TO_REGISTER = (
    "give it a numpy implementation: `server.npu.kernels.kernel({name!r}, <signature>)(impl)` in a module named by "
    "VNPU_KERNELS=module,... (or an entry point of group vnpu.kernels), see docs/kernels.md"
)


@dataclass(frozen=True)
class ArgType:
    """One argument of a kernel signature: a pointer to `dtype`, or a scalar packed as struct `fmt`."""

    name: str
    size: int
    fmt: str = ""  # struct format of a scalar ("" for a pointer)
    dtype: np.dtype = field(default_factory=lambda: np.dtype(np.uint8))

    @property
    def pointer(self) -> bool:
        return not self.fmt

    def unpack(self, data: bytes, offset: int) -> int | float:
        value: int | float = struct.unpack_from("<" + (self.fmt or "Q"), data, offset)[0]
        return value


def ptr(dtype: Any = np.uint8) -> ArgType:
    """A pointer argument (`__gm__ T*`, `GM_ADDR`) whose memory the kernel sees as `dtype` elements."""
    resolved = np.dtype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    return ArgType(f"ptr({resolved})", 8, "", resolved)


u8, i8 = ArgType("u8", 1, "B"), ArgType("i8", 1, "b")
u16, i16 = ArgType("u16", 2, "H"), ArgType("i16", 2, "h")
u32, i32 = ArgType("u32", 4, "I"), ArgType("i32", 4, "i")
u64, i64 = ArgType("u64", 8, "Q"), ArgType("i64", 8, "q")
f16, f32, f64 = ArgType("f16", 2, "e"), ArgType("f32", 4, "f"), ArgType("f64", 8, "d")


class KernelTrap(Exception):
    """Raised by `Block.trap`: the kernel executed `trap()`; its task fails with a vector-core exception."""


@dataclass
class Block:
    """What an implementation knows of where it runs (Ascend C's GetBlockIdx / GetBlockNum, printf, trap)."""

    block_idx: int | None
    block_num: int
    out: list[str]

    def printf(self, fmt: str, *values: object) -> None:
        """AscendC::printf: C format, the text reaches the program's stdout by its next synchronization."""
        self.out.append(fmt % values if values else fmt)

    def trap(self, why: str = "trap") -> None:
        raise KernelTrap(why)


Impl = Callable[..., None]


@dataclass(frozen=True)
class Kernel:
    """A registered kernel: its name, signature, implementation, and whether it runs the whole grid at once."""

    name: str
    signature: tuple[ArgType, ...]
    impl: Impl
    grid: bool = False


_lock = threading.Lock()
_kernels: dict[str, dict[int, Kernel]] = {}  # name -> argument count -> kernel
_loaded: set[str] = set()


def register(name: str, signature: Iterable[ArgType], impl: Impl, *, grid: bool = False) -> Kernel:
    """Register (or replace) the implementation of the kernel `name` with this many arguments."""
    if not name.isidentifier():
        raise ValueError(f'{name!r} is not a C identifier: a kernel is registered by its extern "C" name')
    args = tuple(signature)
    if not all(isinstance(a, ArgType) for a in args):
        raise TypeError(f"the signature of {name} must be argument types (ptr(...), u32, f32, ...), got {args!r}")
    found = Kernel(name, args, impl, grid)
    with _lock:
        _kernels.setdefault(name, {})[len(args)] = found
    return found


def kernel(name: str, *signature: ArgType, grid: bool = False) -> Callable[[Impl], Impl]:
    """Decorator form of `register`."""

    def decorate(impl: Impl) -> Impl:
        register(name, signature, impl, grid=grid)
        return impl

    return decorate


def lookup(name: str, count: int | None = None) -> Kernel | None:
    """The kernel `name` taking `count` arguments (a name may have one per count, as add_custom's placeholder
    variant does), else the first registered under the name."""
    found = _kernels.get(name, {})
    return found.get(count) if count in found else next(iter(found.values()), None)


def unregister(name: str) -> None:
    with _lock:
        _kernels.pop(name, None)


def names() -> list[str]:
    return sorted(_kernels)


def load(modules: Iterable[str] = (), *, entry_points_too: bool = True) -> list[str]:
    """Import the modules that register kernels: vnpu's samples, `modules`, and the `vnpu.kernels` entry points
    (each imported once); the names imported now. A module that fails to import raises ImportError naming it."""
    wanted = ["server.npu.kernels.samples", *(m.strip() for m in modules if m.strip())]
    if entry_points_too:
        wanted += [point.module for point in entry_points(group=ENTRY_POINT_GROUP)]
    imported = []
    for module in wanted:
        if module in _loaded:
            continue
        try:
            importlib.import_module(module)
        except Exception as error:
            raise ImportError(f"the kernel module {module!r} (VNPU_KERNELS) failed to import: {error!r}") from error
        _loaded.add(module)
        imported.append(module)
    return imported
