"""SIGTERM keeps its deadline with a big kernel running on the pool (reliability probe §17: the daemon waited
for the kernel and was still running 30 s after SIGTERM with VNPU_SHUTDOWN_DEADLINE=3). The kernel cannot be
interrupted; it is abandoned and the process exits on time."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
import pytest

from proto.aclnn import aclCreateTensor, aclnnGeluGetWorkspaceSize
from proto.constants import aclDataType, aclFormat
from tests.daemons import serving

pytestmark = pytest.mark.slow

F16 = aclDataType.ACL_FLOAT16
N = 3 << 25  # a float16 Gelu of ~6 s over a zero-stride input, into 192 MiB


def test_sigterm_keeps_its_deadline_with_a_big_kernel_running(tmp_path: Path) -> None:
    with serving(tmp_path, "--memory", "256MiB", env={"VNPU_SHUTDOWN_DEADLINE": "1"}) as daemon:
        with httpx.Client(base_url=daemon.url, timeout=10) as http:

            def call(api: str, **args: object) -> dict[str, int]:
                response = http.post(f"/v1/call/{api}", json=args)
                assert response.status_code == 200, response.text
                result: dict[str, int] = response.json()
                return result

            call("aclInit", configPath=None)
            call("aclrtSetDevice", deviceId=0)
            one = call("aclrtMalloc", size=2, policy=0)["devPtr"]
            call("aclrtMemset", devPtr=one, maxCount=2, value=0x38, count=2)  # 0.527 (erf(0) would be quick)
            out = call("aclrtMalloc", size=2 * N, policy=0)["devPtr"]
            x = aclCreateTensor([N], F16, [0], 0, aclFormat.ACL_FORMAT_ND, [1], one)
            y = aclCreateTensor([N], F16, [1], 0, aclFormat.ACL_FORMAT_ND, [N], out)
            _, executor = aclnnGeluGetWorkspaceSize(x, y)
            call("aclnnGelu", workspace=0, workspaceSize=0, executor=executor.kernel.to_wire(), stream=None)
            time.sleep(0.3)  # it runs on the pool
            started = time.monotonic()
            daemon.proc.send_signal(signal.SIGTERM)
            for _ in range(400):
                if daemon.proc.poll() is not None:
                    break
                time.sleep(0.025)
            took = time.monotonic() - started
        assert daemon.proc.poll() == 0, daemon.err.read_text()[-3000:]
        assert took < 1 + 2.5, f"shutdown took {took:.1f} s with a deadline of 1 s"
