"""The floor of a request/response on this machine: a plain-Python echo server in a process of its own, over TCP
on 127.0.0.1 or over a Unix socket. `python -m bench.echo_server tcp PORT | unix PATH` prints "ready" once it
listens and echoes every byte each connection sends until it is stopped (by its PID)."""

from __future__ import annotations

import socket
import sys
import threading

MESSAGE = 64  # bytes a round trip carries each way: about a small call's envelope


def echo(conn: socket.socket) -> None:
    with conn:
        while data := conn.recv(1 << 16):
            conn.sendall(data)


def listen(kind: str, address: str) -> socket.socket:
    if kind == "tcp":
        return socket.create_server(("127.0.0.1", int(address)))
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(address)
    server.listen()
    return server


def connect(kind: str, address: str) -> socket.socket:
    """A client socket to the echo server (TCP without Nagle's delay, as vnpu's client sets it)."""
    if kind == "tcp":
        sock = socket.create_connection(("127.0.0.1", int(address)))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(address)
    return sock


def round_trips(sock: socket.socket, count: int) -> None:
    """`count` request/responses of MESSAGE bytes, each waited for before the next."""
    message = b"x" * MESSAGE
    for _ in range(count):
        sock.sendall(message)
        got = 0
        while got < MESSAGE:
            got += len(sock.recv(MESSAGE - got))


def main(argv: list[str]) -> None:
    server = listen(*argv)
    if argv[0] == "tcp":
        server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        if argv[0] == "tcp":
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=echo, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1:])
