"""Stream memory operations: aclrtValueWrite and aclrtValueWait on a 64-bit word of device memory
(spec-breadth 14). A wait blocks its stream until the word satisfies the condition, whoever writes it: another
stream's value write, a copy, a kernel, the host."""

from __future__ import annotations

from proto.errors import ACL_ERROR_RT_PARAM_INVALID
from server.npu.area import Area, acl_call, require
from server.npu.tasks.value import CONDITIONS, ValueWaitTask, ValueWriteTask


class ValueCalls(Area):
    @acl_call
    def aclrtValueWrite(self, dev_addr: int | None, value: int, flag: int, stream: int | None) -> None:
        """The runtime's order (rtsValueWrite, then ApiErrorDecorator::MemWriteValue): devAddr NULL (100000), the
        stream's handle (107017), the flag, the address."""
        require(bool(dev_addr), "devAddr is NULL")
        self.ctx.any_stream(stream)
        require(flag == 0, f"flag must be 0, got {flag}", ACL_ERROR_RT_PARAM_INVALID)
        on = self.ctx.stream(stream)
        ptr = self._word_address(dev_addr)
        self.ctx.issue(on, ValueWriteTask("aclrtValueWrite", ptr, value, self.ctx.memory.pins(ptr)))

    @acl_call
    def aclrtValueWait(self, dev_addr: int | None, value: int, flag: int, stream: int | None) -> None:
        """In the order of aclrtValueWrite (rtsValueWait, then ApiErrorDecorator::MemWaitValue)."""
        require(bool(dev_addr), "devAddr is NULL")
        self.ctx.any_stream(stream)
        require(
            flag in CONDITIONS,
            f"flag {flag} is not an ACL_STREAM_WAIT_VALUE_* condition (GEQ 0, EQ 1, AND 2, NOR 3)",
            ACL_ERROR_RT_PARAM_INVALID,
        )
        on = self.ctx.stream(stream)
        ptr = self._word_address(dev_addr)
        self.ctx.issue(on, ValueWaitTask("aclrtValueWait", ptr, value, flag, self.ctx.memory.pins(ptr)))

    def _word_address(self, ptr: int | None) -> int:
        """A 64-bit word, 8-byte aligned, in device memory of this process (107000 otherwise)."""
        require(bool(ptr), "devAddr is NULL")
        assert ptr is not None
        self.ctx.memory.device_range("devAddr", ptr, 8)
        require(ptr % 8 == 0, f"devAddr {ptr:#x} is not 8-byte aligned", ACL_ERROR_RT_PARAM_INVALID)
        return ptr
