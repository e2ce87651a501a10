"""A wrong handle kind says what the handle is, for every kind a program holds (issue 40, 6c): a handle of one kind
given where another goes is answered "0x101e is a model, not a task group", whatever the two kinds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from proto.calltable import aclrtMemLocation, aclrtPhysicalMemProp
from proto.constants import aclrtMemAttr, aclrtMemLocationType
from proto.errors import AclError
from server.npu import Runtime
from server.npu.memory.vmem import GRANULARITY

Use = Callable[[Runtime, int], Any]

# the call that takes each kind, with a handle of any kind in its place
USES: dict[str, Use] = {
    "stream": lambda rt, h: rt.aclrtStreamQuery(h),
    "event": lambda rt, h: rt.aclrtQueryEventStatus(h),
    "notify": lambda rt, h: rt.aclrtDestroyNotify(h),
    "model": lambda rt, h: rt.aclmdlRIGetStreams(h, False, None),
    "task group": lambda rt, h: rt.aclmdlRICaptureTaskUpdateBegin(rt.aclrtCreateStream(), h),
    "label": lambda rt, h: rt.aclrtDestroyLabel(h),
    "ACL context": lambda rt, h: rt.aclrtSetCurrentContext(h),
    "physical memory handle": lambda rt, h: rt.aclrtFreePhysical(h),
}
ARTICLE = {kind: "an" if kind[0] in "aeiouAEIOU" else "a" for kind in USES}


def made(rt: Runtime) -> dict[str, int]:
    """A live handle of every kind."""
    stream = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(stream, 0)
    rt.aclmdlRICaptureTaskGrpBegin(stream)
    group = rt.aclmdlRICaptureTaskGrpEnd(stream)
    model = rt.aclmdlRICaptureEnd(stream)
    context = rt.aclrtGetCurrentContext()
    device = aclrtMemLocation(id=0, type=aclrtMemLocationType.ACL_MEM_LOCATION_TYPE_DEVICE)
    prop = aclrtPhysicalMemProp(memAttr=aclrtMemAttr.ACL_HBM_MEM_HUGE, location=device)
    return {
        "stream": rt.aclrtCreateStream(),
        "event": rt.aclrtCreateEvent(),
        "notify": rt.aclrtCreateNotify(0),
        "model": model,
        "task group": group,
        "label": rt.aclrtCreateLabel(),
        "ACL context": context,
        "physical memory handle": rt.aclrtMallocPhysical(GRANULARITY, prop, 0),
    }


async def test_every_wrong_kind_is_named(rt: Runtime) -> None:
    handles = made(rt)
    wrong: list[str] = []
    for expected, use in USES.items():
        for kind, handle in handles.items():
            if kind == expected:
                continue
            try:
                result = use(rt, handle)
                if hasattr(result, "__await__"):
                    await result
            except AclError as error:
                said = f"{handle:#x} is {ARTICLE[kind]} {kind}, not {ARTICLE[expected]} {expected}"
                if said not in error.message:
                    wrong.append(f"{expected} <- {kind}: {error.message}")
            else:
                wrong.append(f"{expected} <- {kind}: accepted")
    assert not wrong, "\n".join(wrong)
