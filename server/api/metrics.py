"""`GET /metrics` in Prometheus text format.

Counted as they happen, per tenant: calls by C name and result code, call latency, errors of pipelined calls.
Read from the device when scraped: queue depth per stream (per tenant), and totals: tasks run by kind, device
memory used/total, pinned host bytes, models, task-group updates applied, sessions and contexts.

A tenant's scrape shows its own calls and streams and the totals, never another tenant's handles or calls; the
operator token (VNPU_OPERATOR_TOKEN) shows every tenant's, labelled `tenant`. Every counter only grows.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sized
from typing import TYPE_CHECKING, Final, Protocol

from fastapi import FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from server.api.auth import viewer_of
from server.npu.core.trace import KINDS

if TYPE_CHECKING:
    from server.npu import Machine, Runtime


BUCKETS: Final = (1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1, 3, 10)  # seconds per call


class WatchedContext(Protocol):
    @property
    def tenant(self) -> str: ...

    @property
    def runtime(self) -> Runtime: ...


class Watched(Protocol):
    """What the device collector reads of the daemon's sessions (`server.api.sessions.Registry`)."""

    @property
    def machine(self) -> Machine: ...

    @property
    def contexts(self) -> Mapping[str, WatchedContext]: ...

    @property
    def sessions(self) -> Sized: ...


class Metrics:
    """Counted on the event loop as calls are served, in plain counters (a prometheus_client child per call cost
    ~7% of the daemon's time per launch); turned into metric families when scraped, for the scraper's view."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str, int]] = Counter()  # (tenant, api, code) -> calls
        # (tenant, api) -> calls per bucket (+Inf last), then the sum of seconds
        self.latency: dict[tuple[str, str], list[float]] = {}
        self.pipelined_errors: Counter[tuple[str, str]] = Counter()  # (tenant, api) -> errors of unawaited calls
        self.sessions: Watched | None = None

    def call(self, tenant: str, api: str, code: int, seconds: float) -> None:
        self.calls[tenant, api, code] += 1
        counts = self.latency.get((tenant, api))
        if counts is None:
            counts = self.latency[tenant, api] = [0.0] * (len(BUCKETS) + 2)
        counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        counts[-1] += seconds

    def pipelined_error(self, tenant: str, api: str) -> None:
        self.pipelined_errors[tenant, api] += 1

    def watch(self, sessions: Watched) -> None:
        self.sessions = sessions

    def text(self, viewer: str | None = None) -> bytes:
        """The metrics as `viewer` (a tenant) may see them; None: the operator's view, every tenant labelled."""
        registry = CollectorRegistry()
        registry.register(_CallCollector(self, viewer))
        if self.sessions is not None:
            registry.register(_DeviceCollector(self.sessions, viewer))
        return generate_latest(registry)


class _View:
    """Which tenants' series a scrape shows, and their labels: a tenant's own without a label, or (operator)
    every tenant's with a `tenant` label."""

    def __init__(self, viewer: str | None) -> None:
        self.viewer = viewer
        self.extra = [] if viewer is not None else ["tenant"]

    def labels(self, tenant: str, *values: str) -> list[str] | None:
        if self.viewer is None:
            return [*values, tenant]
        return list(values) if tenant == self.viewer else None


class _CallCollector(Collector):
    def __init__(self, metrics: Metrics, viewer: str | None) -> None:
        self.metrics, self.view = metrics, _View(viewer)

    def collect(self) -> Iterator[Metric]:
        view = self.view
        calls = CounterMetricFamily(
            "vnpu_calls", "ACL calls served, by C name and result code", labels=["api", "code", *view.extra]
        )
        for (tenant, api, code), count in sorted(self.metrics.calls.items()):
            if (labels := view.labels(tenant, api, str(code))) is not None:
                calls.add_metric(labels, count)
        yield calls
        latency = HistogramMetricFamily(
            "vnpu_call_seconds",
            "time from receiving a call to its result (pipelined calls included)",
            labels=["api", *view.extra],
        )
        for (tenant, api), counts in sorted(self.metrics.latency.items()):
            if (labels := view.labels(tenant, api)) is not None:
                cumulative = list(itertools.accumulate(counts[:-1]))
                buckets = [(_bound(b), c) for b, c in zip([*BUCKETS, math.inf], cumulative, strict=True)]
                latency.add_metric(labels, buckets, counts[-1])
        yield latency
        errors = CounterMetricFamily(
            "vnpu_pipelined_errors", "errors of calls sent without waiting", labels=["api", *view.extra]
        )
        for (tenant, api), count in sorted(self.metrics.pipelined_errors.items()):
            if (labels := view.labels(tenant, api)) is not None:
                errors.add_metric(labels, count)
        yield errors


def _bound(value: float) -> str:
    return "+Inf" if value == math.inf else repr(float(value))


class _DeviceCollector(Collector):
    def __init__(self, sessions: Watched, viewer: str | None) -> None:
        self.sessions, self.view = sessions, _View(viewer)

    def collect(self) -> Iterator[Metric]:
        machine = self.sessions.machine
        kinds: Counter[str] = Counter()  # several task types share a kind (a captured record is a record)
        for task_type, count in machine.tracer.counts.items():
            kinds[KINDS.get(task_type.__name__, task_type.__name__.lower())] += count
        tasks = CounterMetricFamily("vnpu_tasks", "tasks run on the device, by kind", labels=["kind"])
        for kind, count in sorted(kinds.items()):
            tasks.add_metric([kind], count)
        yield tasks
        used = GaugeMetricFamily("vnpu_device_memory_used_bytes", "device memory in use", labels=["device"])
        total = GaugeMetricFamily("vnpu_device_memory_total_bytes", "device memory", labels=["device"])
        for device in machine.devices:
            used.add_metric([str(device.index)], device.arena.used_bytes)
            total.add_metric([str(device.index)], device.arena.capacity)
        yield used
        yield total
        yield GaugeMetricFamily(
            "vnpu_host_buffer_bytes", "pinned host memory (aclrtMallocHost)", machine.host.used_bytes
        )
        depth = GaugeMetricFamily(
            "vnpu_stream_queue_depth", "tasks queued on a stream", labels=["stream", "device", *self.view.extra]
        )
        models = 0
        for context in self.sessions.contexts.values():
            runtime = context.runtime
            for stream in [*runtime.ctx.default_streams.values(), *runtime.ctx.streams.values()]:
                labels = self.view.labels(context.tenant, f"{stream.handle:#x}", str(stream.device.index))
                if labels is not None:
                    depth.add_metric(labels, stream.queued)
            models += len(runtime.ctx.models)
        yield depth
        yield GaugeMetricFamily("vnpu_models", "aclmdlRI models alive", models)
        updates = sum(n for t, n in machine.tracer.counts.items() if t.__name__ == "UpdateApplyTask")
        yield CounterMetricFamily("vnpu_task_updates", "task-group updates applied", updates)
        yield GaugeMetricFamily("vnpu_sessions", "client sessions", len(self.sessions.sessions))
        yield GaugeMetricFamily("vnpu_contexts", "client contexts", len(self.sessions.contexts))


def install(app: FastAPI) -> None:
    @app.get("/metrics", tags=["views"], response_class=Response)
    async def metrics(request: Request) -> Response:
        """A tenant's view (its own calls and streams, and the totals); with the operator token, every tenant's."""
        viewer = viewer_of(request, request.app.state.settings)
        return Response(request.app.state.metrics.text(viewer), media_type=CONTENT_TYPE_LATEST)
