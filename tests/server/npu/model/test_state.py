"""The aclmdlRI state machine: the legal moves, and the error each refused call gets."""

from __future__ import annotations

import pytest

from proto.errors import ACL_ERROR_RT_MODEL_EXECUTE, ACL_ERROR_RT_MODEL_UPDATE_FAILED, AclError
from server.npu.model.state import MOVES, ModelStatus, check_editable, check_runnable, check_updatable, move

S = ModelStatus


@pytest.mark.parametrize("current", list(S))
@pytest.mark.parametrize("new", list(S))
def test_a_move_is_legal_exactly_as_the_table_says(current: ModelStatus, new: ModelStatus) -> None:
    if new is current or new in MOVES[current]:
        assert move(current, new) is new
    else:
        with pytest.raises(AssertionError, match=f"{current.name} -> {new.name}"):
            move(current, new)


def test_fault_leads_nowhere_and_capture_never_comes_back() -> None:
    assert MOVES[S.FAULT] == frozenset()
    assert all(S.CAPTURE_ACTIVE not in MOVES[s] for s in S if s is not S.NONE)


@pytest.mark.parametrize(("status", "runs"), [(S.READY, True), (S.UPDATING, False), (S.FAULT, False)])
def test_only_a_ready_model_runs(status: ModelStatus, runs: bool) -> None:
    if runs:
        check_runnable("model 0x1", status)
        return
    with pytest.raises(AclError) as info:
        check_runnable("model 0x1", status)
    assert info.value.code == ACL_ERROR_RT_MODEL_EXECUTE
    assert ("aclmdlRIUpdate" if status is S.UPDATING else "only be destroyed") in info.value.message


def test_edits_and_updates_refuse_what_the_runtime_refuses() -> None:
    for status in (S.READY, S.UPDATING):
        check_editable("m", status)
    for status in (S.NONE, S.CAPTURE_ACTIVE, S.CAPTURE_INVALIDATED, S.FAULT):
        with pytest.raises(AclError) as info:
            check_editable("m", status)
        assert info.value.code == ACL_ERROR_RT_MODEL_UPDATE_FAILED
    assert check_updatable("m", S.READY) is False and check_updatable("m", S.UPDATING) is True
    with pytest.raises(AclError, match="a FAULT model can only be destroyed"):
        check_updatable("m", S.FAULT)
