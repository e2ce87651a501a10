"""Markers in the trace: marks are instants and ranges slices on the calling thread's lane, with their domain and
stream; a range not open ends nothing, and the Chrome export writes marks as instants."""

from __future__ import annotations

from server.npu import Machine, Runtime
from server.npu.core.trace import chrome


async def test_marks_and_ranges_land_on_the_thread_lane(rt: Runtime, machine: Machine) -> None:
    rt.aclrtSetDevice(0)
    s = rt.aclrtCreateStream()
    rt.vnpuMarkerRangeStart(7, "outer", None, None)
    rt.vnpuMarkerMark("here", "dom", s)
    rt.vnpuMarkerRangeEnd(7)
    rt.vnpuMarkerRangeEnd(7)  # ended twice: dropped
    rt.vnpuMarkerRangeEnd(99)  # never started: dropped
    got = [e for e in machine.tracer.events() if e.kind in ("mark", "range")]
    assert [(e.kind, e.name) for e in got] == [("mark", "here"), ("range", "outer")]
    mark, outer = got
    assert mark.start == mark.end and outer.start <= mark.start <= outer.end
    assert mark.where.lane.startswith("thread ") and mark.where.lane == outer.where.lane
    assert mark.detail == f"domain dom, {rt.ctx.streams[s]!r}" and outer.detail is None
    exported = [e for e in chrome(got, machine.tracer.epoch) if e["ph"] != "M"]
    assert [(e["name"], e["ph"]) for e in exported] == [("here", "i"), ("outer", "X")]
