"""WebSocket `/v1/echo`: a bare echo of msgpack frames, the floor the benchmarks (`vnpu bench`) measure vnpu's
own WebSocket against on the same daemon process.

Each binary frame is decoded as msgpack and sent back re-encoded, so the echo pays what every call on `/v1/ws`
pays at the least (the WebSocket framing, one unpack, one pack) and nothing else: no envelope check, no queue,
no device. A frame that is not msgpack is answered with an error envelope (`proto.envelope`), a text frame too.
The token rule is that of `/v1/ws`: with tokens configured the handshake needs a valid one (`Authorization:
Bearer`, or `?token=`), else it is refused the same way (see `ws.refuse`). No session or context is opened.
"""

from __future__ import annotations

from fastapi import FastAPI, WebSocket, WebSocketDisconnect

from proto.envelope import error_envelope
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError
from server.api import budget
from server.api.auth import Unauthorized, tenant_of
from server.api.ws import refuse


def _error(message: str) -> bytes:
    packed = budget.pack(error_envelope(None, AclError(ACL_ERROR_INVALID_PARAM, message, "echo")))
    return packed


def install(app: FastAPI) -> None:
    @app.websocket("/v1/echo")
    async def echo_endpoint(websocket: WebSocket) -> None:
        try:
            tenant_of(websocket, websocket.app.state.settings.tokens)
        except Unauthorized as error:
            await refuse(websocket, error)
            return
        await websocket.accept()
        try:
            while True:
                frame = await websocket.receive()
                if frame["type"] == "websocket.disconnect":
                    return
                data = frame.get("bytes")
                if data is None:
                    await websocket.send_bytes(_error("send binary msgpack frames"))
                    continue
                try:
                    message = budget.unpack(data)
                except Exception as error:
                    await websocket.send_bytes(_error(f"not msgpack: {error}"))
                    continue
                await websocket.send_bytes(budget.pack(message))  # as server.api.ws packs replies
        except WebSocketDisconnect:
            return
