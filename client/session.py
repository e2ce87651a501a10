"""A blocking session with one daemon context, over the WebSocket (default) or HTTP.

The threads of a process share one session; each call carries its thread's identity. Calls that only queue work
are pipelined over the WebSocket (sent without waiting, in batches: `client.outbox`); an error they cause is
raised by the same thread's next call that waits. Over HTTP every call waits. `aclInit` makes a session current
for the module functions of `client.acl`; `Session(...)` can also be used directly, for several daemons or
contexts in one process.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any
from urllib.parse import urlencode

import httpx
import msgpack
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from client import streamstate
from client.callbacks import HostFuncThread
from client.config import Config
from client.core import Outgoing, Protocol, prepare, thread_identity
from client.embedded import EmbeddedConnection
from client.errors import TransportError, refusal, unreachable
from client.hostbuf import HostBuffer
from client.idlenews import SHARED_ACK, IdleNews
from client.kernels import Printed
from client.outbox import Outbox
from client.wsconn import WsConnection
from proto import news
from proto.aclnn import extents
from proto.errors import AclError

Slot = tuple[threading.Event, list[dict[str, Any]], tuple[int, ...]]  # a caller's wake-up, its reply, its thread


class Session:
    def __init__(self, config: Config | None = None) -> None:
        self.config = config or Config()
        self.protocol = Protocol()
        self._waiting: dict[int, Slot] = {}
        self._idle = IdleNews()  # streams the daemon said are finished (client.idlenews)
        self._numbering = threading.Lock()  # held from numbering a call until it is in the outbox
        self._lock = threading.Lock()
        self._broken: str | None = None
        self._ws: WsConnection | EmbeddedConnection | None = None
        self._http: httpx.Client | None = None
        self._outbox: Outbox | None = None  # pipelined calls not sent yet (WebSocket)
        self._host_functions = HostFuncThread(self.call)  # a thread from the first aclrtLaunchHostFunc on
        self._printed = Printed()  # kernel printf, written out at synchronizing calls (client.kernels)
        self._resources = contextlib.ExitStack()  # the connection, closed by close()
        headers = {"Authorization": f"Bearer {self.config.token}"} if self.config.token else {}
        if self.config.transport == "ws":
            self._open_ws(headers)
        elif self.config.embedded:
            raise TransportError(EMBEDDED_WS_ONLY)
        else:
            self._open_http(headers)
        LOG.info(  # which daemon a program reached, for one run without VNPU_ENDPOINT on a shared machine
            "connected to the vnpu daemon at %s over %s: context %s, session %s",
            self.config.endpoint,
            "HTTP" if self._http is not None else "the WebSocket",
            self.context_id,
            self.session_id,
        )

    # -- transports ------------------------------------------------------------------------------------------

    def _open_ws(self, headers: dict[str, str]) -> None:
        query = urlencode({**self.config.opening(), **news.QUERY})
        url = self.config.url.replace("http", "ws", 1) + "/v1/ws" + (f"?{query}" if query else "")
        try:
            if self.config.embedded:
                self._ws = EmbeddedConnection(query, headers, timeout=10)
            else:
                self._ws = WsConnection(url, headers, timeout=10, uds=self.config.uds)
            self._resources.callback(self._ws.close)
            hello = msgpack.unpackb(self._ws.recv())["hello"]
            self._ws.set_timeout(None)
        except (OSError, InvalidHandshake, TimeoutError, ConnectionClosed) as error:
            raise refused(self.config, error) from None
        self.context_id, self.session_id = hello["context"], hello["session"]
        if isinstance(self._ws, EmbeddedConnection):  # replies are taken where they are made: no reader thread
            self._ws.hand_over(self._take, self._end)
        else:
            threading.Thread(target=self._read_forever, name="vnpu-reader", daemon=True).start()
        self._outbox = Outbox(self._ws.send)

    def _open_http(self, headers: dict[str, str]) -> None:
        transport = httpx.HTTPTransport(uds=self.config.uds) if self.config.uds else None
        self._http = httpx.Client(base_url=self.config.url, headers=headers, timeout=None, transport=transport)
        try:
            response = self._http.post("/v1/sessions", json=self.config.opening())
        except httpx.HTTPError as error:
            self._http.close()
            raise refused(self.config, error) from None
        if response.status_code != 200:
            self._http.close()
            raise refusal(self.config.endpoint, response.status_code, response.content, bool(self.config.token))
        self.context_id, self.session_id = response.json()["context"], response.json()["session"]
        self._http.headers["x-vnpu-session"] = self.session_id

    def _read_forever(self) -> None:
        assert self._ws is not None
        try:
            while True:
                self._take(self._ws.recv())
        except ConnectionClosed as closed:
            self._end(closed)
        except Exception as error:
            self._broken = f"the connection to the daemon broke: {error!r}"
            self._end(None)

    def _take(self, data: bytes) -> None:
        """One message from the daemon: the reply a caller waits for, or a pipelined call's error."""
        message = msgpack.unpackb(data)
        if news.REPORT_KEY in message:  # a report on a stream that was running (client.idlenews)
            self._idle.reported(message)
            return
        if message == news.SHARED:  # another session joined the context: what the daemon said may be stale
            self._idle.forget()
            assert self._ws is not None
            with contextlib.suppress(ConnectionClosed, OSError):
                self._ws.send(SHARED_ACK)
            return
        with self._lock:
            slot = self._waiting.pop(message.get("id"), None)
        if slot is not None:
            if "result" in message:
                self._idle.replied(message["id"], slot[2], message)
            slot[1].append(message)
            slot[0].set()
        elif "error" in message:
            self.protocol.pipelined_error(message)

    def _end(self, closed: ConnectionClosed | None) -> None:
        """The connection ended (`closed` says how, when it closed): every waiting caller wakes to the error."""
        if closed is not None:
            self._broken = f"the connection to the daemon closed ({closed.rcvd or 'no close frame'})"
        self._broken = self._broken or "the connection to the daemon closed"
        with self._lock:
            for event, _, _ in self._waiting.values():
                event.set()
            self._waiting.clear()
        self._idle.forget()

    # -- calls -------------------------------------------------------------------------------------------------

    def call(self, api: str, *values: Any) -> Any:
        """Call the ACL function `api` with its C arguments; returns its out-parameters (see `client.acl`)."""
        if streamstate.watched(api):  # a stream state callback is registered: report what the call changes
            return streamstate.around(self.call, api, values, lambda: self._call(api, values))
        return self._call(api, values)

    def _call(self, api: str, values: tuple[Any, ...]) -> Any:
        out = prepare(api, values, self.config.launch_blocking)
        if self._http is not None:
            try:
                answer = self._post(out)
                result = self.protocol.settle(answer, out.finish, api)
            except AclError:
                self._printed.after(api, self.call)  # what the kernels printed before the failure
                raise
            self._printed.after(api, self.call)
        else:
            reply = self._exchange(out)
            Printed.write(reply)  # the kernel printf the daemon attached to a synchronizing call's reply
            result = self.protocol.settle(reply, out.finish, api) if out.wait else None
        return self._adapt(api, values, result)

    def _exchange(self, out: Outgoing) -> dict[str, Any] | None:
        if self._broken:
            raise TransportError(self._broken)
        assert self._outbox is not None
        if self._idle.finished(out.call.name, out.args, self.protocol.last_id, self._flush):
            return None  # known finished: settled as a reply would be, without one
        if self._broken:  # the connection ended while this synchronize waited for the daemon's report
            raise TransportError(self._broken)
        slot: Slot | None = None
        try:
            with self._numbering:  # calls leave in the order of their request numbers (client.idlenews needs it)
                ident, data = self.protocol.pack(out)
                if out.wait:
                    slot = (threading.Event(), [], tuple(thread_identity()))
                    with self._lock:
                        self._waiting[ident] = slot
                    self._outbox.put(data)
                else:
                    self._outbox.later(data)
            if out.wait:
                self._outbox.now()
        except (ConnectionClosed, OSError) as error:
            raise TransportError(f"cannot send to the daemon: {str(error) or type(error).__name__}") from None
        if slot is None:
            return None
        slot[0].wait()
        if not slot[1]:
            raise TransportError(self._broken or "no reply from the daemon")
        return slot[1][0]

    def _flush(self) -> None:
        """Send the pipelined calls now (a failure shows at the next call that sends)."""
        assert self._outbox is not None
        with contextlib.suppress(ConnectionClosed, OSError):
            self._outbox.now()

    def _post(self, out: Outgoing) -> dict[str, Any]:
        assert self._http is not None
        body = out.json_body()
        headers = {"x-vnpu-thread": "-".join(map(str, thread_identity()))}
        try:
            response = self._http.post(f"/v1/call/{out.call.name}", json=body, headers=headers)
        except httpx.HTTPError as error:
            raise refused(self.config, error) from None
        payload: dict[str, Any] = response.json()
        if "error" in payload:
            return payload
        if _holds(payload, str):  # bytes come as base64, at any depth (a TDT dataset's items): read them as bytes
            dumped = out.call.result.model_validate_json(response.content).model_dump()
            payload = {k: dumped[k] if _holds(dumped[k], bytes) else v for k, v in payload.items()}
        return {"result": payload}

    def _adapt(self, api: str, values: tuple[Any, ...], result: Any) -> Any:
        """aclrtMallocHost and aclrtMemAllocManaged return a HostBuffer; freeing one drops its local mapping; the first
        aclrtLaunchHostFunc keeps the thread that runs host functions running."""
        if api == "aclrtLaunchHostFunc":
            self._host_functions.launched()
        if api in ("aclrtMallocHost", "aclrtMemAllocManaged"):
            return self._host_buffer(result, values[0])
        if api in ("aclrtFreeHost", "aclrtFree") and isinstance(values[0], HostBuffer):
            values[0].release()
        allocations_seen(api, values, result)
        return result

    def _host_buffer(self, ptr: int, size: int) -> HostBuffer:
        segment = None
        if self.config.host_memory == "local" or (self.config.host_memory == "auto" and self.config.on_this_machine):
            name, _ = self.call("vnpuHostInfo", ptr)
            segment = name if (HostBuffer.shm_path(name)).exists() else None
        return HostBuffer(
            ptr,
            size,
            lambda p, n: self.call("vnpuHostRead", p, n),
            lambda p, data: self.call("vnpuHostWrite", p, data),
            segment,
            owner=self,
        )

    def recent_error_message(self) -> str | None:
        return self.protocol.recent_message()

    def close(self) -> None:
        self._host_functions.stop()
        if self._outbox is not None:
            with contextlib.suppress(ConnectionClosed, OSError):
                self._outbox.close()
        self._resources.close()
        if self._http is not None:
            self._http.close()


LOG = logging.getLogger("vnpu.client")
EMBEDDED_WS_ONLY = "VNPU_TRANSPORT=http needs a daemon (vnpu serve): the embedded device is reached as a WebSocket"
EMBEDDED_JOIN = (
    "; the embedded device runs inside this process, so VNPU_CONTEXT names one of its own contexts: joining "
    "another process's context needs a daemon (vnpu serve)"
)


def refused(config: Config, error: BaseException) -> Exception:
    """The error for a session the daemon did not open (`error` from websockets or httpx): the daemon's AclError if
    it answered one, else a TransportError."""
    if isinstance(error, InvalidStatus):
        return refusal(config.endpoint, error.response.status_code, error.response.body, bool(config.token))
    reason = (str(error) or type(error).__name__) + (EMBEDDED_JOIN if config.embedded and config.context else "")
    return unreachable(config.endpoint, reason, token=bool(config.token))


def allocations_seen(api: str, values: tuple[Any, ...], result: Any) -> None:
    """Phase 1 tells a tensor larger than its block from an overlap by the blocks this process made
    (`proto.aclnn.extents`)."""
    if api in ("aclrtMalloc", "aclrtMallocAlign32") and isinstance(result, int) and isinstance(values[0], int):
        extents.KNOWN.add(result, values[0])
    elif api == "aclrtFree" and isinstance(values[0], int):
        extents.KNOWN.remove(values[0])
    elif api in ("aclFinalize", "aclrtResetDevice", "aclrtResetDeviceForce"):
        extents.KNOWN.clear()


def _holds(value: Any, kind: type) -> bool:
    """Whether `value` is, or holds at any depth of its dicts and lists, a `kind`."""
    if isinstance(value, dict):
        return any(_holds(v, kind) for v in value.values())
    if isinstance(value, list):
        return any(_holds(v, kind) for v in value)
    return isinstance(value, kind)
