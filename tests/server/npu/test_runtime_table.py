"""Runtime is one table of C names built from the areas: every call of the call table is there, once."""

from __future__ import annotations

import pytest

from proto.aclnn import OPS
from proto.calltable import CALLS
from server.npu import Machine, Runtime
from server.npu.area import Area, acl_call
from server.npu.runtime import AREAS, TABLE, build_table, c_names


def test_the_table_is_the_call_table_but_the_operators() -> None:
    operators = {name for name in CALLS if name.startswith("aclnn") and name[5:] in OPS}
    assert set(TABLE) == set(CALLS) - operators  # an operator's phase 2 resolves through the registry


def test_two_areas_defining_one_name_fail_the_table() -> None:
    class Streams(Area):
        @acl_call
        def aclrtCreateStream(self) -> int:
            return 0

    with pytest.raises(TypeError, match="aclrtCreateStream is defined by both StreamCalls and Streams"):
        build_table((*AREAS, Streams))


def test_an_area_offers_only_its_c_names() -> None:
    class Probe(Area):
        def helper(self) -> None: ...

        @acl_call
        def vnpuProbe(self) -> int:
            return 7

    assert c_names(Probe) == ["vnpuProbe"]


async def test_a_runtime_binds_each_call_to_its_own_context(machine: Machine) -> None:
    a, b = Runtime(machine), Runtime(machine)
    assert a.api["aclrtMalloc"].__self__.ctx is a.ctx and b.api["aclrtMalloc"].__self__.ctx is b.ctx
    a.aclInit()
    assert (a.ctx.init_count, b.ctx.init_count) == (1, 0)
    with pytest.raises(AttributeError, match="no call 'aclrtNoSuchCall'"):
        a.aclrtNoSuchCall  # noqa: B018
    assert callable(a.aclnnAdd)  # operators resolve through the registry
    await a.aclFinalize()
