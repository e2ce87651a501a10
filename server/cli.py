"""The `vnpu` command: `serve` runs the daemon, `version` prints the version."""

from __future__ import annotations

import argparse
import logging
import math
import os
import signal
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    try:
        return version("vnpu")
    except PackageNotFoundError:  # run from a source tree that was not installed
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vnpu",
        description="A virtual Ascend NPU: ACL streams, events, aclmdlRI capture and task update, aclnn "
        "operators -- served over the network, no NPU needed.",
    )
    parser.add_argument("--version", action="version", version=f"vnpu {package_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("version", help="print the vnpu version")
    commands.add_parser(
        "demo",
        help="run the seed's concurrent task-update example against a daemon started for the purpose",
    )
    serve = commands.add_parser(
        "serve",
        help="run the daemon",
        description="Run the vnpu daemon. Every option can also be set by a VNPU_<OPTION> environment variable "
        "(e.g. VNPU_PORT=9470, VNPU_MEMORY=8GiB, VNPU_TOKEN=...; the device count is VNPU_DEVICE_COUNT); an "
        "option given here wins.",
    )
    serve.add_argument("--host", help="address to bind (default 127.0.0.1; without a token, only loopback is safe)")
    serve.add_argument("--port", type=int, help="TCP port (default 9470)")
    serve.add_argument("--devices", type=int, help="number of virtual NPUs (default 1; env VNPU_DEVICE_COUNT)")
    serve.add_argument("--memory", help="device memory per NPU, e.g. 8GiB (default 8GiB)")
    serve.add_argument("--max-models", type=int, help="aclmdlRI models per device (default 1024)")
    serve.add_argument("--token", help="require this bearer token (tenant 'default')")
    serve.add_argument("--tokens-file", help="a file of 'tenant token' lines, one tenant per token")
    serve.add_argument("--ssl-certfile", help="serve HTTPS/WSS with this certificate (PEM); env VNPU_SSL_CERTFILE")
    serve.add_argument("--ssl-keyfile", help="the certificate's private key (PEM); env VNPU_SSL_KEYFILE")
    serve.add_argument("--log-level", choices=["critical", "error", "warning", "info", "debug"], help="default info")
    return parser


def format_size(size: int) -> str:
    """Bytes for people: 8 GiB, 64 MiB, 1.5 KiB, 1000 bytes."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size / (1 << shift):.4g} {unit}"
    return f"{size} bytes"


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from server.api.settings import Settings, parse_size
    from server.app import create_app

    settings = Settings.from_env(
        host=args.host,
        port=args.port,
        devices=args.devices,
        memory=parse_size(args.memory) if args.memory else None,
        max_models=args.max_models,
        token=args.token,
        tokens_file=args.tokens_file,
        log_level=args.log_level,
        ssl_certfile=args.ssl_certfile,
        ssl_keyfile=args.ssl_keyfile,
    )
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log = logging.getLogger("vnpu")
    if not settings.tokens and settings.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("no token is set and the daemon listens on %s: anyone who reaches it can use it", settings.host)
    elif not settings.tokens:
        log.info("no token is set: listening on loopback only")
    print(
        f"vnpu {package_version()} listening on {'https' if settings.ssl_certfile else 'http'}://"
        f"{settings.host}:{settings.port} -- "
        f"{settings.devices} device(s) of {format_size(settings.memory)}, "
        f"{'token required' if settings.tokens else 'no token'}",
        flush=True,
    )
    # SIGTERM is how a service manager (systemd, docker stop) stops the daemon: uvicorn shuts down gracefully on it,
    # then raises it again for the previous handler; with the default one the process would die by the signal
    # (exit status 143) after a clean shutdown. This handler makes that a plain exit 0 (before uvicorn starts too).
    signal.signal(signal.SIGTERM, _exit_cleanly)
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        ws_max_size=settings.max_message,
        ws_per_message_deflate=False,  # compression costs 25x on binary data (measured); keep it off
        timeout_graceful_shutdown=math.ceil(settings.shutdown_deadline),  # uvicorn takes whole seconds
        ssl_certfile=settings.ssl_certfile,
        ssl_keyfile=settings.ssl_keyfile,
    )
    return 0


def demo(args: argparse.Namespace) -> int:
    """Start a daemon in this process on a free port, run the seed's concurrent task-update example against it
    through the client (a separate process, as a user runs it), print its output, and stop the daemon."""
    import socket
    import subprocess
    import threading
    import time
    from pathlib import Path

    import uvicorn

    from server.api.settings import Settings
    from server.app import create_app

    script = Path(__file__).resolve().parent.parent / "examples" / "task_update_concurrent.py"
    if not script.exists():
        print(f"vnpu demo needs the source tree: {script} is missing", file=sys.stderr)
        return 2
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = Settings(port=port, memory=256 << 20, log_level="warning")
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="vnpu-daemon", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        print("vnpu demo: the daemon did not start", file=sys.stderr)
        return 1
    print(f"vnpu demo: daemon on http://127.0.0.1:{port}; running {script.name} through the client", flush=True)
    env = dict(os.environ, VNPU_ENDPOINT=f"http://127.0.0.1:{port}")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(script.parent.parent), env.get("PYTHONPATH")]))
    try:
        done = subprocess.run([sys.executable, str(script)], env=env, timeout=120, check=False)
    finally:
        server.should_exit = True
        thread.join(30)
    return done.returncode


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "version":
        print(f"vnpu {package_version()}")
        return 0
    if args.command == "serve":
        return serve(args)
    if args.command == "demo":
        return demo(args)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
