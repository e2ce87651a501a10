"""`vnpu serve` as an operator runs it: a real process on a free 127.0.0.1 port, driven over REST with httpx, its
settings from options and VNPU_* variables, and a clean stop on SIGTERM/SIGINT within the shutdown deadline --
exit status 0 and no shared-memory segment of the daemon left behind, even with work stalled on its streams."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import websockets

from proto.constants import ACL_EVENT_SYNC, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from server.api.settings import Settings
from tests.server.api.callers import WsCaller
from tests.server.api.conftest import free_port

ROOT = Path(__file__).resolve().parents[3]
MiB = 1 << 20


class Daemon:
    """One `python -m server.cli serve` process; its output goes to files so that a full pipe never blocks it."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, out: Path, err: Path) -> None:
        self.proc, self.port, self.out, self.err = proc, port, out, err

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stdout(self) -> str:
        return self.out.read_text()

    def segments(self) -> list[str]:
        """The /dev/shm segments of this daemon (pinned host memory)."""
        return sorted(p.name for p in Path("/dev/shm").glob(f"vnpu-{self.proc.pid}-*"))

    def stop(self, sig: signal.Signals, deadline: float) -> tuple[int, float]:
        """Send `sig`; the exit status and how long the exit took (the test fails if not within `deadline`)."""
        start = time.monotonic()
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=deadline)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the daemon did not exit within {deadline} s of {sig.name}:\n{self.err.read_text()[-3000:]}")
        return code, time.monotonic() - start


@contextmanager
def daemon(
    tmp_path: Path, *options: str, env: dict[str, str] | None = None, port: int | None = None
) -> Iterator[Daemon]:
    """Start the daemon, wait for /healthz (at most 20 s); always kill it (by PID) when the test is done."""
    port = port or free_port()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("VNPU_")}
    environ.update(env or {})
    args = [sys.executable, "-m", "server.cli", "serve", "--log-level", "warning", *options]
    if "--port" not in options and "VNPU_PORT" not in environ:
        args += ["--port", str(port)]
    out, err = tmp_path / f"out-{port}.txt", tmp_path / f"err-{port}.txt"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(args, cwd=ROOT, env=environ, stdout=stdout, stderr=stderr)
    d = Daemon(proc, port, out, err)
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, f"the daemon exited with {proc.returncode}:\n{err.read_text()[-3000:]}"
            try:
                if httpx.get(f"{d.url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the daemon did not answer /healthz within 20 s"
            time.sleep(0.05)
        yield d
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def call(client: httpx.Client, api: str, **args: object) -> dict[str, object]:
    response = client.post(f"/v1/call/{api}", json=args)
    assert response.status_code == 200, response.text
    result: dict[str, object] = response.json()
    return result


def int_result(client: httpx.Client, api: str, **args: object) -> int:
    (value,) = call(client, api, **args).values()
    assert isinstance(value, int)
    return value


def test_serve_runs_calls_over_rest_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    with daemon(tmp_path, "--memory", "64MiB") as d:
        banner = d.stdout()
        assert f"listening on http://127.0.0.1:{d.port}" in banner
        assert "1 device(s) of 64 MiB" in banner and "no token" in banner
        with httpx.Client(base_url=d.url, timeout=10) as c:
            call(c, "aclInit", configPath=None)
            call(c, "aclrtSetDevice", deviceId=0)
            assert call(c, "aclrtGetMemInfo", attr=0) == {"free": 64 * MiB, "total": 64 * MiB}
            dev = int_result(c, "aclrtMalloc", size=4096, policy=0)
            host = int_result(c, "aclrtMallocHost", size=4096)
            payload = os.urandom(4096)
            # host -> pinned buffer (raw body), pinned -> device, device -> response body
            assert c.put(f"/v1/host/{host}", content=payload).status_code == 204
            call(c, "aclrtMemcpy", dst=dev, destMax=4096, src=host, count=4096, kind=ACL_MEMCPY_HOST_TO_DEVICE)
            got = c.get(f"/v1/memory/{dev}", params={"count": 4096})
            assert got.status_code == 200 and got.headers["content-type"] == "application/octet-stream"
            assert got.content == payload
            # raw body -> device at an offset, device -> pinned, pinned -> response body
            assert c.put(f"/v1/memory/{dev + 100}", content=b"vnpu").status_code == 204
            call(c, "aclrtMemcpy", dst=host, destMax=4096, src=dev, count=4096, kind=ACL_MEMCPY_DEVICE_TO_HOST)
            back = c.get(f"/v1/host/{host}", params={"count": 4096}).content
            assert back == payload[:100] + b"vnpu" + payload[104:]
            info = call(c, "vnpuHostInfo", hostPtr=host)
            assert info["size"] == 4096 and d.segments() == [info["name"]]
            assert (Path("/dev/shm") / str(info["name"])).stat().st_size >= 4096
            used = c.get("/v1/devices").json()[0]["memory"]
            assert used["total"] == 64 * MiB and used["used"] >= 4096 and used["free"] == 64 * MiB - used["used"]
        code, _ = d.stop(signal.SIGTERM, deadline=15)
        assert code == 0, d.err.read_text()[-3000:]
        assert d.segments() == []


def test_token_is_required_and_sigint_stops_cleanly(tmp_path: Path) -> None:
    with daemon(tmp_path, "--memory", "16MiB", "--token", "s3cret") as d:
        assert "1 device(s) of 16 MiB" in d.stdout() and "token required" in d.stdout()
        assert httpx.get(f"{d.url}/healthz").json() == {"status": "ok", "devices": 1}
        denied = httpx.post(f"{d.url}/v1/call/aclInit", json={})
        assert denied.status_code == 401 and denied.json()["error"]["code"] == 100000
        wrong = httpx.post(f"{d.url}/v1/call/aclInit", json={}, headers={"Authorization": "Bearer s3cre"})
        assert wrong.status_code == 401
        with httpx.Client(base_url=d.url, timeout=10, headers={"Authorization": "Bearer s3cret"}) as c:
            call(c, "aclInit", configPath=None)
            call(c, "aclrtSetDevice", deviceId=0)
            host = int_result(c, "aclrtMallocHost", size=100)
            assert len(d.segments()) == 1
            assert call(c, "vnpuHostInfo", hostPtr=host)["name"] == d.segments()[0]
        code, _ = d.stop(signal.SIGINT, deadline=15)
        assert code == 0, d.err.read_text()[-3000:]
        assert d.segments() == []


def test_settings_come_from_vnpu_variables_and_options_win(tmp_path: Path) -> None:
    port = free_port()
    env = {"VNPU_PORT": str(port), "VNPU_MEMORY": "32MiB", "VNPU_DEVICE_COUNT": "2", "VNPU_TOKEN": "from-env"}
    with daemon(tmp_path, "--memory", "16MiB", "--token", "from-cli", env=env, port=port) as d:
        assert f"127.0.0.1:{port}" in d.stdout()  # VNPU_PORT
        assert "2 device(s) of 16 MiB" in d.stdout()  # VNPU_DEVICE_COUNT, and --memory over VNPU_MEMORY
        assert httpx.get(f"{d.url}/v1/devices", headers={"Authorization": "Bearer from-env"}).status_code == 401
        devices = httpx.get(f"{d.url}/v1/devices", headers={"Authorization": "Bearer from-cli"}).json()
        assert [x["memory"]["total"] for x in devices] == [16 * MiB, 16 * MiB]
        code, _ = d.stop(signal.SIGTERM, deadline=15)
        assert code == 0


def test_settings_from_env_parse_every_kind_and_options_override() -> None:
    env = {
        "VNPU_PORT": "1234",
        "VNPU_MEMORY": "1.5GiB",
        "VNPU_CONTEXT_MEMORY": "512k",
        "VNPU_SESSION_IDLE": "2.5",
        "VNPU_TOKEN": "t",
        "VNPU_HOST": "127.0.0.1",
    }
    s = Settings.from_env(env)
    assert (s.port, s.memory, s.context_memory, s.session_idle) == (1234, 3 << 29, 512 << 10, 2.5)
    assert s.tokens == {"t": "default"}
    s = Settings.from_env(env, port=99, memory=1024, token=None)  # None: the option was not given
    assert (s.port, s.memory, s.tokens) == (99, 1024, {"t": "default"})
    with pytest.raises(ValueError, match="not a size"):
        Settings.from_env({"VNPU_MEMORY": "lots"})


async def test_stalled_work_does_not_hold_shutdown_past_the_deadline(tmp_path: Path) -> None:
    """A stream waiting forever on an event that nobody records, a REST call blocked synchronizing it, and a
    second stalled context: SIGTERM still ends the daemon, exit 0, within the deadline (graceful part + release)."""
    with daemon(tmp_path, "--memory", "16MiB", env={"VNPU_SHUTDOWN_DEADLINE": "1"}) as d:
        async with httpx.AsyncClient(base_url=d.url, timeout=30) as c:
            for session in (None, (await c.post("/v1/sessions")).json()["session"]):
                headers = {"x-vnpu-session": session} if session else {}

                async def do(api: str, headers: dict[str, str] = headers, **args: object) -> dict[str, int]:
                    r = await c.post(f"/v1/call/{api}", json=args, headers=headers)
                    assert r.status_code == 200, r.text
                    result: dict[str, int] = r.json()
                    return result

                await do("aclInit", configPath=None)
                await do("aclrtSetDevice", deviceId=0)
                stream = (await do("aclrtCreateStream"))["stream"]
                event = (await do("aclrtCreateEventWithFlag", flag=ACL_EVENT_SYNC))["event"]
                await do("aclrtMallocHost", size=64)
                await do("aclrtStreamWaitEvent", stream=stream, event=event)
                ptr = (await do("aclrtMalloc", size=64, policy=0))["devPtr"]
                await do("aclrtMemsetAsync", devPtr=ptr, maxCount=64, value=1, count=64, stream=stream)
            view = (await c.get("/v1/devices/0")).json()
            stalled = [s for ctx in view["contexts"] for s in ctx["streams"] if s["queued"]]
            assert [s["queued"] for s in stalled] == [2, 2]
            sync = c.post("/v1/call/aclrtSynchronizeStream", json={"stream": stream}, headers=headers)
            blocked = asyncio.create_task(sync)
            ws = await WsCaller.connect(f"ws://127.0.0.1:{d.port}/v1/ws")  # a WebSocket client blocked the same way
            await ws("aclInit", configPath=None)
            await ws("aclrtSetDevice", deviceId=0)
            ws_stream = (await ws("aclrtCreateStream"))["stream"]
            ws_event = (await ws("aclrtCreateEventWithFlag", flag=ACL_EVENT_SYNC))["event"]
            await ws("aclrtStreamWaitEvent", stream=ws_stream, event=ws_event)
            ws_blocked = await ws.send("aclrtSynchronizeStream", stream=ws_stream)
            await asyncio.sleep(0.2)
            assert not blocked.done()
            assert len(d.segments()) == 2
            start = time.monotonic()
            d.proc.send_signal(signal.SIGTERM)
            for _ in range(200):
                if d.proc.poll() is not None:
                    break
                await asyncio.sleep(0.05)
            took = time.monotonic() - start
            assert d.proc.poll() == 0, d.err.read_text()[-3000:]
            assert took < 1 + 1 + 2, f"shutdown took {took:.1f} s with a deadline of 1 s"
            cut = await asyncio.wait_for(blocked, 5)  # cut off after the graceful part, with the JSON error body
            assert cut.status_code == 503
            assert cut.json()["error"]["code"] == 500000 and "shutting down" in cut.json()["error"]["message"]
            assert d.segments() == []
            with pytest.raises((TimeoutError, websockets.ConnectionClosed)):
                await ws.reply(ws_blocked, timeout=1)  # the connection went; no answer came
            await ws.close()
