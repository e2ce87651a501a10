"""The daemon's settings, from command-line options or VNPU_* environment variables."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20}
_UNITS |= {"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}


def parse_size(text: str | int) -> int:
    """'8GiB', '512M', '1024' -> bytes."""
    if isinstance(text, int):
        return text
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (use e.g. 8GiB, 512MiB, 1048576)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


@dataclass
class Settings:
    """Every setting has an environment variable (`env_name`: VNPU_PORT, VNPU_MEMORY=8GiB, VNPU_DEVICE_COUNT...)."""

    host: str = "127.0.0.1"
    port: int = 9470
    devices: int = 1
    memory: int = 8 << 30  # bytes per device
    max_models: int = 1024  # per device
    max_streams: int = 1984  # per device, default streams included
    max_events: int = 65536  # legacy events per device
    token: str | None = None  # one tenant, "default"
    tokens_file: str | None = None  # "tenant token" per line
    operator_token: str | None = field(default=None, repr=False)  # /metrics with every tenant's series, nothing else
    log_level: str = "info"
    ssl_certfile: str | None = None  # HTTPS/WSS (or put a TLS reverse proxy in front)
    ssl_keyfile: str | None = None
    max_body: int = 256 << 20  # REST request body
    max_message: int = 256 << 20  # WebSocket message
    context_memory: int | None = None  # device + pinned bytes per context
    context_handles: int | None = 100_000  # streams, events, models, task groups per context
    max_pending: int = 4096  # calls queued per connection and client thread before the reader stops
    max_pending_bytes: int = 64 << 20  # bytes of calls queued per connection before the reader stops
    head_timeout: float = 10.0  # seconds a connection has to send a complete request head (slowloris)
    session_idle: float = 600.0  # seconds before an idle REST session ends
    context_grace: float = 2.0  # seconds a context outlives its last session
    shutdown_deadline: float = 10.0  # seconds queued work may take at shutdown
    trace_capacity: int = 100_000  # events kept by the device's trace (0: tracing off)
    keep_ended: int = 16  # ended contexts whose models stay viewable (their trace events stay in the ring)
    max_while_iterations: int = 1_000_000  # body runs of one evaluation of a conditional WHILE task
    kernels: str = ""  # modules registering custom kernels (VNPU_KERNELS=pkg.mod,...), besides vnpu's samples
    tokens: dict[str, str] = field(default_factory=dict, repr=False)  # token -> tenant, built from the above

    def __post_init__(self) -> None:
        if self.token:
            self.tokens[self.token] = "default"
        if self.tokens_file:
            for number, line in enumerate(Path(self.tokens_file).read_text().splitlines(), 1):
                if line.strip() and not line.lstrip().startswith("#"):
                    parts = line.split()
                    if len(parts) != 2:
                        raise ValueError(f"{self.tokens_file}:{number}: expected 'tenant token'")
                    self.tokens[parts[1]] = parts[0]
        if self.operator_token and self.operator_token in self.tokens:
            raise ValueError("the operator token must differ from every tenant's token")

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides: object) -> Settings:
        """Defaults, then VNPU_* variables, then explicit `overrides` (command-line options that were given)."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in fields(cls):
            if f.name == "tokens":
                continue
            raw = env.get(env_name(f.name))
            if raw is not None:
                values[f.name] = _convert(f.name, raw)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]


def env_name(setting: str) -> str:
    """The environment variable of a setting: VNPU_<NAME>, except that the device count is VNPU_DEVICE_COUNT
    (VNPU_DEVICES is the client's map of device ids to daemons)."""
    return "VNPU_DEVICE_COUNT" if setting == "devices" else f"VNPU_{setting.upper()}"


def _convert(name: str, raw: str) -> object:
    if name in ("memory", "max_body", "max_message", "context_memory", "max_pending_bytes"):
        return parse_size(raw)
    if name in ("port", "devices", "max_models", "max_streams", "max_events", "context_handles", "max_pending",
                "trace_capacity", "max_while_iterations", "keep_ended"):  # fmt: skip
        return int(raw)
    if name in ("session_idle", "context_grace", "shutdown_deadline", "head_timeout"):
        return float(raw)
    return raw
