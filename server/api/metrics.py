"""`GET /metrics` in Prometheus text format.

Counted as they happen: calls by C name and result code, call latency, errors of pipelined calls. Read from the
device when scraped: tasks run by kind, queue depth per stream, device memory used/total, pinned host bytes,
models, task-group updates applied, sessions and contexts. Each app has its own registry (tests run several).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from server.npu.trace import KINDS

if TYPE_CHECKING:
    from server.api.sessions import Registry


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.calls = Counter("vnpu_calls", "ACL calls served, by C name and result code", ["api", "code"],
                             registry=self.registry)  # fmt: skip
        self.latency = Histogram(
            "vnpu_call_seconds",
            "time from receiving a call to its result (pipelined calls included)",
            ["api"],
            buckets=(1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1, 3, 10),
            registry=self.registry,
        )
        self.pipelined_errors = Counter("vnpu_pipelined_errors", "errors of calls sent without waiting", ["api"],
                                        registry=self.registry)  # fmt: skip

        self._children: dict[tuple[str, int], tuple[Counter, Histogram]] = {}  # labels() resolved once

    def call(self, api: str, code: int, seconds: float) -> None:
        children = self._children.get((api, code))
        if children is None:
            children = self._children[api, code] = (self.calls.labels(api, str(code)), self.latency.labels(api))
        children[0].inc()
        children[1].observe(seconds)

    def watch(self, sessions: Registry) -> None:
        self.registry.register(_DeviceCollector(sessions))

    def text(self) -> bytes:
        return generate_latest(self.registry)


class _DeviceCollector(Collector):
    def __init__(self, sessions: Registry) -> None:
        self.sessions = sessions

    def collect(self) -> Iterator[Metric]:
        machine = self.sessions.machine
        tasks = CounterMetricFamily("vnpu_tasks", "tasks run on the device, by kind", labels=["kind"])
        for task_type, count in sorted(machine.tracer.counts.items(), key=lambda item: item[0].__name__):
            tasks.add_metric([KINDS.get(task_type.__name__, task_type.__name__.lower())], count)
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
        depth = GaugeMetricFamily("vnpu_stream_queue_depth", "tasks queued on a stream", labels=["stream", "device"])
        models = updates = 0
        for context in self.sessions.contexts.values():
            runtime = context.runtime
            for stream in [*runtime.default_streams.values(), *runtime.streams.values()]:
                depth.add_metric([f"{stream.handle:#x}", str(stream.device.index)], stream.queued)
            models += len(runtime.models)
            updates += sum(g.updates_applied for m in runtime.models.values() for g in m.groups.values())
        yield depth
        yield GaugeMetricFamily("vnpu_models", "aclmdlRI models alive", models)
        yield CounterMetricFamily("vnpu_task_updates", "task-group updates applied (live models)", updates)
        yield GaugeMetricFamily("vnpu_sessions", "client sessions", len(self.sessions.sessions))
        yield GaugeMetricFamily("vnpu_contexts", "client contexts", len(self.sessions.contexts))


def install(app: FastAPI) -> None:
    @app.get("/metrics", tags=["views"], response_class=Response)
    async def metrics(request: Request) -> Response:
        return Response(request.app.state.metrics.text(), media_type=CONTENT_TYPE_LATEST)
