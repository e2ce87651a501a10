"""How `vnpu serve` listens: its socket is bound before anything starts (a port in use is one line and an exit,
not a banner and a traceback), and the banner is printed once uvicorn serves on it."""

from __future__ import annotations

import socket

import uvicorn


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port), as uvicorn binds one; OSError if it cannot be."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
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
