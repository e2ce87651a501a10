"""The handles of loaded kernel binaries and their functions (aclrtBinHandle, aclrtFuncHandle)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(eq=False)
class Binary:
    """aclrtBinHandle: the kernel names a vnpu fatbin lists, or None (any other binary: any name)."""

    handle: int
    kernels: tuple[str, ...] | None


@dataclass(eq=False)
class Function:
    """aclrtFuncHandle: a kernel of a loaded binary, by name."""

    handle: int
    name: str
    binary: Binary
