"""The task description of aclrtRandomNumAsync (spec-breadth 15): the C structs of acl_rt.h as Python objects,
their wire form, and what the runtime's ACL layer does to the caller's struct.

The structs, field for field under their C names, mutable as C memory is (the Python client fills them as C
code does, `info.randomNumFuncParaInfo.paramInfo.uniformDisInfo.min = ...`):
- `aclrtRandomParaInfo`: one parameter: a value (`isAddr` 0; the first `size` bytes of `valueOrAddr`, laid out as
  the data type lays it out, little-endian) or the device address that holds it (`isAddr` 1, `size` 8);
- `aclrtRandomNumFuncParaInfo`: `funcType` and `paramInfo`, C's union, here `ParamInfoUnion`: two parameter
  slots seen under three names. `dropoutBitmaskInfo.dropoutRation`, `uniformDisInfo.min` and
  `normalDisInfo.mean` are slot 0, `uniformDisInfo.max` and `normalDisInfo.stddev` slot 1, so writing one name
  and reading another is the same memory, as in C (CANN's sample fills `dropoutRation` and sets the size and
  isAddr through `normalDisInfo.mean`);
- `aclrtRandomNumTaskInfo`: the task: data type, distribution, the parameter block's, result's and counter's
  device addresses, the seed and the count.

The wire form (`to_wire`; the call table's `taskInfo`): the same fields as plain integers, `valueOrAddr` as its 8
byte values, the union as the list of its two slots, the reserved bytes left out (nothing reads them).

The ACL layer's side effect (`acl_layer`): once the data type passed its check, the runtime's ACL layer writes
the runtime's own enum value (`rtRandomNumDataType`, from rts_stars.h) over `dataType` in the caller's struct
before it calls the runtime: ACL_FLOAT (0) becomes 6, ACL_INT32 (3) becomes 0. A struct launched again without
refilling `dataType` then means another type (ACL_INT32's 0 is ACL_FLOAT) or none (ACL_FLOAT's 6 is ACL_INT16:
100000). vnpu's C library writes it into the program's struct and the Python client into the object it was given,
so code that reuses the struct behaves on vnpu as on the device (CANN's sample fills the struct every time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Final, overload

from proto.constants import aclDataType

VALUE_BYTES: Final = 8  # valueOrAddr


class rtRandomNumDataType(IntEnum):  # noqa: N801 - the runtime's own enum (rts_stars.h)
    RT_RANDOM_NUM_DATATYPE_INT32 = 0
    RT_RANDOM_NUM_DATATYPE_INT64 = 1
    RT_RANDOM_NUM_DATATYPE_UINT32 = 2
    RT_RANDOM_NUM_DATATYPE_UINT64 = 3
    RT_RANDOM_NUM_DATATYPE_BF16 = 4
    RT_RANDOM_NUM_DATATYPE_FP16 = 5
    RT_RANDOM_NUM_DATATYPE_FP32 = 6


_RT = rtRandomNumDataType
RT_DATA_TYPES: Final[dict[int, rtRandomNumDataType]] = {
    aclDataType.ACL_INT32: _RT.RT_RANDOM_NUM_DATATYPE_INT32,
    aclDataType.ACL_INT64: _RT.RT_RANDOM_NUM_DATATYPE_INT64,
    aclDataType.ACL_UINT32: _RT.RT_RANDOM_NUM_DATATYPE_UINT32,
    aclDataType.ACL_UINT64: _RT.RT_RANDOM_NUM_DATATYPE_UINT64,
    aclDataType.ACL_BF16: _RT.RT_RANDOM_NUM_DATATYPE_BF16,
    aclDataType.ACL_FLOAT16: _RT.RT_RANDOM_NUM_DATATYPE_FP16,
    aclDataType.ACL_FLOAT: _RT.RT_RANDOM_NUM_DATATYPE_FP32,
}
"""The ACL layer's map: the data types aclrtRandomNumAsync takes (any other: 100000) and what it writes back."""


def _pointer(value: Any) -> Any:
    ptr = getattr(value, "ptr", None)  # a HostBuffer: its pointer (the device then says it is no device memory)
    return ptr if isinstance(ptr, int) else value


@dataclass
class aclrtRandomParaInfo:  # noqa: N801 - the C type name
    isAddr: int = 0  # noqa: N815
    valueOrAddr: bytearray = field(default_factory=lambda: bytearray(VALUE_BYTES))  # noqa: N815
    size: int = 0
    rsv: bytearray = field(default_factory=lambda: bytearray(6))

    @classmethod
    def immediate(cls, data: bytes) -> aclrtRandomParaInfo:
        """A parameter given by value: `data`, 1 to 8 bytes, as the data type lays them out (`struct.pack("<f",
        0.5)`, `np.float16(1).tobytes()`, `(42).to_bytes(8, "little")`)."""
        if not 1 <= len(data) <= VALUE_BYTES:
            raise ValueError(f"a parameter value is 1 to {VALUE_BYTES} bytes, got {len(data)}")
        return cls(0, bytearray(bytes(data).ljust(VALUE_BYTES, b"\0")), len(data))

    @classmethod
    def address(cls, ptr: int) -> aclrtRandomParaInfo:
        """A parameter that the task reads from device memory at `ptr` when it runs."""
        return cls(1, bytearray(int(_pointer(ptr)).to_bytes(VALUE_BYTES, "little")), VALUE_BYTES)

    def to_wire(self) -> dict[str, Any]:
        return {"isAddr": self.isAddr, "valueOrAddr": list(bytes(self.valueOrAddr)), "size": self.size}

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> aclrtRandomParaInfo:
        return cls(wire["isAddr"], bytearray(wire["valueOrAddr"]), wire["size"])


class _Slot:
    """One member of a union view: slot `index` of the union's memory."""

    def __init__(self, index: int) -> None:
        self.index = index

    @overload
    def __get__(self, view: None, owner: type) -> _Slot: ...
    @overload
    def __get__(self, view: _View, owner: type) -> aclrtRandomParaInfo: ...
    def __get__(self, view: _View | None, owner: type) -> _Slot | aclrtRandomParaInfo:
        return self if view is None else view.slots[self.index]

    def __set__(self, view: _View, value: aclrtRandomParaInfo) -> None:
        view.slots[self.index] = value


class _View:
    """A struct of the union: its members name the union's slots (its own slots when made on its own)."""

    names: tuple[str, ...] = ()

    def __init__(self, *params: aclrtRandomParaInfo) -> None:
        self.slots = [*params, *(aclrtRandomParaInfo() for _ in range(2 - len(params)))]

    @classmethod
    def over(cls, slots: list[aclrtRandomParaInfo]) -> Any:
        view = cls.__new__(cls)
        view.slots = slots
        return view

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={self.slots[i]!r}" for i, name in enumerate(self.names))
        return f"{type(self).__name__}({fields})"


class aclrtDropoutBitmaskInfo(_View):  # noqa: N801 - the C type name
    names = ("dropoutRation",)
    dropoutRation = _Slot(0)  # noqa: N815 - the share of the elements dropped


class aclrtUniformDisInfo(_View):  # noqa: N801 - the C type name
    names = ("min", "max")
    min = _Slot(0)
    max = _Slot(1)


class aclrtNormalDisInfo(_View):  # noqa: N801 - the C type name
    names = ("mean", "stddev")
    mean = _Slot(0)
    stddev = _Slot(1)


class ParamInfoUnion:
    """`aclrtRandomNumFuncParaInfo.paramInfo`, C's anonymous union: two slots under the three structs' names.
    Assigning a struct (`paramInfo.uniformDisInfo = aclrtUniformDisInfo(lo, hi)`) copies its members in."""

    def __init__(self, first: aclrtRandomParaInfo | None = None, second: aclrtRandomParaInfo | None = None) -> None:
        self.slots = [first or aclrtRandomParaInfo(), second or aclrtRandomParaInfo()]

    def _assign(self, view: _View) -> None:
        for i in range(len(view.names)):
            self.slots[i] = view.slots[i]

    @property
    def dropoutBitmaskInfo(self) -> aclrtDropoutBitmaskInfo:  # noqa: N802
        result: aclrtDropoutBitmaskInfo = aclrtDropoutBitmaskInfo.over(self.slots)
        return result

    @dropoutBitmaskInfo.setter
    def dropoutBitmaskInfo(self, view: aclrtDropoutBitmaskInfo) -> None:  # noqa: N802
        self._assign(view)

    @property
    def uniformDisInfo(self) -> aclrtUniformDisInfo:  # noqa: N802
        result: aclrtUniformDisInfo = aclrtUniformDisInfo.over(self.slots)
        return result

    @uniformDisInfo.setter
    def uniformDisInfo(self, view: aclrtUniformDisInfo) -> None:  # noqa: N802
        self._assign(view)

    @property
    def normalDisInfo(self) -> aclrtNormalDisInfo:  # noqa: N802
        result: aclrtNormalDisInfo = aclrtNormalDisInfo.over(self.slots)
        return result

    @normalDisInfo.setter
    def normalDisInfo(self, view: aclrtNormalDisInfo) -> None:  # noqa: N802
        self._assign(view)

    def __repr__(self) -> str:
        return f"ParamInfoUnion({self.slots[0]!r}, {self.slots[1]!r})"


@dataclass
class aclrtRandomNumFuncParaInfo:  # noqa: N801 - the C type name
    funcType: int = 0  # noqa: N815 - an aclrtRandomNumFuncType
    paramInfo: ParamInfoUnion = field(default_factory=ParamInfoUnion)  # noqa: N815


@dataclass
class aclrtRandomNumTaskInfo:  # noqa: N801 - the C type name
    dataType: int = 0  # noqa: N815 - an aclDataType (the runtime's own enum once launched: see the module)
    randomNumFuncParaInfo: aclrtRandomNumFuncParaInfo = field(default_factory=aclrtRandomNumFuncParaInfo)  # noqa: N815
    randomParaAddr: int | None = None  # noqa: N815 - where the parameter block goes (None: the runtime's memory)
    randomResultAddr: int | None = None  # noqa: N815
    randomCounterAddr: int | None = None  # noqa: N815 - 16 bytes of device memory
    randomSeed: aclrtRandomParaInfo = field(default_factory=aclrtRandomParaInfo)  # noqa: N815
    randomNum: aclrtRandomParaInfo = field(default_factory=aclrtRandomParaInfo)  # noqa: N815
    rsv: bytearray = field(default_factory=lambda: bytearray(8))

    def to_wire(self) -> dict[str, Any]:
        func = self.randomNumFuncParaInfo
        return {
            "dataType": int(self.dataType),
            "randomNumFuncParaInfo": {
                "funcType": int(func.funcType),
                "paramInfo": [slot.to_wire() for slot in func.paramInfo.slots],
            },
            "randomParaAddr": _pointer(self.randomParaAddr),
            "randomResultAddr": _pointer(self.randomResultAddr),
            "randomCounterAddr": _pointer(self.randomCounterAddr),
            "randomSeed": self.randomSeed.to_wire(),
            "randomNum": self.randomNum.to_wire(),
        }

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> aclrtRandomNumTaskInfo:
        func = wire["randomNumFuncParaInfo"]
        first, second = (aclrtRandomParaInfo.from_wire(slot) for slot in func["paramInfo"])
        return cls(
            dataType=wire["dataType"],
            randomNumFuncParaInfo=aclrtRandomNumFuncParaInfo(func["funcType"], ParamInfoUnion(first, second)),
            randomParaAddr=wire["randomParaAddr"],
            randomResultAddr=wire["randomResultAddr"],
            randomCounterAddr=wire["randomCounterAddr"],
            randomSeed=aclrtRandomParaInfo.from_wire(wire["randomSeed"]),
            randomNum=aclrtRandomParaInfo.from_wire(wire["randomNum"]),
        )


def acl_layer(info: aclrtRandomNumTaskInfo) -> dict[str, Any]:
    """What the ACL layer does with the caller's struct: its wire form, with the caller's aclDataType (the
    daemon checks it), and -- when that type is one the ACL layer maps -- `info.dataType` overwritten with the
    runtime's own enum value, as the runtime does to the caller's memory."""
    wire = info.to_wire()
    mapped = RT_DATA_TYPES.get(info.dataType)
    if mapped is not None:
        info.dataType = int(mapped)
    return wire


STRUCTS: Final = {
    cls.__name__: cls
    for cls in (
        aclrtRandomParaInfo,
        aclrtDropoutBitmaskInfo,
        aclrtUniformDisInfo,
        aclrtNormalDisInfo,
        aclrtRandomNumFuncParaInfo,
        aclrtRandomNumTaskInfo,
    )
}
"""The C struct types the client exports under their names."""
