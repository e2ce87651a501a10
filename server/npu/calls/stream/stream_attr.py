"""aclrtSetStreamAttribute / aclrtGetStreamAttribute (spec-breadth 2.4): one attribute of a stream by its
aclrtStreamAttr id, each with the checks of the runtime call it stands for (capi rtsStreamSetAttribute and
rtsStreamGetAttribute); any other id is 107000.

On the wire the C union aclrtStreamAttrValue is its one relevant integer: `failureMode` (64 bits) for
ACL_STREAM_ATTR_FAILURE_MODE, the 32-bit member for the others -- for those the low 32 bits of `value`, which is
what C reads from the union's first four bytes on a little-endian host.

- FAILURE_MODE: as aclrtSetStreamFailureMode; Get answers the mode set on the stream itself.
- FLOAT_OVERFLOW_CHECK: as aclrtSetStreamOverflowSwitch, except that the ACL layer's 0-or-1 check (100000) is not
  made: 2 or more is the runtime's 107000.
- USER_CUSTOM_TAG: a tag kept with the stream (0xFFFFFFFF until set); a capturing stream refuses it (107027).
- CACHE_OP_INFO: 0 or 1, on any stream of the process. The switch takes effect in stream captures only: Get
  answers the switch of the capture's origin stream while the stream is in a capture, and 0 otherwise, as the
  runtime copies the origin's switch to the captured streams and clears them when the capture ends. vnpu caches
  no operator information either way.
- PRIORITY: the scheduler's priority of the stream, clamped to 0..7, which a NULL stream (107000) and an
  ACL_STREAM_CPU_SCHEDULE stream (an AI CPU stream to the runtime: 207000) do not have. It starts as the creation
  priority; aclrtStreamGetPriority keeps answering the creation priority, as in the runtime. vnpu's streams run
  side by side whatever their priority.
"""

from __future__ import annotations

from proto.constants import ACL_STREAM_CPU_SCHEDULE, aclrtStreamAttr
from proto.enumtext import not_member
from proto.errors import ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID, AclError
from server.npu.area import Area, acl_call, require
from server.npu.core.stream import Stream
from server.npu.process import streams

A = aclrtStreamAttr
LOW = 0xFFFFFFFF
LEAST_PRIORITY = 7  # the runtime's RT_STREAM_LEAST_PRIORITY; 0 is the greatest


class StreamAttributeCalls(Area):
    @acl_call
    def aclrtSetStreamAttribute(self, stream: int | None, stm_attr_type: int, value: int) -> None:
        api = "aclrtSetStreamAttribute"
        if stream:
            self.ctx.any_stream(stream)  # an unknown handle is refused first (capi's handle check)
        low = value & LOW
        if stm_attr_type == A.ACL_STREAM_ATTR_FAILURE_MODE:
            streams.set_failure_mode(self.ctx, stream, value)
        elif stm_attr_type == A.ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
            streams.set_overflow_switch(self.ctx, stream, low, api)
        elif stm_attr_type == A.ACL_STREAM_ATTR_USER_CUSTOM_TAG:
            streams.refuse_captured(self.ctx, stream, api)
            self.ctx.own_stream(stream).tag = low
        elif stm_attr_type == A.ACL_STREAM_ATTR_CACHE_OP_INFO:
            target = self.ctx.any_stream(stream)
            require(low in (0, 1), f"the cache op info switch must be 0 or 1, got {low}", ACL_ERROR_RT_PARAM_INVALID)
            target.cache_op_info = low
        elif stm_attr_type == A.ACL_STREAM_ATTR_PRIORITY:
            signed = low - (1 << 32) if low >> 31 else low  # the runtime reads it as an int32
            self._prioritized(stream, "set").sq_priority = min(max(signed, 0), LEAST_PRIORITY)
        else:
            raise _unknown(stm_attr_type)

    @acl_call
    def aclrtGetStreamAttribute(self, stream: int | None, stm_attr_type: int) -> int:
        """The attribute's value (see the module's docstring for what each answers)."""
        if stream:
            self.ctx.any_stream(stream)
        if stm_attr_type == A.ACL_STREAM_ATTR_FAILURE_MODE:
            return self.ctx.any_stream(stream).failure_mode
        if stm_attr_type == A.ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
            return int(self.ctx.own_stream(stream).overflow_switch)
        if stm_attr_type == A.ACL_STREAM_ATTR_USER_CUSTOM_TAG:
            return self.ctx.own_stream(stream).tag
        if stm_attr_type == A.ACL_STREAM_ATTR_CACHE_OP_INFO:
            capture = self.ctx.capturing.get(self.ctx.any_stream(stream))
            return capture.origin.cache_op_info if capture is not None else 0
        if stm_attr_type == A.ACL_STREAM_ATTR_PRIORITY:
            return self._prioritized(stream, "queried").sq_priority
        raise _unknown(stm_attr_type)

    def _prioritized(self, stream: int | None, verb: str) -> Stream:
        """The stream whose scheduler priority is set or queried (ae and ai Set/GetStreamPriorityValue)."""
        require(
            bool(stream),
            "stream is NULL: ACL_STREAM_ATTR_PRIORITY takes no default stream (pass the stream itself, e.g. "
            "aclrtCtxGetCurrentDefaultStream's)",
            ACL_ERROR_RT_PARAM_INVALID,
        )
        target = self.ctx.any_stream(stream)
        if target.flags & ACL_STREAM_CPU_SCHEDULE:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                f"{target} was created with ACL_STREAM_CPU_SCHEDULE (it carries AI CPU tasks): its priority cannot "
                f"be {verb}",
            )
        self.ctx.acl_context()
        return target


def _unknown(attr: int) -> AclError:
    return AclError(ACL_ERROR_RT_PARAM_INVALID, not_member("stmAttrType", attr, A))
