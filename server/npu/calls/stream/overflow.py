"""Overflow detection (spec-breadth 18): the saturation mode, each stream's overflow switch, and the overflow
status of an ACL context, copied into device memory and cleared by tasks on a stream.

The state is the runtime's: the mode is kept per process, the switch per stream, and every ACL context has its
512-byte status area (OVERFLOW_ADDR_MAX_SIZE), of which aclrtGetOverflowStatus copies the first 64 bytes into
device memory and aclrtResetOverflowStatus clears all 512. Both are tasks of their stream, so they run in order
with the work queued before and after them, and a capturing stream refuses them (107027).

What vnpu fakes: it detects no overflow. Its kernels compute IEEE results (inf and NaN, the INFNAN behaviour)
whatever the saturation mode, and no kernel ever sets a bit of the status area, so the status that
aclrtGetOverflowStatus copies out is 64 zero bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from proto.constants import aclrtFloatOverflowMode
from proto.errors import ACL_ERROR_RT_PARAM_INVALID
from server.npu.area import Area, acl_call, require
from server.npu.process import streams
from server.npu.tasks.overflow import OVERFLOW_OUTPUT, StatusClearTask, StatusReadTask

if TYPE_CHECKING:
    pass

MODES = {m.value: m for m in aclrtFloatOverflowMode if m != aclrtFloatOverflowMode.ACL_RT_OVERFLOW_MODE_UNDEF}


class OverflowCalls(Area):
    @acl_call
    def aclrtSetDeviceSatMode(self, mode: int) -> None:
        """The process-wide mode that aclrtGetDeviceSatMode answers (INFNAN until set, as on the Ascend910B).
        Recorded only: vnpu's kernels give inf and NaN in either mode, they never saturate."""
        require(
            mode in MODES,
            f"mode {mode} is not ACL_RT_OVERFLOW_MODE_SATURATION (0) or ACL_RT_OVERFLOW_MODE_INFNAN (1)",
            ACL_ERROR_RT_PARAM_INVALID,
        )
        self.ctx.sat_mode = MODES[mode]

    @acl_call
    def aclrtGetDeviceSatMode(self) -> aclrtFloatOverflowMode:
        return self.ctx.sat_mode

    @acl_call
    def aclrtSetStreamOverflowSwitch(self, stream: int | None, flag: int) -> None:
        """Turns overflow detection of the stream's tasks on (1) or off (0): recorded, as vnpu detects none."""
        require(flag in (0, 1), f"flag must be 0 or 1, got {flag}")
        streams.set_overflow_switch(self.ctx, stream, flag, "aclrtSetStreamOverflowSwitch")

    @acl_call
    def aclrtGetStreamOverflowSwitch(self, stream: int | None) -> int:
        return int(self.ctx.own_stream(stream).overflow_switch)

    @acl_call
    def aclrtGetOverflowStatus(self, output_addr: int | None, output_size: int, stream: int | None) -> None:
        """Queues the copy of the current ACL context's 64 bytes of status into device memory `outputAddr`."""
        require(bool(output_addr), "outputAddr is NULL: it must be device memory for the 64-byte status")
        self.queue_status_read(output_addr, output_size, stream, "aclrtGetOverflowStatus")

    @acl_call
    def aclrtGetFloatOverflowStatus(self, output_addr: int | None, output_size: int, stream: int | None) -> None:
        """aclrtGetOverflowStatus under its other name (both reach rtGetDeviceSatStatus), without the ACL layer's
        NULL check: a NULL outputAddr is the runtime's 107000."""
        self.queue_status_read(output_addr, output_size, stream, "aclrtGetFloatOverflowStatus")

    def queue_status_read(self, output_addr: int | None, output_size: int, stream: int | None, api: str) -> None:
        """The runtime's checks (ae/ai GetDeviceSatStatus): outputAddr and size 64 (107000), an explicit stream
        not capturing (107027), a stream of the current ACL context (107003), then the copy's: device memory of
        this process (107000)."""
        require(bool(output_addr), "outputAddr is NULL", ACL_ERROR_RT_PARAM_INVALID)
        require(
            output_size == OVERFLOW_OUTPUT,
            f"outputSize must be {OVERFLOW_OUTPUT} (bytes of status the runtime copies), got {output_size}",
            ACL_ERROR_RT_PARAM_INVALID,
        )
        streams.refuse_captured(self.ctx, stream, api)
        on = self.ctx.own_stream(stream)
        assert output_addr is not None
        self.ctx.memory.device_range("outputAddr", output_addr, OVERFLOW_OUTPUT)
        area = self.ctx.acl_context().overflow_status
        self.ctx.issue(on, StatusReadTask(api, output_addr, area, self.ctx.memory.pins(output_addr)))

    @acl_call
    def aclrtResetOverflowStatus(self, stream: int | None) -> None:
        """Queues the clearing of the current ACL context's status area: a read queued before it still sees the
        status it clears."""
        self.queue_status_clear(stream, "aclrtResetOverflowStatus")

    @acl_call
    def aclrtResetFloatOverflowStatus(self, stream: int | None) -> None:
        """aclrtResetOverflowStatus under its other name (both reach rtCleanDeviceSatStatus)."""
        self.queue_status_clear(stream, "aclrtResetFloatOverflowStatus")

    def queue_status_clear(self, stream: int | None, api: str) -> None:
        """The runtime's checks (ae/ai NpuClearFloatStatus, the Ascend910B's way): the stream, the default one
        for NULL, not capturing (107027), of the current ACL context (107003)."""
        on = self.ctx.stream(stream)
        streams.refuse_captured(self.ctx, on.handle, api)
        self.ctx.own_stream(stream)
        self.ctx.issue(on, StatusClearTask(api, self.ctx.acl_context().overflow_status))
