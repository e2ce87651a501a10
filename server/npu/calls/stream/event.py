"""Event calls: the three create calls, destroy, record and wait (with timeout, with a flag), reset, query,
synchronize, elapsed time, timestamps. The flag rules are those of spec sections 3.1-3.3 and spec-breadth 5;
the semantics live in `event`."""

from __future__ import annotations

import asyncio

from proto.constants import (
    ACL_EVENT_CAPTURE_STREAM_PROGRESS,
    ACL_EVENT_DEVICE_USE_ONLY,
    ACL_EVENT_EXTERNAL,
    ACL_EVENT_IPC,
    ACL_EVENT_RECORD_EXTERNAL,
    ACL_EVENT_SYNC,
    ACL_EVENT_TIME_LINE,
    aclrtEventRecordedStatus,
    aclrtEventStatus,
    aclrtEventWaitStatus,
)
from proto.errors import (
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
    ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_NOT_CAPTURED,
    AclError,
)
from server.npu.area import Area, acl_call, require
from server.npu.core.event import Event
from server.npu.core.stream import Stream
from server.npu.model.external import ExternalRecordTask, ExternalTask, ExternalWaitTask
from server.npu.model.state import ModelKind
from server.npu.process import capture_events
from server.npu.tasks.event import RecordTask, ResetTask, WaitTask

_LEGACY_FLAGS = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE | ACL_EVENT_DEVICE_USE_ONLY
_EX_FLAGS = ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE


def _invalid(message: str) -> AclError:
    return AclError(ACL_ERROR_RT_PARAM_INVALID, message)


class EventCalls(Area):
    @acl_call
    def aclrtCreateEvent(self) -> int:
        """A legacy event usable for waits, timing and aclrtResetEvent (the docs forbid the reset, the runtime's
        code accepts it and CANN's stream/2 sample relies on it: spec-breadth 5.5)."""
        return self._create_event(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE, "aclrtCreateEvent")

    @acl_call
    def aclrtCreateEventWithFlag(self, flag: int) -> int:
        if flag & ACL_EVENT_EXTERNAL and flag != ACL_EVENT_EXTERNAL:
            raise _invalid(f"flag {flag:#x}: ACL_EVENT_EXTERNAL cannot be combined with other flags")
        if flag & ACL_EVENT_IPC:
            raise _invalid("ACL_EVENT_IPC events are created with aclrtCreateEventExWithFlag")
        if flag == 0 or flag & ~(_LEGACY_FLAGS | ACL_EVENT_EXTERNAL):
            raise _invalid(f"flag {flag:#x} is not a valid combination of ACL_EVENT_* flags")
        return self._create_event(flag, "aclrtCreateEventWithFlag")

    @acl_call
    def aclrtCreateEventExWithFlag(self, flag: int) -> int:
        if flag & ACL_EVENT_EXTERNAL:
            raise _invalid("ACL_EVENT_EXTERNAL events are created with aclrtCreateEventWithFlag, not the Ex call")
        if flag & ACL_EVENT_IPC and flag != ACL_EVENT_IPC:
            raise _invalid(f"flag {flag:#x}: ACL_EVENT_IPC cannot be combined with other flags")
        if flag == 0 or flag & ~(_EX_FLAGS | ACL_EVENT_IPC):
            raise _invalid(f"flag {flag:#x} is not a valid combination of ACL_EVENT_* flags for the Ex call")
        return self._create_event(flag, "aclrtCreateEventExWithFlag")

    @acl_call
    def aclrtDestroyEvent(self, event: int | None) -> None:
        """Does not block; a stream still waiting on a binary event that no pending record will set is released
        with an error."""
        self.ctx.drop_event(self.ctx.event(event).handle)

    @acl_call
    def aclrtRecordEvent(self, event: int | None, stream: int | None) -> None:
        self._record(event, stream, 0, "aclrtRecordEvent")

    @acl_call
    def aclrtRecordEventWithFlag(self, event: int | None, stream: int | None, flag: int) -> None:
        """ACL_EVENT_RECORD_DEFAULT is aclrtRecordEvent; ACL_EVENT_RECORD_EXTERNAL belongs in a capture (see
        `external`: each replay records the event afresh, and its latest record switches to that one at launch)."""
        require(bool(event), "event is NULL")
        require(flag in (0, 1), f"flag {flag:#x} is neither ACL_EVENT_RECORD_DEFAULT nor ACL_EVENT_RECORD_EXTERNAL")
        self._record(event, stream, flag, "aclrtRecordEventWithFlag")

    @acl_call
    def aclrtStreamWaitEvent(self, stream: int | None, event: int | None) -> None:
        self._wait(stream, event, self.ctx.op_wait_timeout, "aclrtStreamWaitEvent")

    @acl_call
    def aclrtStreamWaitEventWithFlag(self, stream: int | None, event: int | None, timeout: int, flag: int) -> None:
        """ACL_EVENT_WAIT_DEFAULT is aclrtStreamWaitEventWithTimeout; ACL_EVENT_WAIT_EXTERNAL (timeout 0) belongs
        in a capture (see `external`: each replay waits for the event's latest record as of its launch)."""
        require(bool(event), "event is NULL")
        require(flag in (0, 1), f"flag {flag:#x} is neither ACL_EVENT_WAIT_DEFAULT nor ACL_EVENT_WAIT_EXTERNAL")
        require(not (flag and timeout), f"ACL_EVENT_WAIT_EXTERNAL takes no timeout, got {timeout}")
        self._wait(stream, event, float(timeout) or None, "aclrtStreamWaitEventWithFlag", flag)

    @acl_call
    def aclrtStreamWaitEventWithTimeout(self, stream: int | None, event: int | None, timeout: int) -> None:
        """`timeout` in seconds, 0 = never time out; a wait that times out fails with ACL_ERROR_RT_WAIT_TIMEOUT."""
        require(timeout >= 0, f"timeout must be >= 0 seconds, got {timeout}")
        self._wait(stream, event, float(timeout) or None, "aclrtStreamWaitEventWithTimeout")

    @acl_call
    def aclrtResetEvent(self, event: int | None, stream: int | None) -> None:
        target, on = self.ctx.event(event), self.ctx.stream(stream)
        if target.flags & ACL_EVENT_IPC:
            raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{target} is an IPC event, which cannot be reset")
        self._same_device(target, on)
        if not target.legacy:
            raise _invalid(f"{target} is an aclrtCreateEventExWithFlag event, which cannot be reset")
        capture_events.refuse_default_stream(self.ctx, on, "aclrtResetEvent")
        if not capture_events.reset_in_capture(self.ctx, target, on, "aclrtResetEvent"):
            self.ctx.issue(on, ResetTask("aclrtResetEvent", target))

    @acl_call
    def aclrtQueryEventStatus(self, event: int | None) -> aclrtEventRecordedStatus:
        if self._queryable(event, "aclrtQueryEventStatus").completed:
            return aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_COMPLETE
        return aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_NOT_READY

    @acl_call
    def aclrtQueryEvent(self, event: int | None) -> aclrtEventStatus:
        """Deprecated in CANN; not for aclrtCreateEventExWithFlag events."""
        target = self._queryable(event, "aclrtQueryEvent", legacy_only=True)
        return (
            aclrtEventStatus.ACL_EVENT_STATUS_COMPLETE
            if target.completed
            else aclrtEventStatus.ACL_EVENT_STATUS_NOT_READY
        )

    @acl_call
    def aclrtQueryEventWaitStatus(self, event: int | None) -> aclrtEventWaitStatus:
        """COMPLETE when a wait on the event would go through now (the device flag is set)."""
        target = self._queryable(event, "aclrtQueryEventWaitStatus", legacy_only=True)
        if target.flag:
            return aclrtEventWaitStatus.ACL_EVENT_WAIT_STATUS_COMPLETE
        return aclrtEventWaitStatus.ACL_EVENT_WAIT_STATUS_NOT_READY

    @acl_call
    async def aclrtSynchronizeEvent(self, event: int | None) -> None:
        await self._synchronize(event, None, "aclrtSynchronizeEvent")

    @acl_call
    async def aclrtSynchronizeEventWithTimeout(self, event: int | None, timeout: int) -> None:
        """`timeout` in ms, -1 to wait forever; ACL_ERROR_RT_EVENT_SYNC_TIMEOUT when it runs out."""
        require(timeout == -1 or timeout > 0, f"timeout must be -1 or > 0 ms, got {timeout}")
        await self._synchronize(event, None if timeout == -1 else timeout / 1000, "aclrtSynchronizeEventWithTimeout")

    @acl_call
    def aclrtEventElapsedTime(self, start: int | None, end: int | None) -> float:
        """Milliseconds between the completed records of `start` and `end`."""
        first = self._queryable(start, "aclrtEventElapsedTime")
        last = self._queryable(end, "aclrtEventElapsedTime")
        for which, ev in (("start", first), ("end", last)):
            if not ev.timed:
                raise _invalid(f"{which} {ev} was created without ACL_EVENT_TIME_LINE, so it has no timestamp")
            if ev.latest is None:  # the runtime's Event::ElapsedTime: RT_ERROR_EVENT_RECORDER_NULL
                raise AclError(ACL_ERROR_RT_INTERNAL_ERROR, f"{which} {ev} was never recorded, so it has no timestamp")
        for which, ev in (("start", first), ("end", last)):
            assert ev.latest is not None
            if not ev.latest.done:  # no timestamp yet: RT_ERROR_EVENT_TIMESTAMP_INVALID
                raise AclError(
                    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, f"the record of {which} {ev} has not run yet: no timestamp"
                )
        assert first.latest is not None and last.latest is not None
        elapsed = (last.latest.timestamp - first.latest.timestamp) * 1000.0
        if elapsed < 0:
            raise AclError(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL, f"end {last} was recorded before start {first}")
        return elapsed

    @acl_call
    def aclrtEventGetTimestamp(self, event: int | None) -> int:
        """Microseconds on the device clock (zero when the device was made) when the latest record ran."""
        target = self._queryable(event, "aclrtEventGetTimestamp")
        if target.flags & ACL_EVENT_IPC:
            raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{target} is an IPC event, which has no timestamp")
        if not target.timed:
            raise _invalid(f"{target} was created without ACL_EVENT_TIME_LINE, so it has no timestamp")
        if target.latest is None:
            raise AclError(ACL_ERROR_RT_INTERNAL_ERROR, f"{target} was never recorded, so it has no timestamp")
        if not target.latest.done:
            raise AclError(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, f"the latest record of {target} has not run yet")
        return int((target.latest.timestamp - target.device.started) * 1e6)

    def _record(self, event: int | None, stream: int | None, flag: int, api: str) -> None:
        """The runtime's checks in its order (ae EventRecord, then ai): the handles, the device, an IPC event in a
        capture, an EXTERNAL record's event kind, the record-flag lock (fixed even if the call fails later)."""
        target, on = self.ctx.event(event), self.ctx.stream(stream)
        self._same_device(target, on)
        self._not_ipc_in_capture(target, on, api)
        if flag == ACL_EVENT_RECORD_EXTERNAL:
            self._external_kind(target, api)
        self._fix_flag(target, "record_kind", flag, api)
        self._model_stream_event(target, on, api)
        if flag == ACL_EVENT_RECORD_EXTERNAL:
            self._external(target, on, api, ExternalRecordTask(api, target))
            return
        capture_events.refuse_default_stream(self.ctx, on, api)
        if on in self.ctx.bound:  # persisted into a Build model: its replays are no host-visible records
            self.ctx.issue(on, RecordTask(api, target, None))
        elif not capture_events.record_in_capture(self.ctx, target, on, api):
            previous = target.latest
            try:
                self.ctx.issue(on, RecordTask(api, target, target.issue_record(on)))
            except AclError:  # refused (e.g. by a task update): the event's latest record is the one it had
                target.latest = previous
                raise

    @staticmethod
    def _external_kind(event: Event, api: str) -> None:
        """An *_EXTERNAL record or wait takes an aclrtCreateEventExWithFlag event of exactly ACL_EVENT_SYNC."""
        if event.legacy or event.flags != ACL_EVENT_SYNC:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                f"{api} with an *_EXTERNAL flag needs an event from aclrtCreateEventExWithFlag(ACL_EVENT_SYNC) "
                f"(that flag alone); {event} is not one",
            )

    def _external(self, event: Event, stream: Stream, api: str, task: ExternalTask) -> None:
        """The rest of an *_EXTERNAL record's or wait's checks (modelri spec 6), then the task joins the model."""
        capture = self.ctx.capturing.get(stream)
        if capture is not None and capture.model.kind is ModelKind.SUB:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                f"{api} with an *_EXTERNAL flag is not supported in a sub ACL graph ({capture})",
            )
        if capture is None:
            raise AclError(
                ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                f"{api} with an *_EXTERNAL flag records or waits across a model's boundary: {stream} is not capturing "
                "(outside a capture use the DEFAULT flag)",
            )
        for lane in capture.lanes.values():
            for earlier in lane.tasks:
                if isinstance(earlier, ExternalRecordTask | ExternalWaitTask) and earlier.event is event:
                    raise _invalid(
                        f"{event} already has {earlier.describe()} in {capture}: an event takes one EXTERNAL record "
                        "or one EXTERNAL wait per model (use another event)"
                    )
        self.ctx.issue(stream, task)

    @staticmethod
    def _fix_flag(event: Event, which: str, flag: int, api: str) -> None:
        """The first record (wait) fixes the event's record (wait) flag for its lifetime (spec-breadth 5.2.4)."""
        fixed = getattr(event, which)
        if fixed is None:
            setattr(event, which, flag)
        elif fixed != flag:
            kind = "recorded" if which == "record_kind" else "waited on"
            raise _invalid(
                f"{event} was first {kind} with flag {fixed}, so {api} cannot use flag {flag} on it "
                "(one flag per event)"
            )

    def _create_event(self, flags: int, api: str) -> int:
        device = self.ctx.device()
        self.ctx.check_handles()
        event = Event(self.machine.new_handle(), device, flags, api)
        if event.legacy:
            device.events.take(self.ctx.quota)
        self.ctx.events[event.handle] = event
        return event.handle

    def _wait(self, stream: int | None, event: int | None, timeout: float | None, api: str, flag: int = 0) -> None:
        """The runtime's checks in its order (ae StreamWaitEvent, then ai): the handles, the device, an IPC event in
        a capture, an event with no wait task (207000, in a capture too: modelri spec 8.8), an EXTERNAL wait's
        event kind, the wait-flag lock."""
        on, target = self.ctx.stream(stream), self.ctx.event(event)
        self._same_device(target, on)
        self._not_ipc_in_capture(target, on, api)
        if not target.flags & (ACL_EVENT_SYNC | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC):
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                f"{target} was created without ACL_EVENT_SYNC, so it has no wait task: streams cannot wait on it",
            )
        if flag:
            self._external_kind(target, api)
        self._fix_flag(target, "wait_kind", flag, api)
        self._model_stream_event(target, on, api)
        if flag:
            self._external(target, on, api, ExternalWaitTask(api, target))
            return
        capture_events.refuse_default_stream(self.ctx, on, api)
        if capture_events.wait_in_capture(self.ctx, on, target, timeout, api):
            return
        if target.binary:
            self.ctx.issue(on, WaitTask(api, target, None, timeout))
            return
        mark = target.latest
        if mark is None or mark.done or mark.stream is on:
            return  # snapshot semantics: nothing to wait for
        self.ctx.issue(on, WaitTask(api, target, mark, timeout))

    def _queryable(self, event: int | None, api: str, legacy_only: bool = False) -> Event:
        target = self.ctx.event(event)
        if target.external:
            raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{api} is not supported on an ACL_EVENT_EXTERNAL event")
        capture_events.refuse_capture_event(self.ctx, target, api)
        if legacy_only and not target.legacy:
            raise _invalid(f"{api} is not supported on aclrtCreateEventExWithFlag events")
        return target

    async def _synchronize(self, event: int | None, timeout: float | None, api: str) -> None:
        mark = self._queryable(event, api).latest
        if mark is None or mark.done:
            return
        try:
            await asyncio.wait_for(asyncio.shield(mark.future), timeout)
        except TimeoutError:
            raise AclError(
                ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, f"the record of event {event:#x} did not run within {timeout:g} s"
            ) from None

    def _model_stream_event(self, event: Event, stream: Stream, api: str) -> None:
        """A stream bound to a Build model records and waits only on events of aclrtCreateEventWithFlag (modelri
        spec 2): an Ex event or one of aclrtCreateEvent (the runtime's RT_EVENT_DEFAULT flags) -> 207000."""
        lane = self.ctx.bound.get(stream)
        if lane is not None and (not event.legacy or event.api == "aclrtCreateEvent"):
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                f"{api}: {stream} is bound to {lane.model}, whose streams cannot use {event}; create the event with "
                "aclrtCreateEventWithFlag(ACL_EVENT_SYNC)",
            )

    def _not_ipc_in_capture(self, event: Event, stream: Stream, api: str) -> None:
        if event.flags & ACL_EVENT_IPC and stream in self.ctx.capturing:
            raise AclError(
                ACL_ERROR_RT_FEATURE_NOT_SUPPORT, f"{api}: {event} is an IPC event, which a capture cannot take"
            )

    @staticmethod
    def _same_device(event: Event, stream: Stream) -> None:
        """An event and the stream that records or waits on it share a device (an IPC event may be on another,
        reached through peer access, as the runtime's ipcevent sample does)."""
        if event.device is not stream.device and not event.flags & ACL_EVENT_IPC:
            raise AclError(
                ACL_ERROR_RT_STREAM_CONTEXT,
                f"{event} belongs to device {event.device.index} but {stream} to device {stream.device.index}",
            )
