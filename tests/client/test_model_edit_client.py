"""Editing a captured model from Python (client.acl): GetParams gives a mutable aclmdlRITaskParams whose
kernelTaskParams.desc is the kernel's KernelDesc; change a scalar, SetParams it back, aclmdlRIUpdate, replay."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import client.acl as acl
import proto.aclnn as nn
from proto.constants import aclDataType

F32 = aclDataType.ACL_FLOAT


@pytest.fixture
def initialized(daemon: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("VNPU_ENDPOINT", daemon)
    acl.aclInit(None)
    acl.aclrtSetDevice(0)
    yield
    acl.aclrtResetDevice(0)
    acl.aclFinalize()


def test_edit_a_kernel_scalar_from_python(initialized: None) -> None:
    x = np.random.default_rng(3).standard_normal(8).astype(np.float32)
    src, dst = acl.aclrtMalloc(32, 0), acl.aclrtMalloc(32, 0)
    acl.aclrtMemcpy(src, 32, x, 32, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    s = acl.aclrtCreateStream()
    st, dt = (nn.aclCreateTensor([8], F32, [1], 0, acl.ACL_FORMAT_ND, [8], p) for p in (src, dst))
    acl.aclmdlRICaptureBegin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    acl.aclmdlRICaptureTaskGrpBegin(s)
    ws, ex = nn.aclnnMulsGetWorkspaceSize(st, nn.aclCreateScalar(2.0, F32), dt)
    acl.aclnnMuls(0, ws, ex, s)
    group = acl.aclmdlRICaptureTaskGrpEnd(s)
    model = acl.aclmdlRICaptureEnd(s)
    (lane,), count = acl.aclmdlRIGetStreams(model, True, 1)
    assert count == 1
    (task,), _ = acl.aclmdlRIGetTasksByStream(lane, True, 1)
    params = acl.aclmdlRITaskGetParams(task)
    assert isinstance(params, acl.aclmdlRITaskParams) and params.taskGrp == group
    desc = params.kernelTaskParams.desc
    assert desc is not None and desc.op == "Muls" and desc.args["other"].value == 2.0
    params.kernelTaskParams.desc = nn.KernelDesc(desc.op, {**desc.args, "other": nn.aclCreateScalar(-3.0, F32)})
    params.taskGrp = 0
    acl.aclmdlRITaskSetParams(task, params)
    acl.aclmdlRIUpdate(model)
    acl.aclmdlRIExecuteAsync(model, s)
    acl.aclrtSynchronizeStream(s)
    out = np.empty(8, np.float32)
    acl.aclrtMemcpy(out, 32, dst, 32, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    np.testing.assert_allclose(out, x.astype(np.float64) * -3.0, rtol=1e-6)
    acl.aclmdlRIDestroy(model)
