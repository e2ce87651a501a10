"""Property: random edits of a random captured model -- SetParams on kernels (new scalars), Disable, task-group
updates -- applied with aclmdlRIUpdate and replayed, leave device memory exactly as a freshly captured model of
the edited program does, and as numpy computes it in float64."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from proto.aclnn import KernelDesc, aclCreateScalar
from proto.constants import ACL_MEMCPY_HOST_TO_DEVICE, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, aclDataType
from server.npu import Machine, Runtime
from tests.server.npu.devicekit import Vec

VECS, N = 4, 8
SCALARS = st.sampled_from([-1.5, -0.5, 0.25, 1.0, 1.25, 2.0])
kernel_op = st.tuples(
    st.sampled_from(["adds", "muls"]), st.integers(0, VECS - 1), st.integers(0, VECS - 1), SCALARS, st.booleans()
)  # fmt: skip  (kind, dst, src, scalar, in a task group)
edit = st.one_of(st.just(None), st.just("disable"), SCALARS)
Op = tuple[str, int, int, float, bool]


def groups_of(ops: list[Op]) -> list[list[int]]:
    """The indices of each run of consecutive grouped kernels (one task group each)."""
    runs: list[list[int]] = []
    for i, op in enumerate(ops):
        if op[4]:
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
    return runs


def issue(rt: Runtime, vecs: list[Vec], ops: list[Op], stream: int, grouped: bool) -> list[int]:
    """Launch the ops on `stream`, the runs of grouped ones in task groups when `grouped`; the group handles."""
    handles = []
    for i, (kind, dst, src, scalar, in_group) in enumerate(ops):
        opens = grouped and in_group and (i == 0 or not ops[i - 1][4])
        if opens:
            rt.aclmdlRICaptureTaskGrpBegin(stream)
        getattr(vecs[dst], kind)(vecs[src], scalar, stream)
        if grouped and in_group and (i == len(ops) - 1 or not ops[i + 1][4]):
            handles.append(rt.aclmdlRICaptureTaskGrpEnd(stream))
    return handles


def reference(initial: list[np.ndarray], ops: list[Op]) -> list[np.ndarray]:
    v = [x.astype(np.float64) for x in initial]
    for kind, dst, src, scalar, _ in ops:
        v[dst] = v[src] + scalar if kind == "adds" else v[src] * scalar
    return v


def final_program(ops: list[Op], edits: list[Any], regroup: dict[int, float]) -> list[Op]:
    out = []
    for i, (op, change) in enumerate(zip(ops, edits, strict=True)):
        if change == "disable":
            continue
        scalar = regroup.get(i, op[3] if change is None else change)
        out.append((op[0], op[1], op[2], scalar, False))
    return out


async def run(ops: list[Op], edits: list[Any], regroup_scalars: list[float], data: st.DataObject) -> None:
    machine = Machine(devices=1, memory_bytes=8 << 20)
    rt = Runtime(machine)
    rt.aclInit()
    rt.aclrtSetDevice(0)
    try:
        s, up = rt.aclrtCreateStream(), rt.aclrtCreateStream()
        rng = np.random.default_rng(len(ops))
        initial = [rng.standard_normal(N).astype(np.float32) for _ in range(VECS)]
        vecs = [Vec(rt, x) for x in initial]

        async def replay(model: int) -> list[np.ndarray]:
            for vec, values in zip(vecs, initial, strict=True):
                rt.aclrtMemcpy(vec.ptr, N * 4, values, N * 4, ACL_MEMCPY_HOST_TO_DEVICE)
            rt.aclmdlRIExecuteAsync(model, s)
            await rt.aclrtSynchronizeStream(s)
            return [vec.read() for vec in vecs]

        rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        handles = issue(rt, vecs, ops, s, grouped=True)
        model = rt.aclmdlRICaptureEnd(s)
        await replay(model)  # a replay before the edits
        (lane,), _ = rt.aclmdlRIGetStreams(model, True, 1)
        tasks, count = rt.aclmdlRIGetTasksByStream(lane, True, len(ops) + 1)
        assert count == len(ops)
        for task, change in zip(tasks, edits, strict=True):
            if change == "disable":
                rt.aclmdlRITaskDisable(task)
            elif change is not None:
                params = rt.aclmdlRITaskGetParams(task)
                params["taskGrp"] = 0
                desc = KernelDesc.from_wire(params["kernelTaskParams"]["kernel"])
                scalar = aclCreateScalar(change, aclDataType.ACL_FLOAT)
                params["kernelTaskParams"]["kernel"] = KernelDesc(desc.op, {**desc.args, "other": scalar}).to_wire()
                rt.aclmdlRITaskSetParams(task, params)
        rt.aclmdlRIUpdate(model)
        assert rt.aclmdlRIGetTasksByStream(lane, False, 0)[1] == max(1, sum(e != "disable" for e in edits))
        regroup: dict[int, float] = {}
        scalars = iter(regroup_scalars)
        for handle, run_ in zip(handles, groups_of(ops), strict=True):
            kept = [i for i in run_ if edits[i] != "disable"]
            if not kept or not data.draw(st.booleans()):
                continue
            rt.aclmdlRICaptureTaskUpdateBegin(up, handle)
            for i in kept:
                regroup[i] = next(scalars)
                kind, dst, src = ops[i][:3]
                getattr(vecs[dst], kind)(vecs[src], regroup[i], up)
            rt.aclmdlRICaptureTaskUpdateEnd(up)
        await rt.aclrtSynchronizeStream(up)
        edited = await replay(model)

        program = final_program(ops, edits, regroup)
        rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        issue(rt, vecs, program, s, grouped=False)
        fresh = await replay(rt.aclmdlRICaptureEnd(s))
        for got, want, exact in zip(edited, fresh, reference(initial, program), strict=True):
            np.testing.assert_array_equal(got, want)
            np.testing.assert_allclose(got, exact, rtol=1e-5, atol=1e-5)
    finally:
        await rt.release_all()
        machine.close()


@settings(max_examples=40, deadline=None)
@given(data=st.data(), ops=st.lists(kernel_op, min_size=1, max_size=8))
def test_edited_model_equals_a_fresh_capture_of_the_edited_program(data: st.DataObject, ops: list[Op]) -> None:
    edits = data.draw(st.lists(edit, min_size=len(ops), max_size=len(ops)))
    regroup = data.draw(st.lists(SCALARS, min_size=len(ops), max_size=len(ops)))
    asyncio.run(run(ops, edits, regroup, data))
