"""Markers from the program into the trace (`server.npu.core.markers`): vnpuMarkerMark, vnpuMarkerRangeStart,
vnpuMarkerRangeEnd -- what the C toolkit's mstx and msproftx functions send.

They never fail the program: the mstx functions return nothing, and a marker is pipelined, so an error would
surface at an unrelated later call. A marker of a thread with no current device, and the end of a range that
is not open (ended twice, or never started), are therefore dropped; the client checks what can be checked in
the program (a NULL message, an unknown domain) before sending.
"""

from __future__ import annotations

from proto.errors import AclError
from server.npu.area import Area, acl_call
from server.npu.core import markers
from server.npu.core.caller import caller_thread
from server.npu.core.trace import Where


class MarkerCalls(Area):
    @acl_call
    def vnpuMarkerMark(self, message: str, domain: str | None, stream: int | None) -> None:
        where = self._marker_where()
        tracer = self.machine.tracer
        if where is None or not tracer.enabled:
            return
        now = tracer.clock()
        note = markers.detail(domain, self._marker_stream(stream))
        tracer.ring_of(self.ctx).append((markers.MarkTask, markers.bounded(message), where, now, now, None, None, note))

    @acl_call
    def vnpuMarkerRangeStart(self, range_id: int, message: str, domain: str | None, stream: int | None) -> None:
        """A range's start; the oldest open ranges past MAX_OPEN_RANGES, and one started at the memory quota, are
        dropped (a marker never fails)."""
        where = self._marker_where()
        if where is None:
            return
        name, note = markers.bounded(message), markers.detail(domain, self._marker_stream(stream))
        ranges = self.ctx.marker_ranges
        self._drop_range(range_id)  # started again: the new one counts
        while len(ranges) >= markers.MAX_OPEN_RANGES:
            self._drop_range(next(iter(ranges)))
        try:
            refund = self.ctx.memory.hold(markers.RANGE_CHARGE + len(name) + len(note or ""))
        except AclError:
            return
        ranges[range_id] = markers.OpenRange(name, note, where, self.machine.tracer.clock(), refund)

    @acl_call
    def vnpuMarkerRangeEnd(self, range_id: int) -> None:
        opened = self.ctx.marker_ranges.pop(range_id, None)
        tracer = self.machine.tracer
        if opened is None:
            return
        opened.refund()
        if not tracer.enabled:
            return
        tracer.ring_of(self.ctx).append(
            (markers.RangeTask, opened.name, opened.where, opened.start, tracer.clock(), None, None, opened.detail)
        )

    def _drop_range(self, range_id: int) -> None:
        dropped = self.ctx.marker_ranges.pop(range_id, None)
        if dropped is not None:
            dropped.refund()

    def _marker_where(self) -> Where | None:
        thread = caller_thread()
        current = self.ctx.current.get(thread)
        if current is None:
            return None
        return Where(current.device.index, markers.lane(thread[1]), None, self.ctx)

    def _marker_stream(self, handle: int | None) -> str | None:
        if not handle:
            return None
        stream = self.ctx.streams.get(handle) or self.ctx.default_streams.get(handle)
        return repr(stream) if stream is not None else f"stream {handle:#x} (not a stream)"
