"""Freed memory kept for the next kernel.

Kernels make temporaries of a few MiB (an int32 operand widened to int64, an fp16 one to float32). glibc's malloc
serves such a block from its own mmap, or from the heap and gives the heap's top back to the system when more than
a few MiB lie free there: either way the next launch maps and zeroes its pages again, which cost three times the
computation itself for an integer Minimum of 256K elements (measured: 1.25 ms against 0.39 ms). Raising the two
thresholds once per process keeps blocks under 32 MiB in the heap and up to 256 MiB of freed memory for reuse.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters (malloc.h)
MMAP_THRESHOLD = 32 << 20  # glibc's largest (HEAP_MAX_SIZE / 2 on 64-bit)
TRIM_THRESHOLD = 256 << 20


def keep_freed_memory() -> bool:
    """Tune this process's malloc (glibc); False where there is no mallopt or it refuses."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):
        return False
    if mallopt is None:
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
