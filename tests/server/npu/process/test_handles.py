"""A context's handle tables: the lookup of each kind, the runtime's codes, and what a wrong handle is."""

from __future__ import annotations

import pytest

from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_PARAM_INVALID, AclError
from server.npu import Runtime
from server.npu.process.handles import GONE_KEPT, Handles


def test_a_table_finds_its_live_handles_and_names_every_other_kind() -> None:
    handles = Handles()
    models, groups = handles.table("model"), handles.table("task group")
    models[0x101E] = "m"
    groups[0x1020] = "g"
    assert models.live(0x101E) == "m" and groups.live(0x1020) == "g"
    with pytest.raises(AclError) as wrong:
        groups.live(0x101E)
    assert wrong.value.code == ACL_ERROR_RT_INVALID_HANDLE
    assert wrong.value.message == "0x101e is a model, not a task group"
    with pytest.raises(AclError) as null:
        groups.live(None)
    assert (null.value.code, null.value.message) == (ACL_ERROR_INVALID_PARAM, "task group is NULL")
    assert models.drop(0x101E) == "m" and 0x101E not in models
    assert handles.not_a("model", 0x101E) == "0x101e is a model that was destroyed"
    assert handles.not_a("task group", 0x101E) == "0x101e is not a task group of this context"
    assert models == {} and groups == {0x1020: "g"}  # still the dicts they were


def test_the_memory_of_dead_handles_is_bounded() -> None:
    handles = Handles()
    for handle in range(GONE_KEPT + 10):
        handles.bury(handle, "event")
    assert len(handles.gone) == GONE_KEPT and 0 not in handles.gone and GONE_KEPT + 9 in handles.gone


async def test_a_model_given_for_a_task_group_is_named(rt: Runtime) -> None:
    stream = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(stream, 0)
    model = rt.aclmdlRICaptureEnd(stream)
    update = rt.aclrtCreateStream()
    with pytest.raises(AclError) as info:
        rt.aclmdlRICaptureTaskUpdateBegin(update, model)
    assert info.value.code == ACL_ERROR_RT_PARAM_INVALID
    assert info.value.message == f"{model:#x} is a model, not a task group"
    await rt.aclmdlRIDestroy(model)
    await rt.aclrtSynchronizeStream(update)  # the stream works on
