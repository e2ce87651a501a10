"""The Python side of the toolkit's libraries: every exported C function, implemented over `client.acl`.

`bind` runs once per library, inside the program's embedded interpreter, and gives each prototype of the library
its implementation (`ffi.def_extern`):
- a function of the call table goes through `client.acl` (the same session, pipelining and errors as Python):
  its C parameters are matched by name to the call's arguments and out-parameters (`client.capi.convert`);
- the host objects and the operators' two phases run here, in the program (`client.capi.hostobj`);
- a few need their own shape (aclInit, aclGetRecentErrMsg, pinned host memory, copies from pageable memory);
- every other declared function answers ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000), and aclGetRecentErrMsg()
  says `vnpu does not implement aclXxx yet`.

Every call is guarded: an AclError becomes its code (the message kept for aclGetRecentErrMsg), the daemon being
unreachable ACL_ERROR_INTERNAL_ERROR, and no Python exception ever reaches the C program.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from functools import cache
from typing import Any

import proto.host as host
from client import acl, lasterror
from client import kernels as client_kernels
from client.capi import (
    allocator,
    callbacks,
    condmodel,
    convert,
    exceptions,
    hccl,
    hostlists,
    hostobj,
    hostprocess,
    ipc,
    kernels,
    labels,
    legacyop,
    markers,
    modeledit,
    models,
    nnopbase,
    opcalls,
    opentry,
    opfunctions,
    randomnum,
    streamstate,
    tdt,
    vmm,
)
from client.capi.convert import Bound, C
from client.core import c_call
from client.errors import ServerError, TransportError
from proto.aclnn import OPS
from proto.aclnn.catalog import catalog
from proto.calltable import BEFORE_INIT as ANSWERED_BEFORE_INIT
from proto.calltable import CALLS
from proto.errors import (
    ACL_ERROR_INTERNAL_ERROR,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_UNINITIALIZE,
    AclError,
)
from proto.host import HOST
from proto.identity import SOC_NAME

ERROR_RESULTS = frozenset({"aclError", "aclnnStatus"})


class _Thread(threading.local):
    message: str | None = None
    returned: Any = None  # the C string aclGetRecentErrMsg returned last: valid until the next one


_thread = _Thread()


def record(message: str) -> None:
    _thread.message = message
    if _LOG_TO_STDOUT:  # CANN's logs on stdout (its plog otherwise): each error as it is recorded
        os.write(1, f"[ERROR] {message}\n".encode(errors="replace"))


# ASCEND_SLOG_PRINT_TO_STDOUT=1 puts CANN's log on stdout, from ASCEND_GLOBAL_LOG_LEVEL (3, errors, by default) up
_LOG_TO_STDOUT = os.environ.get("ASCEND_SLOG_PRINT_TO_STDOUT") == "1" and os.environ.get(
    "ASCEND_GLOBAL_LOG_LEVEL", "3"
).strip() in ("0", "1", "2", "3")


def guarded(c: C, name: str, result: str, body: Callable[..., Any]) -> Callable[..., Any]:
    """`body` with every failure turned into what the C function returns on failure."""
    null = c.ffi.NULL

    def _failure_value(result: str, code: int) -> Any:
        if result == "void":  # nothing to return: the message is kept for aclGetRecentErrMsg
            return None
        if result in ERROR_RESULTS:
            return code
        if result == "HcclResult":  # HCCL's own codes (an ACL code underneath becomes the HCCL code for it)
            return hccl.hccl_code(code)
        return null if result.endswith("*") else 0

    def function(*args: Any) -> Any:
        c_call(name)
        try:
            return body(*args)
        except AclError as error:
            lasterror.note(error)
            record(str(error) if error.api else f"{name}: {error}")
            return _failure_value(result, error.code)
        except TransportError as error:
            uninitialized = acl._current is None and name != "aclInit" and name not in ANSWERED_BEFORE_INIT
            record(f"{name}: {error}" + ("" if not uninitialized else " (the program has not called aclInit)"))
            return _failure_value(result, ACL_ERROR_UNINITIALIZE if uninitialized else ACL_ERROR_INTERNAL_ERROR)
        except ServerError as error:
            record(f"{name}: {error}")
            return _failure_value(result, ACL_ERROR_INTERNAL_ERROR)
        except MemoryError:  # a size or count read from the program that no memory holds: its mistake
            record(f"{name}: a size or count of the call is more than this machine's memory holds")
            return _failure_value(result, ACL_ERROR_INVALID_PARAM)
        except Exception as error:  # a bug of vnpu: say so, never unwind into C
            record(f"vnpu internal error in {name}: {error!r}")
            print(f"vnpu: internal error in {name}: {error!r}", file=sys.stderr)
            return _failure_value(result, ACL_ERROR_INTERNAL_ERROR)

    function.__name__ = name
    return function


_A2_HAS_NO = "{} is not supported on Ascend910B/C (the SoC vnpu presents), as the runtime says: use aclrtLaunchHostFunc"
_NO_KERNEL_DETAIL = (
    "{} has nothing to give in vnpu: its kernels are numpy functions, with no device argument block and no "
    "function handle (custom kernels loaded with aclrtBinaryLoadFromFile are not there yet)"
)
UNSUPPORTED = {  # the reason replaces "not implemented yet": what the SoC lacks (spec-breadth 4.3), or vnpu's kernels
    **{
        name: _A2_HAS_NO.format(name)
        for name in ("aclrtSubscribeHostFunc", "aclrtProcessHostFunc", "aclrtUnSubscribeHostFunc")
    },
    **{
        name: _NO_KERNEL_DETAIL.format(name)
        for name in ("aclrtGetArgsFromExceptionInfo", "aclrtGetFuncHandleFromExceptionInfo")
    },
}


def not_implemented(name: str, result: str) -> Callable[..., Any]:
    message = UNSUPPORTED.get(name, f"vnpu does not implement {name} yet")

    def function(*_: Any) -> Any:
        raise AclError(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, message, name)

    return function


def aclGetRecentErrMsg(c: C) -> Callable[[], Any]:  # noqa: N802
    def function() -> Any:
        kept_by_client = acl.aclGetRecentErrMsg()  # the same error, as the client remembered it: read it too
        message = _thread.message or kept_by_client
        _thread.message = None
        if message is None:
            _thread.returned = None
            return c.ffi.NULL
        _thread.returned = c.ffi.new("char[]", message.encode())
        return _thread.returned

    return function


def vnpuGetContextId(c: C) -> Callable[[Any, int], int]:  # noqa: N802
    def function(buf: Any, length: int) -> int:
        data = str(getattr(acl.current(), "context_id", "")).encode()
        if buf == c.ffi.NULL or length < len(data) + 1:
            raise AclError(100000, f"buf must hold {len(data) + 1} bytes (the id and its NUL), got {length}")
        c.ffi.memmove(buf, data + b"\0", len(data) + 1)
        return 0

    return function


def aclrtGetSocName(c: C) -> Callable[[], Any]:  # noqa: N802
    """Answered before aclInit too (CANN's sample tooling asks it first): the SoC vnpu presents itself as."""
    name = c.ffi.new("char[]", SOC_NAME.encode())
    _STATIC.append(name)
    return lambda: name


def last_error(read: Callable[[int], int]) -> Callable[[C], Callable[[int], int]]:
    """aclrtGetLastError / aclrtPeekAtLastError: the stored code is the C result itself."""
    return lambda c: read


def aclsysGetVersionStr(c: C) -> Callable[[Any, Any], int]:  # noqa: N802
    def function(package: Any, version: Any) -> int:
        if version == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "versionStr is NULL: it must hold ACL_PKG_VERSION_MAX_SIZE bytes")
        name = None if package == c.ffi.NULL else c.ffi.string(package).decode()
        text = host.aclsysGetVersionStr(name).encode() + b"\0"
        c.ffi.memmove(version, text, len(text))
        return 0

    return function


def aclGetCannAttributeList(c: C) -> Callable[[Any, Any], int]:  # noqa: N802
    """A static array of the available attributes, as the runtime returns."""
    available = host.aclGetCannAttributeList()
    array = c.ffi.new("aclCannAttr[]", available or [0])
    _STATIC.append(array)

    def function(attributes: Any, count: Any) -> int:
        if attributes == c.ffi.NULL or count == c.ffi.NULL:
            which = "cannAttrList" if attributes == c.ffi.NULL else "num"
            raise AclError(ACL_ERROR_INVALID_PARAM, f"{which} is NULL: it must point to where the result goes")
        attributes[0] = array
        count[0] = len(available)
        return 0

    return function


_STATIC: list[Any] = []  # C strings and arrays handed out for the life of the program


def _operator_implementation(c: C, name: str, result: str, params: list[tuple[str, str]]) -> Callable[..., Any] | None:
    """What libopapi's entry runs for `name`: an operator's phase vnpu implements, or a function of SPECIAL; None
    for the others (the entry answers them as not implemented)."""
    if name in hostobj.OPERATORS or name in SPECIAL:
        return implementation(c, name, result, params)
    return None


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "aclGetRecentErrMsg": aclGetRecentErrMsg,
    "aclrtGetSocName": aclrtGetSocName,
    "vnpuGetContextId": vnpuGetContextId,
    "aclrtGetLastError": last_error(lasterror.aclrtGetLastError),
    "aclrtPeekAtLastError": last_error(lasterror.aclrtPeekAtLastError),
    "aclsysGetVersionStr": aclsysGetVersionStr,
    "aclGetCannAttributeList": aclGetCannAttributeList,
    **convert.SPECIAL,
    **hccl.SPECIAL,
    **hostobj.SPECIAL,
    **hostprocess.SPECIAL,
    **hostlists.SPECIAL,
    **allocator.SPECIAL,
    **callbacks.SPECIAL,
    **condmodel.SPECIAL,
    **exceptions.SPECIAL,
    **ipc.SPECIAL,
    **kernels.SPECIAL,
    **labels.SPECIAL,
    **legacyop.SPECIAL,
    **markers.SPECIAL,
    **modeledit.SPECIAL,
    **models.SPECIAL,
    **nnopbase.SPECIAL,
    opcalls.ENTRY: opentry.entry(_operator_implementation, guarded),
    **opfunctions.SPECIAL,
    **randomnum.SPECIAL,
    **streamstate.SPECIAL,
    **tdt.SPECIAL,
    **vmm.SPECIAL,
}


@cache
def operator_functions() -> frozenset[str]:
    """The two phases of every declared operator (CANN's catalog and the user's): only `hostobj.OPERATORS`
    implements one (the call table resolves every operator's phase 2, implemented or not)."""
    names = {n for op in catalog().ops.values() for n in (op.ws_name, op.c_name)}
    return frozenset(names | {n for decl in OPS.user().values() for n in (decl.ws_name, decl.c_name)})


def is_implemented(name: str) -> bool:
    if name in SPECIAL or name in hostobj.OPERATORS:
        return True
    return name not in operator_functions() and (name in CALLS or name in HOST)


def implementation(c: C, name: str, result: str, params: list[tuple[str, str]]) -> Callable[..., Any]:
    """What the C function `name` runs (before its guard)."""
    if name in SPECIAL:
        return SPECIAL[name](c)
    if name in hostobj.OPERATORS:
        return hostobj.OPERATORS[name](c)
    if name in operator_functions():
        return not_implemented(name, result)
    if name in CALLS:
        return convert.generic(c, Bound(name, result, params))
    if name in HOST:
        return convert.host(c, Bound(name, result, params), HOST[name])
    return not_implemented(name, result)


def bind(ffi: Any, library: str, ready: str, prototypes: list[tuple[str, str, list[tuple[str, str]]]]) -> None:
    """Give every function of `library` its implementation; `ready` answers 1 once that is done."""
    c = C.of(ffi)
    client_kernels.Printed.writer = client_kernels.c_stdout_writer()  # in a C program: kernel printf via its stdout
    acl.BEFORE_INIT = "call aclInit first"  # a C program has no use(Session(...))
    for name, result, params in prototypes:
        try:
            body = implementation(c, name, result, params)
        except Exception as error:  # a prototype vnpu cannot map: the call says so instead of the library failing
            body = _unmappable(name, error)
        ffi.def_extern(name=name)(guarded(c, name, result, body))
    ffi.def_extern(name=ready)(lambda: 1)


def _unmappable(name: str, error: Exception) -> Callable[..., Any]:
    def function(*_: Any) -> Any:
        raise AclError(ACL_ERROR_INTERNAL_ERROR, f"vnpu cannot map {name} onto its call table: {error}", name)

    return function
