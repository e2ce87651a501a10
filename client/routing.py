"""Several daemons, one program: VNPU_DEVICES maps the program's device ids to daemons.

    VNPU_DEVICES=0=ws://a:9470/0,1=ws://b:9470/0     # device 1 of the program is device 0 of daemon b

`aclrtSetDevice(1)` then sends the calling thread's calls to daemon b, as device 0 there. The client keeps one
session per daemon. Device pointers are rebased so that every device of the program has its own address range
(the layout the daemon itself uses for its devices), so a pointer always says which device -- and daemon -- it
belongs to. Handles (streams, events, models, task groups) are daemon-relative and used with the current device,
as in CANN. Host buffers belong to the daemon that allocated them.

A copy between devices of two different daemons is refused with ACL_ERROR_FEATURE_UNSUPPORTED and a message that
says to copy through host memory: moving the bytes through the client would hide a round trip per copy behind
what looks like a device-to-device copy.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from client.config import Config
from client.hostbuf import HostBuffer
from client.session import Session
from proto.aclnn import KernelDesc, aclOpExecutor, aclTensor, aclTensorList, consume
from proto.addresses import DEVICE_BASE, DEVICE_STRIDE, MAX_DEVICES
from proto.calltable import CALLS
from proto.errors import (
    ACL_ERROR_FEATURE_UNSUPPORTED,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_INVALID_DEVICEID,
    AclError,
)

POINTER_ARGS = ("devPtr", "dst", "src", "workspace")


@dataclass(frozen=True)
class Route:
    endpoint: str  # http(s)://host:port
    remote: int  # the device id on that daemon


def parse_devices(text: str) -> dict[int, Route]:
    """'0=ws://a:9470/0,1=ws://b:9470/1' -> {0: Route('http://a:9470', 0), 1: Route('http://b:9470', 1)}."""
    routes: dict[int, Route] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        device, _, url = item.partition("=")
        parts = urlsplit(url)
        if not device.strip().isdigit() or parts.scheme not in ("ws", "wss", "http", "https") or not parts.netloc:
            raise ValueError(f"VNPU_DEVICES: {item!r} is not <device id>=<ws|http>://host:port/<device id there>")
        scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
        remote = parts.path.strip("/") or "0"
        if not remote.isdigit():
            raise ValueError(f"VNPU_DEVICES: {item!r}: the path must be the device id on that daemon")
        routes[int(device)] = Route(f"{scheme}://{parts.netloc}", int(remote))
    if not routes:
        raise ValueError("VNPU_DEVICES is empty")
    return routes


def device_of(ptr: int) -> int | None:
    index = (ptr - DEVICE_BASE) // DEVICE_STRIDE
    return index if ptr >= DEVICE_BASE and ptr - DEVICE_BASE < MAX_DEVICES * DEVICE_STRIDE else None


class Router:
    """Looks like one Session to `client.acl`; sends each call to the daemon of the thread's current device."""

    def __init__(self, routes: dict[int, Route], config: Config) -> None:
        self.routes = routes
        self.sessions: dict[str, Session] = {}
        for route in routes.values():
            if route.endpoint not in self.sessions:
                self.sessions[route.endpoint] = Session(dataclasses.replace(config, endpoint=route.endpoint))
        self._current: dict[int, int] = {}  # OS thread -> device id of the program

    def call(self, api: str, *values: Any) -> Any:
        if api in ("aclInit", "aclFinalize"):
            for session in self.sessions.values():
                session.call(api, *values)
            return None
        if api == "aclrtGetDeviceCount":
            return len(self.routes)
        if api == "aclrtGetDevice":
            return self._device()
        if api in ("aclrtSetDevice", "aclrtResetDevice"):
            route = self._route(values[0], api)
            self.sessions[route.endpoint].call(api, route.remote)
            if api == "aclrtSetDevice":
                self._current[threading.get_ident()] = values[0]
            return None
        device = self._device()
        session = self.sessions[self.routes[device].endpoint]
        result = session.call(api, *self._outgoing(api, values, session))
        if api == "aclrtMalloc":
            return self._to_program(result, device)
        return result

    def _outgoing(self, api: str, values: tuple[Any, ...], session: Session) -> list[Any]:
        names = CALLS[api].arg_names
        out = list(values)
        for i, name in enumerate(names[: len(values)]):
            value = values[i]
            if name in POINTER_ARGS and isinstance(value, int) and device_of(value) is not None:
                out[i] = self._to_daemon(value, session, api, name)
            elif isinstance(value, HostBuffer) and value.owner is not session:
                raise AclError(ACL_ERROR_FEATURE_UNSUPPORTED, f"{name} is a host buffer of another daemon", api)
            elif name == "executor" and isinstance(value, aclOpExecutor | KernelDesc):
                kernel = consume(value, api) if isinstance(value, aclOpExecutor) else value
                out[i] = self._kernel_to_daemon(kernel, session, api)
        return out

    def _kernel_to_daemon(self, kernel: KernelDesc, session: Session, api: str) -> KernelDesc:
        args: dict[str, Any] = dict(kernel.args)

        def moved(tensor: aclTensor | None, name: str) -> aclTensor | None:
            if tensor is None:
                return None
            return dataclasses.replace(tensor, data=self._to_daemon(tensor.data, session, api, name))

        for name, value in kernel.args.items():
            if isinstance(value, aclTensor):
                args[name] = moved(value, name)
            elif isinstance(value, aclTensorList):
                args[name] = aclTensorList(tuple(moved(t, f"{name}[{i}]") for i, t in enumerate(value.tensors)))
        return dataclasses.replace(kernel, args=args)

    def _to_daemon(self, ptr: int, session: Session, api: str, name: str) -> int:
        device = device_of(ptr)
        assert device is not None
        route = self.routes.get(device)
        if route is None:
            raise AclError(
                ACL_ERROR_RT_INVALID_DEVICEID, f"{name} {ptr:#x} is on device {device}, not in VNPU_DEVICES", api
            )
        if self.sessions[route.endpoint] is not session:
            raise AclError(
                ACL_ERROR_FEATURE_UNSUPPORTED,
                f"{name} {ptr:#x} is on device {device} (daemon {route.endpoint}) but this thread's device "
                f"{self._device()} is on daemon {self.routes[self._device()].endpoint}: a copy or kernel across "
                "daemons is not supported; copy through host memory (D2H on one, H2D on the other)",
                api,
            )
        return ptr + (route.remote - device) * DEVICE_STRIDE

    def _to_program(self, ptr: int, device: int) -> int:
        return ptr + (device - self.routes[device].remote) * DEVICE_STRIDE

    def _device(self) -> int:
        device = self._current.get(threading.get_ident())
        if device is None:
            raise AclError(ACL_ERROR_RT_CONTEXT_NULL, "this thread has no current device: call aclrtSetDevice first")
        return device

    def _route(self, device: Any, api: str) -> Route:
        route = self.routes.get(device) if isinstance(device, int) else None
        if route is None:
            known = ", ".join(map(str, sorted(self.routes)))
            raise AclError(
                ACL_ERROR_RT_INVALID_DEVICEID, f"device {device} is not in VNPU_DEVICES (devices {known})", api
            )
        return route

    def recent_error_message(self) -> str | None:
        for session in self.sessions.values():
            message = session.recent_error_message()
            if message:
                return message
        return None

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()
