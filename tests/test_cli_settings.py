"""Bad settings end `vnpu serve` in one line naming the setting and its accepted form (exit 2), a port in use in
one line (exit 1), and "listening" is printed only once the daemon listens."""

from __future__ import annotations

import socket
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import httpx
import pytest

from server.api.settings import BadSetting, Settings
from tests.daemons import ROOT, clean_env, free_port


def serve(*options: str, **env: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "server.cli", "serve", "--log-level", "warning", *options]
    return subprocess.run(args, cwd=ROOT, env=clean_env() | env, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize(
    ("options", "env", "line"),
    [
        (["--memory", "lots"], {}, "--memory 'lots' is not a size (e.g. 8GiB, 512MiB, 1048576)"),
        ([], {"VNPU_PORT": "abc"}, "VNPU_PORT='abc' is not a whole number (e.g. 9470)"),
        (["--port", "99999"], {}, "VNPU_PORT (--port) 99999 is not a TCP port: use 0 to 65535 (default 9470)"),
        (["--devices", "0"], {}, "VNPU_DEVICE_COUNT (--devices) 0 is not a device count: use 1 to 1024"),
        (
            [],
            {"VNPU_TOKENS_FILE": "/nonexistent/tokens"},
            "VNPU_TOKENS_FILE (--tokens-file) /nonexistent/tokens: No such file or directory",
        ),
    ],
)
def test_a_bad_setting_is_one_line_and_exit_2(options: list[str], env: dict[str, str], line: str) -> None:
    done = serve(*options, **env)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"vnpu serve: {line}\n")


def test_a_port_in_use_is_one_line_and_no_banner() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = serve("--port", str(port))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"vnpu serve: cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_listening_is_printed_once_the_daemon_answers(tmp_path: Path) -> None:
    port = free_port()
    args = [sys.executable, "-m", "server.cli", "serve", "--log-level", "warning", "--port", str(port)]
    proc = subprocess.Popen(args, cwd=ROOT, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline().decode()
        assert f"listening on http://127.0.0.1:{port}" in banner
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200  # at once, no retry
    finally:
        proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"VNPU_SESSION_IDLE": "soon"}, "VNPU_SESSION_IDLE='soon' is not a number (e.g. 600.0)"),
        ({"VNPU_CONTEXT_MEMORY": "1 pint"}, "VNPU_CONTEXT_MEMORY='1 pint' is not a size (e.g. 8GiB, 512MiB, 1048576)"),
        ({"VNPU_TENANT_SESSIONS": "2.5"}, "VNPU_TENANT_SESSIONS='2.5' is not a whole number (e.g. 256)"),
        ({"VNPU_TENANT_SHARE": "2"}, "VNPU_TENANT_SHARE 2 is not a fraction: use more than 0, up to 1"),
        ({"VNPU_DEVICE_COUNT": "0"}, "VNPU_DEVICE_COUNT (--devices) 0 is not a device count: use 1 to 1024"),
        ({"VNPU_DEVICE_COUNT": "1025"}, "VNPU_DEVICE_COUNT (--devices) 1025 is not a device count: use 1 to 1024"),
        ({"VNPU_MAX_MODELS": "0"}, "VNPU_MAX_MODELS (--max-models) 0 leaves nothing: use 1 or more"),
        ({"VNPU_MEMORY": "0"}, "VNPU_MEMORY (--memory) 0 leaves nothing: use 1 or more"),
        (
            {"VNPU_LOG_LEVEL": "loud"},
            "VNPU_LOG_LEVEL (--log-level) 'loud' is not one of critical, error, warning, info, debug",
        ),
    ],
)
def test_every_setting_names_itself_and_its_form(env: dict[str, str], message: str) -> None:
    with pytest.raises(BadSetting) as info:
        Settings.from_env(env)
    assert str(info.value) == message


def test_options_and_variables_convert_alike() -> None:
    settings = Settings.from_env({"VNPU_MEMORY": "1GiB", "VNPU_PORT": "9000"}, port="9001", devices=None)
    assert (settings.memory, settings.port, settings.devices) == (1 << 30, 9001, 1)


def test_the_log_level_is_read_in_any_case() -> None:
    assert Settings.from_env({"VNPU_LOG_LEVEL": "WARNING"}).log_level == "warning"
    assert Settings.from_env({}, log_level="Debug").log_level == "debug"


def test_serve_warns_that_vnpu_devices_is_the_clients_map(tmp_path: Path) -> None:
    """`VNPU_DEVICES=2 vnpu serve` looks like the rule "every option reads VNPU_<OPTION>", but VNPU_DEVICES is the
    client's map of devices to daemons: the daemon says which variable it reads, and how many devices it serves."""
    for env, warned in (({"VNPU_DEVICES": "2"}, True), ({"VNPU_DEVICES": "2", "VNPU_DEVICE_COUNT": "2"}, False)):
        args = [sys.executable, "-m", "server.cli", "serve", "--log-level", "warning", "--port", str(free_port())]
        err = tmp_path / "err.txt"
        with err.open("wb") as sink:
            proc = subprocess.Popen(args, cwd=ROOT, env=clean_env() | env, stdout=subprocess.PIPE, stderr=sink)
        try:
            assert proc.stdout is not None
            banner = proc.stdout.readline().decode()
            assert f"{env.get('VNPU_DEVICE_COUNT', '1')} device(s)" in banner
        finally:
            proc.terminate()
            assert proc.wait(timeout=30) == 0
            proc.stdout.close()
        warning = (
            "VNPU_DEVICES is set, but it is the client's map of devices to daemons: vnpu serve reads its device "
            "count from VNPU_DEVICE_COUNT (or --devices), and serves 1 device(s)"
        )
        assert (warning in err.read_text()) is warned, err.read_text()


def test_serve_help_lists_the_settings_that_have_no_option() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "serve", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    text = " ".join(done.stdout.split())
    options = {"host", "port", "uds", "devices", "memory", "max_models", "token", "tokens_file", "log_level"}
    options |= {"ssl_certfile", "ssl_keyfile", "kernels", "operators", "tokens"}
    page = (ROOT / "docs" / "daemon.md").read_text()
    for f in fields(Settings):
        if f.name not in options:
            variable = "VNPU_" + f.name.upper()
            assert f"{variable}=" in text, variable  # with its default
            assert f"`{variable}`" in page, f"{variable} is not in docs/daemon.md"
    assert "VNPU_SESSION_IDLE=600," in text and "VNPU_MAX_BODY=256MiB," in text and "VNPU_POOL_SHARE=unset" in text
