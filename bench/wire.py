"""What the figures share: client sessions, aclnn operands, and the echo client that measures the WebSocket floors
on the daemon's own `/v1/echo` route."""

from __future__ import annotations

import math
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import msgpack
from websockets.sync.client import ClientConnection, connect

from bench.daemon import Daemon
from client import acl
from client.config import Config
from client.core import Protocol, prepare
from client.session import Session


def open_session(endpoint: str, **config: Any) -> Session:
    """A client session with aclInit and aclrtSetDevice(0) done (a context of its own in the daemon)."""
    session = Session(Config(endpoint=endpoint, **config))
    session.call("aclInit", None)
    session.call("aclrtSetDevice", 0)
    return session


def close_session(session: Session) -> None:
    try:
        session.call("aclrtResetDevice", 0)
        session.call("aclFinalize")
    finally:
        session.close()


def tensor(shape: list[int], dtype: int = acl.ACL_FLOAT, itemsize: int = 4) -> tuple[int, Any]:
    """(device pointer, aclTensor) of a fresh contiguous ND tensor, through the current session."""
    ptr = acl.aclrtMalloc(max(1, math.prod(shape)) * itemsize, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = shape[i + 1] * strides[i + 1]
    return ptr, acl.aclCreateTensor(shape, dtype, strides, 0, acl.ACL_FORMAT_ND, shape, ptr)


@dataclass
class AddOperands:
    """out = self + alpha * other on `n`-element float32 tensors (alpha 1: the same math as np.add)."""

    n: int
    ptrs: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        (a_ptr, self.a), (b_ptr, self.b), (o_ptr, self.o) = (tensor([self.n]) for _ in range(3))
        self.ptrs = [a_ptr, b_ptr, o_ptr]
        self.alpha = acl.aclCreateScalar(1.0, acl.ACL_FLOAT)

    def launch(self, stream: int) -> None:
        """Phase 1 (here, no round trip) and phase 2 (pipelined): one eager kernel launch."""
        ws_size, executor = acl.aclnnAddGetWorkspaceSize(self.a, self.b, self.alpha, self.o)
        acl.aclnnAdd(None, ws_size, executor, stream)

    def envelope(self, stream: int) -> bytes:
        """The bytes of one aclnnAdd envelope as the client sends it (the echo floor sends the same)."""
        ws_size, executor = acl.aclnnAddGetWorkspaceSize(self.a, self.b, self.alpha, self.o)
        packed: bytes = msgpack.packb(
            Protocol().envelope(prepare("aclnnAdd", (None, ws_size, executor, stream), False)), use_bin_type=True
        )
        return packed

    def free(self) -> None:
        for t in (self.a, self.b, self.o):
            acl.aclDestroyTensor(t)
        acl.aclDestroyScalar(self.alpha)
        for p in self.ptrs:
            acl.aclrtFree(p)


class Echo:
    """A client of `/v1/echo`: pipelined messages, request/response, and bulk binary transfers."""

    def __init__(self, endpoint: str) -> None:
        url = endpoint.replace("http", "ws", 1) + "/v1/echo"
        self.ws: ClientConnection = connect(url, max_size=None, compression=None, open_timeout=10)

    def pipelined(self, frame: bytes, count: int) -> float:
        """Seconds to send `count` frames while a second thread reads the echoes (as the client's reader does)."""
        failure: list[BaseException] = []

        def reader() -> None:
            try:
                for _ in range(count):
                    self.ws.recv(timeout=60)
            except BaseException as error:
                failure.append(error)

        thread = threading.Thread(target=reader, name="echo-reader")
        start = time.perf_counter()
        thread.start()
        for _ in range(count):
            self.ws.send(frame)
        thread.join(120)
        elapsed = time.perf_counter() - start
        if failure or thread.is_alive():
            raise RuntimeError(f"echo reader failed: {failure[:1] or 'timed out'}")
        return elapsed

    def round_trip(self, frame: bytes, count: int) -> float:
        """Seconds per request/response of `frame` (mean over `count`)."""
        start = time.perf_counter()
        for _ in range(count):
            self.ws.send(frame)
            self.ws.recv(timeout=60)
        return (time.perf_counter() - start) / count

    def transfer(self, payload: bytes) -> float:
        """Seconds to send `payload` as a msgpack binary field and receive it back (packing and unpacking
        included, as a vnpu call pays them)."""
        start = time.perf_counter()
        self.ws.send(msgpack.packb({"id": 1, "api": "echo", "args": {"data": payload}}, use_bin_type=True))
        echoed = msgpack.unpackb(self.ws.recv(timeout=120))
        elapsed = time.perf_counter() - start
        if len(echoed["args"]["data"]) != len(payload):
            raise RuntimeError("the echo lost bytes")
        return elapsed

    def close(self) -> None:
        self.ws.close()


@dataclass
class Bench:
    """The run's shared state: the daemon, the main session (WebSocket, shared host memory), the echo client."""

    daemon: Daemon
    quick: bool
    reps: int
    session: Session
    echo: Echo
    started: float = field(default_factory=time.monotonic)

    def use(self, session: Session | None = None) -> None:
        acl.use(session or self.session)

    def log(self, message: str) -> None:
        print(f"[bench {time.monotonic() - self.started:6.1f}s] {message}", file=sys.stderr, flush=True)

    def pick(self, full: Any, quick: Any) -> Any:
        return quick if self.quick else full
