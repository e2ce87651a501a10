"""aclrtReduceAsync (spec-breadth 15): dst[i] = dst[i] op src[i] over `count` bytes of device memory, the SDMA
engine's built-in reduction, queued on a stream like a copy and computed in the element type itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from proto.constants import aclDataType, aclrtReduceKind
from proto.enumtext import not_member
from proto.errors import ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID, AclError
from server.npu.area import Area, acl_call, require
from server.npu.ops.dtypes import np_dtype
from server.npu.tasks.reduce import OPS, ReduceTask

if TYPE_CHECKING:
    pass

DT, K = aclDataType, aclrtReduceKind
# what the ACL layer lets through (acl/memory.cpp); the SoC computes fewer (SOC_TYPES, D12)
SOC_TYPES = frozenset({"INT8", "INT16", "INT32", "FLOAT16", "FLOAT", "BF16"})
ACL_TYPES = SOC_TYPES | {"INT4", "UINT8", "UINT16", "UINT32"}
MAX_SUM_BYTES = 4 << 30


class ReduceCalls(Area):
    @acl_call
    def aclrtReduceAsync(
        self,
        dst: int | None,
        src: int | None,
        count: int,
        kind: int,
        type_: int,
        stream: int | None,
        reserve: int | None,
    ) -> None:
        require(bool(dst), "dst is NULL")
        require(bool(src), "src is NULL")
        require(not reserve, "reserve must be NULL")
        named = DT(type_).name.removeprefix("ACL_") if type_ in set(DT) else None
        require(named in ACL_TYPES, f"type {type_} is not a data type aclrtReduceAsync takes")
        require(count > 0, "count must be more than 0 (bytes)", ACL_ERROR_RT_PARAM_INVALID)
        if kind not in K._value2member_map_:
            raise AclError(ACL_ERROR_RT_PARAM_INVALID, not_member("kind", kind, K))
        reduce_kind = K(kind)
        if reduce_kind == K.ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM:
            require(
                count <= MAX_SUM_BYTES, f"count {count} is over 4 GiB, the most a SUM takes", ACL_ERROR_RT_PARAM_INVALID
            )
        data_type = DT(type_)
        if named not in SOC_TYPES or reduce_kind not in OPS:
            what = data_type.name if named not in SOC_TYPES else reduce_kind.name
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"aclrtReduceAsync with {what} is not supported on Ascend910B"
            )
        dtype = np_dtype(data_type)
        require(
            count % dtype.itemsize == 0,
            f"count {count} is not a whole number of {data_type.name} elements ({dtype.itemsize} bytes each)",
            ACL_ERROR_RT_PARAM_INVALID,
        )
        on = self.ctx.stream(stream)
        assert dst is not None and src is not None
        for name, ptr in (("dst", dst), ("src", src)):
            self.ctx.memory.device_range(name, ptr, count)
        self.ctx.issue(
            on, ReduceTask("aclrtReduceAsync", dst, src, count, reduce_kind, dtype, self.ctx.memory.pins(dst, src))
        )
