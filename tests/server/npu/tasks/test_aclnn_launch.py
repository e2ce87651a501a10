"""aclnn phase 2 on the device: kernels over device memory, re-validation, workspace, memory checks."""

from __future__ import annotations

import numpy as np
import pytest

from proto.aclnn import (
    aclCreateScalar,
    aclCreateTensor,
    aclnnAddGetWorkspaceSize,
    aclnnDivGetWorkspaceSize,
    aclnnMatmulGetWorkspaceSize,
    aclnnMulGetWorkspaceSize,
    aclnnSoftmaxGetWorkspaceSize,
    aclSetAclOpExecutorRepeatable,
)
from proto.constants import ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, aclDataType, aclFormat
from proto.errors import ACL_ERROR_RT_DEVICE_MEM_ERROR, ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, AclError
from server.npu import Machine, Runtime
from server.npu.model.state import ModelKind
from tests.server.npu.devicekit import device_tensor, download, tensor_at, upload_into

F32 = aclDataType.ACL_FLOAT
RNG = np.random.default_rng(11)


async def test_add_matches_float64_reference(rt: Runtime) -> None:
    a, b = RNG.standard_normal((4, 2)).astype(np.float32), RNG.standard_normal((4, 2)).astype(np.float32)
    self_t, _ = device_tensor(rt, a)
    other_t, _ = device_tensor(rt, b)
    out_t, out = device_tensor(rt, np.zeros((4, 2), np.float32))
    alpha = aclCreateScalar(1.1, F32)
    ws, executor = aclnnAddGetWorkspaceSize(self_t, other_t, alpha, out_t)
    assert ws == 0
    s = rt.aclrtCreateStream()
    rt.aclnnAdd(0, ws, executor, s)
    await rt.aclrtSynchronizeStream(s)
    expected = a.astype(np.float64) + np.float64(np.float32(1.1)) * b.astype(np.float64)
    np.testing.assert_allclose(download(rt, out, (4, 2), np.float32), expected, rtol=2e-6, atol=1e-6)


async def test_matmul_and_softmax_use_their_workspace(rt: Runtime) -> None:
    a, b = RNG.standard_normal((3, 5, 7)).astype(np.float32), RNG.standard_normal((7, 4)).astype(np.float32)
    at, _ = device_tensor(rt, a)
    bt, _ = device_tensor(rt, b)
    ot, out = device_tensor(rt, np.zeros((3, 5, 4), np.float32))
    ws, ex = aclnnMatmulGetWorkspaceSize(at, bt, ot, 0)
    assert ws > 0
    with pytest.raises(AclError) as info:
        rt.aclnnMatmul(0, 0, ex, 0)  # no workspace
    assert info.value.code == ACLNN_ERR_PARAM_INVALID and "workspace" in info.value.message
    assert info.value.api == "aclnnMatmul"
    ws_ptr = rt.aclrtMalloc(ws, 0)
    _, ex = aclnnMatmulGetWorkspaceSize(at, bt, ot, 0)
    rt.aclnnMatmul(ws_ptr, ws, ex, 0)
    sm_out_t, sm_out = device_tensor(rt, np.zeros((3, 5, 4), np.float32))
    ws2, ex2 = aclnnSoftmaxGetWorkspaceSize(ot, -1, sm_out_t)
    assert ws2 > 0
    ws2_ptr = rt.aclrtMalloc(ws2, 0)
    rt.aclnnSoftmax(ws2_ptr, ws2, ex2, 0)
    await rt.aclrtSynchronizeStream(0)
    mm = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(download(rt, out, (3, 5, 4), np.float32), mm, rtol=1e-5, atol=1e-5)
    e = np.exp(mm - mm.max(-1, keepdims=True))
    np.testing.assert_allclose(download(rt, sm_out, (3, 5, 4), np.float32), e / e.sum(-1, keepdims=True), atol=1e-5)


async def test_strided_view_with_offset_on_device(rt: Runtime) -> None:
    base = RNG.standard_normal((6, 8)).astype(np.float32)
    _, ptr = device_tensor(rt, base)
    # the transpose of rows 1..4, columns 2..7 step 2 (a 3x4 view): strides (2, 8), offset 1*8+2
    view = aclCreateTensor([3, 4], F32, [2, 8], 10, aclFormat.ACL_FORMAT_ND, [6, 8], ptr)
    ot, out = device_tensor(rt, np.zeros((3, 4), np.float32))
    _, ex = aclnnMulGetWorkspaceSize(view, view, ot)
    rt.aclnnMul(0, 0, ex, 0)
    await rt.aclrtSynchronizeStream(0)
    v = base[1:5, 2:8:2].T.astype(np.float64)
    np.testing.assert_allclose(download(rt, out, (3, 4), np.float32), v * v, rtol=2e-6)


async def test_phase2_refuses_what_phase1_would_not_see(rt: Runtime) -> None:
    small = rt.aclrtMalloc(16, 0)  # room for 4 floats, the tensor claims 8
    big = tensor_at(small, (8,), F32)
    ot, _ = device_tensor(rt, np.zeros(8, np.float32))
    _, ex = aclnnMulGetWorkspaceSize(big, big, ot)
    with pytest.raises(AclError) as info:
        rt.aclnnMul(0, 0, ex, 0)
    assert info.value.code == ACLNN_ERR_PARAM_INVALID and "past its end" in info.value.message
    freed = rt.aclrtMalloc(32, 0)
    rt.aclrtFree(freed)
    _, ex = aclnnMulGetWorkspaceSize(tensor_at(freed, (8,), F32), ot, ot)
    with pytest.raises(AclError) as info:
        rt.aclnnMul(0, 0, ex, 0)
    assert info.value.code == ACLNN_ERR_PARAM_INVALID and "freed" in info.value.message
    with pytest.raises(AclError) as info:
        rt.aclnnMul(0, 0, None, 0)
    assert info.value.code == ACLNN_ERR_PARAM_NULLPTR


async def test_executor_is_single_use_unless_repeatable(rt: Runtime) -> None:
    x, _ = device_tensor(rt, np.ones(4, np.float32))
    o, out = device_tensor(rt, np.zeros(4, np.float32))
    _, ex = aclnnMulGetWorkspaceSize(x, x, o)
    rt.aclnnMul(0, 0, ex, 0)
    with pytest.raises(AclError) as info:
        rt.aclnnMul(0, 0, ex, 0)
    assert info.value.code == ACLNN_ERR_PARAM_INVALID
    with pytest.raises(AclError) as info:
        rt.aclnnAdd(0, 0, ex, 0)  # an executor of another operator
    assert info.value.code == ACLNN_ERR_PARAM_INVALID
    _, rep = aclnnMulGetWorkspaceSize(x, x, o)
    aclSetAclOpExecutorRepeatable(rep)
    for _ in range(3):
        rt.aclnnMul(0, 0, rep, 0)
    await rt.aclrtSynchronizeStream(0)
    np.testing.assert_array_equal(download(rt, out, (4,), np.float32), np.ones(4))


async def test_a_tampered_description_is_revalidated(rt: Runtime) -> None:
    x, _ = device_tensor(rt, np.ones(4, np.float32))
    o, _ = device_tensor(rt, np.zeros(5, np.float32))
    _, ex = aclnnMulGetWorkspaceSize(x, x, tensor_at(o.data, (4,), F32))
    wire = ex.kernel.to_wire()
    wire["args"]["out"]["view_dims"] = [5]  # type: ignore[index]
    wire["args"]["out"]["strides"] = [1]  # type: ignore[index]
    wire["args"]["out"]["storage_dims"] = [5]  # type: ignore[index]
    from proto.aclnn import KernelDesc

    with pytest.raises(AclError) as info:
        rt.aclnnMul(0, 0, KernelDesc.from_wire(wire), 0)
    assert info.value.code == ACLNN_ERR_PARAM_INVALID and info.value.api == "aclnnMul"


async def test_kernel_on_memory_freed_before_it_runs_fails_at_sync(rt: Runtime) -> None:
    x, xp = device_tensor(rt, np.ones(4, np.float32))
    o, _ = device_tensor(rt, np.zeros(4, np.float32))
    s = rt.aclrtCreateStream()
    gate = rt.aclrtCreateEventWithFlag(1)
    rt.aclrtStreamWaitEvent(s, gate)
    _, ex = aclnnMulGetWorkspaceSize(x, x, o)
    rt.aclnnMul(0, 0, ex, s)
    rt.aclrtFree(xp)
    rt.aclrtRecordEvent(gate, 0)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(s)
    assert info.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR and f"{xp:#x}" in info.value.message


async def test_large_kernels_run_off_the_loop(rt: Runtime, machine: Machine) -> None:
    n = machine.offload_bytes // 4 + 1000
    a, b = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    at, _ = device_tensor(rt, a)
    bt, _ = device_tensor(rt, b)
    ot, out = device_tensor(rt, np.zeros(n, np.float32))
    _, ex = aclnnMulGetWorkspaceSize(at, bt, ot)
    assert ex.kernel.nbytes() > machine.offload_bytes
    rt.aclnnMul(0, 0, ex, 0)
    await rt.aclrtSynchronizeStream(0)
    np.testing.assert_allclose(download(rt, out, (n,), np.float32), a.astype(np.float64) * b, rtol=2e-6)


async def test_floating_point_warnings_stay_silent_on_every_path(rt: Runtime, machine: Machine) -> None:
    """Inline kernels rely on their runner's errstate (a stream's worker, a replay); pool kernels set their own.
    A warning would be an error here (pytest's filterwarnings) and fail the task."""
    for n in (4, machine.offload_bytes // 4 + 1):
        x, _ = device_tensor(rt, np.ones(n, np.float32))
        zero, _ = device_tensor(rt, np.zeros(n, np.float32))
        o, optr = device_tensor(rt, np.zeros(n, np.float32))
        s = rt.aclrtCreateStream()
        aclSetAclOpExecutorRepeatable(ex := aclnnDivGetWorkspaceSize(x, zero, o)[1])
        rt.aclnnDiv(0, 0, ex, s)  # eager
        rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        rt.aclnnDiv(0, 0, ex, s)
        model = rt.aclmdlRICaptureEnd(s)
        rt.aclmdlRIExecuteAsync(model, s)
        await rt.aclrtSynchronizeStream(s)
        rt.ctx.models[model].kind = ModelKind.BUILD  # aclmdlRIExecute runs Build models only: the host path
        await rt.aclmdlRIExecute(model, -1)  # replayed from the host, not from a stream
        assert np.isposinf(download(rt, optr, (n,), np.float32)).all()


async def test_kernels_of_one_description_share_a_plan_that_reads_memory_when_it_runs(
    rt: Runtime, machine: Machine
) -> None:
    x, xp = device_tensor(rt, np.ones(4, np.float32))
    o, op = device_tensor(rt, np.zeros(4, np.float32))
    aclSetAclOpExecutorRepeatable(ex := aclnnMulGetWorkspaceSize(x, x, o)[1])
    s = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    for _ in range(5):
        rt.aclnnMul(0, 0, ex, s)
    model = rt.aclmdlRICaptureEnd(s)
    before = len(machine.plans)
    for value in (2.0, 3.0):
        upload_into(rt, xp, np.full(4, value, np.float32))
        rt.aclmdlRIExecuteAsync(model, s)
        await rt.aclrtSynchronizeStream(s)
        np.testing.assert_array_equal(download(rt, op, (4,), np.float32), np.full(4, value * value))
    upload_into(rt, xp, np.full(4, 5.0, np.float32))
    rt.aclnnMul(0, 0, ex, s)  # eager: the same plan
    await rt.aclrtSynchronizeStream(s)
    np.testing.assert_array_equal(download(rt, op, (4,), np.float32), np.full(4, 25.0))
    assert len(machine.plans) == before + 1


async def test_a_replay_after_a_free_and_a_new_allocation_fails_naming_the_address(rt: Runtime) -> None:
    x, xp = device_tensor(rt, np.ones(4, np.float32))
    o, _ = device_tensor(rt, np.zeros(4, np.float32))
    aclSetAclOpExecutorRepeatable(ex := aclnnMulGetWorkspaceSize(x, x, o)[1])
    s = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    rt.aclnnMul(0, 0, ex, s)
    model = rt.aclmdlRICaptureEnd(s)
    rt.aclmdlRIExecuteAsync(model, s)
    await rt.aclrtSynchronizeStream(s)  # the plan is warm
    rt.aclrtFree(xp)
    assert rt.aclrtMalloc(16, 0) == xp  # the same address, another allocation
    rt.aclmdlRIExecuteAsync(model, s)
    with pytest.raises(AclError) as info:
        await rt.aclrtSynchronizeStream(s)
    assert info.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR and f"{xp:#x}" in info.value.message


async def test_a_repeated_launch_is_checked_again_once_memory_was_freed(rt: Runtime) -> None:
    """Launches of one description are checked once per memory epoch (calls_aclnn.kernel_task): repeated, they
    compute as fresh ones; after any free -- here of an operand, then of unrelated memory -- they are checked
    again, so the freed operand is refused at issue with the code of a never-checked launch."""
    a, b = RNG.standard_normal(16).astype(np.float32), RNG.standard_normal(16).astype(np.float32)
    x, _ = device_tensor(rt, a)
    y, yp = device_tensor(rt, b)
    o, out = device_tensor(rt, np.zeros(16, np.float32))
    _, ex = aclnnMulGetWorkspaceSize(x, y, o)
    aclSetAclOpExecutorRepeatable(ex)
    for _ in range(3):
        rt.aclnnMul(0, 0, ex, 0)
    await rt.aclrtSynchronizeStream(0)
    expected = a.astype(np.float64) * b.astype(np.float64)
    np.testing.assert_allclose(download(rt, out, (16,), np.float32), expected, rtol=1e-6)
    assert len(rt.ctx.checked_launches) == 1
    rt.aclrtFree(rt.aclrtMalloc(64, 0))  # unrelated memory: the epoch moves, the launch is checked again
    rt.aclnnMul(0, 0, ex, 0)
    await rt.aclrtSynchronizeStream(0)
    rt.aclrtFree(yp)
    with pytest.raises(AclError) as info:
        rt.aclnnMul(0, 0, ex, 0)
    assert info.value.code == ACLNN_ERR_PARAM_INVALID and "other is not inside live memory" in info.value.message
    await rt.aclrtSynchronizeStream(0)  # nothing was queued by the refused launch; the stream works on
    np.testing.assert_allclose(download(rt, out, (16,), np.float32), expected, rtol=1e-6)


async def test_a_launch_over_registered_host_memory_is_checked_every_time(rt: Runtime) -> None:
    """Unregistering host memory moves no memory epoch: a launch over it is never remembered, so the same
    description is refused at issue once the registration is gone."""
    from proto.constants import ACL_HOST_REG_MAPPED
    from tests.server.npu.devicekit import pinned

    host = rt.aclrtMallocHost(16 * 4)
    values = RNG.standard_normal(16).astype(np.float32)
    pinned(rt, host, 16)[:] = values
    rt.aclrtHostRegisterV2(host, 16 * 4, ACL_HOST_REG_MAPPED)
    mapped = tensor_at(rt.aclrtHostGetDevicePointer(host, 0), (16,), F32)
    o, out = device_tensor(rt, np.zeros(16, np.float32))
    _, ex = aclnnMulGetWorkspaceSize(mapped, mapped, o)
    aclSetAclOpExecutorRepeatable(ex)
    rt.aclnnMul(0, 0, ex, 0)
    rt.aclnnMul(0, 0, ex, 0)
    await rt.aclrtSynchronizeStream(0)
    np.testing.assert_allclose(download(rt, out, (16,), np.float32), values.astype(np.float64) ** 2, rtol=1e-6)
    assert rt.ctx.checked_launches == {}
    rt.aclrtHostUnregister(host)
    with pytest.raises(AclError) as info:
        rt.aclnnMul(0, 0, ex, 0)
    assert info.value.code == ACLNN_ERR_PARAM_INVALID and "not inside live memory" in info.value.message
