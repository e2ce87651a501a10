"""The aclmdlRI state machine: a model's kind, its status (the runtime's RtCaptureModelStatus, modelri spec 3.1), the
legal moves between statuses, and the error each call gets from a model in a status that refuses it.

    capture:   CAPTURE_ACTIVE --End--> READY --SetParams/Disable--> UPDATING --Update--> READY
                     |                   ^                             |
                     +--invalidated--> CAPTURE_INVALIDATED             +--a failed edit--> FAULT (only destroy)
    sub-model: NONE --CaptureToModelRIBegin--> CAPTURE_ACTIVE --End (even a failed one)--> READY
    build:     NONE, for good (its tasks are fixed)
"""

from __future__ import annotations

from enum import Enum, IntEnum
from typing import Final

from proto.errors import ACL_ERROR_RT_MODEL_EXECUTE, ACL_ERROR_RT_MODEL_UPDATE_FAILED, AclError


class ModelStatus(IntEnum):
    """A capture model's status; a Build model stays NONE."""

    NONE = 0
    CAPTURE_ACTIVE = 1
    CAPTURE_INVALIDATED = 2
    UPDATING = 3
    FAULT = 4
    READY = 5


class ModelKind(Enum):
    CAPTURE = "capture"  # aclmdlRICaptureBegin .. End
    BUILD = "build"  # aclmdlRIBuildBegin: bound persistent streams
    SUB = "sub"  # a branch of a conditional task (aclmdlRIAddCondTask), captured with aclmdlRICaptureToModelRIBegin


S = ModelStatus
NAMES: Final = {
    S.NONE: "built",
    S.CAPTURE_ACTIVE: "capturing",
    S.CAPTURE_INVALIDATED: "invalidated",
    S.UPDATING: "updating",
    S.FAULT: "fault",
    S.READY: "ready",
}
"""How views, debug prints and messages name a status."""

MOVES: Final[dict[ModelStatus, frozenset[ModelStatus]]] = {
    S.NONE: frozenset({S.CAPTURE_ACTIVE}),  # a sub-model's capture begins
    S.CAPTURE_ACTIVE: frozenset({S.CAPTURE_INVALIDATED, S.READY}),  # a call capture cannot record; End
    S.CAPTURE_INVALIDATED: frozenset({S.READY}),  # a failed End of a sub-model keeps what it captured
    S.READY: frozenset({S.UPDATING}),  # aclmdlRITaskSetParams, aclmdlRITaskDisable
    S.UPDATING: frozenset({S.READY, S.FAULT}),  # aclmdlRIUpdate; a failed edit
    S.FAULT: frozenset(),  # only aclmdlRIDestroy
}
"""The legal moves: any other is a bug of vnpu's (`move` asserts it), not a mistake of the program."""


def move(current: ModelStatus, new: ModelStatus) -> ModelStatus:
    """`new`, where the move from `current` is legal (staying put always is)."""
    assert new is current or new in MOVES[current], f"illegal aclmdlRI status move {current.name} -> {new.name}"
    return new


def not_ready(model: object, status: ModelStatus) -> str:
    """Why a capture model that is not READY cannot run."""
    if status is S.UPDATING:
        return f"{model} has edits (aclmdlRITaskSetParams / aclmdlRITaskDisable) not yet applied: call aclmdlRIUpdate"
    if status is S.FAULT:
        return f"{model} is FAULT after a failed edit or update: it can only be destroyed (aclmdlRIDestroy)"
    return f"{model} is {NAMES[status]}, not ready"


def check_runnable(model: object, status: ModelStatus) -> None:
    """aclmdlRIExecute(Async) of a capture model: 507011 unless READY."""
    if status is not S.READY:
        raise AclError(ACL_ERROR_RT_MODEL_EXECUTE, not_ready(model, status))


def check_editable(model: object, status: ModelStatus) -> None:
    """The runtime's CheckCaptureModelForUpdate on the status: a task is edited in READY or UPDATING (107040)."""
    if status not in (S.READY, S.UPDATING):
        how = "it can only be destroyed" if status is S.FAULT else "end the capture first"
        raise AclError(ACL_ERROR_RT_MODEL_UPDATE_FAILED, f"{model} is {NAMES[status]}: {how}")


def check_updatable(model: object, status: ModelStatus) -> bool:
    """aclmdlRIUpdate: True when there are edits to apply (UPDATING), False when READY (nothing to do), 107040
    otherwise."""
    if status is S.READY:
        return False
    if status is not S.UPDATING:
        raise AclError(
            ACL_ERROR_RT_MODEL_UPDATE_FAILED,
            f"{model} is {NAMES[status]}: aclmdlRIUpdate applies edits to a captured model"
            + (" (a FAULT model can only be destroyed)" if status is S.FAULT else ""),
        )
    return True
