"""The `vnpu` command: `serve` runs the daemon, `version` prints the version, `demo` runs the seed's example,
`bench` measures the figures of bench/, `status` and `trace` look at a running daemon through its REST views
(`server/api/views.py`, `/v1/trace`), and `devices` prints VNPU_DEVICES for a Kubernetes StatefulSet."""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from server.version import package_version

if TYPE_CHECKING:
    import httpx
    from rich.console import RenderableType

DEFAULT_ENDPOINT = "http://127.0.0.1:9470"
MAX_MODELS = 50  # models `vnpu status` details (one request each)
BENCH_MINUTES = 3  # a full `vnpu bench` here (bench/results.json's "seconds"; tests/test_cli.py checks it)


class Parser(argparse.ArgumentParser):
    """A parser whose epilog may come late (`late_epilog`, a function of the parser): made only when the help
    is shown, so `vnpu status` does not load what `vnpu serve --help` lists."""

    def format_help(self) -> str:
        late = getattr(self, "late_epilog", None)
        if late is not None and self.epilog is None:
            self.epilog = late(self)
        return super().format_help()


def _serve_epilog(serve: argparse.ArgumentParser) -> str:
    from server.api.settings import env_only_settings

    options = {action.dest for action in serve._actions}
    listed = ", ".join(f"{name}={default}" for name, default in env_only_settings(options))
    return (
        f"Settings only in the environment, with their defaults (times in seconds): {listed}. docs/daemon.md "
        "says what each does."
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="vnpu",
        description="A virtual Ascend NPU: ACL streams, events, aclmdlRI capture and task update, aclnn "
        "operators -- served over the network, no NPU needed.",
    )
    parser.add_argument("--version", action="version", version=f"vnpu {package_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.add_parser("version", help="print the vnpu version")
    commands.add_parser(
        "demo",
        help="run the seed's concurrent task-update example against a daemon started for the purpose",
        description="Start a daemon in this process on a free loopback port and run the seed page's example "
        "(examples/task_update_concurrent.py: a captured model replayed while another stream updates its task "
        "group) through the client. Each loop prints its output: 2.2 for alpha 1.1, then 6.6 for 5.5, "
        "alternating; the last line says whether every value matched the float64 reference.",
    )
    bench = commands.add_parser(
        "bench",
        help="measure the figures users judge vnpu by, against floors measured in the same run (a few minutes: "
        f"about {BENCH_MINUTES} here; --quick: under a minute)",
        description="Start a daemon of its own on a free loopback port and measure each figure of bench/ side by "
        "side with its floor or alternative (A B A B, medians of several repetitions, min-max shown); print the "
        "Markdown table and write the raw numbers as JSON. Needs the source tree (bench/, client/). A full run "
        f"takes about {BENCH_MINUTES} minutes here (bench/results.json has the last one's), --quick under a minute.",
    )
    bench.add_argument(
        "--quick", action="store_true", help="a smoke run: small counts, one repetition (its numbers mean little)"
    )
    bench.add_argument("--out", help="the JSON file to write (default bench/results.json; --quick: a temp file)")
    bench.add_argument("--only", help="comma-separated figure numbers, e.g. 1,5,9 (default: all)")
    bench.add_argument("--reps", type=int, help="repetitions per measurement (default 5; --quick: 1)")
    toolkit = commands.add_parser(
        "toolkit",
        help="print the path of a CANN-shaped toolkit (headers, libascendcl.so, ...) for C/C++ programs",
        description="Print the directory of vnpu's C toolkit, laid out like an installed CANN package "
        "(include/acl/acl.h, include/aclnnop/, lib64/libascendcl.so, libnnopbase.so, libopapi.so, libhccl.so, "
        "bin/setenv.bash); build what is missing in it first, with this machine's C compiler. The libraries are "
        "native C (client/native): no interpreter runs inside the program. It lives in $VNPU_TOOLKIT_DIR, else "
        "~/.cache/vnpu/native-<key> ($XDG_CACHE_HOME/vnpu/...), one per version of vnpu's sources.",
    )
    toolkit.add_argument("--rebuild", action="store_true", help="build the toolkit again even if it is complete")
    toolkit.add_argument("--native", action="store_true", help=argparse.SUPPRESS)  # the only toolkit now
    toolkit.add_argument(
        "--clean",
        action="store_true",
        help="remove the toolkits in ~/.cache/vnpu that nothing will use again (the retired CFFI ones, those whose "
        "interpreter is gone, and those built from older sources) and exit",
    )
    toolkit.add_argument(
        "--operators",
        help="modules declaring aclnn operators to build in (headers, exported functions), comma-separated; "
        "env VNPU_OPERATORS",
    )
    serve = commands.add_parser(
        "serve",
        help="run the daemon",
        description="Run the vnpu daemon. Every option can also be set by a VNPU_<OPTION> environment variable "
        "(e.g. VNPU_PORT=9470, VNPU_MEMORY=8GiB, VNPU_TOKEN=...; the device count is VNPU_DEVICE_COUNT); an "
        "option given here wins.",
    )
    serve.late_epilog = _serve_epilog  # type: ignore[attr-defined]
    serve.add_argument("--host", help="address to bind (default 127.0.0.1; without a token, only loopback is safe)")
    serve.add_argument("--port", help="TCP port (default 9470)")
    serve.add_argument("--uds", metavar="PATH", help="listen on this Unix socket (mode 0600) instead of a TCP port")
    serve.add_argument("--devices", help="number of virtual NPUs (default 1; env VNPU_DEVICE_COUNT)")
    serve.add_argument("--memory", help="device memory per NPU, e.g. 8GiB (default 8GiB)")
    serve.add_argument("--max-models", help="aclmdlRI models per device (default 1024)")
    serve.add_argument("--token", help="require this bearer token (tenant 'default')")
    serve.add_argument("--tokens-file", help="a file of 'tenant token' lines, one tenant per token")
    serve.add_argument("--ssl-certfile", help="serve HTTPS/WSS with this certificate (PEM); env VNPU_SSL_CERTFILE")
    serve.add_argument("--ssl-keyfile", help="the certificate's private key (PEM); env VNPU_SSL_KEYFILE")
    serve.add_argument("--kernels", help="modules registering custom kernels, comma-separated; env VNPU_KERNELS")
    serve.add_argument("--operators", help="modules declaring aclnn operators, comma-separated; env VNPU_OPERATORS")
    serve.add_argument("--log-level", help="critical, error, warning, info or debug, any case (default info)")
    status = commands.add_parser(
        "status",
        help="a table of a daemon's devices, memory, contexts, streams and models",
        description="Show what a running daemon holds: devices and their memory, contexts and sessions, streams "
        "with their queue depth and what each runs or is blocked on, and captured models with their task groups.",
    )
    _daemon_options(status)
    status.add_argument("--watch", type=parse_duration, metavar="SECONDS", help="refresh every SECONDS until Ctrl-C")
    status.add_argument("--count", type=int, metavar="N", help="with --watch: stop after N refreshes")
    trace = commands.add_parser(
        "trace",
        help="record a daemon's trace for a while into a Chrome trace JSON file (Perfetto, chrome://tracing)",
        description="Poll the daemon's trace (GET /v1/trace) for DURATION and write the tasks that ran meanwhile as "
        "one Chrome trace JSON file: open it in https://ui.perfetto.dev or chrome://tracing.",
    )
    _daemon_options(trace)
    trace.add_argument("-o", "--output", required=True, help="the JSON file to write")
    trace.add_argument(
        "--duration",
        type=parse_duration,
        help="how long to record, e.g. 5s, 500ms, 2m (default 5s; with --all, 0: what the buffer holds, at once)",
    )
    trace.add_argument("--interval", type=parse_duration, default=0.5, help="time between two polls (default 0.5s)")
    trace.add_argument(
        "--all",
        action="store_true",
        help="also take what the daemon's trace buffer already holds, ended programs' events included "
        "(default: from now)",
    )
    trace.add_argument("--context", metavar="ID", help="only this context's events (an id from `vnpu status`)")
    trace.add_argument(
        "program",
        nargs="*",
        metavar="-- PROGRAM ARGS",
        help="run PROGRAM and record exactly its run (the contexts it opens), until it exits, instead of --duration",
    )
    docs = commands.add_parser(
        "docs",
        help="write the generated parts of docs/ (the source tree's): `operators`, the aclnn operator inventory",
        description="Write the aclnn operator inventory (declared, ruled and implemented, per repository) into "
        "docs/operators.md from the operator tables (server/docs.py).",
    )
    docs.add_argument("what", choices=["operators"], help="the generated part to write")
    docs.add_argument("--check", action="store_true", help="write nothing; exit 1 when the page is not current")
    devices = commands.add_parser(
        "devices",
        help="print VNPU_DEVICES naming the daemons of a Kubernetes StatefulSet by their pods' DNS names",
        description="Print the VNPU_DEVICES value that maps a program's devices 0..N-1 to the pods of the "
        "StatefulSet behind the headless Service NAME (deploy/k8s): device k is device k % D of pod k // D. "
        "export VNPU_DEVICES=$(vnpu devices --k8s-service vnpu --replicas 4)",
    )
    devices.add_argument("--k8s-service", required=True, metavar="NAME", help="the headless Service (and StatefulSet)")
    devices.add_argument("--replicas", type=int, required=True, metavar="N", help="the StatefulSet's replicas")
    devices.add_argument("--devices-per-pod", type=int, default=1, metavar="D", help="VNPU_DEVICE_COUNT (default 1)")
    devices.add_argument("--namespace", help="the daemons' namespace, for a job in another one (fully qualified names)")
    devices.add_argument("--cluster-domain", default="cluster.local", help="with --namespace (default cluster.local)")
    devices.add_argument("--port", type=int, default=9470, help="the Service's port (default 9470)")
    devices.add_argument("--tls", action="store_true", help="the daemons speak TLS (wss://)")
    return parser


def _daemon_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--endpoint", help=f"the daemon's URL or unix:PATH (default $VNPU_ENDPOINT or {DEFAULT_ENDPOINT})"
    )
    parser.add_argument("--token", help="the bearer token, if the daemon requires one (default $VNPU_TOKEN)")


def parse_duration(text: str) -> float:
    """'5s', '500ms', '2m', '1h' or plain seconds ('1.5') -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|min|h)?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (use e.g. 5s, 500ms, 2m)")
    scale = {"ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}[match.group(2) or "s"]
    return float(match.group(1)) * scale


def format_size(size: int) -> str:
    """Bytes for people: 8 GiB, 64 MiB, 1.5 KiB, 1000 bytes."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size / (1 << shift):.4g} {unit}"
    return f"{size} bytes"


def format_age(seconds: float) -> str:
    """Seconds for people: 4.2 s, 12 min, 3.5 h, 2.0 d."""
    for unit, size in (("d", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.2g} {unit}" if seconds < 10 * size else f"{seconds / size:.0f} {unit}"
    return f"{seconds:.1f} s"


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from proto import operators
    from server.api.listening import Announcing, bind, bind_unix
    from server.api.settings import Settings
    from server.api.slowclients import guarded
    from server.api.wsprotocol import LeanWebSocketProtocol
    from server.app import create_app

    try:  # options come as text, converted with the variables: one message form for both
        settings = Settings.from_env(
            host=args.host,
            port=args.port,
            uds=args.uds,
            devices=args.devices,
            memory=args.memory,
            max_models=args.max_models,
            token=args.token,
            tokens_file=args.tokens_file,
            log_level=args.log_level,
            ssl_certfile=args.ssl_certfile,
            ssl_keyfile=args.ssl_keyfile,
            kernels=args.kernels,
            operators=args.operators,
        )
    except ValueError as error:  # BadSetting, or a tokens file's malformed line
        print(f"vnpu serve: {error}", file=sys.stderr)
        return 2
    try:  # before the routes are made: each operator has its own
        operators.load(settings.operators)
    except operators.OperatorError as error:
        print(f"vnpu serve: {error}", file=sys.stderr)
        return 2
    where = f"unix:{settings.uds}" if settings.uds else f"{settings.host}:{settings.port}"
    try:
        sock = bind_unix(settings.uds) if settings.uds else bind(settings.host, settings.port)
    except OSError as error:
        print(f"vnpu serve: cannot listen on {where}: {error.strerror}", file=sys.stderr)
        return 1
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log = logging.getLogger("vnpu")
    if not settings.tokens and not settings.uds and settings.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("no token is set and the daemon listens on %s: anyone who reaches it can use it", settings.host)
    elif not settings.tokens:
        log.info("no token is set: listening on %s only", "a Unix socket of this user" if settings.uds else "loopback")
    if "VNPU_DEVICES" in os.environ and "VNPU_DEVICE_COUNT" not in os.environ and args.devices is None:
        log.warning(
            "VNPU_DEVICES is set, but it is the client's map of devices to daemons: vnpu serve reads its device "
            "count from VNPU_DEVICE_COUNT (or --devices), and serves %d device(s)",
            settings.devices,
        )
    scheme = "https" if settings.ssl_certfile else "http"
    banner = (
        f"vnpu {package_version()} listening on "
        f"{where if settings.uds else f'{scheme}://{settings.host}:{sock.getsockname()[1]}'} -- "
        f"{settings.devices} device(s) of {format_size(settings.memory)}, "
        f"{'token required' if settings.tokens else 'no token'}"
    )
    # SIGTERM is how a service manager (systemd, docker stop) stops the daemon: uvicorn shuts down gracefully on it,
    # then raises it again for the previous handler; with the default one the process would die by the signal
    # (exit status 143) after a clean shutdown. This handler makes that a plain exit 0 (before uvicorn starts too).
    signal.signal(signal.SIGTERM, _exit_cleanly)
    _raise_open_files_limit()
    config = uvicorn.Config(
        create_app(settings),
        log_level=settings.log_level,
        ws_max_size=settings.max_message,
        ws_per_message_deflate=False,  # compression costs 25x on binary data (measured); keep it off
        timeout_graceful_shutdown=math.ceil(settings.shutdown_deadline),  # uvicorn takes whole seconds
        ssl_certfile=settings.ssl_certfile,
        ssl_keyfile=settings.ssl_keyfile,
        http=guarded(settings.head_timeout),
        ws=LeanWebSocketProtocol,
    )
    server = Announcing(config, banner)
    try:
        with contextlib.suppress(KeyboardInterrupt):  # SIGINT, after uvicorn's graceful shutdown (as uvicorn.run)
            server.run(sockets=[sock])
    finally:
        if settings.uds:
            with contextlib.suppress(OSError):
                os.unlink(settings.uds)
    return 0 if server.started else 3  # uvicorn's code for a failed startup


def _raise_open_files_limit() -> None:
    """Every connection is a file descriptor: allow as many as the hard limit does (often 1024 by default)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    if soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


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
    if done.returncode == 0:
        print("vnpu demo: OK, every loop's output matched the float64 reference")
    else:
        print(f"vnpu demo: FAILED, the example exited with {done.returncode} (its errors are above)", file=sys.stderr)
    return done.returncode


class DaemonError(Exception):
    """The daemon could not be reached, or refused or failed a request: the message says which, for people."""


def _endpoint(args: argparse.Namespace) -> str:
    """The daemon the command talks to: --endpoint, else VNPU_ENDPOINT, else the default (a ws:// URL names the
    same daemon's http://, unix:PATH its Unix socket)."""
    endpoint = (args.endpoint or os.environ.get("VNPU_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    return re.sub(r"^ws(s?)://", r"http\1://", endpoint)


def _client(args: argparse.Namespace) -> httpx.Client:
    import httpx

    endpoint = _endpoint(args)
    token = args.token or os.environ.get("VNPU_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if endpoint.startswith("unix:"):  # a daemon on a Unix socket (vnpu serve --uds PATH)
        transport = httpx.HTTPTransport(uds=endpoint.removeprefix("unix:"))
        return httpx.Client(base_url="http://localhost", headers=headers, timeout=10.0, transport=transport)
    return httpx.Client(base_url=endpoint, headers=headers, timeout=10.0)


def _get(http: httpx.Client, path: str, **params: Any) -> Any:
    import httpx

    try:
        response = http.get(path, params=params)
    except httpx.HTTPError as error:
        raise DaemonError(f"cannot reach the daemon at {http.base_url}: {error}") from error
    if response.status_code == 401:
        given = "authorization" in http.headers
        raise DaemonError("the token was refused" if given else "the daemon requires a token: --token or VNPU_TOKEN")
    if response.status_code != 200:
        try:
            detail = response.json()["error"]["message"]
        except Exception:
            detail = response.text[:200]
        raise DaemonError(f"GET {path} answered {response.status_code}: {detail}")
    return response.json()


def daemon_state(http: httpx.Client, endpoint: str) -> dict[str, Any]:
    """The views `vnpu status` shows: every device in detail, and the first MAX_MODELS models."""
    devices = [_get(http, f"/v1/devices/{d['id']}") for d in _get(http, "/v1/devices")]
    handles = [m["handle"] for d in devices for c in d["contexts"] for m in c["models"] if m["state"] != "destroyed"]
    models = []
    for handle in handles[:MAX_MODELS]:
        try:
            models.append(_get(http, f"/v1/models/{handle}"))
        except DaemonError:  # destroyed in between
            continue
    more = max(0, len(handles) - MAX_MODELS)
    return {"endpoint": endpoint, "devices": devices, "models": models, "more_models": more}


BAR_MIN_WIDTH = 110  # narrower terminals get the devices table without its memory bar


def status_tables(state: dict[str, Any], width: int | None = None) -> RenderableType:
    """The daemon's state as rich tables: devices, contexts, streams, models (`width`: the terminal's)."""
    from rich.console import Group
    from rich.progress_bar import ProgressBar
    from rich.table import Table
    from rich.text import Text

    devices = Table(title="devices", title_justify="left", expand=False)
    bar = width is None or width >= BAR_MIN_WIDTH  # narrower: no bar, no share, so a device is one line at 80
    for column in ("device", "memory used", *([""] if bar else []), "streams", "events", "models", "contexts"):
        devices.add_column(column, justify="left" if column in ("device", "") else "right", no_wrap=True)
    contexts = Table(title="contexts", title_justify="left")
    held = ("memory", "age") if bar else ()  # what a context holds, and since when: on wide terminals
    for column in ("context", "sessions", "device(s)", *held, "streams", "events", "models"):
        contexts.add_column(column, justify="left" if column in ("context", "device(s)") else "right", no_wrap=True)
    # a context spans the devices: each device's view lists it with what it holds there
    totals: dict[str, dict[str, Any]] = {}
    running_on: dict[int, int] = {}  # model -> the stream replaying it
    streams = Table(title="streams", title_justify="left")
    for column in ("device", "context", "stream", "kind", "queue", "running / blocked on"):
        streams.add_column(column, justify="right" if column == "queue" else "left")
    for d in state["devices"]:
        memory = d["memory"]
        share = memory["used"] / memory["total"] if memory["total"] else 0.0
        devices.add_row(
            str(d["id"]),
            f"{format_size(memory['used'])} / {format_size(memory['total'])}" + (f" ({share:.1%})" if bar else ""),
            *([ProgressBar(total=memory["total"] or 1, completed=memory["used"], width=20)] if bar else []),
            f"{d['streams']['used']} / {d['streams']['max']}",
            f"{d['events']['used']} / {d['events']['max']}",
            f"{d['models']['used']} / {d['models']['max']}",
            str(len(d["contexts"])),
        )
        for c in d["contexts"]:
            total = totals.setdefault(
                c["id"], {"sessions": c["sessions"], "devices": [], "streams": 0, "events": 0, "context": c}
            )
            total["models"] = total.get("models", 0) + len(c["models"])
            for kind in ("streams", "events"):
                total[kind] += len(c[kind])
            if c["streams"] or c["events"] or c["models"]:
                total["devices"].append(str(d["id"]))
            for s in c["streams"]:
                if s["running"] and (found := re.search(r"of model (0x[0-9a-f]+)", s["running"])):
                    running_on[int(found.group(1), 16)] = s["handle"]
                kind = ("default" if s["default"] else "stream") + (", capturing" if s["capturing"] else "")
                running = s["running"] or ("queued" if s["queued"] else "idle")
                blocked = bool(s["running"]) and ("Wait" in running or "Synchronize" in running)
                style = "bold yellow" if blocked else ("cyan" if s["running"] else "dim")
                streams.add_row(
                    str(d["id"]), c["id"][:8], f"{s['handle']:#x}", kind, str(s["queued"]), Text(running, style)
                )
    for context, total in totals.items():
        counts = (str(total[kind]) for kind in ("streams", "events", "models"))
        c = total["context"]
        holds = (format_size(c.get("memory", 0)), format_age(c.get("age", 0.0))) if bar else ()
        contexts.add_row(context, str(total["sessions"]), ", ".join(total["devices"]) or "-", *holds, *counts)
    models = Table(title="models", title_justify="left")
    for column in ("model", "device", "context", "state", "executions", "task groups (kernels, updates applied)"):
        models.add_column(column, justify="right" if column == "executions" else "left")
    for m in state["models"]:
        groups = "\n".join(
            f"{g['handle']:#x}: {', '.join(g['kernels']) or 'empty'}; {g['updates']} update(s)" for g in m["groups"]
        )
        stream = running_on.get(m["handle"])
        shown = Text(f"running on {stream:#x}", "cyan") if stream is not None else Text(m["state"])
        name = f' "{m["name"]}"' if m.get("name") else ""
        kind = f" ({m['kind']})" if m.get("kind") and m["kind"] != "capture" else ""
        models.add_row(
            f"{m['handle']:#x}{name}{kind}", str(m["device"]), m["context"][:8], shown, str(m["executions"]),
            groups or "-",
        )  # fmt: skip
    parts: list[RenderableType] = [Text(f"vnpu at {state['endpoint']}", style="bold"), devices]
    parts += [contexts if contexts.row_count else Text("no contexts", style="dim")]
    parts += [streams if streams.row_count else Text("no streams", style="dim")]
    parts += [models if models.row_count else Text("no models", style="dim")]
    if state["more_models"] > 0:
        parts.append(Text(f"... and {state['more_models']} more model(s)", style="dim"))
    return Group(*parts)


def status(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    console = Console()
    with _client(args) as http:
        if args.watch is None:
            try:
                console.print(status_tables(daemon_state(http, _endpoint(args)), console.width))
            except DaemonError as error:
                print(f"vnpu status: {error}", file=sys.stderr)
                return 1
            return 0

        def render() -> RenderableType:
            try:
                return status_tables(daemon_state(http, _endpoint(args)), console.width)
            except DaemonError as error:  # keep watching: the daemon may come back
                return Text(f"vnpu status: {error}", style="bold red")

        refreshes = 1
        try:
            with Live(render(), console=console, auto_refresh=False) as live:
                while args.count is None or refreshes < args.count:
                    time.sleep(max(args.watch, 0.05))
                    live.update(render(), refresh=True)
                    refreshes += 1
        except KeyboardInterrupt:
            pass
    return 0


def trace(args: argparse.Namespace) -> int:
    """Poll /v1/trace for the duration (or while the program runs), then write the merged answers as one Chrome
    trace JSON file."""
    import json
    from pathlib import Path

    metadata: dict[tuple[Any, ...], dict[str, Any]] = {}
    tasks: dict[tuple[Any, ...], dict[str, Any]] = {}
    ended: set[str] = set()
    scope = {} if args.context is None else {"context": args.context}
    run = f"trace-{secrets.token_hex(6)}" if args.program else None
    if run is not None:
        scope["run"] = run  # the label the program's client gives its contexts (VNPU_RUN)

    in_scope = 0  # the most contexts the daemon knew in the scope asked for (none: the hint says why)

    def merge(answer: dict[str, Any]) -> None:
        nonlocal in_scope
        in_scope = max(in_scope, answer.get("contextsInScope", 0))
        ended.update(c["id"] for c in answer.get("contexts", ()) if c["ended"])
        for e in answer["traceEvents"]:
            if e.get("ph") == "X":
                tasks.setdefault((e["pid"], e["tid"], e["ts"], e["name"]), e)
            else:
                metadata.setdefault((e.get("name"), e.get("pid"), e.get("tid")), e)

    program: subprocess.Popen[bytes] | None = None
    with _client(args) as http:
        try:
            # from now: a `since` beyond any event's end answers nothing but the trace clock
            first = _get(http, "/v1/trace", since=0.0 if args.all or run else 1e300, **scope)
            merge(first)
            enabled = first["enabled"]
            if not enabled:
                print("vnpu trace: tracing is off on the daemon (VNPU_TRACE_CAPACITY=0)", file=sys.stderr)
            duration = args.duration if args.duration is not None else 0.0 if args.all else 5.0
            since, deadline = first["now"], time.monotonic() + duration
            if run is not None:
                program = _start(args, run)
                if program is None:
                    return 127

            def recording() -> bool:
                return program.poll() is None if program is not None else time.monotonic() < deadline

            try:
                while recording():
                    left = deadline - time.monotonic() if program is None else args.interval
                    time.sleep(min(max(args.interval, 0.01), max(left, 0.0)))
                    answer = _get(http, "/v1/trace", since=since, **scope)
                    since = answer["now"]
                    merge(answer)
                if program is not None:  # what ended after the last poll
                    merge(_get(http, "/v1/trace", since=since, **scope))
            except KeyboardInterrupt:
                print("vnpu trace: interrupted; writing what was recorded", file=sys.stderr)
                if program is not None:
                    program.wait()
        except DaemonError as error:
            print(f"vnpu trace: {error}", file=sys.stderr)
            return 1
    events = list(metadata.values()) + sorted(tasks.values(), key=lambda e: e["ts"])
    document = {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"producer": f"vnpu {package_version()}", "endpoint": _endpoint(args)},
    }
    path = Path(args.output)
    path.write_text(json.dumps(document, separators=(",", ":")))
    lanes = len({(e["pid"], e["tid"]) for e in tasks.values()})
    contexts = {e["args"]["Context"] for e in tasks.values() if "Context" in e["args"]}
    whose = f" of {len(contexts)} context(s)" + (
        f", {len(ended & contexts)} of them ended," if ended & contexts else ""
    )
    print(f"wrote {len(tasks)} task event(s){whose} on {lanes} lane(s) to {path}: open it in https://ui.perfetto.dev")
    if not tasks and enabled:
        print(f"vnpu trace: {_why_nothing(args, in_scope)}", file=sys.stderr)
    if program is not None:
        print(f"vnpu trace: {' '.join(args.program)} exited with {program.returncode}", file=sys.stderr)
        return program.returncode
    return 0


def _why_nothing(args: argparse.Namespace, in_scope: int) -> str:
    """Why `vnpu trace` wrote no task event, as far as the daemon's answers tell (`in_scope`: the contexts it knew
    in the scope asked for)."""
    if args.program and not in_scope:
        return (
            f"{args.program[0]} opened no context on {_endpoint(args)}: does it call aclInit and aclrtSetDevice, "
            "and does its VNPU_ENDPOINT name this daemon?"
        )
    if args.program:
        return f"{args.program[0]} ran no task on the device (calls such as aclrtMalloc are not tasks)"
    if args.context is not None and not in_scope:
        return (
            f"no context {args.context!r} among yours, live or recently ended: take an id from `vnpu status` or "
            "from a trace's Context"
        )
    hint = "" if args.all else " (--all takes what the buffer already holds, ended programs included)"
    return f"nothing ran while recording{hint}"


def _start(args: argparse.Namespace, run: str) -> subprocess.Popen[bytes] | None:
    """The program of `vnpu trace -- PROGRAM`, its contexts labelled `run`, talking to the daemon being traced."""
    env = {**os.environ, "VNPU_RUN": run}
    if args.endpoint:
        env["VNPU_ENDPOINT"] = args.endpoint
    if args.token:
        env["VNPU_TOKEN"] = args.token
    try:
        return subprocess.Popen(args.program, env=env)
    except OSError as error:
        print(f"vnpu trace: cannot run {args.program[0]}: {error.strerror or error}", file=sys.stderr)
        return None


def run_bench(args: argparse.Namespace) -> int:
    """Run the benchmarks (`python -m bench.run`, which drives the daemon through the client) as a subprocess of
    the source tree: the server never imports the client."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    if not (root / "bench" / "run.py").exists():
        print(f"vnpu bench needs the source tree: {root / 'bench' / 'run.py'} is missing", file=sys.stderr)
        return 2
    command = [sys.executable, "-m", "bench.run"]
    if args.quick:
        command.append("--quick")
    if args.out:
        command += ["--out", str(Path(args.out).resolve())]
    if args.only:
        command += ["--only", args.only]
    if args.reps:
        command += ["--reps", str(args.reps)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    try:
        return subprocess.run(command, cwd=root, env=env, timeout=1800, check=False).returncode
    except subprocess.TimeoutExpired:
        print("vnpu bench: stopped after 30 minutes", file=sys.stderr)
        return 1


def run_toolkit(args: argparse.Namespace) -> int:
    """The toolkit is built by the client side (`client.native`), which the daemon's code does not import."""
    flags = [flag for flag, on in (("--rebuild", args.rebuild), ("--clean", args.clean)) if on]
    command = [sys.executable, "-m", "client.native.build", *flags]
    command += [f"--operators={args.operators}"] if args.operators else []
    return subprocess.run(command, check=False).returncode


def print_devices(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from server.k8s import statefulset_devices

    try:
        print(
            statefulset_devices(
                args.k8s_service, args.replicas, args.devices_per_pod, args.namespace, args.port, args.tls,
                args.cluster_domain,
            )
        )  # fmt: skip
    except ValueError as error:
        parser.error(f"devices: {error}")
    return 0


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
    if args.command == "status":
        if args.count is not None and args.watch is None:
            parser.error("status: --count needs --watch (it counts the refreshes)")
        return status(args)
    if args.command == "trace":
        return trace(args)
    if args.command == "bench":
        return run_bench(args)
    if args.command == "toolkit":
        return run_toolkit(args)
    if args.command == "devices":
        return print_devices(args, parser)
    if args.command == "docs":
        from server import docs

        return docs.main(check=args.check)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
