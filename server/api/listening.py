"""How `vnpu serve` listens: its socket is bound before anything starts (a port in use is one line and an exit,
not a banner and a traceback), and the banner is printed once uvicorn serves on it."""

from __future__ import annotations

import contextlib
import os
import socket
import stat

import uvicorn


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port), as uvicorn binds one; OSError if it cannot be. Its protocol is named:
    asyncio sets TCP_NODELAY only on sockets whose proto is TCP, and without it every small reply waits ~40 ms."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def bind_unix(path: str) -> socket.socket:
    """A Unix socket bound at `path`, readable and writable by this user only (mode 0600). A socket file left by a
    daemon that is gone is replaced; OSError if another daemon listens there or `path` is not a socket."""
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISSOCK(os.stat(path).st_mode):
            raise OSError(17, f"{path} exists and is not a socket")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(path)
            except ConnectionRefusedError:
                os.unlink(path)  # nobody listens: a daemon that did not end cleanly
            else:
                raise OSError(98, "Address already in use")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    umask = os.umask(0o177)  # the socket is created 0600: no window in which others could connect
    try:
        sock.bind(path)
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(umask)
    return sock


class Announcing(uvicorn.Server):
    """uvicorn's server, printing `banner` once the application has started and the socket listens."""

    def __init__(self, config: uvicorn.Config, banner: str) -> None:
        super().__init__(config)
        self.banner = banner

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(self.banner, flush=True)
