"""The daemon's address layout, which client and device share: device i's pointers start at
DEVICE_BASE + i * DEVICE_STRIDE (they look like the real runtime's), pinned host pointers at HOST_BASE."""

from __future__ import annotations

from typing import Final

DEVICE_BASE: Final = 0x12C0_0000_0000
DEVICE_STRIDE: Final = 0x0100_0000_0000  # 1 TiB of address space per device
MAX_DEVICES: Final = 1024  # device address ranges a program has (across every daemon it uses)
HOST_BASE: Final = 0x7F00_0000_0000
