"""A user-declared operator end to end (tests/user_operators.py, aclnnOuterScaledAdd): the same declaration in the
client and in a daemon process started with --operators, launched eagerly and in a captured replay whose task group
an update rewrites, from Python over both transports and over REST as curl sends it; values against float64 numpy.
A daemon that lacks the operator names it and the setting; one whose operator module is broken refuses to start."""

from __future__ import annotations

import base64
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

import client.acl as acl
import proto.aclnn as nn
from client.config import Config
from client.session import Session
from proto import operators
from proto.aclnn.kernel import wire_of
from proto.constants import aclDataType
from proto.errors import ACL_ERROR_API_NOT_SUPPORT, ACLNN_ERR_PARAM_INVALID
from tests.daemons import ROOT, Daemon, clean_env, serving
from tests.server.npu.devicekit import tensor_at

MODULE = "tests.user_operators"
F32 = aclDataType.ACL_FLOAT
M, N = 5, 7


@pytest.fixture(scope="module")
def declared() -> Iterator[None]:
    """The client side's declaration (as VNPU_OPERATORS would load it), removed afterwards."""
    operators.load([MODULE], entry_points_too=False)
    yield
    operators.undeclare("OuterScaledAdd")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, declared: None) -> Iterator[Daemon]:
    with serving(tmp_path_factory.mktemp("daemon"), "--operators", MODULE) as running:
        yield running


def reference(a: np.ndarray, b: np.ndarray, scale: float) -> np.ndarray:
    return a.astype(np.float64)[:, None] + scale * b.astype(np.float64)[None, :]


def put(array: np.ndarray) -> int:
    data = np.ascontiguousarray(array, np.float32)
    ptr: int = acl.aclrtMalloc(max(data.nbytes, 1), acl.ACL_MEM_MALLOC_HUGE_FIRST)
    acl.aclrtMemcpy(ptr, data.nbytes, data, data.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    return ptr


def get(ptr: int, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape, np.float32)
    acl.aclrtMemcpy(out, out.nbytes, ptr, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return out


@pytest.mark.parametrize("transport", ["ws", "http"])
def test_eager_and_replayed_with_an_update_from_python(daemon: Daemon, transport: str) -> None:
    rng = np.random.default_rng(19)
    a, b = rng.standard_normal(M).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    session = Session(Config(endpoint=daemon.url, transport=transport))
    acl.use(session)
    try:
        acl.aclInit(None)
        acl.aclrtSetDevice(0)
        stream, updater = acl.aclrtCreateStream(), acl.aclrtCreateStream()
        pa, pb, pout = put(a), put(b), put(np.zeros((M, N)))
        ta, tb, tout = tensor_at(pa, (M,), F32), tensor_at(pb, (N,), F32), tensor_at(pout, (M, N), F32)
        size, executor = acl.aclnnOuterScaledAddGetWorkspaceSize(ta, tb, nn.aclCreateScalar(1.5, F32), tout)
        assert size == 512  # M * N float32 sums, rounded up to 512 bytes
        workspace = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        acl.aclnnOuterScaledAdd(workspace, size, executor, stream)
        acl.aclrtSynchronizeStream(stream)
        np.testing.assert_allclose(get(pout, (M, N)), reference(a, b, 1.5), rtol=1e-6, atol=1e-6)

        acl.aclmdlRICaptureBegin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        acl.aclmdlRICaptureTaskGrpBegin(stream)
        size, executor = acl.aclnnOuterScaledAddGetWorkspaceSize(ta, tb, nn.aclCreateScalar(-2.0, F32), tout)
        acl.aclnnOuterScaledAdd(workspace, size, executor, stream)
        group = acl.aclmdlRICaptureTaskGrpEnd(stream)
        model = acl.aclmdlRICaptureEnd(stream)
        acl.aclmdlRIExecuteAsync(model, stream)
        acl.aclrtSynchronizeStream(stream)
        np.testing.assert_allclose(get(pout, (M, N)), reference(a, b, -2.0), rtol=1e-6, atol=1e-6)
        acl.aclmdlRICaptureTaskUpdateBegin(updater, group)
        size, executor = acl.aclnnOuterScaledAddGetWorkspaceSize(ta, tb, nn.aclCreateScalar(0.25, F32), tout)
        acl.aclnnOuterScaledAdd(workspace, size, executor, updater)
        acl.aclmdlRICaptureTaskUpdateEnd(updater)
        acl.aclrtSynchronizeStream(updater)
        acl.aclmdlRIExecuteAsync(model, stream)
        acl.aclrtSynchronizeStream(stream)
        np.testing.assert_allclose(get(pout, (M, N)), reference(a, b, 0.25), rtol=1e-6, atol=1e-6)
        acl.aclmdlRIDestroy(model)
        acl.aclrtResetDevice(0)
        acl.aclFinalize()
    finally:
        acl.use(None)
        session.close()


def call(http: httpx.Client, api: str, **args: Any) -> dict[str, Any]:
    response = http.post(f"/v1/call/{api}", json=args)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


WS_NAME = "aclnnOuterScaledAddGetWorkspaceSize"


def test_over_rest_as_curl_sends_it(daemon: Daemon) -> None:
    rng = np.random.default_rng(23)
    a, b = rng.standard_normal(M).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    with httpx.Client(base_url=daemon.url, timeout=30) as http:
        call(http, "aclInit", configPath=None)
        call(http, "aclrtSetDevice", deviceId=0)
        stream = call(http, "aclrtCreateStream")["stream"]
        pointers = []
        for data in (a.tobytes(), b.tobytes(), bytes(M * N * 4)):
            ptr = call(http, "aclrtMalloc", size=len(data), policy=0)["devPtr"]
            src = base64.b64encode(data).decode()
            call(http, "aclrtMemcpy", dst=ptr, destMax=len(data), src=src, count=len(data), kind=1)
            pointers.append(ptr)
        shapes = ((M,), (N,), (M, N))
        ta, tb, tout = (wire_of(tensor_at(p, s, F32)) for p, s in zip(pointers, shapes, strict=True))
        body = {"self": ta, "other": tb, "scale": {"value": 3.0, "data_type": "ACL_FLOAT"}, "out": tout}
        answer = http.post("/v1/aclnn/aclnnOuterScaledAddGetWorkspaceSize", json=body)
        assert answer.status_code == 200, answer.text
        size, executor = answer.json()["workspaceSize"], answer.json()["executor"]
        assert size == 512 and executor["op"] == "OuterScaledAdd" and executor["workspace_size"] == 512
        refused = http.post("/v1/aclnn/aclnnOuterScaledAddGetWorkspaceSize", json=body | {"self": tout})
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == ACLNN_ERR_PARAM_INVALID
        assert refused.json()["error"]["message"] == "aclnnOuterScaledAdd: self has shape [5, 7]; it must be 1-D"
        workspace = call(http, "aclrtMalloc", size=size, policy=0)["devPtr"]
        call(http, "aclnnOuterScaledAdd", workspace=workspace, workspaceSize=size, executor=executor, stream=stream)
        short = http.post(
            "/v1/call/aclnnOuterScaledAdd",
            json={
                "workspace": workspace,
                "workspaceSize": size,
                "executor": executor | {"workspace_size": 0},
                "stream": 0,
            },
        )
        assert short.status_code == 400 and short.json()["error"]["code"] == ACLNN_ERR_PARAM_INVALID
        assert "workspace_size is 0, but the arguments need 512 bytes" in short.json()["error"]["message"]
        call(http, "aclrtSynchronizeStream", stream=stream)
        n = M * N * 4
        got = call(http, "aclrtMemcpy", dst=None, destMax=n, src=pointers[2], count=n, kind=2)["data"]
        out = np.frombuffer(base64.b64decode(got), np.float32).reshape(M, N)
        np.testing.assert_allclose(out, reference(a, b, 3.0), rtol=1e-6, atol=1e-6)
        document = http.get("/openapi.json").json()  # one operation per phase, the operator a path parameter
        for path, name in (
            ("/v1/call/{api}", "aclnnOuterScaledAdd"),
            ("/v1/aclnn/{api}", "aclnnOuterScaledAddGetWorkspaceSize"),
        ):
            assert name in document["paths"][path]["post"]["parameters"][0]["schema"]["enum"]
        said = http.get("/v1/aclnn/aclnnOuterScaledAdd").json()
        assert "out[i, j] = self[i] + scale * other[j]" in said["doc"] and said["tier"] == "implemented"
        assert [a["name"] for a in said["args"]] == ["self", "other", "scale", "out"]


def test_a_daemon_without_the_operator_names_it_and_the_setting(tmp_path: Path, declared: None) -> None:
    with serving(tmp_path) as bare:
        session = Session(Config(endpoint=bare.url))
        acl.use(session)
        try:
            acl.aclInit(None)
            acl.aclrtSetDevice(0)
            stream = acl.aclrtCreateStream()
            p = acl.aclrtMalloc(M * N * 4 + 1024, acl.ACL_MEM_MALLOC_HUGE_FIRST)
            ta, tb, tout = tensor_at(p, (M,), F32), tensor_at(p + 64, (N,), F32), tensor_at(p + 128, (M, N), F32)
            size, executor = acl.aclnnOuterScaledAddGetWorkspaceSize(ta, tb, nn.aclCreateScalar(1.0, F32), tout)
            acl.aclnnOuterScaledAdd(p + 512, size, executor, stream)  # pipelined: the next waiting call reports it
            with pytest.raises(acl.AclError) as info:
                acl.aclrtSynchronizeStream(stream)
            assert info.value.code == ACL_ERROR_API_NOT_SUPPORT
            assert "the daemon does not know the operator aclnnOuterScaledAdd" in info.value.message
            assert "VNPU_OPERATORS=" in info.value.message and "--operators" in info.value.message
            acl.aclrtSynchronizeStream(stream)  # the stream itself is fine
            acl.aclFinalize()
        finally:
            acl.use(None)
            session.close()


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("raise RuntimeError('no numpy here')\n", "failed to import: RuntimeError('no numpy here')"),
        (
            "from proto.aclnn.ops import OPS\nfrom proto.operators import declare\n"
            "declare(OPS['Add'], lambda **_: None)\n",
            "aclnnAdd is one of CANN's operators, which vnpu declares: choose another name",
        ),
    ],
    ids=["fails to import", "clashes with Add"],
)
def test_a_daemon_refuses_to_start_on_a_bad_operator_module(tmp_path: Path, source: str, words: str) -> None:
    (tmp_path / "bad_ops_19.py").write_text(source)
    env = clean_env() | {"PYTHONPATH": str(tmp_path), "VNPU_OPERATORS": "bad_ops_19"}
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "serve", "--port", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"vnpu serve: the operator module 'bad_ops_19' (VNPU_OPERATORS): {words}"
    ]
