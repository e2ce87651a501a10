"""What deploy/k8s describes, run here without Kubernetes: the StatefulSet's container command with the pod's
variables (ConfigMap, the tokens file of the Secret), probed on /healthz as the kubelet does, stopped with SIGTERM
within terminationGracePeriodSeconds while work is stalled; and the example Job's program naming four daemons by
`vnpu devices` (their pod DNS names stand for 127.0.0.1 ports here), so aclrtSetDevice(3) reaches the fourth."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from client.routing import Route, parse_devices
from proto.constants import ACL_EVENT_SYNC
from server.api.settings import Settings
from server.app import create_app
from tests.daemons import clean_env, free_port, free_ports
from tests.test_k8s import GRACE_MARGIN, daemon_container, job, objects, pod_variables

ROOT = Path(__file__).resolve().parent.parent
VNPU = Path(sys.executable).parent / "vnpu"
TENANT_TOKEN, OPERATOR_TOKEN = "tenant-secret", "operator-secret"


def pod_env(tmp_path: Path, **changes: str) -> dict[str, str]:
    """The base pod's VNPU_* variables (its tokens file written here), bound to 127.0.0.1 on a free port instead
    of 0.0.0.0:9470, and `changes`."""
    tokens = tmp_path / "tokens"
    tokens.write_text(f"jobs {TENANT_TOKEN}\n")
    env = pod_variables("base", tokens, OPERATOR_TOKEN) | {"VNPU_HOST": "127.0.0.1", "VNPU_PORT": str(free_port())}
    return env | changes


@contextmanager
def container(tmp_path: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """The container's command, as the StatefulSet states it; killed by PID if a test leaves it running."""
    if not VNPU.exists():
        pytest.fail("the vnpu console script is not installed: pip install -e .")
    command = daemon_container("base")["command"]
    log = tmp_path / f"daemon-{env['VNPU_PORT']}.txt"
    with log.open("wb") as out:
        process = subprocess.Popen([str(VNPU), *command[1:]], env=clean_env() | env, stdout=out, stderr=out)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def probe(port: str, name: str) -> bool:
    """One kubelet probe: an HTTP GET of the probe's path within its timeout; success is a 2xx or 3xx."""
    spec = daemon_container("base")[name]
    url = f"http://127.0.0.1:{port}{spec['httpGet']['path']}"
    try:
        return 200 <= httpx.get(url, timeout=spec.get("timeoutSeconds", 1)).status_code < 400
    except httpx.HTTPError:
        return False


def started(port: str, process: subprocess.Popen[bytes]) -> float:
    """The startup probe's loop: every periodSeconds, at most failureThreshold times; the seconds it took."""
    spec, start = daemon_container("base")["startupProbe"], time.monotonic()
    for _ in range(spec["failureThreshold"]):
        assert process.poll() is None, "the daemon exited during startup"
        if probe(port, "startupProbe"):
            return time.monotonic() - start
        time.sleep(spec["periodSeconds"])
    pytest.fail("the startup probe failed failureThreshold times: the kubelet would restart the container")


async def test_the_container_serves_passes_its_probes_and_stops_within_the_grace_period(tmp_path: Path) -> None:
    """With tokens on (the probes need none), and a stream stalled on an event nobody records while a REST call
    waits on it: SIGTERM ends the daemon, exit 0, within 2 x VNPU_SHUTDOWN_DEADLINE + the manifests' margin. The
    deadline is 1 s here instead of the ConfigMap's, so that the test stays short; the grace period scales with it
    (tests/test_k8s.py checks it is 2 x deadline + the margin)."""
    deadline = 1
    env = pod_env(tmp_path, VNPU_MEMORY="64MiB", VNPU_SHUTDOWN_DEADLINE=str(deadline))
    port = env["VNPU_PORT"]
    with container(tmp_path, env) as process:
        assert started(port, process) < 20
        assert probe(port, "readinessProbe") and probe(port, "livenessProbe")
        url = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{url}/v1/devices").status_code == 401  # the Secret's tokens are in force
        scrape = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"})
        assert scrape.status_code == 200 and "vnpu_device_memory_total_bytes" in scrape.text  # the ServiceMonitor's
        headers = {"Authorization": f"Bearer {TENANT_TOKEN}"}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as c:

            async def do(api: str, **args: object) -> Any:
                answer = await c.post(f"/v1/call/{api}", json=args)
                assert answer.status_code == 200, answer.text
                return answer.json()

            await do("aclInit", configPath=None)
            await do("aclrtSetDevice", deviceId=0)
            stream = (await do("aclrtCreateStream"))["stream"]
            event = (await do("aclrtCreateEventWithFlag", flag=ACL_EVENT_SYNC))["event"]
            await do("aclrtStreamWaitEvent", stream=stream, event=event)
            blocked = asyncio.create_task(c.post("/v1/call/aclrtSynchronizeStream", json={"stream": stream}))
            await asyncio.sleep(0.2)
            assert not blocked.done()
            start = time.monotonic()
            process.send_signal(signal.SIGTERM)
            grace = 2 * deadline + GRACE_MARGIN
            while process.poll() is None and time.monotonic() - start < grace + 5:
                await asyncio.sleep(0.05)
            took = time.monotonic() - start
            assert process.poll() == 0, (tmp_path / f"daemon-{port}.txt").read_text()[-3000:]
            assert deadline <= took < grace, f"the daemon took {took:.1f} s to stop; the grace period is {grace} s"
            assert (await asyncio.wait_for(blocked, 5)).status_code == 503  # cut off, with an answer


def job_program(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The example Job's container command, run here with `env` over the Job's own variables."""
    (spec,) = job()["spec"]["template"]["spec"]["containers"]
    variables = {e["name"]: e["value"] for e in spec["env"] if "value" in e}
    command = [sys.executable if spec["command"][0] == "python" else spec["command"][0], *spec["command"][1:]]
    environ = clean_env() | variables | env | {"PYTHONPATH": str(ROOT)}
    return subprocess.run(command, env=environ, capture_output=True, text=True, timeout=60, check=False)


@contextmanager
def serving(settings: Settings) -> Iterator[None]:
    """A daemon with `settings`, served in this process on 127.0.0.1 (faster to start than a process)."""
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host=settings.host, port=settings.port))
    thread = threading.Thread(target=server.run, name=f"vnpu-pod-{settings.port}", daemon=True)
    thread.start()
    try:
        for _ in range(2000):
            if server.started or not thread.is_alive():
                break
            time.sleep(0.01)
        assert server.started, "the daemon did not start"
        yield
    finally:
        server.should_exit = True
        thread.join(20)
        assert not thread.is_alive()


def test_a_job_reaches_the_fourth_daemon_as_device_3(tmp_path: Path) -> None:
    """Four daemons with the pods' settings (device 0 of each with 16, 32, 48, 64 MiB, to tell them apart);
    VNPU_DEVICES comes from `vnpu devices --k8s-service vnpu --replicas 4 --namespace vnpu`, each pod's DNS name
    replaced by the 127.0.0.1 port of its daemon (the cluster DNS's part); the Job's program round-trips random
    data through each device and prints its memory."""
    replicas = objects("overlays/production")["StatefulSet"]["spec"]["replicas"]
    ports = free_ports(replicas)  # four different ports, whatever the kernel hands out between the calls
    envs = [
        pod_env(tmp_path, VNPU_MEMORY=f"{16 * (i + 1)}MiB", VNPU_LOG_LEVEL="warning", VNPU_PORT=str(port))
        for i, port in enumerate(ports)
    ]
    printed = subprocess.run(
        [str(VNPU), "devices", "--k8s-service", "vnpu", "--replicas", str(replicas), "--namespace", "vnpu"],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    devices, service_port = printed.stdout.strip(), objects("base")["ConfigMap"]["data"]["VNPU_PORT"]
    for i, env in enumerate(envs):
        local = f"127.0.0.1:{env['VNPU_PORT']}"
        devices = devices.replace(f"vnpu-{i}.vnpu.vnpu.svc.cluster.local:{service_port}", local)
    assert devices.count("127.0.0.1") == replicas, devices
    with ExitStack() as stack:
        for env in envs:
            stack.enter_context(serving(Settings.from_env(env)))
        run = job_program({"VNPU_DEVICES": devices, "VNPU_TOKEN": TENANT_TOKEN})
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == [f"device {i}: {16 * (i + 1)} MiB, round trip ok" for i in range(replicas)]


def test_vnpu_devices_refuses_bad_names_and_counts() -> None:
    for args, message in (
        (["--k8s-service", "Vnpu", "--replicas", "2"], "the service 'Vnpu' is not a DNS label"),
        (["--k8s-service", "vnpu", "--replicas", "0"], "replicas (0) and devices per pod (1) must be at least 1"),
        (["--k8s-service", "vnpu", "--replicas", "600", "--devices-per-pod", "2"], "1024 at most"),
        (["--k8s-service", "vnpu", "--replicas", "2", "--namespace", "a.b"], "the namespace 'a.b' is not"),
        (["--k8s-service", "vnpu", "--replicas", "2", "--port", "70000"], "port 70000 is not a TCP port"),
    ):
        done = subprocess.run([str(VNPU), "devices", *args], capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and message in done.stderr and done.stdout == "", (args, done.stderr)


def test_vnpu_devices_maps_program_devices_to_pods() -> None:
    done = subprocess.run(
        [str(VNPU), "devices", "--k8s-service", "npu", "--replicas", "2", "--devices-per-pod", "2", "--tls"],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    assert done.stdout == "0=wss://npu-0.npu:9470/0,1=wss://npu-0.npu:9470/1,2=wss://npu-1.npu:9470/0," \
                          "3=wss://npu-1.npu:9470/1\n"  # fmt: skip
    assert parse_devices(done.stdout)[3] == Route("https://npu-1.npu:9470", 1)  # what the client reads
