"""Tenants, contexts and sessions.

A context is one `Runtime` (what one process sees of the CANN runtime: its handles, pointers, devices set).
A session is one client connection (a WebSocket, or a REST client presenting a session id) inside a context;
several sessions -- other processes -- may join a context by its id and share its handles. A context belongs to
the tenant whose token created it; another tenant cannot join it or see it. When the last session of a context
ends (disconnect, or an idle REST session timing out) the context is reclaimed after a grace period: its
streams finish, and its memory, events, models and host buffers are freed.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from proto.envelope import explain
from proto.errors import (
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_NO_EVENT_RESOURCE,
    ACL_ERROR_RT_NO_MODEL_RESOURCE,
    ACL_ERROR_RT_NO_STREAM_RESOURCE,
    ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
    AclError,
)
from server.api.errors import MalformedCall
from server.api.history import ContextName, History
from server.api.metrics import Metrics
from server.api.settings import Settings
from server.npu import Machine, Runtime
from server.npu.core.caller import ClientThread
from server.npu.memory.quota import Quota, Share
from server.npu.tdt import MAX_QUEUES

log = logging.getLogger("vnpu.sessions")
RUN_LABEL = re.compile(r"[A-Za-z0-9._-]{1,64}")
EXPIRED_KEPT = 4096  # expired sessions remembered, to say so when one is named again


class SessionRequest(BaseModel):
    """The body of `POST /v1/sessions` (none: a new context); an unknown field is refused, as on every route."""

    model_config = ConfigDict(extra="forbid")
    context: str | None = None  # join this context of the tenant's
    run: Any = None  # label the new context (`Registry.open` says what a label is)

    @classmethod
    def parse(cls, body: bytes) -> SessionRequest:
        try:
            return cls.model_validate_json(body or b"{}")
        except ValidationError as error:
            raise MalformedCall(explain(error)) from None


@dataclass(eq=False)
class ContextEntry:
    id: str
    tenant: str
    runtime: Runtime
    sessions: set[Session] = field(default_factory=set)
    reclaim: asyncio.Task[None] | None = None
    opened: float = field(default_factory=time.monotonic)  # when it was made (its age in the views)


@dataclass(eq=False)
class Session:
    id: str
    context: ContextEntry
    kind: str  # "ws" or "rest"
    metrics: Metrics
    last_seen: float = field(default_factory=time.monotonic)  # when a call of it last began or ended
    calls: int = 0  # its calls in flight: a session with one never expires
    replaces: str | None = None  # a default REST session opened for an expired one: why that one ended
    on_shared: Callable[[], Awaitable[None]] | None = None  # tells its client that another session joined

    @property
    def runtime(self) -> Runtime:
        return self.context.runtime

    @contextmanager
    def calling(self) -> Iterator[None]:
        """Around one call of the session: it is in flight, and the session is idle only from its end."""
        self.calls += 1
        try:
            yield
        finally:
            self.calls -= 1
            self.last_seen = time.monotonic()

    def began(self, thread: Hashable) -> bool:
        """Whether the device-side `thread` (see `thread`) is one of this session's."""
        return (
            isinstance(thread, tuple) and len(thread) == 2 and isinstance(thread[0], tuple) and thread[0][0] == self.id
        )

    def thread(self, client_thread: Hashable) -> ClientThread:
        """The identity under which the device sees a client thread, unique across sessions: (process, thread),
        where a client's [pid, tid] names its process (pid, in this session) and its thread (tid)."""
        if isinstance(client_thread, tuple) and len(client_thread) == 2:
            return ((self.id, client_thread[0]), client_thread[1])
        return ((self.id, None), client_thread)


class Registry:
    def __init__(self, machine: Machine, settings: Settings, metrics: Metrics | None = None) -> None:
        self.machine = machine
        self.settings = settings
        self.metrics = metrics or Metrics()
        self.contexts: dict[str, ContextEntry] = {}
        self.sessions: dict[str, Session] = {}
        self._default_rest: dict[str, Session] = {}  # tenant -> the session of REST calls that name none
        self.expired: OrderedDict[str, str] = OrderedDict()  # session id -> how it expired (the newest EXPIRED_KEPT)
        self.history = History(settings.keep_ended)
        self.quotas: dict[str, Quota] = {}  # tenant -> its quota, with two tenants or more
        self._shared = len(set(settings.tokens.values())) > 1

    def quota(self, tenant: str) -> Quota | None:
        """The tenant's quota (made at its first session), or None when the tokens name one tenant or none."""
        if not self._shared:
            return None
        if tenant not in self.quotas:
            self.quotas[tenant] = Quota(tenant, tenant_shares(self.settings))
        return self.quotas[tenant]

    def open(self, tenant: str, kind: str, context_id: str | None = None, run: str | None = None) -> Session:
        """A new session, in a new context (labelled `run`, if given) or joining `context_id` (the tenant's)."""
        if run is not None and not (isinstance(run, str) and RUN_LABEL.fullmatch(run)):
            raise AclError(ACL_ERROR_INVALID_PARAM, f"run {str(run)[:80]!r} is not a label: 1-64 of A-Z a-z 0-9 . _ -")
        quota = self.quota(tenant)
        if quota is not None:
            quota.check("session")
        if context_id:
            entry = self.contexts.get(context_id)
            if entry is None or entry.tenant != tenant:
                raise AclError(ACL_ERROR_INVALID_PARAM, f"no context {context_id!r}: it never existed or has ended")
            if entry.reclaim is not None:
                entry.reclaim.cancel()
                entry.reclaim = None
        else:
            if quota is not None:
                quota.take("context")
            settings = self.settings
            runtime = Runtime(self.machine, settings.context_memory, settings.context_handles, quota)
            entry = ContextEntry(secrets.token_hex(8), tenant, runtime)
            self.contexts[entry.id] = entry
            self.history.opened(runtime, ContextName(entry.id, tenant, run))
        if quota is not None:
            quota.take("session")
        session = Session(secrets.token_hex(8), entry, kind, self.metrics)
        entry.sessions.add(session)
        self.sessions[session.id] = session
        log.info("session %s (%s) opened in context %s of tenant %s", session.id, kind, entry.id, tenant)
        return session

    async def announce(self, session: Session) -> None:
        """Before a session that joined a context is answered: tell the context's other sessions (server.api.idle)."""
        others = [s.on_shared for s in session.context.sessions if s is not session and s.on_shared is not None]
        if others:
            await asyncio.gather(*(tell() for tell in others))

    def rest_session(self, tenant: str, session_id: str | None) -> Session:
        """The REST session `session_id` of this tenant, or the tenant's default REST session."""
        if session_id:
            session = self.sessions.get(session_id)
            # a WebSocket's session is its connection's alone: a REST call or DELETE naming it would end it (and
            # reclaim its context) under the connection's feet, so to REST it does not exist
            if session is None or session.context.tenant != tenant or session.kind != "rest":
                why = self.expired.get(session_id) if session is None else None
                if why is not None:
                    raise AclError(ACL_ERROR_INVALID_PARAM, f"{why}; POST /v1/sessions opens a new one")
                raise AclError(ACL_ERROR_INVALID_PARAM, f"no session {session_id!r}: it never existed or has ended")
        else:
            session = self._default_rest.get(tenant) or self.open(tenant, "rest")
            if session.id not in self.sessions:
                gone = session
                session = self.open(tenant, "rest")
                session.replaces = self.expired.get(gone.id)
            self._default_rest[tenant] = session
        session.last_seen = time.monotonic()
        return session

    def close(self, session: Session) -> None:
        """End a session; the last one of a context schedules its reclaim."""
        if self.sessions.pop(session.id, None) is None:
            return
        entry = session.context
        entry.sessions.discard(session)
        if entry.runtime.ctx.quota is not None:
            entry.runtime.ctx.quota.give("session")
        log.info("session %s closed", session.id)
        if entry.sessions and entry.runtime.abandon_updates(session.began):  # others of the context go on
            log.info("session %s left task updates unfinished: they end unapplied", session.id)
        if not entry.sessions and entry.reclaim is None:
            entry.reclaim = asyncio.get_running_loop().create_task(self._reclaim(entry, self.settings.context_grace))

    def contexts_of(self, tenant: str) -> list[ContextEntry]:
        return [c for c in self.contexts.values() if c.tenant == tenant]

    def expire_idle(self) -> None:
        deadline = time.monotonic() - self.settings.session_idle
        for session in list(self.sessions.values()):
            if session.kind == "rest" and not session.calls and session.last_seen < deadline:
                is_default = self._default_rest.get(session.context.tenant) is session
                default = " (the default REST session, of calls that name none)" if is_default else ""
                self.expired[session.id] = (
                    f"session {session.id!r}{default} expired at {time.strftime('%H:%M:%S')} after "
                    f"{self.settings.session_idle:g} s without a call (VNPU_SESSION_IDLE, default 600), and its "
                    "context with its memory and handles went with it"
                )
                while len(self.expired) > EXPIRED_KEPT:
                    self.expired.popitem(last=False)
                self.close(session)

    async def reap_forever(self, period: float = 5.0) -> None:
        while True:
            await asyncio.sleep(period)
            self.expire_idle()

    async def close_all(self) -> None:
        """At shutdown: end every session and release every context now."""
        for session in list(self.sessions.values()):
            self.close(session)
        for entry in list(self.contexts.values()):
            if entry.reclaim is not None:
                entry.reclaim.cancel()
            await self._reclaim(entry, 0)

    async def _reclaim(self, entry: ContextEntry, grace: float) -> None:
        await asyncio.sleep(grace)
        if entry.sessions or self.contexts.get(entry.id) is not entry:
            return
        del self.contexts[entry.id]
        if entry.runtime.ctx.quota is not None:
            entry.runtime.ctx.quota.give("context")
        try:
            self.history.ending(entry.runtime)
            await entry.runtime.release_all()
        except Exception:  # a vnpu bug: keep the daemon up, say so
            log.exception("releasing context %s failed", entry.id)
        log.info("context %s of tenant %s reclaimed", entry.id, entry.tenant)


def tenant_shares(settings: Settings) -> dict[str, Share]:
    """What one tenant may hold (VNPU_TENANT_*), kind by kind, with the resource's code when it is reached."""
    share = settings.tenant_share

    def of(unit: str, name: str, limit: int, code: int) -> Share:
        return Share(unit, int(share * limit), code, f"VNPU_TENANT_SHARE={share:g} of {name}={limit}")

    def count(unit: str, name: str, limit: int) -> Share:
        return Share(unit, limit, ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, f"{name}={limit}")

    return {
        "stream": of("streams", "VNPU_MAX_STREAMS", settings.max_streams, ACL_ERROR_RT_NO_STREAM_RESOURCE),
        "event": of("events", "VNPU_MAX_EVENTS", settings.max_events, ACL_ERROR_RT_NO_EVENT_RESOURCE),
        "model": of("models", "VNPU_MAX_MODELS", settings.max_models, ACL_ERROR_RT_NO_MODEL_RESOURCE),
        "memory": of("bytes of memory", "VNPU_MEMORY", settings.memory, ACL_ERROR_RT_MEMORY_ALLOCATION),
        "queue": of("TDT queues", "the device's queues", MAX_QUEUES, ACL_ERROR_RT_RESOURCE_ALLOC_FAIL),
        "context": count("contexts", "VNPU_TENANT_CONTEXTS", settings.tenant_contexts),
        "session": count("sessions", "VNPU_TENANT_SESSIONS", settings.tenant_sessions),
    }
