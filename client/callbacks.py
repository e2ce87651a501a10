"""Callbacks and host functions, the client's half: the functions run here, in the program (spec-breadth 4).

    aclrtSubscribeReport(threading.get_ident(), stream)     # this thread runs the stream's callbacks
    aclrtLaunchCallback(print, "reached", ACL_CALLBACK_BLOCK, stream)
    aclrtProcessReport(1000)                                # runs print("reached") here; the stream goes on
    aclrtLaunchHostFunc(stream, fn, args)                   # runs fn(args) on the session's host-function thread

`fn` is any callable and `userData` any object: the daemon sees only their ids (`Kept`) and hands them back
when the stream reaches the task. `aclrtProcessReport(timeout)` runs, in the calling thread, the callbacks due
for it (507012 when none comes within `timeout` ms; -1 waits forever); host functions run on a thread the
session starts at its first `aclrtLaunchHostFunc` (the runtime's callback thread). A blocking callback's return
is reported at once, so its stream goes on. An exception in a callback is printed, as an uncaught exception
in a thread is, and the stream goes on: the C function it stands for cannot fail.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from client.errors import ServerError, TransportError
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_REPORT_TIMEOUT, ACL_ERROR_RT_THREAD_SUBSCRIBE, AclError

Call = Callable[..., Any]  # a session's `call(api, *values)`
POLL_MS = 1000  # how long the host-function thread waits per request


class Kept:
    """The objects the daemon names by their id, each held while a launch may still hand it back."""

    def __init__(self) -> None:
        self._objects: dict[int, list[Any]] = {}  # id -> [object, launches not yet run]
        self._lock = threading.Lock()

    def hold(self, obj: Any) -> int:
        if obj is None:
            return 0
        with self._lock:
            self._objects.setdefault(id(obj), [obj, 0])[1] += 1
        return id(obj)

    def get(self, ident: int, release: bool) -> Any:
        if ident == 0:
            return None
        found = self._objects[ident][0]
        if release:
            self.release(ident)
        return found

    def release(self, *idents: int) -> None:
        with self._lock:
            for ident in filter(None, idents):
                entry = self._objects[ident]
                entry[1] -= 1
                if entry[1] == 0:
                    del self._objects[ident]

    def __len__(self) -> int:
        return len(self._objects)


KEPT = Kept()


def _callable(fn: Any, api: str, name: str = "fn") -> None:
    if fn is not None and not callable(fn):
        raise AclError(ACL_ERROR_INVALID_PARAM, f"{name} must be a callable, got {type(fn).__name__}", api)


def aclrtLaunchCallback(call: Call, fn: Any, userData: Any, blockType: int, stream: int | None) -> None:  # noqa: N802, N803
    _callable(fn, "aclrtLaunchCallback")
    held = KEPT.hold(fn), KEPT.hold(userData)
    try:
        call("aclrtLaunchCallback", *held, blockType, stream)
    except BaseException:
        KEPT.release(*held)
        raise


def aclrtLaunchHostFunc(call: Call, stream: int | None, fn: Any, args: Any) -> None:  # noqa: N802
    _callable(fn, "aclrtLaunchHostFunc")
    held = KEPT.hold(fn), KEPT.hold(args)
    try:
        call("aclrtLaunchHostFunc", stream, *held)
    except BaseException:
        KEPT.release(*held)
        raise


def aclrtProcessReport(call: Call, timeout: int) -> None:  # noqa: N802
    """Run the callbacks due for the calling thread, waiting up to `timeout` ms (-1: forever) for one."""
    run(call, call("vnpuTakeReports", timeout))


def run(call: Call, reports: list[dict[str, Any]]) -> None:
    """Run each due callback (`proto.calltable.DueCallback`), saying when a blocking one returned."""
    for due in reports:
        keep = due["captured"]  # a captured callback comes back at every replay
        try:
            KEPT.get(due["fn"], not keep)(KEPT.get(due["userData"], not keep))
        except Exception:  # reported like an uncaught exception in a thread; the stream goes on
            print("vnpu: a callback raised an exception:", file=sys.stderr)
            traceback.print_exc()
        finally:
            if due["blocking"]:
                call("vnpuCallbackDone", due["callbackId"])


class DestroyCallbacks:
    """The destroy callbacks of models (aclmdlRIDestroyRegisterCallback), kept here: the daemon knows each by its
    `func` key (a C function's address, a Python callable's id()) and hands the keys back from aclmdlRIDestroy,
    ordered by key (the runtime orders them by function address), for `destroyed` to call here."""

    def __init__(self) -> None:
        self._kept: dict[tuple[int, int], tuple[Callable[[Any], None], Any]] = {}  # (model, key) -> fn, userData
        self._lock = threading.Lock()

    def key(self, model: int, fn: Any) -> int:
        """The key of `fn`: the one it was registered under if an equal callable was (a bound method made anew
        each time it is read), else its id()."""
        with self._lock:
            for (m, key), (kept, _) in self._kept.items():
                if m == model and callable(fn) and kept == fn:  # no array == of a wrong-typed func
                    return key
        return id(fn) if fn is not None else 0

    def register(self, call: Call, model: int, key: int, fn: Callable[[Any], None], data: Any, data_key: int) -> None:
        call("aclmdlRIDestroyRegisterCallback", model, key, data_key)
        with self._lock:
            self._kept[(model, key)] = (fn, data)

    def unregister(self, call: Call, model: int, key: int) -> None:
        call("aclmdlRIDestroyUnregisterCallback", model, key)
        with self._lock:
            self._kept.pop((model, key), None)

    def destroyed(self, model: int, due: list[dict[str, Any]]) -> None:
        """The model is gone: call its callbacks in the daemon's order (one registered by another process of a
        shared context is not ours to call), then forget them all."""
        with self._lock:
            found = [self._kept.pop((model, d["func"]), None) for d in due]
            for key in [k for k in self._kept if k[0] == model]:
                del self._kept[key]
        for entry in found:
            if entry is None:
                continue
            fn, data = entry
            try:
                fn(data)
            except Exception:  # reported like an uncaught exception in a thread; the destroy stands
                print("vnpu: a model destroy callback raised an exception:", file=sys.stderr)
                traceback.print_exc()


DESTROY = DestroyCallbacks()


def aclmdlRIDestroyRegisterCallback(call: Call, modelRI: int, func: Any, userData: Any) -> None:  # noqa: N802, N803
    """`func(userData)` is called on the thread that destroys the model, after it stopped running."""
    _callable(func, "aclmdlRIDestroyRegisterCallback", "func")
    DESTROY.register(call, modelRI, DESTROY.key(modelRI, func), func, userData, id(userData) if userData else 0)


def aclmdlRIDestroyUnregisterCallback(call: Call, modelRI: int, func: Any) -> None:  # noqa: N802, N803
    _callable(func, "aclmdlRIDestroyUnregisterCallback", "func")
    DESTROY.unregister(call, modelRI, DESTROY.key(modelRI, func))


def aclmdlRIDestroy(call: Call, modelRI: int) -> None:  # noqa: N802, N803
    """Destroy the model, then call its destroy callbacks here, on the calling thread."""
    DESTROY.destroyed(modelRI, call("aclmdlRIDestroy", modelRI))


FUNCTIONS: dict[str, Callable[..., None]] = {
    "aclrtLaunchCallback": aclrtLaunchCallback,
    "aclrtLaunchHostFunc": aclrtLaunchHostFunc,
    "aclrtProcessReport": aclrtProcessReport,
    "aclmdlRIDestroyRegisterCallback": aclmdlRIDestroyRegisterCallback,
    "aclmdlRIDestroyUnregisterCallback": aclmdlRIDestroyUnregisterCallback,
}
"""The C functions implemented here, each taking the session's `call` first."""


class HostFuncThread:
    """The thread that runs one session's host functions. It ends when no stream of the process runs host
    functions any more (all destroyed), and `launched` starts it again."""

    def __init__(self, call: Call) -> None:
        self._call = call
        self._lock = threading.Lock()
        self._launches = 0  # aclrtLaunchHostFunc calls so far: one after the thread's last request keeps it on
        self._running = False
        self._closed = False

    def launched(self) -> None:
        """A host function was launched (the call has returned): make sure the thread runs."""
        with self._lock:
            self._launches += 1
            if not self._running and not self._closed:
                self._running = True
                threading.Thread(target=self._serve, name="vnpu-host-functions", daemon=True).start()

    def _serve(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    self._running = False
                    return
                launches = self._launches
            try:
                run(self._call, self._call("vnpuTakeHostFuncs", POLL_MS))
            except AclError as error:
                if error.code == ACL_ERROR_RT_THREAD_SUBSCRIBE:
                    with self._lock:
                        if launches == self._launches:  # no launch since the request: nothing to serve
                            self._running = False
                            return
                elif error.code != ACL_ERROR_RT_REPORT_TIMEOUT:
                    print(f"vnpu: the host-function thread: {error}", file=sys.stderr)
                    time.sleep(0.1)
            except (TransportError, ServerError):
                with self._lock:
                    self._running = False
                return  # the session is gone

    def stop(self) -> None:
        with self._lock:
            self._closed = True
