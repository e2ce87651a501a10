"""aclrtRandomNumAsync (spec-breadth 15): the DSA engine's built-in random number task, queued on a stream like a
copy. It writes `randomNum` values of `dataType` (for DROPOUT_BITMASK a bit mask) into device memory from a seed
and a 16-byte device counter, which it advances; the numbers are `randomgen`'s.

The checks, in the runtime's order (acl/kernel.cpp, api_error.cc, random_num_task.cc):
- the ACL layer's: taskInfo NULL, or a dataType outside the seven it maps (`proto.randomnum.RT_DATA_TYPES`):
  100000 (the client then writes the runtime's enum over the caller's dataType: `proto.randomnum.acl_layer`);
- the runtime's, all 107000: reserve not NULL; (the stream, as everywhere); funcType outside 0..3; a dataType
  the function does not generate (the dropout mask and both normals: bf16, fp16, fp32 only); randomCounterAddr
  or randomResultAddr NULL; the seed's or the count's isAddr not 0 or 1, or its size 0 or over 8; the same for
  each parameter of the function, whose size is at most the data type's when it is a value (8 for an address);
- vnpu's own, as for every task (the device would fault when the task runs): the counter (16 bytes), the result
  (all of it when the count is a value), the parameter block and every address given must lie in device memory
  of the process (107000).

What happens when. During the call the runtime packs the function's parameters into a 16-byte block -- each the
first `size` bytes of its valueOrAddr, zero-extended to 64 bits: a value or an address -- and copies it to
randomParaAddr, or, when that is NULL, to memory of its own. The task reads the block, the seed and the count,
each parameter given by address, and the counter when it runs: a captured task sees them as they are at each
replay (a block at randomParaAddr included), and its counter continues from the last launch or replay. A value
given by address is read as the data type (8 bytes for the seed and the count). A memory fault when the task
runs (freed memory, a result too small for a count read from memory) fails it with 507053.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from proto.constants import aclDataType, aclrtRandomNumFuncType
from proto.enumtext import not_member
from proto.errors import ACL_ERROR_RT_PARAM_INVALID, AclError
from proto.randomnum import RT_DATA_TYPES, aclrtRandomNumTaskInfo, aclrtRandomParaInfo, rtRandomNumDataType
from server.npu.area import Area, acl_call, require
from server.npu.tasks import randomgen
from server.npu.tasks.random import BLOCK_BYTES, COUNTER_BYTES, DTYPES, WORD, Param, RandomNumTask

if TYPE_CHECKING:
    pass

F, RT = aclrtRandomNumFuncType, rtRandomNumDataType
P = ACL_ERROR_RT_PARAM_INVALID
FLOATS = ("ACL_BF16", "ACL_FLOAT16", "ACL_FLOAT")
GENERATES = {
    F.ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK: FLOATS,
    F.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS: (*FLOATS, "ACL_INT32", "ACL_INT64", "ACL_UINT32", "ACL_UINT64"),
    F.ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS: FLOATS,
    F.ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS: FLOATS,
}
PARAMS = {  # the union members each function reads, slot 0 then slot 1
    F.ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK: ("dropoutBitmaskInfo.dropoutRation",),
    F.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS: ("uniformDisInfo.min", "uniformDisInfo.max"),
    F.ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS: ("normalDisInfo.mean", "normalDisInfo.stddev"),
    F.ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS: ("normalDisInfo.mean", "normalDisInfo.stddev"),
}


class RandomCalls(Area):
    @acl_call
    def aclrtRandomNumAsync(self, task_info: Mapping[str, Any] | None, stream: int | None, reserve: int | None) -> None:
        require(task_info is not None, "taskInfo is NULL")
        assert task_info is not None
        info = aclrtRandomNumTaskInfo.from_wire(task_info)
        rt_type = RT_DATA_TYPES.get(info.dataType)
        require(
            rt_type is not None,
            f"taskInfo->dataType {_type_name(info.dataType)} is not a type aclrtRandomNumAsync generates: "
            f"ACL_INT32, ACL_INT64, ACL_UINT32, ACL_UINT64, ACL_BF16, ACL_FLOAT16 or ACL_FLOAT{_reused(info.dataType)}",
        )
        assert rt_type is not None
        require(not reserve, "reserve must be NULL", P)
        on = self.ctx.stream(stream)
        func = self._function(info)
        dtype = DTYPES[rt_type]
        self._check(info, func, dtype)
        task = self._task(info, func, dtype)
        if task.para_addr:
            self.machine.device_region(task.para_addr, BLOCK_BYTES)[:] = np.frombuffer(task.block, np.uint8)
        self.ctx.issue(on, task)

    @staticmethod
    def _function(info: aclrtRandomNumTaskInfo) -> aclrtRandomNumFuncType:
        func_type = info.randomNumFuncParaInfo.funcType
        if func_type not in F._value2member_map_:
            raise AclError(P, not_member("taskInfo->randomNumFuncParaInfo.funcType", func_type, F))
        func = F(func_type)
        generated = GENERATES[func]
        named = _type_name(info.dataType)
        require(
            named in generated,
            f"{func.name} does not generate {named}: its data types are {', '.join(generated)}",
            P,
        )
        return func

    def _check(self, info: aclrtRandomNumTaskInfo, func: aclrtRandomNumFuncType, dtype: np.dtype) -> None:
        """The runtime's checks of the pointers and parameters, then vnpu's memory checks."""
        require(
            bool(info.randomCounterAddr),
            "taskInfo->randomCounterAddr is NULL: it must point to the 16-byte counter in device memory",
            P,
        )
        require(bool(info.randomResultAddr), "taskInfo->randomResultAddr is NULL: the values go there", P)
        _check_param(info.randomSeed, "randomSeed", WORD)
        _check_param(info.randomNum, "randomNum", WORD)
        slots = info.randomNumFuncParaInfo.paramInfo.slots
        members = [(f"randomNumFuncParaInfo.paramInfo.{n}", s) for n, s in zip(PARAMS[func], slots, strict=False)]
        for name, slot in members:
            _check_param(slot, name, WORD if slot.isAddr == 1 else dtype.itemsize)
        assert info.randomCounterAddr is not None and info.randomResultAddr is not None
        self.ctx.memory.device_range("taskInfo->randomCounterAddr", info.randomCounterAddr, COUNTER_BYTES)
        count = Param.of(info.randomNum)
        known = 0 if count.by_address else randomgen.result_bytes(func, dtype, count.raw)
        self.ctx.memory.device_range("taskInfo->randomResultAddr", info.randomResultAddr, known)
        if info.randomParaAddr:
            self.ctx.memory.device_range("taskInfo->randomParaAddr", info.randomParaAddr, BLOCK_BYTES)
        given = [("randomSeed", info.randomSeed, WORD), ("randomNum", info.randomNum, WORD)]
        given += [(name, slot, dtype.itemsize) for name, slot in members]
        for name, param, nbytes in given:
            if param.isAddr == 1:
                self.ctx.memory.device_range(f"taskInfo->{name} (an address)", Param.of(param).raw, nbytes)

    def _task(self, info: aclrtRandomNumTaskInfo, func: aclrtRandomNumFuncType, dtype: np.dtype) -> RandomNumTask:
        used = info.randomNumFuncParaInfo.paramInfo.slots[: len(PARAMS[func])]
        params = [Param.of(slot) for slot in used] + [Param(False, 0)] * (2 - len(used))  # an unused slot: 0
        seed, count = Param.of(info.randomSeed), Param.of(info.randomNum)
        assert info.randomResultAddr is not None and info.randomCounterAddr is not None
        pointers = [info.randomResultAddr, info.randomCounterAddr]
        pointers += [p.raw for p in (*params, seed, count) if p.by_address]
        if info.randomParaAddr:
            pointers.append(info.randomParaAddr)
        return RandomNumTask(
            "aclrtRandomNumAsync",
            func,
            dtype,
            (params[0].by_address, params[1].by_address),
            b"".join(p.raw.to_bytes(WORD, "little") for p in params),
            info.randomParaAddr or None,
            seed,
            count,
            info.randomResultAddr,
            info.randomCounterAddr,
            self.ctx.memory.pins(*pointers),
        )


def _check_param(param: aclrtRandomParaInfo, name: str, most: int) -> None:
    require(
        param.isAddr in (0, 1),
        f"taskInfo->{name}.isAddr is {param.isAddr}: 0 for a value, 1 for a device address",
        P,
    )
    what = "an address" if param.isAddr == 1 else "a value"
    require(
        1 <= param.size <= most,
        f"taskInfo->{name}.size is {param.size}: the bytes filled in valueOrAddr, 1 to {most} for {what}",
        P,
    )


def _reused(data_type: int) -> str:
    """A hint when the value is one the runtime's enum writes over dataType (a struct launched again)."""
    if data_type not in set(RT):
        return ""
    return (
        f" ({data_type} is also {RT(data_type).name}, which a launch writes over dataType: refill dataType before "
        "launching the struct again)"
    )


def _type_name(data_type: int) -> str:
    return aclDataType(data_type).name if data_type in set(aclDataType) else str(data_type)
