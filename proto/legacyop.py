"""The legacy single-operator API (acl_op.h, acl_op_compiler.h, the aclTensorDesc of acl_base_mdl.h), run in the
calling process as CANN runs it: tensor descriptions and operator attributes are host objects, the compile
options are the process's.

vnpu runs aclnn operators only. Executing a legacy operator (aclopCompileAndExecute(V2), aclopExecute(V2),
aclopCompile) checks its arguments as the runtime does, then always fails with ACL_ERROR_OP_NOT_FOUND and a
message naming the operator type: torch_npu falls back to this path when an aclnn operator is missing, and a
fallback that answered 0 would leave the output uncomputed, a silent wrong result.

Behaviour read from GE's ACL layer (acl_op_compiler.cpp, the tensor description and attribute code), written here
in vnpu's own terms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Final

from proto.constants import aclDataType, aclFormat, aclMemType
from proto.errors import (
    ACL_ERROR_FAILURE,
    ACL_ERROR_FEATURE_UNSUPPORTED,
    ACL_ERROR_INTERNAL_ERROR,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_OP_NOT_FOUND,
    AclError,
)
from proto.host import aclDataTypeSize
from proto.identity import NPU_ARCHES, SOC_NAME
from proto.opconstants import aclCompileOpt, aclopCompileType

ACL_UNKNOWN_RANK: Final = 0xFFFF_FFFF_FFFF_FFFE
COMPILE_OPT_SIZE: Final = 256  # what aclGetCompileoptSize answers for ACL_OP_JIT_COMPILE
# the NPU architectures whose default is JIT compilation ("enable"); the A2 vnpu presents (2201) runs binaries
JIT_BY_DEFAULT: Final = frozenset({1001, 2002, 2102, 3002, 3004, 3505, 3102, 5102})
ACLNN_ONLY: Final = (
    "vnpu runs aclnn operators only: it has no legacy (aclop) operator {op}. torch_npu falls back to this path when "
    "the aclnn operator it looked up first is not in vnpu's operator library; set ACL_OP_INIT_MODE=2 to have "
    "torch_npu refuse the fallback itself"
)


# -- tensor descriptions (aclTensorDesc) ------------------------------------------------------------------------


@dataclass
class aclTensorDesc:  # noqa: N801
    """A data type, a shape (dims; [-2] is an unknown rank), a format and what the setters add."""

    dataType: int  # noqa: N815
    dims: list[int]
    format: int
    name: str = ""
    originFormat: int | None = None  # noqa: N815
    originDims: list[int] | None = None  # noqa: N815
    placement: int = int(aclMemType.ACL_MEMTYPE_DEVICE)
    name_c: Any = field(default=None, repr=False)  # the C string aclGetTensorDescName handed out (kept alive)

    @property
    def unknown_rank(self) -> bool:
        return self.dims == [-2]


def aclCreateTensorDesc(dataType: int, dims: list[int] | None, format: int) -> aclTensorDesc | None:  # noqa: N802, N803
    """None (NULL in C) when `dims` is missing for a rank > 0, as the runtime answers."""
    if dims is None:
        return None
    return aclTensorDesc(dataType, list(dims), format)


def aclGetTensorDescType(desc: aclTensorDesc | None) -> int:  # noqa: N802
    return int(aclDataType.ACL_DT_UNDEFINED) if desc is None else desc.dataType


def aclGetTensorDescFormat(desc: aclTensorDesc | None) -> int:  # noqa: N802
    return int(aclFormat.ACL_FORMAT_UNDEFINED) if desc is None else desc.format


def aclGetTensorDescNumDims(desc: aclTensorDesc | None) -> int:  # noqa: N802
    if desc is None:
        return 0
    return ACL_UNKNOWN_RANK if desc.unknown_rank else len(desc.dims)


def aclGetTensorDescElementCount(desc: aclTensorDesc | None) -> int:  # noqa: N802
    """0 for NULL, an unknown rank or a negative (unknown) dimension."""
    if desc is None or any(d < 0 for d in desc.dims):
        return 0
    return math.prod(desc.dims)


def aclGetTensorDescSize(desc: aclTensorDesc | None) -> int:  # noqa: N802
    return 0 if desc is None else aclGetTensorDescElementCount(desc) * aclDataTypeSize(desc.dataType)


def aclGetTensorDescDimV2(desc: aclTensorDesc | None, index: int) -> int:  # noqa: N802
    if desc is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, "desc is NULL", "aclGetTensorDescDimV2")
    if index >= len(desc.dims):
        raise AclError(
            ACL_ERROR_INVALID_PARAM,
            f"index {index} is out of range: the description has {len(desc.dims)} dims",
            "aclGetTensorDescDimV2",
        )
    return desc.dims[index]


def aclGetTensorDescDim(desc: aclTensorDesc | None, index: int) -> int:  # noqa: N802
    """The deprecated form: -1 where aclGetTensorDescDimV2 fails."""
    try:
        return aclGetTensorDescDimV2(desc, index)
    except AclError:
        return -1


def aclSetTensorDescName(desc: aclTensorDesc | None, name: str | None) -> None:  # noqa: N802
    if desc is not None:
        desc.name = name or ""


def aclGetTensorDescName(desc: aclTensorDesc | None) -> str:  # noqa: N802
    return "" if desc is None else desc.name


def _set(desc: aclTensorDesc | None, api: str) -> aclTensorDesc:
    if desc is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, "desc is NULL", api)
    return desc


def _shape(dims: list[int] | None, api: str) -> list[int]:
    if dims is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, "dims is NULL while numDims is not 0", api)
    return list(dims)


def aclSetTensorFormat(desc: aclTensorDesc | None, format: int) -> None:  # noqa: N802
    _set(desc, "aclSetTensorFormat").format = format


def aclSetTensorShape(desc: aclTensorDesc | None, dims: list[int] | None) -> None:  # noqa: N802
    _set(desc, "aclSetTensorShape").dims = _shape(dims, "aclSetTensorShape")


def aclSetTensorStorageFormat(desc: aclTensorDesc | None, format: int) -> None:  # noqa: N802
    _set(desc, "aclSetTensorStorageFormat").format = format


def aclSetTensorStorageShape(desc: aclTensorDesc | None, dims: list[int] | None) -> None:  # noqa: N802
    _set(desc, "aclSetTensorStorageShape").dims = _shape(dims, "aclSetTensorStorageShape")


def aclSetTensorOriginFormat(desc: aclTensorDesc | None, format: int) -> None:  # noqa: N802
    _set(desc, "aclSetTensorOriginFormat").originFormat = format


def aclSetTensorOriginShape(desc: aclTensorDesc | None, dims: list[int] | None) -> None:  # noqa: N802
    _set(desc, "aclSetTensorOriginShape").originDims = _shape(dims, "aclSetTensorOriginShape")


def aclSetTensorPlaceMent(desc: aclTensorDesc | None, memType: int) -> None:  # noqa: N802, N803
    target = _set(desc, "aclSetTensorPlaceMent")
    if memType not in {int(m) for m in aclMemType}:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"memType {memType} is not an aclMemType", "aclSetTensorPlaceMent")
    target.placement = memType


# -- operator attributes (aclopAttr) ----------------------------------------------------------------------------


@dataclass
class aclopAttr:  # noqa: N801
    """Named attribute values, as the operator would read them (a later set of a name replaces the earlier)."""

    values: dict[str, Any] = field(default_factory=dict)


def aclopCreateAttr() -> aclopAttr:  # noqa: N802
    return aclopAttr()


def aclopSetAttr(attr: aclopAttr | None, name: str | None, value: Any, api: str) -> None:  # noqa: N802
    """Every aclopSetAttr<Kind>: NULL attr or name is 100000."""
    if attr is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, "attr is NULL", api)
    if not name:
        raise AclError(ACL_ERROR_INVALID_PARAM, "attrName is NULL or empty", api)
    attr.values[name] = value


# -- compile options (the process's, as GE keeps them) -----------------------------------------------------------


class CompileOptions:
    """aclSetCompileopt's values, by option, for this process."""

    def __init__(self) -> None:
        self.values: dict[int, str] = {}
        self.flag = 0

    def set(self, opt: int, value: str | None) -> None:
        if value is None:
            raise AclError(ACL_ERROR_INVALID_PARAM, "value is NULL", "aclSetCompileopt")
        if opt == aclCompileOpt.ACL_AUTO_TUNE_MODE:
            raise AclError(
                ACL_ERROR_FEATURE_UNSUPPORTED,
                "ACL_AUTO_TUNE_MODE has been discarded (CANN tunes with its AOE tool)",
                "aclSetCompileopt",
            )
        if opt not in {int(o) for o in aclCompileOpt}:
            raise AclError(ACL_ERROR_INTERNAL_ERROR, f"option {opt} is not an aclCompileOpt", "aclSetCompileopt")
        if opt == aclCompileOpt.ACL_OP_JIT_COMPILE:
            value = "1" if value == "enable" else "0"
        self.values[opt] = value

    def size(self, opt: int) -> int:
        """ACL_OP_JIT_COMPILE: 256; another option: its value's length with the NUL, 0 when unset or empty."""
        if opt == aclCompileOpt.ACL_OP_JIT_COMPILE:
            return COMPILE_OPT_SIZE
        value = self.values.get(opt, "")
        return len(value.encode()) + 1 if value else 0

    def get(self, opt: int) -> str:
        """Only ACL_OP_JIT_COMPILE (the SoC's default, whatever was set) and ACL_OP_DEBUG_OPTION are readable."""
        if opt == aclCompileOpt.ACL_OP_JIT_COMPILE:
            return "enable" if NPU_ARCHES.get(SOC_NAME) in JIT_BY_DEFAULT else "disable"
        if opt == aclCompileOpt.ACL_OP_DEBUG_OPTION and opt in self.values:
            return self.values[opt]
        raise AclError(
            ACL_ERROR_FEATURE_UNSUPPORTED,
            f"option {opt} cannot be read back (only ACL_OP_JIT_COMPILE and a set ACL_OP_DEBUG_OPTION)",
            "aclGetCompileopt",
        )


COMPILE_OPTIONS = CompileOptions()


def aclSetCompileopt(opt: int, value: str | None) -> None:  # noqa: N802
    COMPILE_OPTIONS.set(opt, value)


def aclGetCompileoptSize(opt: int) -> int:  # noqa: N802
    return COMPILE_OPTIONS.size(opt)


def aclGetCompileopt(opt: int, length: int) -> str:  # noqa: N802
    """The value, which must fit in `length` bytes with its NUL (ACL_ERROR_FAILURE otherwise)."""
    value = COMPILE_OPTIONS.get(opt)
    if length < len(value.encode()) + 1:
        raise AclError(ACL_ERROR_FAILURE, f"length {length} cannot hold {value!r} and its NUL", "aclGetCompileopt")
    return value


def aclopSetCompileFlag(flag: int) -> None:  # noqa: N802
    COMPILE_OPTIONS.flag = flag


# -- executing a legacy operator: refused ------------------------------------------------------------------------


def refuse_execution(
    api: str,
    op_type: str | None,
    num_inputs: int,
    num_outputs: int,
    outputs: list[aclTensorDesc | None] | None,
    compile_flag: int | None = None,
) -> None:
    """The runtime's checks (counts, the compile type, the op type), the success it answers when every output is
    empty (nothing to compute), then vnpu's refusal, naming the operator."""
    if num_inputs < 0 or num_outputs < 0:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"numInputs {num_inputs} / numOutputs {num_outputs} must be >= 0", api)
    if compile_flag is not None and compile_flag not in {int(t) for t in aclopCompileType}:
        raise AclError(
            ACL_ERROR_INVALID_PARAM,
            f"compileFlag {compile_flag} is not ACL_COMPILE_SYS or ACL_COMPILE_UNREGISTERED",
            api,
        )
    if not op_type:
        raise AclError(ACL_ERROR_INVALID_PARAM, "opType is NULL", api)
    if outputs is not None and num_outputs and all(d is not None and aclGetTensorDescSize(d) == 0 for d in outputs):
        return
    raise AclError(ACL_ERROR_OP_NOT_FOUND, f"{api}({op_type!r}): " + ACLNN_ONLY.format(op=op_type), api)


FUNCTIONS: Final = {
    f.__name__: f
    for f in (
        aclCreateTensorDesc,
        aclGetTensorDescType,
        aclGetTensorDescFormat,
        aclGetTensorDescNumDims,
        aclGetTensorDescElementCount,
        aclGetTensorDescSize,
        aclGetTensorDescDimV2,
        aclGetTensorDescDim,
        aclSetTensorDescName,
        aclGetTensorDescName,
        aclSetTensorFormat,
        aclSetTensorShape,
        aclSetTensorStorageFormat,
        aclSetTensorStorageShape,
        aclSetTensorOriginFormat,
        aclSetTensorOriginShape,
        aclSetTensorPlaceMent,
        aclopCreateAttr,
        aclSetCompileopt,
        aclGetCompileoptSize,
        aclGetCompileopt,
        aclopSetCompileFlag,
    )
}
