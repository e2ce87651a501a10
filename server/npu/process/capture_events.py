"""How events behave on capturing streams (spec 3.3, 3.4): the rules the event calls apply, over a process's context.

- An event made with aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) recorded on a capturing stream becomes a capture
  event of that capture (a CaptureRecord node); without ACL_EVENT_SYNC the record is silently dropped.
- A wait on a capture event pulls a non-capturing stream into the same capture (transitively); a stream
  capturing another model gets 107032, the default stream 107031.
- ACL_EVENT_EXTERNAL events are never capture events: their record, wait and reset are captured as plain tasks
  on the real event. Other legacy events cannot take part in a capture (207000).
- A capture waiting on an Ex event recorded outside it gets 107024; a never-recorded one is a no-op.
Failures of captured event operations invalidate the capture (End then returns 507903), except the misuses of
spec 1.4 (107027, 107028, 107031), which the runtime returns before touching the capture.
"""

from __future__ import annotations

from proto.constants import ACL_EVENT_SYNC
from proto.errors import (
    ACL_ERROR_RT_CAPTURE_DEPENDENCY,
    ACL_ERROR_RT_EVENT_CAPTURED,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
    ACL_ERROR_STREAM_CAPTURE_CONFLICT,
    AclError,
)
from server.npu.core.event import Event
from server.npu.core.stream import Stream
from server.npu.model.capture import Capture
from server.npu.model.model import CaptureRecord, CaptureWait
from server.npu.process.context import Context
from server.npu.tasks.event import RecordTask, ResetTask, WaitTask

_LEGACY_IN_CAPTURE = (
    "{event} is a legacy event: in a capture use aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) events to link streams, "
    "or ACL_EVENT_EXTERNAL events to synchronise with work outside the model"
)


def capture_of_event(ctx: Context, event: Event) -> Capture | None:
    """The live capture in which `event` was last recorded, if any."""
    for capture in ctx.captures():
        if event in capture.events:
            return capture
    return None


def refuse_capture_event(ctx: Context, event: Event, api: str) -> None:
    capture = capture_of_event(ctx, event)
    if capture is not None:
        raise AclError(
            ACL_ERROR_RT_EVENT_CAPTURED,
            f"{api} is not allowed on {event}: it was recorded inside {capture}, which has not ended",
        )


def refuse_default_stream(ctx: Context, stream: Stream, api: str) -> None:
    for capture in ctx.captures():
        if stream.default and capture.origin.device is stream.device:
            raise AclError(
                ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
                f"{api} on the default stream while {capture} is active: the default stream cannot take part "
                "in a capture; use a stream of your own",
            )


def record_in_capture(ctx: Context, event: Event, stream: Stream, api: str) -> bool:
    """Capture the record if `stream` is capturing (True), else let it run eagerly (False)."""
    capture = ctx.capturing.get(stream)
    if capture is None:
        for live in ctx.captures():
            live.events.pop(event, None)  # recorded outside: no longer a capture event
        return False
    if event.external:
        ctx.issue(stream, RecordTask(api, event, None))
    elif event.legacy:
        _invalid(capture, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, _LEGACY_IN_CAPTURE.format(event=event))
    elif event.flags & ACL_EVENT_SYNC:
        record = CaptureRecord(api, event.handle)
        ctx.issue(stream, record)
        capture.events[event] = record
    return True  # an Ex event without ACL_EVENT_SYNC: dropped, as the runtime does


def wait_in_capture(ctx: Context, stream: Stream, event: Event, timeout: float | None, api: str) -> bool:
    """Capture the wait (joining `stream` to the event's capture if need be) or return False to run it."""
    source = capture_of_event(ctx, event)
    capture = ctx.capturing.get(stream)
    if source is not None:
        if stream.default:
            raise AclError(
                ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
                f"the default stream cannot wait on {event}, a capture event of {source}",
            )
        if capture is not None and capture is not source:
            _invalid(
                capture,
                ACL_ERROR_STREAM_CAPTURE_CONFLICT,
                f"{stream} belongs to {capture}, but {event} was recorded in {source}: one event cannot link two "
                "captures",
            )
        _join_and_add(ctx, source, stream, CaptureWait(api, source.events[event]))
        return True
    if capture is None:
        return False
    if event.external:
        ctx.issue(stream, WaitTask(api, event, None, timeout))
    elif event.legacy:
        _invalid(capture, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, _LEGACY_IN_CAPTURE.format(event=event))
    elif not event.flags & ACL_EVENT_SYNC:
        _invalid(capture, ACL_ERROR_RT_PARAM_INVALID, f"{event} was created without ACL_EVENT_SYNC")
    elif event.latest is not None:
        _invalid(
            capture,
            ACL_ERROR_RT_CAPTURE_DEPENDENCY,
            f"{event} was recorded outside {capture}: a capture cannot depend on work outside it (record the "
            "event inside the capture, or use an ACL_EVENT_EXTERNAL event)",
        )
    return True  # a never-recorded Ex event: nothing to wait for


def reset_in_capture(ctx: Context, event: Event, stream: Stream, api: str) -> bool:
    capture = ctx.capturing.get(stream)
    if capture is None:
        return False
    if not event.external:
        _invalid(capture, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, _LEGACY_IN_CAPTURE.format(event=event))
    ctx.issue(stream, ResetTask(api, event))
    return True


def _join_and_add(ctx: Context, capture: Capture, stream: Stream, wait: CaptureWait) -> None:
    joining = stream not in ctx.capturing
    if joining:
        capture.join(stream)
        ctx.capturing[stream] = capture
    try:
        ctx.issue(stream, wait)
    except AclError:
        if joining:
            del capture.lanes[stream]
            del ctx.capturing[stream]
        raise


def _invalid(capture: Capture, code: int, message: str) -> None:
    error = AclError(code, message)
    capture.invalidate(error)
    raise error
