"""Conditional models from Python: aclmdlRICondTaskParams as a struct of client.acl, the sub-models returned as a
list, a SWITCH whose word the program writes through aclrtValueWrite inside the capture, and the daemon's
VNPU_MAX_WHILE_ITERATIONS setting."""

from __future__ import annotations

import numpy as np
import pytest

import client.acl as acl
import proto.aclnn as nn
from server.api.settings import Settings
from tests.server.npu.devicekit import tensor_at

F32 = acl.ACL_FLOAT


def test_a_switch_model_through_the_python_client(daemon: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VNPU_ENDPOINT", daemon)
    acl.aclInit(None)
    try:
        acl.aclrtSetDevice(0)
        data = np.random.default_rng(3).standard_normal(8).astype(np.float32)
        x, out = acl.aclrtMalloc(32, 0), acl.aclrtMalloc(32, 0)
        acl.aclrtMemcpy(x, 32, data.tobytes(), 32, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        xt, ot = tensor_at(x, (8,), F32), tensor_at(out, (8,), F32)
        s, s2 = acl.aclrtCreateStream(), acl.aclrtCreateStream()
        acl.aclmdlRICaptureBegin(s, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        _, parent = acl.aclmdlRICaptureGetInfo(s)
        handle = acl.aclmdlRICondHandleCreate(parent, 0, 0)
        word = acl.aclmdlRICondHandleGetCondPtr(handle)
        acl.aclrtValueWrite(word, 1, 0, s)  # the case is chosen inside the model
        params = acl.aclmdlRICondTaskParams(handle=handle, type=acl.ACL_MODEL_RI_COND_TYPE_SWITCH, size=2)
        cases = acl.aclmdlRIAddCondTask(params, s, 0)
        assert len(cases) == 2 and len(set(cases)) == 2
        for case, scale in zip(cases, (5.0, -2.0), strict=True):
            acl.aclmdlRICaptureToModelRIBegin(s2, case, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
            ws, ex = nn.aclnnMulsGetWorkspaceSize(xt, nn.aclCreateScalar(scale, F32), ot)
            acl.aclnnMuls(0, ws, ex, s2)
            assert acl.aclmdlRICaptureEnd(s2) == case
        model = acl.aclmdlRICaptureEnd(s)
        acl.aclmdlRIExecuteAsync(model, s)
        acl.aclrtSynchronizeStream(s)
        back = bytearray(32)
        acl.aclrtMemcpy(back, 32, out, 32, acl.ACL_MEMCPY_DEVICE_TO_HOST)
        np.testing.assert_allclose(np.frombuffer(back, np.float32), data.astype(np.float64) * -2.0, rtol=1e-6)
        with pytest.raises(acl.AclError) as caught:
            acl.aclmdlRIDestroy(cases[0])
        assert caught.value.code == acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT
        acl.aclmdlRIDestroy(model)
        acl.aclrtResetDevice(0)
    finally:
        acl.aclFinalize()


def test_the_while_bound_is_a_setting() -> None:
    assert Settings().max_while_iterations == 1_000_000
    assert Settings.from_env({"VNPU_MAX_WHILE_ITERATIONS": "25"}).max_while_iterations == 25
