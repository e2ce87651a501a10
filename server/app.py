"""The vnpu daemon as an ASGI application. Its lifespan owns the device: the Machine is created at startup and,
at shutdown, every context is released (queued work finishing up to a deadline) and the shared memory unlinked.

`create_app(embedded=True)` is the application of VNPU_ENDPOINT=embedded (`client/embedded.py`): the same device,
sessions and WebSocket `/v1/ws`, and nothing the in-process client never reaches -- no REST routes, OpenAPI,
views, metrics page or dashboard, whose modules are not even imported (building the ~250 REST routes alone took
most of a second)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import AsyncIterator

from fastapi import FastAPI

from proto import operators
from server.api import errors, ws
from server.api.auth import redact_server_logs
from server.api.metrics import Metrics
from server.api.origins import CheckOrigin, OriginPolicy, is_loopback
from server.api.sessions import Registry
from server.api.settings import Settings
from server.npu import Machine, kernels
from server.npu.core.blas import one_thread_per_kernel
from server.npu.core.heap import keep_freed_memory
from server.npu.memory.hostmem import sweep_stale
from server.npu.ops import dump
from server.version import package_version

log = logging.getLogger("vnpu")


def create_app(settings: Settings | None = None, *, embedded: bool = False) -> FastAPI:
    settings = settings or Settings.from_env()
    redact_server_logs()
    operators.load(settings.operators)  # before the routes: OperatorError names a module that fails

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        for name in sweep_stale():
            log.info("removed the shared memory %s of a daemon that died", name)
        kernels.load(settings.kernels.split(","))  # ImportError names a module that fails
        dump.configure(settings.dump_launches)
        keep_freed_memory()  # the kernels' temporaries reuse freed memory instead of new pages each launch
        if not embedded:  # in a program's own process its numpy's threads are the program's
            one_thread_per_kernel()
        machine = Machine(
            settings.devices,
            settings.memory,
            max_streams=settings.max_streams,
            max_events=settings.max_events,
            max_models=settings.max_models,
            trace_capacity=settings.trace_capacity,
            trace_shares=len(set(settings.tokens.values())),  # each tenant its share of the trace
            max_while_iterations=settings.max_while_iterations,
            max_launch_elements=settings.max_launch_elements,
            max_launch_workspace=settings.max_launch_workspace,
            launch_timeout=settings.launch_timeout,
            pool_share=settings.pool_share,
        )
        meter = Metrics()
        registry = Registry(machine, settings, meter)
        meter.watch(registry)
        app.state.machine, app.state.registry, app.state.metrics = machine, registry, meter
        # idle REST sessions end at most a quarter of `session_idle` late (and are looked for at least every 5 s)
        period = min(5.0, max(0.05, settings.session_idle / 4))
        reaper = asyncio.get_running_loop().create_task(registry.reap_forever(period))
        try:
            yield
        finally:
            reaper.cancel()
            try:
                await asyncio.wait_for(registry.close_all(), settings.shutdown_deadline)
            except TimeoutError:
                log.warning("queued work did not finish within %s s; stopping anyway", settings.shutdown_deadline)
            machine.close()

    if embedded:
        app = FastAPI(lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)
    else:
        from fastapi_offline import FastAPIOffline

        app = FastAPIOffline(  # /docs and /redoc with their assets served by the daemon: they work without internet
            static_url="/docs-assets",
            title="vnpu",
            version=package_version(),
            description="A virtual Ascend NPU: the ACL runtime's streams, events, aclmdlRI capture and task update, "
            "and aclnn operators, over REST and WebSocket. Every ACL function is `POST /v1/call/{C name}`.",
            lifespan=lifespan,
        )
    app.state.settings = settings
    app.state.live_viewers = Counter()  # tenant -> its open /v1/trace/live connections
    errors.install(app, settings)
    loopback_only = settings.uds is not None or is_loopback(settings.host)
    app.add_middleware(CheckOrigin, policy=OriginPolicy(settings.allow_origins, loopback_only))  # outermost
    ws.install(app)
    if not embedded:
        _install_daemon_routes(app)
    return app


def _install_daemon_routes(app: FastAPI) -> None:
    """What only a daemon serves: REST, views, trace, metrics, the dashboard, OpenAPI."""
    from server.api import dashboard, echo, metrics, observe, openapi, phase1, rest, views

    rest.install(app)
    phase1.install(app)  # aclnnXxxGetWorkspaceSize for curl users
    views.install(app)
    observe.install(app)
    metrics.install(app)
    dashboard.install(app)  # GET / and the WebSocket /v1/trace/live that feeds its timeline
    echo.install(app)  # the benchmarks' floor: a bare WebSocket echo (server/api/echo.py)
    openapi.install(app)  # the document's kernel schemas and result enums, once every route is in
