"""What ended contexts did, kept for their tenant to look at after the program has gone.

Two things outlive a context. Its trace events stay in the device's ring until newer ones overwrite them: every
runtime the ring (or a live context) still references keeps its context's name here, in a weak map, so a tenant's
trace holds its ended contexts' events as well as its live ones. And the models a context had when it was
reclaimed -- their views, debug print and graph -- are kept for the newest `keep` ended contexts (VNPU_KEEP_ENDED),
at most MODELS_KEPT models each.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from server.npu import Runtime
from server.npu.core.caller import calling_thread
from server.npu.model.model import ModelRI
from server.npu.process.context import Context

MODELS_KEPT = 64  # the newest models of one ended context


@dataclass(frozen=True, slots=True)
class ContextName:
    id: str
    tenant: str
    run: str | None = None  # the label of the run that opened it (VNPU_RUN, set by `vnpu trace -- cmd`)


@dataclass(frozen=True, slots=True)
class KeptModel:
    model: ModelRI
    debug: str  # aclmdlRIDebugPrint's text, taken before the model went


@dataclass(frozen=True, slots=True)
class EndedContext:
    name: ContextName
    ended: float  # time.time() of the reclaim
    models: dict[int, KeptModel]


def debug_text(runtime: Runtime, handle: int) -> str:
    """The model's aclmdlRIDebugPrint, as the view's pseudo thread (empty once the context is finalized)."""
    with calling_thread(("view", 0)):
        return runtime.aclmdlRIDebugPrint(handle) if runtime.ctx.init_count else ""


class History:
    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.names: WeakKeyDictionary[Context, ContextName] = WeakKeyDictionary()  # trace records hold the context
        self.ended: OrderedDict[str, EndedContext] = OrderedDict()  # oldest first

    def opened(self, runtime: Runtime, name: ContextName) -> None:
        self.names[runtime.ctx] = name

    def ending(self, runtime: Runtime) -> None:
        """Keep what the context holds as it is reclaimed (call before its release)."""
        name = self.names.get(runtime.ctx)
        if name is None or self.keep <= 0:
            return
        handles = sorted(runtime.ctx.models)[-MODELS_KEPT:]
        models = {h: KeptModel(runtime.ctx.models[h], debug_text(runtime, h)) for h in handles}
        self.ended[name.id] = EndedContext(name, time.time(), models)
        while len(self.ended) > self.keep:
            self.ended.popitem(last=False)

    def owners(self, tenant: str) -> dict[int, ContextName]:
        """The tenant's contexts that may still have trace events, live or ended, by the id of their context (the
        owner of their trace events)."""
        return {id(ctx): name for ctx, name in list(self.names.items()) if name.tenant == tenant}

    def ended_of(self, tenant: str) -> list[EndedContext]:
        """The tenant's kept ended contexts, newest first."""
        return [e for e in reversed(self.ended.values()) if e.name.tenant == tenant]
