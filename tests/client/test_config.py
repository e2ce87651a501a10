"""aclInit's config file, read as the runtime reads it: the codes for a file that cannot be read or parsed, and
nothing changed when it fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from client import acl
from client.config import DEFAULT_ENDPOINT, load
from proto.errors import ACL_ERROR_INVALID_FILE, ACL_ERROR_PARSE_FILE, AclError


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
