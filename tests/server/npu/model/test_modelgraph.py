"""Model graphs of big models: runs of equal tasks fold into one node (DOT and SVG), what has something of its own
to show (a task group's kernel, an edited task, an EXTERNAL wait, an event edge's end) keeps its node, and every
SVG label fits its box, wrapped, with its handles whole."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np

from proto.constants import ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
from server.npu import Runtime
from server.npu.model import graph as modelgraph
from tests.server.npu.devicekit import Vec
from tests.server.npu.model.test_model_edit import kernel_params

N = 8
RNG = np.random.default_rng(18)
SVG = "{http://www.w3.org/2000/svg}"
ADDS = "aclnnAdds kernel Adds"


def capture_adds(rt: Runtime, runs: int) -> tuple[int, int, Vec, np.ndarray]:
    """x += 1 `runs` times, then a task group of 3 more, then x *= 2 twice: (stream, model, x, x's first value)."""
    s = rt.aclrtCreateStream()
    x0 = RNG.standard_normal(N).astype(np.float32)
    x = Vec(rt, x0)
    rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    for _ in range(runs):
        x.adds(x, 1.0, s)
    rt.aclmdlRICaptureTaskGrpBegin(s)
    for _ in range(3):
        x.adds(x, 1.0, s)
    rt.aclmdlRICaptureTaskGrpEnd(s)
    for _ in range(2):
        x.muls(x, 2.0, s)
    return s, rt.aclmdlRICaptureEnd(s), x, x0


def labels(dot: str) -> list[str]:
    return re.findall(r'label="([^"]*)"', dot)


def svg_boxes(picture: str) -> list[tuple[float, list[str], str]]:
    """Each box of the SVG: its width, its text lines, its full text (the tooltip)."""
    boxes = []
    for g in ET.fromstring(picture).iter(f"{SVG}g"):
        rect, title = g.find(f"{SVG}rect"), g.find(f"{SVG}title")
        assert rect is not None and title is not None and title.text is not None
        boxes.append((float(rect.get("width", 0)), [t.text or "" for t in g.findall(f"{SVG}text")], title.text))
    return boxes


async def test_a_run_of_200_equal_kernels_is_one_node_and_the_model_still_computes(rt: Runtime) -> None:
    s, model, x, x0 = capture_adds(rt, 200)
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_allclose(x.read(), (x0.astype(np.float64) + 203) * 4, rtol=1e-6)
    dot = modelgraph.dot(rt.ctx.models[model])
    found = labels(dot)
    assert f"#0–#199 {ADDS} ×200" in found
    assert found.count(ADDS) == 3  # the task group's kernels, one node each
    assert sum("aclnnMuls" in label for label in found) == 2  # a run of 2 is not folded
    assert not any("×" in label for label in found if label != f"#0–#199 {ADDS} ×200")
    picture = modelgraph.svg(rt.ctx.models[model])
    texts = [" ".join(lines) for _, lines, _ in svg_boxes(picture)]
    assert texts.count(f"#0–#199 {ADDS} ×200") == 1 and texts.count(ADDS) == 3
    assert int(ET.fromstring(picture).get("height", 0)) < 600  # 7 boxes, not 205


async def test_an_edited_task_splits_its_run(rt: Runtime) -> None:
    s, model, x, x0 = capture_adds(rt, 9)
    (lane,), _ = rt.aclmdlRIGetStreams(model, True, 1)
    tasks, _ = rt.aclmdlRIGetTasksByStream(lane, True, 16)
    rt.aclmdlRITaskSetParams(tasks[4], kernel_params(rt, tasks[4], 10.0))
    rt.aclmdlRIUpdate(model)
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_allclose(x.read(), (x0.astype(np.float64) + 8 + 10 + 3) * 4, rtol=1e-6)
    found = labels(modelgraph.dot(rt.ctx.models[model]))
    assert f"#0–#3 {ADDS} ×4" in found and f"#4 edited: {ADDS}" in found and f"#5–#8 {ADDS} ×4" in found


async def test_the_ends_of_event_edges_and_external_waits_keep_their_nodes(rt: Runtime) -> None:
    s1, s2 = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    x, y = (Vec(rt, RNG.standard_normal(N).astype(np.float32)) for _ in range(2))
    events = [rt.aclrtCreateEventExWithFlag(1) for _ in range(3)]
    external = rt.aclrtCreateEventWithFlag(0x20)
    rt.aclmdlRICaptureBegin(s1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    for event in events:  # three records of s1, waited on by s2: three equal-looking tasks on each side
        rt.aclrtRecordEvent(event, s1)
        rt.aclrtStreamWaitEvent(s2, event)
    for _ in range(3):
        rt.aclrtStreamWaitEvent(s1, external)
    for _ in range(4):
        await rt.aclrtMemcpyAsync(y.ptr, N * 4, x.ptr, N * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s2)
    join = rt.aclrtCreateEventExWithFlag(1)
    rt.aclrtRecordEvent(join, s2)
    rt.aclrtStreamWaitEvent(s1, join)
    model = rt.ctx.models[rt.aclmdlRICaptureEnd(s1)]
    dot = modelgraph.dot(model)
    assert dot.count('label="event"') == 4  # every edge has both its ends
    found = labels(dot)
    assert sum(label.startswith("#") and "wait (EXTERNAL)" in label for label in found) == 3
    assert sum("×" in label for label in found) == 1 and any("aclrtMemcpyAsync" in f and "×4" in f for f in found)
    assert len(ET.fromstring(modelgraph.svg(model)).findall(f".//{SVG}line")) == 4


async def test_svg_labels_fit_their_boxes_and_keep_handles_whole(rt: Runtime) -> None:
    s1, s2 = rt.aclrtCreateStream(), rt.aclrtCreateStream()
    x, y = (Vec(rt, RNG.standard_normal(N).astype(np.float32)) for _ in range(2))
    external = rt.aclrtCreateEventWithFlag(0x20)
    fork = rt.aclrtCreateEventExWithFlag(1)
    rt.aclmdlRICaptureBegin(s1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    rt.aclrtRecordEvent(fork, s1)
    rt.aclrtStreamWaitEvent(s2, fork)
    await rt.aclrtMemcpyAsync(y.ptr, N * 4, x.ptr, N * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s2)
    rt.aclrtStreamWaitEvent(s1, external)
    join = rt.aclrtCreateEventExWithFlag(1)
    rt.aclrtRecordEvent(join, s2)
    rt.aclrtStreamWaitEvent(s1, join)
    model = rt.ctx.models[rt.aclmdlRICaptureEnd(s1)]
    boxes = svg_boxes(modelgraph.svg(model))
    assert len(boxes) == 6 and any(len(lines) > 1 for _, lines, _ in boxes)  # the long ones wrapped
    for width, lines, full in boxes:
        assert " ".join(lines) == full  # nothing cut
        assert all(len(line) * modelgraph.CHAR_W + 2 * modelgraph.PAD <= width for line in lines), lines
        for handle in re.findall(r"0x[0-9a-f]+", full):
            assert any(handle in line for line in lines), (handle, lines)
    cut = modelgraph.wrap("a " + "b" * 60, 100)  # only a word longer than a line is cut (12 characters fit)
    assert max(map(len, cut)) == 12 and "".join(cut) == "a " + "b" * 60
