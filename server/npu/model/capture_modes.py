"""Which unsafe calls a capture allows (spec 1.3, from the runtime's `IsCaptureModeSupport`).

The unsafe calls are the synchronous copies and memsets and the async copies of pageable memory (which the
runtime turns synchronous). Modes are ordered GLOBAL(0) < THREAD_LOCAL(1) < RELAXED(2) < NONE(3):

- `ctx`: the lowest mode among the context's active captures (NONE when there is none);
- `thr`: the lowest mode among the captures that the calling thread began (NONE when there is none);
- `x`: the calling thread's exchange mode (aclmdlRICaptureThreadExchangeMode; GLOBAL by default).

A call is allowed when `ctx` is NONE or `x` is RELAXED; denied when `x` is GLOBAL and (`ctx` is GLOBAL or `thr` is
THREAD_LOCAL), or when `x` is THREAD_LOCAL and `thr` is GLOBAL or THREAD_LOCAL; allowed otherwise. So GLOBAL
blocks unsafe calls in every thread, THREAD_LOCAL only in the capturing thread, RELAXED nowhere.
"""

from __future__ import annotations

from proto.constants import aclmdlRICaptureMode

GLOBAL = int(aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
THREAD_LOCAL = int(aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL)
RELAXED = int(aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
NONE = 3


def unsafe_call_allowed(ctx: int, thr: int, x: int) -> bool:
    if ctx == NONE or x == RELAXED:
        return True
    if x == GLOBAL and (ctx == GLOBAL or thr == THREAD_LOCAL):
        return False
    return not (x == THREAD_LOCAL and thr in (GLOBAL, THREAD_LOCAL))
