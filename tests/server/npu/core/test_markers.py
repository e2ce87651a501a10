"""Markers in the trace: marks are instants and ranges slices on the calling thread's lane, with their domain and
stream; a range not open ends nothing, and the Chrome export writes marks as instants."""

from __future__ import annotations

import pytest

from proto.errors import ACL_ERROR_RT_OVER_LIMIT, AclError
from server.npu import Machine, Runtime
from server.npu.core import markers
from server.npu.core.trace import chrome
from server.npu.model.model import MAX_NAME_BYTES


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


# --- client strings are bounded and charged (issue 39, 8) --------------------------------------------------------

BIG = "x" * (4 << 20)


async def test_a_huge_marker_message_is_kept_cut(rt: Runtime, machine: Machine) -> None:
    rt.vnpuMarkerMark(BIG, "d" * 100_000, None)
    (mark,) = [e for e in machine.tracer.events() if e.kind == "mark"]
    assert len(mark.name) <= markers.MAX_TEXT and mark.name.startswith("xxx") and "4194304 characters" in mark.name
    assert mark.detail is not None and len(mark.detail) <= markers.MAX_TEXT + 10


async def test_open_ranges_are_bounded_and_charged(rt: Runtime, machine: Machine) -> None:
    count = markers.MAX_OPEN_RANGES + 500
    for n in range(count):
        rt.vnpuMarkerRangeStart(n, BIG if n < 8 else f"range {n}", None, None)
    assert len(rt.ctx.marker_ranges) == markers.MAX_OPEN_RANGES  # the oldest that never ended are dropped
    charged = rt.ctx.memory.used
    assert 0 < charged <= markers.MAX_OPEN_RANGES * (markers.RANGE_CHARGE + markers.MAX_TEXT)
    rt.vnpuMarkerRangeEnd(count - 1)  # the newest still ends, and gives its charge back
    assert [e.name for e in machine.tracer.events() if e.kind == "range"] == [f"range {count - 1}"]
    assert rt.ctx.memory.used < charged
    rt.vnpuMarkerRangeEnd(0)  # dropped long ago: ends nothing
    await rt.release_all()
    assert rt.ctx.memory.used == 0


async def test_a_model_name_is_bounded(rt: Runtime) -> None:
    stream = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(stream, 0)
    model = rt.aclmdlRICaptureEnd(stream)
    rt.aclmdlRISetName(model, "ok")
    with pytest.raises(AclError) as caught:
        rt.aclmdlRISetName(model, BIG)
    assert caught.value.code == ACL_ERROR_RT_OVER_LIMIT and f"{MAX_NAME_BYTES} bytes" in caught.value.message
    assert rt.aclmdlRIGetName(model, 16) == "ok"  # the model keeps its name
    longest = "é" * (MAX_NAME_BYTES // 2)
    rt.aclmdlRISetName(model, longest)
    assert rt.aclmdlRIGetName(model, MAX_NAME_BYTES + 1) == longest
    with pytest.raises(AclError):
        rt.aclmdlRISetName(model, longest + "a")  # counted in UTF-8 bytes
