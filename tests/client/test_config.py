"""aclInit's config file, read as the runtime reads it: the codes for a file that cannot be read or parsed, and
nothing changed when it fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client import acl
from client.config import DEFAULT_ENDPOINT, load
from proto.errors import ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM, ACL_ERROR_PARSE_FILE, AclError


def test_the_file_names_the_endpoint_and_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VNPU_ENDPOINT", "http://127.0.0.1:1")
    config = tmp_path / "acl.json"
    config.write_text(json.dumps({"dump": {}, "vnpu": {"endpoint": "http://127.0.0.1:9999/", "token": "t"}}))
    loaded = load(str(config))
    assert (loaded.endpoint, loaded.token) == ("http://127.0.0.1:9999", "t")


def test_an_empty_file_or_no_vnpu_section_is_no_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VNPU_ENDPOINT", raising=False)
    monkeypatch.delenv("VNPU_TOKEN", raising=False)
    empty, other = tmp_path / "empty.json", tmp_path / "other.json"
    empty.write_text("\n")
    other.write_text(json.dumps({"err_msg_mode": "1"}))
    for path in (empty, other):
        assert (load(str(path)).endpoint, load(str(path)).token) == (DEFAULT_ENDPOINT, None)


@pytest.mark.parametrize(
    ("content", "code", "words"),
    [
        (None, ACL_ERROR_INVALID_FILE, "cannot be read"),
        ("{not json", ACL_ERROR_PARSE_FILE, "is not valid JSON"),
        ("[1, 2]", ACL_ERROR_PARSE_FILE, "must hold a JSON object"),
        ('{"vnpu": 3}', ACL_ERROR_PARSE_FILE, '"vnpu" must be an object'),
    ],
)
def test_a_bad_file_fails_aclinit_with_the_runtimes_code(
    tmp_path: Path, content: str | None, code: int, words: str
) -> None:
    path = tmp_path / "acl.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(AclError) as info:
        acl.aclInit(str(path))
    assert info.value.code == code and words in str(info.value) and str(path) in str(info.value)
    assert acl._current is None  # nothing was initialised: the next aclInit starts afresh


@pytest.mark.parametrize(
    "endpoint", ["127.0.0.1:9470", "localhost:9470", "http://", "ftp://h", "http://h:port", "unix:"]
)
def test_an_endpoint_that_is_not_a_url_fails_aclinit_in_one_line(
    endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VNPU_ENDPOINT", endpoint)
    with pytest.raises(AclError) as info:
        acl.aclInit()
    assert (info.value.code, info.value.api) == (ACL_ERROR_INVALID_PARAM, "aclInit")
    assert info.value.message == (
        f"VNPU_ENDPOINT {endpoint!r} is not a daemon URL: use http://host:port or https://host:port "
        f"(e.g. {DEFAULT_ENDPOINT}), unix:PATH for a daemon's Unix socket, or embedded to run the device "
        "inside this process"
    )
    assert acl._current is None


def test_the_config_files_endpoint_is_checked_and_a_websocket_url_names_the_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "acl.json"
    path.write_text(json.dumps({"vnpu": {"endpoint": 9470}}))
    with pytest.raises(AclError, match=rf"^aclInit: .*config file {path}: vnpu.endpoint 9470 is not a daemon URL"):
        load(str(path))
    monkeypatch.setenv("VNPU_ENDPOINT", "wss://npu.example:9470/")
    assert load().endpoint == "https://npu.example:9470"  # both transports reach it


@pytest.mark.parametrize(
    ("name", "choices"), [("VNPU_TRANSPORT", "ws, http"), ("VNPU_HOST_MEMORY", "auto, local, remote")]
)
def test_a_bad_choice_is_an_acl_error(name: str, choices: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, "tcp")
    with pytest.raises(AclError) as info:
        load()
    assert (info.value.code, info.value.message) == (ACL_ERROR_INVALID_PARAM, f"{name} 'tcp' is not one of {choices}")
