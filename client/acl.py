"""The ACL C API, under its exact names, against a vnpu daemon.

    from client.acl import *  # every call, constant and C enum type, AclError, HostBuffer

    aclInit(None)                                   # connects: VNPU_ENDPOINT (default http://127.0.0.1:9470)
    aclrtSetDevice(0)
    dev = aclrtMalloc(1024, ACL_MEM_MALLOC_HUGE_FIRST)
    ws_size, executor = aclnnAddGetWorkspaceSize(self, other, alpha, out)
    aclnnAdd(workspace, ws_size, executor, stream)
    status, model = aclmdlRICaptureGetInfo(stream)

The contract (the differences from C, in the manner of CuPy's runtime module):

- Arguments in C order and under C's meaning; array-length arguments (`viewDimsNum`, ...) are dropped because a
  Python sequence knows its length.
- Out-parameters are returned instead of written through pointers: one value, or a tuple in C order when there
  are several. Calls whose C version has none return None.
- Errors raise `AclError` with the exact C code (`.code`, `.name`, `.api`, the message) instead of returning it;
  `aclGetRecentErrMsg()` returns the calling thread's last error message and clears it (None if there is none).
  The daemon being unreachable is a `TransportError`, a fault of vnpu itself a `ServerError` -- never AclError.
- Device pointers and handles are ints; 0 or None is NULL (for a stream: the default stream). Pointer
  arithmetic works: `dev + 64`.
- Host memory is a `HostBuffer` (from aclrtMallocHost: pinned memory of the daemon, zero-copy on the same machine)
  or any Python buffer -- bytes, bytearray, memoryview, numpy array -- for pageable memory, as C's plain pointers.
- Host objects stay on the host, as in CANN: aclCreateTensor / aclCreateScalar / aclCreateIntArray /
  aclCreateFloatArray / aclCreateBoolArray / aclCreateTensorList / aclCreateScalarList and phase 1
  (`aclnnXxxGetWorkspaceSize`) run here without a round trip and raise the real runtime's errors at once.
- Every public aclnn operator of CANN has its two phases here (`acl.aclnnRmsNormGetWorkspaceSize`, `acl.aclnnRmsNorm`),
  made on first use; phase 1 of one vnpu does not implement answers 561003 (docs/operators.md). The star import
  brings the implemented ones.
- Calls that only queue work (kernel launches, async copies, event record/wait/reset, execute, task update) are
  pipelined: sent without waiting for the daemon -- except an async copy from or to pageable memory, which waits
  as the runtime makes it synchronous. An error such a call causes is raised by the next call of the same thread
  that waits for a reply, naming the failing call (`aclrtMemcpyAsync #1234 failed: ...`), and how many more of
  the thread's pipelined calls failed since (`...; and 41 more pipelined calls failed`).
  VNPU_LAUNCH_BLOCKING=1 makes every call wait (exact C behaviour, for debugging). VNPU_TRANSPORT=http uses
  plain HTTP requests instead of the WebSocket (every call waits).
- A C struct argument is an object of the C type's name and fields, or a dict of the same fields; an array of
  structs is a list. Input-only structs are their `proto.calltable` models (`aclrtPhysicalMemProp(memAttr=...,
  location=aclrtMemLocation(id=0, type=ACL_MEM_LOCATION_TYPE_DEVICE))`, fields zero unless set, as `= {}` in C).
  A struct the runtime writes into is a mutable object (`aclrtRandomNumTaskInfo`, its `aclrtRandomParaInfo`s and
  the union's views, from `proto.randomnum`), and the call does to it what the runtime does to the C struct:
  aclrtRandomNumAsync writes the runtime's data type enum over `dataType`, so refill it before launching the
  struct again, as in C (a dict is left as it is).
- `aclmdlRIDebugPrint` returns the text it would log; `aclmdlRIDebugJsonPrint(model, path, flags)` writes the
  file at `path` on this machine (when given) and returns the JSON text.
- `aclInit(config_path)` reads `{"vnpu": {"endpoint": ..., "token": ...}}` from the JSON file when given, else the
  VNPU_ENDPOINT and VNPU_TOKEN variables; each aclInit of the process counts, and the last aclFinalize closes the
  session. A `Session` can also be made explicitly (several daemons or contexts in one process): `use(session)`
  makes it the one the module functions call. VNPU_DEVICES=0=ws://a:9470/0,1=ws://b:9470/0 spreads the program's
  devices over several daemons (`client.routing`): aclrtSetDevice(1) reaches the second one.
- aclnn operators a user declares (`proto.operators`) are here too, under their C names, when the module declaring
  them is named by VNPU_OPERATORS (or an entry point of group vnpu.operators) before this module is imported, or
  imported later (then `acl.aclnnXxx`, not the star import, reaches them).
- Thread-safe: the threads of a process share the session; every call carries its thread's identity, which the
  capture modes depend on (GLOBAL blocks unsafe calls in every thread of the context, THREAD_LOCAL only in the
  capturing thread).
"""

from __future__ import annotations

import inspect
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import proto.aclnn as _aclnn
import proto.errors as _errors
import proto.host as _host
import proto.legacyop as _legacyop
import proto.operators as _operators
import proto.randomnum as _randomnum
from client import callbacks as _callbacks
from client import exceptions as _exceptions
from client import kernels as _kernels
from client import lasterror as _lasterror
from client import streamstate as _streamstate
from client import tdt as _tdt
from client.config import load
from client.errors import ServerError as ServerError
from client.errors import TransportError as TransportError
from client.hostbuf import HostBuffer as HostBuffer
from client.routing import Router, parse_devices
from client.session import Session as Session
from proto.calltable import BEFORE_INIT as ANSWERED_BEFORE_INIT
from proto.calltable import CALLS, aclmdlRITaskParams
from proto.calltable import STRUCTS as WIRE_STRUCTS
from proto.constants import ENUMS, flat_constants
from proto.errors import ACL_ERROR_REPEAT_FINALIZE, ACL_ERROR_UNINITIALIZE
from proto.errors import AclError as AclError

_operators.load(os.environ.get(_operators.SETTING, ""))  # before the tables below: OperatorError names a module
_lock = threading.Lock()
_current: Session | Router | None = None
_init_count = 0
BEFORE_INIT = "call aclInit first (or use(Session(...)))"  # the remedy of a call before aclInit (C: aclInit only)


def use(session: Session | Router | None) -> None:
    """Make `session` the one the module functions call (None: none)."""
    global _current
    _current = session


def current(api: str = "") -> Session | Router:
    """The session the module functions call; before aclInit, `api` fails as in C (100001, or 100037 for
    aclFinalize)."""
    if _current is None:
        raise not_initialized(api, BEFORE_INIT)
    return _current


def not_initialized(api: str, remedy: str) -> AclError:
    if api == "aclFinalize":
        return AclError(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize without a matching aclInit", api)
    return AclError(ACL_ERROR_UNINITIALIZE, f"no vnpu session: {remedy}", api)


def _function(api: str) -> Callable[..., Any]:
    names = CALLS[api].arg_names
    early = api in ANSWERED_BEFORE_INIT

    def function(*args: Any) -> Any:
        try:
            if early and _current is None:
                return _before_init(api, *args)
            return current(api).call(api, *args)
        except AclError as error:
            _lasterror.note(error)
            raise

    function.__name__ = function.__qualname__ = api
    function.__doc__ = f"{api}({', '.join(names)}). {CALLS[api].doc}".strip()
    function.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    )
    return function


def _before_init(api: str, *args: Any) -> Any:
    """A call the runtime answers before aclInit (ANSWERED_BEFORE_INIT): through a session of its own, closed after."""
    config = load(None)
    session: Session | Router = Router(parse_devices(config.devices), config) if config.devices else Session(config)
    try:
        return session.call(api, *args)
    finally:
        session.close()


def aclInit(config_path: str | None = None) -> None:  # noqa: N802
    """Connect to the daemon (once per process) and initialise the ACL runtime there."""
    global _init_count
    with _lock:
        if _current is None:
            config = load(config_path)
            use(Router(parse_devices(config.devices), config) if config.devices else Session(config))
        session = current("aclInit")
    session.call("aclInit", config_path)
    with _lock:
        _init_count += 1  # once the daemon counted it


def aclFinalize() -> None:  # noqa: N802
    """Finalise; the last aclFinalize of the process closes the session."""
    global _init_count
    current("aclFinalize").call("aclFinalize")
    with _lock:
        _init_count -= 1
        if _init_count == 0 and _current is not None:
            _current.close()
            use(None)


def aclmdlRIDebugJsonPrint(modelRI: int, path: str | None, flags: int) -> str:  # noqa: N802, N803
    """Write the model's chrome-trace JSON to `path` (when given) and return it."""
    text: str = current("aclmdlRIDebugJsonPrint").call("aclmdlRIDebugJsonPrint", modelRI, path, flags)
    if path:
        Path(path).write_text(text)
    return text


def aclmdlRITaskGetParams(task: int) -> aclmdlRITaskParams:  # noqa: N802
    """The task's parameters as a mutable aclmdlRITaskParams (for a kernel, `.kernelTaskParams.desc` is its
    KernelDesc): change it and hand it to aclmdlRITaskSetParams (clear `taskGrp` for a grouped kernel first)."""
    try:
        return aclmdlRITaskParams.model_validate(current("aclmdlRITaskGetParams").call("aclmdlRITaskGetParams", task))
    except AclError as error:
        _lasterror.note(error)
        raise


def aclGetRecentErrMsg() -> str | None:  # noqa: N802
    """The calling thread's last error message, cleared by this call; None if there is none."""
    return current().recent_error_message() if _current is not None else None


def _session_function(name: str, body: Callable[..., Any]) -> Callable[..., Any]:
    """A function of the client (`client.callbacks`) that runs over the current session's calls."""

    def function(*args: Any) -> Any:
        try:
            return body(current(name).call, *args)
        except AclError as error:
            _lasterror.note(error)
            raise

    function.__name__ = function.__qualname__ = name
    function.__doc__ = body.__doc__
    return function


_SPECIAL = {"aclInit", "aclFinalize", "aclmdlRIDebugJsonPrint", "aclmdlRITaskGetParams"}
_CALLBACKS = {name: _session_function(name, body) for name, body in _callbacks.FUNCTIONS.items()}
_CALLBACKS["aclmdlRIDestroy"] = _session_function("aclmdlRIDestroy", _callbacks.aclmdlRIDestroy)
_CALLBACKS |= {name: _session_function(name, body) for name, body in _kernels.SESSION.items()}
_CALLBACKS |= {name: _session_function(name, body) for name, body in _tdt.SESSION.items()}
_DEVICE = {api: _function(api) for api in CALLS if api not in _SPECIAL | set(_CALLBACKS) and not api.startswith("vnpu")}
globals().update(_DEVICE)
globals().update(_CALLBACKS)
HOST_FUNCTIONS = {name: getattr(_aclnn, name) for name in _aclnn.__all__ if name.startswith("acl")}
HOST_FUNCTIONS |= (
    _host.FUNCTIONS
    | _legacyop.FUNCTIONS
    | _exceptions.FUNCTIONS
    | {"aclrtRegStreamStateCallback": _streamstate.aclrtRegStreamStateCallback}
    | _kernels.HOST
    | _tdt.HOST
    | {
        "aclrtGetLastError": _lasterror.aclrtGetLastError,
        "aclrtPeekAtLastError": _lasterror.aclrtPeekAtLastError,
    }
)
globals().update(HOST_FUNCTIONS)
# C structs a call takes: filled as C fills them (aclrtRandomNumTaskInfo), or the wire models (aclrtPhysicalMemProp)
STRUCTS: dict[str, type] = dict(_randomnum.STRUCTS) | {struct.__name__: struct for struct in WIRE_STRUCTS}
globals().update(STRUCTS)
CONSTANTS = flat_constants() | {n: v for n, v in vars(_errors).items() if n.startswith(("ACL_", "ACLNN_"))}
globals().update(CONSTANTS)
# the C enum types as IntEnums, to name a value a call returned: aclmdlRICaptureStatus(status).name
ENUM_TYPES: dict[str, type] = {enum.__name__: enum for enum in ENUMS}
globals().update(ENUM_TYPES)

IMPLEMENTED = [f"aclnn{name}{phase}" for name in _aclnn.RULES for phase in ("GetWorkspaceSize", "")]
IMPLEMENTED += [f"{op.decl.c_name}{phase}" for op in _operators.USER.values() for phase in ("GetWorkspaceSize", "")]
__all__ = sorted(
    {*_DEVICE, *_CALLBACKS, *HOST_FUNCTIONS, *STRUCTS, *CONSTANTS, *ENUM_TYPES, *_SPECIAL, *IMPLEMENTED}
    | {"aclGetRecentErrMsg"}
    | {"AclError", "HostBuffer", "ServerError", "Session", "TransportError", "current", "use"}
)
"""The star import's names: every operator vnpu implements (both phases); `acl.aclnnXxx` reaches every one declared."""
_made: dict[str, Callable[..., Any]] = {}


def __getattr__(name: str) -> Any:
    """The two phases of any declared operator, made on first use: CANN's (every public one; phase 1 of one vnpu
    does not implement fails with 561003), and the user-declared ones, even those declared after this import."""
    if name.startswith("aclnn"):
        phase1 = _aclnn.function(name)
        if phase1 is not None:
            return phase1
        if name in CALLS:  # an operator's phase 2
            made = _made.get(name)
            if made is None:
                made = _made[name] = _function(name)
            return made
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
