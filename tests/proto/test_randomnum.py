"""proto.randomnum: the C structs of aclrtRandomNumAsync as Python objects (the union's aliasing), their wire form
against the call table's model, and the ACL layer's overwrite of dataType."""

from __future__ import annotations

import struct

import pytest

from proto.calltable import CALLS
from proto.constants import aclDataType
from proto.randomnum import (
    RT_DATA_TYPES,
    acl_layer,
    aclrtNormalDisInfo,
    aclrtRandomNumTaskInfo,
    aclrtRandomParaInfo,
    aclrtUniformDisInfo,
)

DT = aclDataType


def test_the_union_is_two_slots_under_three_names() -> None:
    info = aclrtRandomNumTaskInfo()
    union = info.randomNumFuncParaInfo.paramInfo
    union.dropoutBitmaskInfo.dropoutRation.valueOrAddr[:4] = struct.pack("<f", 0.4)  # what CANN's sample does
    union.normalDisInfo.mean.size = 4
    assert union.uniformDisInfo.min is union.normalDisInfo.mean is union.dropoutBitmaskInfo.dropoutRation
    assert union.uniformDisInfo.min.size == 4 and union.slots[0].valueOrAddr[:4] == struct.pack("<f", 0.4)
    union.uniformDisInfo.max = aclrtRandomParaInfo.immediate(b"\x01\x02")
    assert union.normalDisInfo.stddev.size == 2 and union.slots[1].valueOrAddr == bytearray(b"\x01\x02" + bytes(6))
    union.normalDisInfo = aclrtNormalDisInfo(aclrtRandomParaInfo.immediate(b"\x07"), aclrtRandomParaInfo.address(9))
    assert union.uniformDisInfo.min.valueOrAddr[0] == 7 and union.uniformDisInfo.max.isAddr == 1
    alone = aclrtUniformDisInfo()  # a struct of its own: two fresh slots
    assert alone.min is not alone.max and alone.min.size == 0
    assert "min=" in repr(alone) and "max=" in repr(alone)


def test_parameters_by_value_and_by_address() -> None:
    assert aclrtRandomParaInfo.immediate(struct.pack("<d", 1.5)).to_wire() == {
        "isAddr": 0, "valueOrAddr": list(struct.pack("<d", 1.5)), "size": 8,
    }  # fmt: skip
    assert aclrtRandomParaInfo.address(0x12C0_0000_0040).to_wire() == {
        "isAddr": 1, "valueOrAddr": [0x40, 0, 0, 0, 0xC0, 0x12, 0, 0], "size": 8,
    }  # fmt: skip
    for wrong in (b"", bytes(9)):
        with pytest.raises(ValueError, match="1 to 8 bytes"):
            aclrtRandomParaInfo.immediate(wrong)


def test_the_wire_form_is_the_call_tables_and_comes_back() -> None:
    info = aclrtRandomNumTaskInfo(DT.ACL_BF16, randomResultAddr=0x100, randomCounterAddr=0x200)
    info.randomNumFuncParaInfo.funcType = 3
    info.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev = aclrtRandomParaInfo.immediate(b"\x80\x3f")
    info.randomSeed = aclrtRandomParaInfo.address(0x300)
    wire = info.to_wire()
    model = CALLS["aclrtRandomNumAsync"].request.model_validate({"taskInfo": wire, "stream": 0, "reserve": None})
    assert model.model_dump()["taskInfo"] == wire  # exactly the model's fields: no more, no fewer
    back = aclrtRandomNumTaskInfo.from_wire(wire)
    assert back.to_wire() == wire and back.randomParaAddr is None
    assert back.randomNumFuncParaInfo.paramInfo.normalDisInfo.stddev.valueOrAddr[:2] == b"\x80\x3f"
    with pytest.raises(ValueError, match="valueOrAddr"):
        bad = {**wire, "randomSeed": {**wire["randomSeed"], "valueOrAddr": [0] * 7}}
        CALLS["aclrtRandomNumAsync"].request.model_validate({"taskInfo": bad, "stream": 0, "reserve": None})


@pytest.mark.parametrize("data_type", list(DT), ids=lambda t: t.name)
def test_the_acl_layer_writes_the_runtimes_enum_over_data_type(data_type: DT) -> None:
    info = aclrtRandomNumTaskInfo(data_type)
    wire = acl_layer(info)
    assert wire["dataType"] == data_type  # the daemon checks the caller's type
    mapped = {
        DT.ACL_INT32: 0,
        DT.ACL_INT64: 1,
        DT.ACL_UINT32: 2,
        DT.ACL_UINT64: 3,
        DT.ACL_BF16: 4,
        DT.ACL_FLOAT16: 5,
        DT.ACL_FLOAT: 6,
    }  # fmt: skip  (rts_stars.h)
    assert info.dataType == mapped.get(data_type, data_type)  # a type the ACL layer refuses stays as it was
    assert {int(k): int(v) for k, v in RT_DATA_TYPES.items()} == {int(k): v for k, v in mapped.items()}
