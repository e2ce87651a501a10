"""`client.acl` for asyncio programs: the same functions, under the same names, as coroutines.

    from client import aio
    await aio.aclInit(None)
    dev = await aio.aclrtMalloc(1024, 0)

Both modules are generated from the one call table and share the I/O-free core (`client.core`): argument
conversion, pipelining (batched by `client.outbox`), result shaping and error rules are the same. All coroutines
of one event loop are one client thread for the daemon. Host objects (aclCreateTensor, phase 1, ...) are plain
functions, as in `client.acl`. A remote HostBuffer (another machine, or VNPU_HOST_MEMORY=remote) cannot do
blocking I/O inside a loop: use `await host_write(buf, data)` / `await host_read(buf)` with it; a local one works
directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import msgpack
from websockets.asyncio.client import ClientConnection, connect, unix_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

import proto.aclnn as _aclnn
from client import kernels as _kernels
from client import lasterror
from client import tdt as _tdt
from client.acl import CONSTANTS, ENUM_TYPES, HOST_FUNCTIONS, IMPLEMENTED, STRUCTS, not_initialized
from client.callbacks import FUNCTIONS as CALLBACK_FUNCTIONS
from client.config import Config, load
from client.core import Outgoing, Protocol, prepare, thread_identity
from client.embedded import AsyncEmbeddedConnection
from client.errors import TransportError as TransportError
from client.errors import refusal
from client.hostbuf import HostBuffer as HostBuffer
from client.outbox import AsyncOutbox
from client.session import EMBEDDED_WS_ONLY, refused
from proto.calltable import CALLS
from proto.errors import ACL_ERROR_RT_FEATURE_NOT_SUPPORT
from proto.errors import AclError as AclError


class AsyncSession:
    """One daemon context, for one event loop."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.protocol = Protocol()
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ws: ClientConnection | AsyncEmbeddedConnection | None = None
        self._outbox: AsyncOutbox | None = None  # pipelined calls not sent yet (WebSocket)
        self._http: httpx.AsyncClient | None = None
        self._reader: asyncio.Task[None] | None = None
        self._broken: str | None = None
        self.context_id = self.session_id = ""

    @classmethod
    async def connect(cls, config: Config | None = None) -> AsyncSession:
        session = cls(config or Config())
        headers = {"Authorization": f"Bearer {session.config.token}"} if session.config.token else {}
        try:
            if session.config.transport == "ws":
                await session._open_ws(headers)
            elif session.config.embedded:
                raise TransportError(EMBEDDED_WS_ONLY)
            else:
                await session._open_http(headers)
        except (OSError, InvalidHandshake, TimeoutError, httpx.HTTPError, ConnectionClosed) as error:
            raise refused(session.config, error) from None
        return session

    async def _open_ws(self, headers: dict[str, str]) -> None:
        url = self.config.url.replace("http", "ws", 1) + "/v1/ws"
        if opening := self.config.opening():
            url += f"?{urlencode(opening)}"
        if self.config.embedded:
            self._ws = await AsyncEmbeddedConnection.open(urlsplit(url).query, headers, timeout=10)
        else:
            options: dict[str, Any] = {"additional_headers": headers, "max_size": None, "compression": None}
            if self.config.uds:
                self._ws = await unix_connect(self.config.uds, url, open_timeout=10, **options)
            else:
                self._ws = await connect(url, open_timeout=10, **options)
        hello = msgpack.unpackb(await self._ws.recv())["hello"]
        self.context_id, self.session_id = hello["context"], hello["session"]
        self._reader = asyncio.get_running_loop().create_task(self._read_forever())
        self._outbox = AsyncOutbox(self._ws.send)

    async def _open_http(self, headers: dict[str, str]) -> None:
        transport = httpx.AsyncHTTPTransport(uds=self.config.uds) if self.config.uds else None
        self._http = httpx.AsyncClient(base_url=self.config.url, headers=headers, timeout=None, transport=transport)
        try:
            response = await self._http.post("/v1/sessions", json=self.config.opening())
        except httpx.HTTPError:
            await self._http.aclose()
            raise
        if response.status_code != 200:
            await self._http.aclose()
            raise refusal(self.config.endpoint, response.status_code, response.content, bool(self.config.token))
        self.context_id, self.session_id = response.json()["context"], response.json()["session"]
        self._http.headers["x-vnpu-session"] = self.session_id

    async def _read_forever(self) -> None:
        assert self._ws is not None
        try:
            async for frame in self._ws:
                message = msgpack.unpackb(frame)
                future = self._waiting.pop(message.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(message)
                elif "error" in message:
                    self.protocol.pipelined_error(message)
        except ConnectionClosed:
            pass
        self._broken = "the connection to the daemon closed"
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(TransportError(self._broken))

    async def call(self, api: str, *values: Any) -> Any:
        out = prepare(api, values, self.config.launch_blocking)
        reply = await self._exchange(out)
        result = self.protocol.settle(reply, out.finish, api) if out.wait or reply is not None else None  # HTTP: all
        if api in ("aclrtMallocHost", "aclrtMemAllocManaged"):
            return await self._host_buffer(result, values[0])
        if api in ("aclrtFreeHost", "aclrtFree") and isinstance(values[0], HostBuffer):
            values[0].release()
        return result

    async def _exchange(self, out: Outgoing) -> dict[str, Any] | None:
        if self._http is not None:
            body = out.json_body()
            thread = "-".join(map(str, thread_identity()))
            response = await self._http.post(f"/v1/call/{out.call.name}", json=body, headers={"x-vnpu-thread": thread})
            payload: dict[str, Any] = response.json()
            if "error" in payload:
                return payload
            return {"result": out.call.result.model_validate_json(response.content).model_dump()}
        if self._broken:
            raise TransportError(self._broken)
        ident, data = self.protocol.pack(out)
        future = None
        if out.wait:
            future = asyncio.get_running_loop().create_future()
            self._waiting[ident] = future
        assert self._outbox is not None
        try:
            await (self._outbox.now(data) if out.wait else self._outbox.later(data))
        except ConnectionClosed as error:
            raise TransportError(f"cannot send to the daemon: {error}") from None
        return await future if future is not None else None

    async def _host_buffer(self, ptr: Any, size: int) -> HostBuffer:
        segment = None
        if self.config.host_memory == "local" or (self.config.host_memory == "auto" and self.config.on_this_machine):
            name, _ = await self.call("vnpuHostInfo", ptr)
            segment = name if HostBuffer.shm_path(name).exists() else None
        return HostBuffer(ptr, size, _blocking_io, _blocking_io, segment, owner=self)

    async def close(self) -> None:
        if self._outbox is not None:
            with contextlib.suppress(ConnectionClosed, OSError):
                await self._outbox.now()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
        if self._http is not None:
            await self._http.aclose()


def _blocking_io(*args: Any) -> Any:
    raise TypeError("a remote HostBuffer in client.aio: use `await host_write(buf, data)` / `await host_read(buf)`")


_current: AsyncSession | None = None
_init_count = 0


def use(session: AsyncSession | None) -> None:
    global _current
    _current = session


def current(api: str = "") -> AsyncSession:
    if _current is None:
        raise not_initialized(api, "await aclInit first (or use(await AsyncSession.connect(...)))")
    return _current


def _coroutine(api: str) -> Callable[..., Awaitable[Any]]:
    async def function(*args: Any) -> Any:
        try:
            return await current(api).call(api, *args)
        except AclError as error:
            lasterror.note(error)  # one thread runs the loop: its coroutines share the last error, as threads do
            raise

    function.__name__ = function.__qualname__ = api
    function.__doc__ = f"{api}({', '.join(CALLS[api].arg_names)}), a coroutine. {CALLS[api].doc}".strip()
    function.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in CALLS[api].arg_names]
    )
    return function


async def aclInit(config_path: str | None = None) -> None:  # noqa: N802
    global _init_count
    if _current is None:
        use(await AsyncSession.connect(load(config_path)))
    await current("aclInit").call("aclInit", config_path)
    _init_count += 1  # once the daemon counted it


async def aclFinalize() -> None:  # noqa: N802
    global _init_count
    await current("aclFinalize").call("aclFinalize")
    _init_count -= 1
    if _init_count == 0 and _current is not None:
        await _current.close()
        use(None)


async def host_write(buf: HostBuffer, data: Any, offset: int = 0) -> None:
    """HostBuffer.write for client.aio (local: in place; remote: over the wire)."""
    if buf.local:
        buf.write(data, offset)
    else:
        await current().call("vnpuHostWrite", buf.ptr + offset, bytes(memoryview(data).cast("B")))


async def host_read(buf: HostBuffer, count: int | None = None, offset: int = 0) -> bytes:
    if buf.local:
        return buf.read(count, offset)
    data: bytes = await current().call("vnpuHostRead", buf.ptr + offset, buf.size - offset if count is None else count)
    return data


async def aclmdlRIDebugJsonPrint(modelRI: int, path: str | None, flags: int) -> str:  # noqa: N802, N803
    """Write the model's chrome-trace JSON to `path` (when given) and return it."""
    text: str = await current("aclmdlRIDebugJsonPrint").call("aclmdlRIDebugJsonPrint", modelRI, path, flags)
    if path:
        Path(path).write_text(text)
    return text


async def aclmdlRIDestroy(modelRI: int) -> None:  # noqa: N802, N803
    """Destroy the model (no destroy callback can be registered from this client: see `_no_callbacks`)."""
    await current("aclmdlRIDestroy").call("aclmdlRIDestroy", modelRI)


async def aclrtBinaryLoadFromFile(binPath: str | None, options: Any = None) -> int:  # noqa: N802, N803
    """Load the file's bytes (read here) with aclrtBinaryLoadFromData, as client.acl does."""
    handle: int = await current("aclrtBinaryLoadFromData").call(
        "aclrtBinaryLoadFromData", _kernels.binary_file(binPath), options
    )
    return handle


async def aclrtLaunchKernelWithConfig(  # noqa: N802
    funcHandle: int | None,
    numBlocks: int,
    stream: int | None,
    cfg: Any,
    argsHandle: Any,
    reserve: Any,  # noqa: N803
) -> None:
    wire = _kernels.args_wire(argsHandle)
    await current("aclrtLaunchKernelWithConfig").call(
        "aclrtLaunchKernelWithConfig", funcHandle, numBlocks, stream, cfg, wire, reserve
    )


def _no_callbacks(api: str) -> Callable[..., Awaitable[Any]]:
    async def function(*_: Any) -> Any:
        raise AclError(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "the asyncio client does not run callbacks: its coroutines are one client thread, so a wait for "
            "callbacks would hold up every other call of the loop; use client.acl (threads) for them",
            api,
        )

    function.__name__ = function.__qualname__ = api
    return function


def _tdt_coroutine(api: str) -> Callable[..., Awaitable[Any]]:
    """A TDT call over host objects (`client.tdt.STEPS`): the same steps as client.acl's, around an awaited call."""
    prepare, finish = _tdt.STEPS[api]

    async def function(*args: Any) -> Any:
        return finish(await current(api).call(api, *prepare(*args)), *args)

    function.__name__ = function.__qualname__ = api
    return function


_TDT = {api: _tdt_coroutine(api) for api in _tdt.STEPS}
globals().update(_TDT)
_SPECIAL = {"aclInit", "aclFinalize", "aclmdlRIDebugJsonPrint", "aclmdlRIDestroy", *_kernels.SESSION, *_TDT}
_CALLBACKS = {api: _no_callbacks(api) for api in CALLBACK_FUNCTIONS}
_COROUTINES = {
    api: _coroutine(api) for api in CALLS if api not in _SPECIAL | set(_CALLBACKS) and not api.startswith("vnpu")
} | _CALLBACKS
globals().update(_COROUTINES)
globals().update(HOST_FUNCTIONS)
globals().update(CONSTANTS)
globals().update(ENUM_TYPES)
globals().update(STRUCTS)

__all__ = sorted(
    {*_COROUTINES, *HOST_FUNCTIONS, *STRUCTS, *CONSTANTS, *ENUM_TYPES, *_SPECIAL, *IMPLEMENTED}
    | {"AclError", "AsyncSession", "HostBuffer", "TransportError", "current", "use", "host_read", "host_write"}
)


_made: dict[str, Callable[..., Awaitable[Any]]] = {}


def __getattr__(name: str) -> Any:
    """An operator's phase 1, or the coroutine of its phase 2, for any declared operator (made on first use)."""
    if name.startswith("aclnn"):
        phase1 = _aclnn.function(name)
        if phase1 is not None:
            return phase1
        if name in CALLS:
            made = _made.get(name)
            if made is None:
                made = _made[name] = _coroutine(name)
            return made
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
