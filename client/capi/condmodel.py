"""Conditional models from C: aclmdlRIAddCondTask takes its aclmdlRICondTaskParams by value and the runtime writes
the sub-models into the caller's `modelRIArray` (here: the call's result, written into the C array after the
call succeeded); aclmdlRICaptureEnd may get a NULL modelRI for a sub-model's capture, which reaches the daemon as
vnpuCaptureEndNoModel (a root model's capture then answers 107000 and goes on, as in the runtime)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.capi.convert import C, call


def aclmdlRIAddCondTask(c: C) -> Callable[..., int]:  # noqa: N802
    def body(params: Any, stream: Any, flags: int) -> int:
        array = params.modelRIArray
        wire = {
            "handle": c.address(params.handle),
            "type": int(params.type),
            "size": int(params.size),
            "modelRIArray": c.address(array),
        }
        models = call("aclmdlRIAddCondTask", wire, c.address(stream), flags)
        for i, model in enumerate(models):
            array[i] = c.ffi.cast("aclmdlRI", model)
        return 0

    return body


def aclmdlRICaptureEnd(c: C) -> Callable[..., int]:  # noqa: N802
    def body(stream: Any, model: Any) -> int:
        if model == c.ffi.NULL:
            call("vnpuCaptureEndNoModel", c.address(stream))
            return 0
        model[0] = c.ffi.cast("aclmdlRI", call("aclmdlRICaptureEnd", c.address(stream)))
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclmdlRIAddCondTask": aclmdlRIAddCondTask,
    "aclmdlRICaptureEnd": aclmdlRICaptureEnd,
}
