"""How large must a kernel be before running it on the kernel thread pool beats running it inline?

Running a kernel inline blocks the device's event loop for the kernel's duration; running it on the pool costs
one thread hop (submit + wake-up of the awaiting coroutine) but keeps the loop responsive. This script measures
both, side by side in one run, for np.add over float32 arrays of growing size, and prints the size where the
kernel's own time reaches the hop's cost: above it, the hop is a small fraction of the kernel, so vnpu offloads
(see OFFLOAD_BYTES in server/npu/machine.py).

    python bench/offload.py
"""

from __future__ import annotations

import asyncio
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def kernel_seconds(n: int, reps: int) -> float:
    a, b, o = (np.ones(n, np.float32) for _ in range(3))
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        np.add(a, b, out=o)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


async def hop_seconds(pool: ThreadPoolExecutor, reps: int) -> float:
    loop = asyncio.get_running_loop()
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        await loop.run_in_executor(pool, int)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


async def main() -> None:
    with ThreadPoolExecutor(2) as pool:
        await hop_seconds(pool, 50)  # warm up the threads
        hop = await hop_seconds(pool, 500)
        print(f"thread-pool hop: {hop * 1e6:.1f} us (median of 500)")
        print(f"{'bytes touched':>14} {'np.add':>10} {'kernel/hop':>11}")
        crossover = None
        for n in [2**k for k in range(8, 24)]:
            k = kernel_seconds(n, 50 if n < 2**20 else 10)
            nbytes = 3 * 4 * n
            print(f"{nbytes:>14} {k * 1e6:>8.1f}us {k / hop:>10.2f}x")
            if crossover is None and k >= hop:
                crossover = nbytes
        print(f"kernel time reaches the hop cost at ~{crossover} bytes touched")


if __name__ == "__main__":
    asyncio.run(main())
