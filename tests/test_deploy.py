"""The Docker image and docker-compose.yml, checked without a Docker engine (none runs here): their commands,
ports, variables and healthcheck agree with `vnpu serve` and its settings, and the image's entry command line,
run exactly as the Dockerfile states it (outside Docker), serves and passes the image's own healthcheck."""

from __future__ import annotations

import json
import os
import shlex
import signal
import ssl
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path, PurePosixPath
from typing import Any

import httpx
import pytest
import yaml

from server.api.settings import Settings, env_name
from server.cli import build_parser
from tests.server.api.conftest import free_port

ROOT = Path(__file__).resolve().parent.parent
CLIENT_VARIABLES = {"VNPU_ENDPOINT", "VNPU_TOKEN", "VNPU_TRANSPORT", "VNPU_HOST_MEMORY", "VNPU_LAUNCH_BLOCKING",
                    "VNPU_CONTEXT", "VNPU_DEVICES"}  # fmt: skip
SETTING_VARIABLES = {env_name(f.name) for f in fields(Settings) if f.name != "tokens"}


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def instruction(name: str) -> list[str]:
    return [args for op, args in dockerfile() if op == name]


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for args in instruction("ENV"):
        for item in shlex.split(args):
            key, value = item.split("=", 1)
            env[key] = value
    return env


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


def test_dockerfile_is_slim_non_root_and_serves_on_the_default_port() -> None:
    assert instruction("FROM") == ["python:3.11-slim"]
    user = instruction("USER")
    assert user and user[-1] not in ("root", "0")
    assert instruction("EXPOSE") == [str(Settings().port)]
    assert image_env()["VNPU_PORT"] == str(Settings().port)
    assert set(image_env()) - {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"} <= SETTING_VARIABLES
    for copied in instruction("COPY"):
        for source in shlex.split(copied)[:-1]:
            assert (ROOT / source).exists(), source
    installs = " ".join(instruction("RUN"))
    assert "pip install" in installs and "[test]" not in installs  # runtime dependencies only


def test_entrypoint_is_vnpu_serve_with_valid_options() -> None:
    entry = json.loads(instruction("ENTRYPOINT")[0])
    assert entry[:2] == ["vnpu", "serve"]
    args = build_parser().parse_args(entry[1:])  # the options exist and parse
    assert args.command == "serve"
    assert image_env()["VNPU_HOST"] == "0.0.0.0"  # reachable from outside the container


def test_healthcheck_probes_healthz_on_the_configured_port() -> None:
    check = instruction("HEALTHCHECK")[0]
    assert "/healthz" in check and "VNPU_PORT" in check
    compose_check = compose()["services"]["vnpu"]["healthcheck"]["test"]
    assert compose_check[0] == "CMD" and compose_check[1:] == json.loads(check.split("CMD", 1)[1])


def test_compose_agrees_with_the_settings() -> None:
    services = compose()["services"]
    daemon, client = services["vnpu"], services["client"]
    assert daemon["ports"] == [f"{Settings().port}:{Settings().port}"]
    assert set(daemon["environment"]) <= SETTING_VARIABLES
    assert daemon["environment"]["VNPU_PORT"] == str(Settings().port)
    assert daemon["restart"] in ("unless-stopped", "always", "on-failure")
    assert daemon["shm_size"]
    env_files = {ROOT / f for f in daemon["env_file"]} | {ROOT / f for f in client["env_file"]}
    for env_file in env_files:
        example = env_file.with_name(env_file.name + ".example")
        assert example.exists(), f"{example} documents {env_file}"
        keys = {line.split("=", 1)[0] for line in example.read_text().splitlines() if "=" in line and line[0] != "#"}
        assert keys == {"VNPU_TOKEN"}
    assert client["depends_on"]["vnpu"]["condition"] == "service_healthy"
    assert set(client["environment"]) <= CLIENT_VARIABLES
    assert client["environment"]["VNPU_ENDPOINT"] == f"http://vnpu:{Settings().port}"
    assert client["environment"]["VNPU_HOST_MEMORY"] == "remote"
    script = client["entrypoint"][-1]
    assert (ROOT / script).exists() and script.endswith("task_update_concurrent.py")


def test_the_entry_command_serves_and_passes_the_healthcheck() -> None:
    """ENTRYPOINT with the image's ENV, run here. One change: the bind address is 127.0.0.1, not 0.0.0.0 (tests
    never listen beyond loopback); everything else is as the Dockerfile states it."""
    vnpu = Path(sys.executable).parent / "vnpu"
    if not vnpu.exists():
        pytest.fail("the vnpu console script is not installed: pip install -e .")
    port = free_port()
    env = {**os.environ, **image_env(), "VNPU_HOST": "127.0.0.1", "VNPU_PORT": str(port), "VNPU_MEMORY": "64MiB"}
    entry = json.loads(instruction("ENTRYPOINT")[0])
    process = subprocess.Popen([str(vnpu), *entry[1:]], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        check = json.loads(instruction("HEALTHCHECK")[0].split("CMD", 1)[1])
        done = subprocess.run([sys.executable, *check[1:]], env=env, timeout=30, check=False)
        assert done.returncode == 0
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=30)[0].decode()
    assert process.returncode == 0, output
    assert f"listening on http://127.0.0.1:{port}" in output


def test_the_uds_profile_shares_the_socket_and_its_healthcheck_passes(tmp_path: Path) -> None:
    """The "uds" profile: the daemon's socket lies in a volume the client mounts at the same place, the client names
    it and joins the daemon's IPC namespace (to map its host buffers), the image gives its user that directory; and
    the profile's healthcheck, run here against `vnpu serve` with the profile's settings (the socket moved under
    tmp_path, the bind address loopback), fails before the daemon listens and passes once it does."""
    services = compose()["services"]
    daemon, client = services["vnpu-uds"], services["client-uds"]
    socket_path = PurePosixPath(daemon["environment"]["VNPU_UDS"])
    assert set(daemon["environment"]) <= SETTING_VARIABLES and set(client["environment"]) <= CLIENT_VARIABLES
    mounted = dict(reversed(volume.split(":")[:2]) for volume in daemon["volumes"])  # container path -> volume
    assert mounted[str(socket_path.parent)] in compose()["volumes"] and client["volumes"] == daemon["volumes"]
    assert client["environment"]["VNPU_ENDPOINT"] == f"unix:{socket_path}"
    assert daemon["ipc"] == "shareable" and client["ipc"] == "service:vnpu-uds"
    assert client["depends_on"]["vnpu-uds"]["condition"] == "service_healthy"
    assert any("-o vnpu" in run and str(socket_path.parent) in run for run in instruction("RUN"))
    vnpu = Path(sys.executable).parent / "vnpu"
    here = tmp_path / "vnpu.sock"
    check = [
        str(vnpu) if arg == "vnpu" else arg.replace(str(socket_path), str(here))
        for arg in daemon["healthcheck"]["test"][1:]
    ]
    profile = {k: str(v) for k, v in daemon["environment"].items()}
    env = {
        **os.environ,
        **image_env(),
        **profile,
        "VNPU_HOST": "127.0.0.1",
        "VNPU_UDS": str(here),
        "VNPU_MEMORY": "64MiB",
    }
    assert subprocess.run(check, env=env, capture_output=True, timeout=30, check=False).returncode != 0
    entry = json.loads(instruction("ENTRYPOINT")[0])
    process = subprocess.Popen([str(vnpu), *entry[1:]], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:  # as Docker runs a healthcheck: again until it passes
            done = subprocess.run(check, env=env, capture_output=True, text=True, timeout=30, check=False)
            if done.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "device" in done.stdout
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=30)[0].decode()
    assert process.returncode == 0, output
    assert f"listening on unix:{here}" in output and not here.exists()


def test_serve_speaks_tls_with_the_ssl_options(tmp_path: Path) -> None:
    """TLS without a reverse proxy: `vnpu serve --ssl-certfile --ssl-keyfile` (a self-signed certificate here)."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve", "--port", str(port), "--memory", "16MiB",
         "--ssl-certfile", str(cert), "--ssl-keyfile", str(key)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline, answer = time.monotonic() + 30, None
        while answer is None and time.monotonic() < deadline:
            try:
                trust = ssl.create_default_context(cafile=str(cert))
                answer = httpx.get(f"https://127.0.0.1:{port}/healthz", verify=trust, timeout=1)
            except httpx.HTTPError:
                time.sleep(0.1)
        assert answer is not None and answer.status_code == 200
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)  # plain HTTP is not served
        client = (  # the client over wss://, trusting the certificate as a user would (SSL_CERT_FILE)
            "from client.config import Config\n"
            "from client.session import Session\n"
            f"s = Session(Config(endpoint='https://127.0.0.1:{port}'))\n"
            "s.call('aclInit', None); s.call('aclrtSetDevice', 0)\n"
            "print('device', s.call('aclrtGetDevice')); s.close()\n"
        )
        env = {**os.environ, "SSL_CERT_FILE": str(cert), "PYTHONPATH": str(ROOT)}
        run = subprocess.run([sys.executable, "-c", client], cwd=ROOT, env=env, capture_output=True, timeout=60)
        assert run.returncode == 0 and run.stdout.decode().strip() == "device 0", run.stderr.decode()[-2000:]
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=30)[0].decode()
    assert f"listening on https://127.0.0.1:{port}" in output
