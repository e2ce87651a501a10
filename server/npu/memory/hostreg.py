"""Host registration (aclrtHostRegisterV2): a range of the program's host memory, and its device window when MAPPED."""

from __future__ import annotations

from dataclasses import dataclass

from proto.constants import (
    ACL_HOST_REG_IOMEMORY,
    ACL_HOST_REG_MAPPED,
    ACL_HOST_REG_PINNED,
    ACL_HOST_REG_READONLY,
)
from server.npu.memory.vmem import Window

VALID_FLAGS = ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED


@dataclass(eq=False)
class Registration:
    """One aclrtHostRegisterV2: [ptr, ptr + size) with its flags, and its device window when MAPPED."""

    ptr: int
    size: int
    flags: int
    device_index: int
    window: Window | None

    @property
    def end(self) -> int:
        return self.ptr + self.size
