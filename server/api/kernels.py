"""Kernel descriptions as a phase-2 call carries them: the wire form (a map, what curl users write), or its msgpack
encoding (bytes, what the client sends over the WebSocket). Encoded descriptions are decoded once: a
bounded cache maps their bytes to the checked `KernelDesc`, so a launch repeated 20k times costs one decode, and
the tasks of a model that launches the same kernel many times share one description."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

from proto.aclnn import KernelDesc
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.api import budget

CACHE_SIZE: Final = 1024  # distinct descriptions remembered (a few KiB each)


def kernel_of(wire: dict[str, Any] | bytes) -> KernelDesc:
    """The description a phase-2 call carries; AclError 161002 naming what is malformed."""
    if isinstance(wire, bytes):
        return _decoded(wire)
    return KernelDesc.from_wire(wire)


@lru_cache(maxsize=CACHE_SIZE)
def _decoded(data: bytes) -> KernelDesc:
    """Decode once (lru_cache keeps no exception: a bad description fails every time). The operator's checks
    run at launch, once per description object (`KernelDesc.needed_workspace`)."""
    try:
        wire = budget.unpack(data)
    except Exception as error:
        raise AclError(ACLNN_ERR_PARAM_INVALID, f"malformed kernel description: not msgpack ({error})") from None
    return KernelDesc.from_wire(wire)
