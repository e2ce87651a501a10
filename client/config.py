"""Where the daemon is: aclInit's JSON config file (`{"vnpu": {"endpoint": ..., "token": ...}}`), else the
VNPU_ENDPOINT (default http://127.0.0.1:9470; unix:PATH for a daemon's Unix socket, embedded for none) and VNPU_TOKEN
variables; VNPU_TRANSPORT=ws|http,
VNPU_LAUNCH_BLOCKING=1 and VNPU_HOST_MEMORY=auto|local|remote tune the session; VNPU_DEVICES maps device ids to
several daemons (see client.routing)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from proto.errors import ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM, ACL_ERROR_PARSE_FILE, AclError

DEFAULT_ENDPOINT = "http://127.0.0.1:9470"
EMBEDDED = "embedded"  # the endpoint that runs the device inside this process
UNIX = "unix:"  # the endpoint's prefix for a daemon on a Unix socket of this machine (`vnpu serve --uds PATH`)
LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Config:
    endpoint: str = DEFAULT_ENDPOINT
    token: str | None = None
    transport: str = "ws"  # "ws" or "http"
    launch_blocking: bool = False  # every call waits for its reply (exact C behaviour, for debugging)
    host_memory: str = "auto"  # "local" maps the daemon's shared memory, "remote" goes through the wire
    context: str | None = None  # join this context instead of creating one
    devices: str | None = None  # VNPU_DEVICES: device ids mapped to several daemons (client.routing)
    run: str | None = None  # VNPU_RUN: a label the daemon gives the contexts this process opens (`vnpu trace -- cmd`)

    @property
    def embedded(self) -> bool:
        """VNPU_ENDPOINT=embedded: the device runs inside this process (client.embedded)."""
        return self.endpoint == EMBEDDED

    @property
    def uds(self) -> str | None:
        """The path of the daemon's Unix socket (VNPU_ENDPOINT=unix:PATH), None over TCP."""
        return self.endpoint[len(UNIX) :] if self.endpoint.startswith(UNIX) else None

    @property
    def url(self) -> str:
        """The daemon's HTTP base URL (a Unix socket's requests name localhost)."""
        return "http://localhost" if self.uds else self.endpoint

    @property
    def on_this_machine(self) -> bool:
        """Whether the daemon shares this machine (its host buffers' shared memory can be mapped)."""
        return self.embedded or self.uds is not None or urlsplit(self.endpoint).hostname in LOOPBACK

    def opening(self) -> dict[str, str]:
        """What a new session tells the daemon: the context it joins, the run it belongs to (WebSocket query
        parameters, or the body of POST /v1/sessions)."""
        return {k: v for k, v in (("context", self.context), ("run", self.run)) if v}


def read_config(path: str) -> dict[str, Any]:
    """aclInit's JSON file as the runtime reads it: an empty file is no configuration, one that cannot be read is
    ACL_ERROR_INVALID_FILE, one that is not a JSON object ACL_ERROR_PARSE_FILE."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise AclError(ACL_ERROR_INVALID_FILE, f"config file {path} cannot be read: {error}", "aclInit") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as error:
        raise AclError(ACL_ERROR_PARSE_FILE, f"config file {path} is not valid JSON: {error}", "aclInit") from None
    if not isinstance(data, dict):
        raise AclError(ACL_ERROR_PARSE_FILE, f"config file {path} must hold a JSON object", "aclInit")
    return data


def daemon_url(value: object, source: str) -> str:
    """The daemon's URL `value` (from `source`) as the client uses it, http(s)://host[:port] (a ws(s):// one names
    the same daemon), unix:PATH (made absolute) or `embedded`; anything else is AclError 100000 naming the setting
    and the accepted form."""
    if value == EMBEDDED:
        return EMBEDDED
    if isinstance(value, str) and value.startswith(UNIX) and len(value) > len(UNIX):
        return UNIX + os.path.abspath(value[len(UNIX) :])
    try:
        parts = urlsplit(value) if isinstance(value, str) else None
        valid = parts is not None and parts.scheme in ("http", "https", "ws", "wss") and bool(parts.hostname)
        valid = valid and parts is not None and parts.port != 0
    except ValueError:  # a port that is not a number
        valid = False
    if not valid or not isinstance(value, str):
        raise AclError(
            ACL_ERROR_INVALID_PARAM,
            f"{source} {value!r} is not a daemon URL: use http://host:port or https://host:port "
            f"(e.g. {DEFAULT_ENDPOINT}), unix:PATH for a daemon's Unix socket, or {EMBEDDED} to run the device "
            "inside this process",
            "aclInit",
        )
    url = value.rstrip("/")
    return "http" + url[2:] if url.startswith("ws") else url


def _choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = os.environ.get(name, default).lower()
    if value not in choices:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{name} {value!r} is not one of {', '.join(choices)}", "aclInit")
    return value


def load(config_path: str | None = None) -> Config:
    env = os.environ
    endpoint, token = env.get("VNPU_ENDPOINT", DEFAULT_ENDPOINT), env.get("VNPU_TOKEN") or None
    source = "VNPU_ENDPOINT"
    if config_path:
        data = read_config(config_path).get("vnpu", {})
        if not isinstance(data, dict):
            raise AclError(ACL_ERROR_PARSE_FILE, f'config file {config_path}: "vnpu" must be an object', "aclInit")
        if "endpoint" in data:
            endpoint, source = data["endpoint"], f"config file {config_path}: vnpu.endpoint"
        token = data.get("token", token)
    return Config(
        endpoint=daemon_url(endpoint, source),
        token=token,
        transport=_choice("VNPU_TRANSPORT", "ws", ("ws", "http")),
        launch_blocking=env.get("VNPU_LAUNCH_BLOCKING", "0") not in ("", "0"),
        host_memory=_choice("VNPU_HOST_MEMORY", "auto", ("auto", "local", "remote")),
        context=env.get("VNPU_CONTEXT") or None,
        devices=env.get("VNPU_DEVICES") or None,
        run=env.get("VNPU_RUN") or None,
    )
