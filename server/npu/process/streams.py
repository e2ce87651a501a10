"""What a process does to its streams beyond one call: the failure mode and the overflow switch (set by their own calls
and by aclrtSetStreamAttribute), with the runtime's checks in its order."""

from __future__ import annotations

from proto.constants import ACL_STOP_ON_FAILURE, ACL_STREAM_DEVICE_USE_ONLY, ACL_STREAM_PERSISTENT
from proto.errors import (
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_CONTEXT,
    AclError,
    require,
)
from server.npu.core.stream import Stream
from server.npu.process.context import Context


def set_failure_mode(ctx: Context, stream: int | None, mode: int) -> None:
    """The runtime's checks, in its order (ae StreamSetMode, ai StreamSetMode): no current context (107002), a
    DEVICE_USE_ONLY stream (207000), a stream bound to a model (207000), the stream's own mode again (nothing to
    do), STOP back to CONTINUE (207000), a stream of another ACL context (107003)."""
    owner = ctx.acl_context()
    target = ctx.any_stream(stream)
    if target.flags & ACL_STREAM_DEVICE_USE_ONLY:
        raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{target} is ACL_STREAM_DEVICE_USE_ONLY: no failure mode")
    refuse_bound(ctx, target, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "a failure mode")
    wanted = mode & ACL_STOP_ON_FAILURE
    if target.failure_mode == wanted:
        return
    if target.failure_mode == ACL_STOP_ON_FAILURE:
        raise AclError(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            f"{target} is in ACL_STOP_ON_FAILURE mode, which a stream cannot leave (the mode is set once)",
        )
    if ctx.stream_contexts.get(target.handle) is not owner:
        raise AclError(ACL_ERROR_RT_STREAM_CONTEXT, f"{target} is not a stream of this thread's {owner}")
    target.failure_mode = wanted
    for s in [*ctx.streams.values(), *ctx.default_streams.values()]:
        if ctx.stream_contexts.get(s.handle) is owner:
            s.stop_on_failure = True


def refuse_bound(ctx: Context, stream: Stream, code: int, what: str) -> None:
    """`code` for a stream bound to a Build model, which takes `what` only as an ordinary stream (the runtime's
    GetBindFlag checks)."""
    lane = ctx.bound.get(stream)
    if lane is not None:
        raise AclError(
            code,
            f"{stream} is bound to {lane.model}: {what} is for single-operator streams, not for a model's "
            "(aclmdlRIUnbindStream it first)",
        )


def set_overflow_switch(ctx: Context, stream: int | None, flag: int, api: str) -> None:
    """The runtime's checks (ae/ai SetStreamOverflowSwitch): flag 0 or 1 (107000), an explicit stream not
    capturing (107027), a stream of the current ACL context (107003)."""
    require(flag < 2, f"the overflow switch must be 0 or 1, got {flag}", ACL_ERROR_RT_PARAM_INVALID)
    refuse_captured(ctx, stream, api)
    ctx.own_stream(stream).overflow_switch = bool(flag)


def refuse_captured(ctx: Context, handle: int | None, api: str) -> None:
    """107027 when the stream `handle` (not NULL) is capturing: the runtime checks it before the context."""
    found: Stream | None = (ctx.streams.get(handle) or ctx.default_streams.get(handle)) if handle else None
    if found is not None and found in ctx.capturing:
        raise AclError(
            ACL_ERROR_RT_STREAM_CAPTURED,
            f"{api} is not allowed on {found} while it is capturing ({ctx.capturing[found]}): call it before "
            "aclmdlRICaptureBegin or after aclmdlRICaptureEnd",
        )


def synchronize_outlook(ctx: Context, handle: int) -> tuple[Stream, bool] | None:
    """What aclrtSynchronizeStream(handle) by the calling thread, processed now, would do: None if it would
    fail or raise (no aclInit, a bad handle, another device, capturing, a sticky error); else the stream and
    whether it would return at once (no unfinished task, or a persistent stream) or wait."""
    if ctx.init_count == 0:
        return None
    try:
        target = ctx.idle_stream(handle, "aclrtSynchronizeStream")
    except AclError:
        return None
    if target.flags & ACL_STREAM_PERSISTENT:
        return target, True
    if target.error is not None:
        return None
    return target, target.queued == 0
