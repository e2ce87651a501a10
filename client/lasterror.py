"""The runtime's last error (aclrtGetLastError / aclrtPeekAtLastError, spec-breadth 3.1): per thread, the code
of the latest failure inside the runtime layer. The ACL layer's own argument checks (100000) and the operators'
statuses (161xxx) are not stored, as in the runtime; a task failure is stored by the call that reports it."""

from __future__ import annotations

import threading

from proto.errors import ACL_ERROR_INVALID_PARAM, AclError

ACL_RT_THREAD_LEVEL = 0  # aclrtLastErrLevel: the only level there is
RUNTIME_CODES = (range(107000, 108000), range(207000, 208000), range(507000, 508000))


class _Slot(threading.local):
    code = 0


_slot = _Slot()


def note(error: AclError) -> None:
    """Remember `error` for its thread when the runtime layer would have."""
    if any(error.code in codes for codes in RUNTIME_CODES):
        _slot.code = error.code


def _check(level: int, api: str) -> None:
    if level != ACL_RT_THREAD_LEVEL:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"level must be ACL_RT_THREAD_LEVEL (0), got {level}", api)


def aclrtPeekAtLastError(level: int) -> int:  # noqa: N802
    """The calling thread's last runtime error code (0: none), kept."""
    _check(level, "aclrtPeekAtLastError")
    return _slot.code


def aclrtGetLastError(level: int) -> int:  # noqa: N802
    """The calling thread's last runtime error code (0: none), cleared."""
    _check(level, "aclrtGetLastError")
    code, _slot.code = _slot.code, 0
    return code
