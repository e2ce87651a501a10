"""Two ways to call the daemon with the same code: REST (httpx) and WebSocket (msgpack envelopes).

`await caller("aclrtMalloc", size=1024, policy=0)` returns the result mapping or raises the AclError rebuilt from
the error body; `caller.sent` collects every C name called, so a test can check it covered the whole table.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
from typing import Any

import httpx
import msgpack
import websockets

from proto.errors import AclError


class RestCaller:
    def __init__(self, client: httpx.AsyncClient, session: str | None = None, thread: str = "main") -> None:
        self.client, self.session, self.thread = client, session, thread
        self.sent: set[str] = set()

    async def __call__(self, api: str, **args: Any) -> dict[str, Any]:
        self.sent.add(api)
        headers = {"x-vnpu-thread": self.thread}
        if self.session:
            headers["x-vnpu-session"] = self.session
        body = _json(args)
        response = await self.client.post(f"/v1/call/{api}", json=body, headers=headers)
        payload = response.json()
        if "error" in payload:
            assert response.status_code >= 400
            raise AclError.from_dict(payload["error"])
        assert response.status_code == 200
        result: dict[str, Any] = payload
        if isinstance(result.get("data"), str):
            result["data"] = base64.b64decode(result["data"])
        return result


def _json(value: Any) -> Any:
    """Bytes as JSON carries them (base64), at any depth (a struct's byte fields too)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    return value


class WsCaller:
    """One WebSocket connection; replies are matched to requests by id (threads may interleave)."""

    def __init__(self, ws: websockets.ClientConnection, hello: dict[str, Any], thread: Any = "main") -> None:
        self.ws, self.hello, self.thread = ws, hello, thread
        self.sent: set[str] = set()
        self._ids = itertools.count(1)
        self._waiting: dict[int | None, asyncio.Future[dict[str, Any]]] = {}
        self.orphans: list[dict[str, Any]] = []  # errors of pipelined calls, and envelopes without an id
        self.notices: list[dict[str, Any]] = []  # the daemon's {"paused": ...} while it stops reading
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def connect(cls, url: str, context: str | None = None, **kwargs: Any) -> WsCaller:
        ws = await websockets.connect(url + (f"?context={context}" if context else ""), max_size=None, **kwargs)
        hello = msgpack.unpackb(await ws.recv())["hello"]
        return cls(ws, hello)

    async def _read(self) -> None:
        async for frame in self.ws:
            message = msgpack.unpackb(frame)
            future = self._waiting.pop(message.get("id"), None)
            if "paused" in message:
                self.notices.append(message)
            elif future is None:
                self.orphans.append(message)
            elif not future.done():
                future.set_result(message)

    async def send(self, api: str, thread: Any = None, reply: bool = True, **args: Any) -> int:
        self.sent.add(api)
        ident = next(self._ids)
        if reply:
            self._waiting[ident] = asyncio.get_running_loop().create_future()
        envelope = {"id": ident, "api": api, "args": args, "thread": thread or self.thread, "reply": reply}
        await self.ws.send(msgpack.packb(envelope, use_bin_type=True))
        return ident

    async def send_batch(self, api: str, calls: list[dict[str, Any]], thread: Any = None) -> None:
        """Pipelined calls of `api` (no reply), one frame, as the client batches them."""
        first = next(self._ids)
        self._ids = itertools.count(first + len(calls))
        batch = [{"id": first + i, "api": api, "args": args, "thread": thread or self.thread, "reply": False}
                 for i, args in enumerate(calls)]  # fmt: skip
        await self.ws.send(msgpack.packb(batch, use_bin_type=True))

    async def reply(self, ident: int, timeout: float = 10) -> dict[str, Any]:
        message = await asyncio.wait_for(self._waiting[ident], timeout)
        if "error" in message:
            raise AclError.from_dict(message["error"])
        result: dict[str, Any] = message["result"]
        return result

    async def __call__(self, api: str, **args: Any) -> dict[str, Any]:
        return await self.reply(await self.send(api, **args))

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
