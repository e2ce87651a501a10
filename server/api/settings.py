"""The daemon's settings, from command-line options or VNPU_* environment variables."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import MISSING, Field, dataclass, field, fields
from pathlib import Path

from proto.addresses import MAX_DEVICES
from server.npu.machine import LAUNCH_TIMEOUT, MAX_LAUNCH_ELEMENTS, MAX_LAUNCH_WORKSPACE

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20}
_UNITS |= {"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}


# settings that are ints written as sizes
SIZES = (
    "memory",
    "max_body",
    "max_message",
    "context_memory",
    "max_pending_bytes",
    "max_reply_bytes",
    "max_launch_workspace",
)
LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


class BadSetting(ValueError):
    """A setting whose value is not of its accepted form: the message, one line, names both."""


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
    uds: str | None = None  # listen on this Unix socket (mode 0600) instead of host:port
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
    # with tokens naming two tenants or more (server.npu.memory.quota): what one tenant may hold in all its contexts
    tenant_share: float = 0.5  # of each device's limit: max_streams, max_events, max_models, memory (all devices)
    tenant_contexts: int = 64  # contexts (processes, REST sessions that opened one)
    tenant_sessions: int = 256  # sessions (WebSocket connections, REST sessions)
    # a connection's flow (reliability 3, 11, 12, 18, 19): its queued calls, all client threads together, and its
    # finished replies not yet sent are bounded; a shared context's queued calls run on after a disconnect
    max_pending: int = 65536  # calls queued per connection before the reader stops
    max_pending_bytes: int = 64 << 20  # memory of calls queued per connection (as decoded) before the reader stops
    max_reply_bytes: int = 256 << 20  # bytes of replies a connection may hold unsent before its calls wait
    disconnect_drain: float = 10.0  # seconds a shared context's queued calls may run after their connection ends
    head_timeout: float = 10.0  # seconds a connection has to send a complete request head (slowloris)
    allow_origins: str = ""  # browser origins besides the daemon's own that may use it (comma-separated, or *)
    session_idle: float = 600.0  # seconds before an idle REST session ends
    context_grace: float = 2.0  # seconds a context outlives its last session
    shutdown_deadline: float = 10.0  # seconds queued work may take at shutdown
    trace_capacity: int = 100_000  # events kept by the device's trace (0: tracing off)
    keep_ended: int = 16  # ended contexts whose models stay viewable (their trace events stay in the ring)
    max_while_iterations: int = 1_000_000  # body runs of one evaluation of a conditional WHILE task
    # the work of one launch, checked before it runs (server.npu.ops.work), and the kernel pool's fairness
    max_launch_elements: int = MAX_LAUNCH_ELEMENTS  # elements one aclnn launch computes (matmul: out × inner dim)
    max_launch_workspace: int = MAX_LAUNCH_WORKSPACE  # bytes of workspace one aclnn launch needs
    launch_timeout: float = LAUNCH_TIMEOUT  # seconds a task runs on the kernel pool before it is abandoned (507014)
    pool_share: int | None = None  # kernel-pool threads one context may hold at once (default: half of them)
    kernels: str = ""  # modules registering custom kernels (VNPU_KERNELS=pkg.mod,...), besides vnpu's samples
    operators: str = ""  # modules declaring aclnn operators (VNPU_OPERATORS=pkg.mod,...; proto.operators)
    dump_launches: str | None = None  # debug: each aclnn launch's tensors into this directory (server.npu.ops.dump)
    tokens: dict[str, str] = field(default_factory=dict, repr=False)  # token -> tenant, built from the above

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise BadSetting(f"VNPU_PORT (--port) {self.port} is not a TCP port: use 0 to 65535 (default 9470)")
        if not 0 < self.tenant_share <= 1:
            raise BadSetting(f"VNPU_TENANT_SHARE {self.tenant_share:g} is not a fraction: use more than 0, up to 1")
        if not 1 <= self.devices <= MAX_DEVICES:
            count = f"VNPU_DEVICE_COUNT (--devices) {self.devices}"
            raise BadSetting(f"{count} is not a device count: use 1 to {MAX_DEVICES}")
        for name, value in (("memory", self.memory), ("max_models", self.max_models)):
            if value < 1:
                raise BadSetting(f"{env_name(name)} (--{name.replace('_', '-')}) {value} leaves nothing: use 1 or more")
        self.log_level = self.log_level.lower()
        if self.log_level not in LOG_LEVELS:
            raise BadSetting(f"VNPU_LOG_LEVEL (--log-level) {self.log_level!r} is not one of {', '.join(LOG_LEVELS)}")
        if self.token:
            self.tokens[self.token] = "default"
        if self.tokens_file:
            try:
                text = Path(self.tokens_file).read_text()
            except OSError as error:
                raise BadSetting(f"VNPU_TOKENS_FILE (--tokens-file) {self.tokens_file}: {error.strerror}") from None
            for number, line in enumerate(text.splitlines(), 1):
                if line.strip() and not line.lstrip().startswith("#"):
                    parts = line.split()
                    if len(parts) != 2:
                        raise ValueError(f"{self.tokens_file}:{number}: expected 'tenant token'")
                    self.tokens[parts[1]] = parts[0]
        if self.operator_token and self.operator_token in self.tokens:
            raise ValueError("the operator token must differ from every tenant's token")

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides: object) -> Settings:
        """Defaults, then VNPU_* variables, then explicit `overrides` (command-line options that were given, as
        text or values); BadSetting names a value that is not of its setting's form."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in fields(cls):
            raw = env.get(env_name(f.name))
            if raw is not None and f.name != "tokens":
                values[f.name] = _convert(f, raw, f"{env_name(f.name)}=")
            given = overrides.get(f.name)
            if given is not None:
                option = f"--{f.name.replace('_', '-')} "
                values[f.name] = _convert(f, given, option) if isinstance(given, str) else given
        return cls(**values)  # type: ignore[arg-type]


def env_only_settings(options: set[str]) -> list[tuple[str, str]]:
    """(variable, default) of every setting that has no `vnpu serve` option (`options`: the options' names)."""
    listed = []
    for f in fields(Settings):
        if f.name in options or f.name == "tokens":
            continue
        default = f.default
        if default is None:
            shown = "unset"
        elif f.name in SIZES and isinstance(default, int):
            shown = _size_text(default)
        else:
            shown = f"{default:g}" if isinstance(default, float) else str(default)
        listed.append((env_name(f.name), shown))
    return listed


def _size_text(size: int) -> str:
    """A size as a setting takes it: 256MiB, 4GiB, 1000."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return str(size)


def env_name(setting: str) -> str:
    """The environment variable of a setting: VNPU_<NAME>, except that the device count is VNPU_DEVICE_COUNT
    (VNPU_DEVICES is the client's map of device ids to daemons)."""
    return "VNPU_DEVICE_COUNT" if setting == "devices" else f"VNPU_{setting.upper()}"


def _convert(setting: Field[object], raw: str, given_as: str) -> object:
    """`raw`, the text of `setting` (`given_as`: "VNPU_PORT=" or "--port "), as the setting's type."""
    kind = "size" if setting.name in SIZES else str(setting.type).split(" | ")[0]
    parsers: dict[str, Callable[[str], object]] = {"size": parse_size, "int": int, "float": float}
    parse = parsers.get(kind)
    if parse is None:
        return raw
    try:
        return parse(raw)
    except ValueError:
        example = setting.default if setting.default not in (None, MISSING) else 1
        forms = {"size": "a size (e.g. 8GiB, 512MiB, 1048576)", "int": f"a whole number (e.g. {example})"}
        raise BadSetting(f"{given_as}{raw!r} is not {forms.get(kind, f'a number (e.g. {example})')}") from None
