"""One BLAS thread per kernel in the daemon.

numpy's OpenBLAS splits even a decode step's small matrix products (4 x 512 by 512 x 2048) over threads that then
spin between calls: back to back, as a replayed model runs them, they took 2.5x the single-threaded time
(measured: a 2-layer LLaMA step replayed in 90 ms where its eager launches, arriving with gaps, took 19; with one
thread 15 and 17), and a 2048² product gained nothing from a second thread on these machines. The daemon's
kernel pool already runs the kernels of different contexts side by side. OPENBLAS_NUM_THREADS or OMP_NUM_THREADS,
when set, are the operator's choice and are kept. Found as threadpoolctl finds it: the OpenBLAS this process has
loaded, by its exported setter.
"""

from __future__ import annotations

import ctypes
import os
import re

SETTERS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_")


def one_thread_per_kernel() -> bool:
    """Set the loaded OpenBLAS to one thread unless the environment chose; False when it did, or none is found."""
    if os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS"):
        return False
    try:
        with open("/proc/self/maps") as maps:
            paths = set(re.findall(r"\S*openblas\S*\.so\S*", maps.read()))
    except OSError:
        return False
    done = False
    for path in paths:
        library = ctypes.CDLL(path)
        setter = next((getattr(library, name) for name in SETTERS if hasattr(library, name)), None)
        if setter is not None:
            setter.argtypes, setter.restype = (ctypes.c_int,), None
            setter(1)
            done = True
    return done
