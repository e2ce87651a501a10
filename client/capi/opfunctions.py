"""The public functions of CANN's operator library that are not operators, where vnpu has them (the rest answer
561003 like an operator vnpu does not implement, `client.capi.opentry`).

aclnnSetPytorchRandom / aclnnGetPytorchRandom: the random operators' mode, 0 (compatible with A2/A3, the default)
or 1 (as PyTorch draws), as ops-math keeps it: a process-wide value; any other value is 161002. vnpu's random
kernels draw one way whatever the mode, so the mode is only kept and read back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.capi.convert import C
from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_SUCCESS, AclError

MODES = (0, 1)
_mode = [0]


def aclnnSetPytorchRandom(c: C) -> Callable[[int], int]:  # noqa: N802
    def body(mode: int) -> int:
        if mode not in MODES:
            message = f"pytorchRandom must be 0 or 1, got {mode}"
            raise AclError(ACLNN_ERR_PARAM_INVALID, message, "aclnnSetPytorchRandom")
        _mode[0] = mode
        return ACLNN_SUCCESS

    return body


def aclnnGetPytorchRandom(c: C) -> Callable[[], int]:  # noqa: N802
    return lambda: _mode[0]


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclnnSetPytorchRandom": aclnnSetPytorchRandom,
    "aclnnGetPytorchRandom": aclnnGetPytorchRandom,
}
