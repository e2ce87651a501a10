"""`GET /metrics` in Prometheus text format.

Counted as they happen: calls by C name and result code, call latency, errors of pipelined calls. Read from the
device when scraped: tasks run by kind, queue depth per stream, device memory used/total, pinned host bytes,
models, task-group updates applied, sessions and contexts. Each app has its own registry (tests run several).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from fastapi import FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from server.npu.trace import KINDS

if TYPE_CHECKING:
    from server.api.sessions import Registry


BUCKETS: Final = (1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1, 3, 10)  # seconds per call


class Metrics:
    """Counted on the event loop as calls are served, in plain counters (a prometheus_client child per call cost
    ~7% of the daemon's time per launch); turned into metric families when scraped."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.calls: Counter[tuple[str, int]] = Counter()  # (api, code) -> calls
        self.latency: dict[str, list[float]] = {}  # api -> calls per bucket (+Inf last), then the sum of seconds
        self.pipelined_errors: Counter[str] = Counter()  # api -> errors of calls sent without waiting
        self.registry.register(_CallCollector(self))

    def call(self, api: str, code: int, seconds: float) -> None:
        self.calls[api, code] += 1
        counts = self.latency.get(api)
        if counts is None:
            counts = self.latency[api] = [0.0] * (len(BUCKETS) + 2)
        counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        counts[-1] += seconds

    def watch(self, sessions: Registry) -> None:
        self.registry.register(_DeviceCollector(sessions))

    def text(self) -> bytes:
        return generate_latest(self.registry)


class _CallCollector(Collector):
    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        calls = CounterMetricFamily("vnpu_calls", "ACL calls served, by C name and result code", labels=["api", "code"])
        for (api, code), count in sorted(self.metrics.calls.items()):
            calls.add_metric([api, str(code)], count)
        yield calls
        latency = HistogramMetricFamily(
            "vnpu_call_seconds", "time from receiving a call to its result (pipelined calls included)", labels=["api"]
        )
        for api, counts in sorted(self.metrics.latency.items()):
            cumulative = list(itertools.accumulate(counts[:-1]))
            buckets = [(_bound(b), c) for b, c in zip([*BUCKETS, math.inf], cumulative, strict=True)]
            latency.add_metric([api], buckets, counts[-1])
        yield latency
        errors = CounterMetricFamily("vnpu_pipelined_errors", "errors of calls sent without waiting", labels=["api"])
        for api, count in sorted(self.metrics.pipelined_errors.items()):
            errors.add_metric([api], count)
        yield errors


def _bound(value: float) -> str:
    return "+Inf" if value == math.inf else repr(float(value))


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
