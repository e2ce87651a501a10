"""HCCL for one rank (hccl/hccl.h, libhccl.so): enough for torch.distributed's hccl backend with world size 1, which
vllm initialises even without tensor parallelism.

A communicator is a host object of the program (`HANDLES`): one rank, rank 0, a name. Its collectives are device
tasks on the stream they are given, so they order with the stream's other work and are captured like any task:
with one rank, AllReduce, AllGather, ReduceScatter and Reduce move the send buffer to the receive buffer (a
device-to-device copy, none when the two are the same memory) and Broadcast and Barrier move nothing. Send and Recv
have no peer and are refused. A communicator of more ranks is refused (HCCL_E_NOT_SUPPORT, saying vnpu has one
rank), and so is every other function of HCCL, with its name.

The result is an HcclResult: a failure of the runtime underneath (a bad pointer, a bad stream) is HCCL_E_RUNTIME,
its message kept for aclGetRecentErrMsg as the runtime's own.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from client.capi.convert import C, call
from client.capi.hostobj import HANDLES
from proto.constants import aclrtMemcpyKind
from proto.errors import ACL_ERROR_RT_FEATURE_NOT_SUPPORT, AclError
from proto.opconstants import HcclConfig, HcclDataType, HcclReduceOp, HcclResult

R = HcclResult
T = HcclDataType
SIZES: Final = {
    **dict.fromkeys((T.HCCL_DATA_TYPE_INT8, T.HCCL_DATA_TYPE_UINT8, T.HCCL_DATA_TYPE_HIF8), 1),
    **dict.fromkeys((T.HCCL_DATA_TYPE_FP8E4M3, T.HCCL_DATA_TYPE_FP8E5M2, T.HCCL_DATA_TYPE_FP8E8M0), 1),
    **dict.fromkeys((T.HCCL_DATA_TYPE_INT16, T.HCCL_DATA_TYPE_UINT16, T.HCCL_DATA_TYPE_FP16), 2),
    T.HCCL_DATA_TYPE_BFP16: 2,
    **dict.fromkeys((T.HCCL_DATA_TYPE_INT32, T.HCCL_DATA_TYPE_UINT32, T.HCCL_DATA_TYPE_FP32), 4),
    **dict.fromkeys((T.HCCL_DATA_TYPE_INT64, T.HCCL_DATA_TYPE_UINT64, T.HCCL_DATA_TYPE_FP64), 8),
    T.HCCL_DATA_TYPE_INT128: 16,
}
REDUCE_OPS: Final = frozenset(
    {
        HcclReduceOp.HCCL_REDUCE_SUM,
        HcclReduceOp.HCCL_REDUCE_PROD,
        HcclReduceOp.HCCL_REDUCE_MAX,
        HcclReduceOp.HCCL_REDUCE_MIN,
    }
)
ROOT_INFO_BYTES: Final = 4108
CONFIG_CAPABILITY: Final = 12  # HcclCommConfigCapability's HCCL_COMM_CONFIG_RESERVED
COMM_NAME_MAX: Final = 128
ONE_RANK = "vnpu's HCCL has one rank: a communicator of {n} ranks needs real HCCL"
_names = itertools.count(1)


class HcclError(AclError):
    """A failure with its HcclResult as the code."""


def hccl_code(code: int) -> int:
    """The HcclResult an error of `code` returns: its own when it is one, HCCL_E_NOT_SUPPORT for an unimplemented
    function, HCCL_E_RUNTIME for the runtime's codes."""
    if code in R._value2member_map_:
        return code
    return R.HCCL_E_NOT_SUPPORT if code == ACL_ERROR_RT_FEATURE_NOT_SUPPORT else R.HCCL_E_RUNTIME


@dataclass
class HcclComm:
    name: str
    ranks: int = 1
    rank: int = 0
    name_c: Any = None


def _fail(code: int, message: str) -> HcclError:
    return HcclError(code, message)


def _comm(c: C, handle: Any) -> HcclComm:
    if not c.address(handle):
        raise _fail(R.HCCL_E_PTR, "comm is NULL")
    try:
        found: HcclComm = HANDLES.get(c.address(handle), HcclComm, "comm", "")
    except AclError as error:
        raise _fail(R.HCCL_E_PARA, error.message) from None
    return found


def _new_comm(c: C, out: Any, ranks: int, rank: int, name: str | None) -> int:
    if out == c.ffi.NULL:
        raise _fail(R.HCCL_E_PTR, "comm is NULL: it must point to where the communicator goes")
    if ranks != 1:
        raise _fail(R.HCCL_E_NOT_SUPPORT, ONE_RANK.format(n=ranks))
    if rank >= ranks:
        raise _fail(R.HCCL_E_PARA, f"rank {rank} is not below the rank count {ranks}")
    comm = HcclComm(name or f"vnpu_hccl_{os.getpid()}_{next(_names)}")
    out[0] = c.ffi.cast("HcclComm", HANDLES.put(comm))
    return 0


def HcclGetRootInfo(c: C) -> Callable[[Any], int]:  # noqa: N802
    def body(root_info: Any) -> int:
        if root_info == c.ffi.NULL:
            raise _fail(R.HCCL_E_PTR, "rootInfo is NULL")
        text = f"vnpu-hccl-root pid={os.getpid()} id={next(_names)}".encode()
        c.ffi.memmove(root_info, text.ljust(ROOT_INFO_BYTES, b"\0"), ROOT_INFO_BYTES)
        return 0

    return body


def _root_info(c: C, root_info: Any) -> None:
    if root_info == c.ffi.NULL:
        raise _fail(R.HCCL_E_PTR, "rootInfo is NULL")


def HcclCommInitRootInfo(c: C) -> Callable[..., int]:  # noqa: N802
    def body(ranks: int, root_info: Any, rank: int, comm: Any) -> int:
        _root_info(c, root_info)
        return _new_comm(c, comm, ranks, rank, None)

    return body


def HcclCommInitRootInfoConfig(c: C) -> Callable[..., int]:  # noqa: N802
    def body(ranks: int, root_info: Any, rank: int, config: Any, comm: Any) -> int:
        _root_info(c, root_info)
        return _new_comm(c, comm, ranks, rank, _config_name(c, config))

    return body


def _config_name(c: C, config: Any) -> str | None:
    if config == c.ffi.NULL:
        return None
    name = c.ffi.string(config.hcclCommName, COMM_NAME_MAX).decode(errors="replace")
    return name or None


def _cluster_ranks(c: C, cluster_info: Any) -> int:
    """The ranks of a rank table file (its rank_id entries)."""
    if cluster_info == c.ffi.NULL:
        raise _fail(R.HCCL_E_PTR, "clusterInfo is NULL")
    path = Path(c.ffi.string(cluster_info).decode(errors="replace"))
    try:
        table = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise _fail(R.HCCL_E_PARA, f"cannot read the rank table {path}: {error}") from None
    ranks = 0
    for server in table.get("server_list", []) if isinstance(table, dict) else []:
        ranks += len(server.get("device", [])) if isinstance(server, dict) else 0
    return ranks


def HcclCommInitClusterInfo(c: C) -> Callable[..., int]:  # noqa: N802
    return lambda cluster, rank, comm: _new_comm(c, comm, _cluster_ranks(c, cluster), rank, None)


def HcclCommInitClusterInfoConfig(c: C) -> Callable[..., int]:  # noqa: N802
    def body(cluster: Any, rank: int, config: Any, comm: Any) -> int:
        return _new_comm(c, comm, _cluster_ranks(c, cluster), rank, _config_name(c, config))

    return body


def HcclCommDestroy(c: C) -> Callable[[Any], int]:  # noqa: N802
    def body(handle: Any) -> int:
        _comm(c, handle)
        HANDLES.drop(c.address(handle), "was destroyed by HcclCommDestroy")
        return 0

    return body


def HcclGetCommName(c: C) -> Callable[[Any, Any], int]:  # noqa: N802
    def body(handle: Any, name: Any) -> int:
        comm = _comm(c, handle)
        if name == c.ffi.NULL:
            raise _fail(R.HCCL_E_PTR, "commName is NULL: it must hold 128 bytes")
        text = comm.name.encode()[: COMM_NAME_MAX - 1] + b"\0"
        c.ffi.memmove(name, text, len(text))
        return 0

    return body


def _out_u32(read: Callable[[HcclComm], int], what: str) -> Callable[[C], Callable[[Any, Any], int]]:
    def make(c: C) -> Callable[[Any, Any], int]:
        def body(handle: Any, out: Any) -> int:
            comm = _comm(c, handle)
            if out == c.ffi.NULL:
                raise _fail(R.HCCL_E_PTR, f"{what} is NULL: it must point to where the result goes")
            out[0] = read(comm)
            return 0

        return body

    return make


def HcclGetCommAsyncError(c: C) -> Callable[[Any, Any], int]:  # noqa: N802
    """No collective of one rank fails after it was queued: HCCL_SUCCESS."""
    return _out_u32(lambda comm: 0, "asyncError")(c)


_STRINGS = {R.HCCL_SUCCESS: "no error", R.HCCL_E_PARA: "parameter error", R.HCCL_E_PTR: "empty pointer",
            R.HCCL_E_NOT_SUPPORT: "not supported", R.HCCL_E_RUNTIME: "runtime error",
            R.HCCL_E_INTERNAL: "internal error"}  # fmt: skip


def HcclGetErrorString(c: C) -> Callable[[int], Any]:  # noqa: N802
    kept = {code: c.ffi.new("char[]", text.encode()) for code, text in _STRINGS.items()}
    unknown = c.ffi.new("char[]", b"unknown HcclResult")
    return lambda code: kept.get(R(code), unknown) if code in R._value2member_map_ else unknown


def _move(c: C, comm: Any, src: Any, dst: Any, count: int, dtype: int, stream: Any, api: str) -> int:
    """The one data movement of a one-rank collective: `count` elements from src to dst, on the stream."""
    _comm(c, comm)
    size = SIZES.get(dtype)  # type: ignore[call-overload]
    if size is None:
        raise _fail(R.HCCL_E_PARA, f"{api}: dataType {dtype} is not an HcclDataType vnpu moves")
    if count and (not c.address(src) or not c.address(dst)):
        raise _fail(R.HCCL_E_PTR, f"{api}: a buffer is NULL")
    if count and c.address(src) != c.address(dst):
        nbytes = count * size
        try:
            call("aclrtMemcpyAsync", c.address(dst), nbytes, c.address(src), nbytes,
                 aclrtMemcpyKind.ACL_MEMCPY_DEVICE_TO_DEVICE, c.address(stream))  # fmt: skip
        except AclError as error:
            raise _fail(R.HCCL_E_RUNTIME, f"{api}: {error}") from None
    return 0


def _reduce_op(op: int, api: str) -> None:
    if op not in REDUCE_OPS:
        raise _fail(R.HCCL_E_PARA, f"{api}: op {op} is not an HcclReduceOp (SUM, PROD, MAX or MIN)")


def HcclAllReduce(c: C) -> Callable[..., int]:  # noqa: N802
    def body(send: Any, recv: Any, count: int, dtype: int, op: int, comm: Any, stream: Any) -> int:
        _reduce_op(op, "HcclAllReduce")
        return _move(c, comm, send, recv, count, dtype, stream, "HcclAllReduce")

    return body


def HcclReduce(c: C) -> Callable[..., int]:  # noqa: N802
    def body(send: Any, recv: Any, count: int, dtype: int, op: int, root: int, comm: Any, stream: Any) -> int:
        _reduce_op(op, "HcclReduce")
        _root(root, "HcclReduce")
        return _move(c, comm, send, recv, count, dtype, stream, "HcclReduce")

    return body


def HcclReduceScatter(c: C) -> Callable[..., int]:  # noqa: N802
    def body(send: Any, recv: Any, count: int, dtype: int, op: int, comm: Any, stream: Any) -> int:
        _reduce_op(op, "HcclReduceScatter")
        return _move(c, comm, send, recv, count, dtype, stream, "HcclReduceScatter")

    return body


def HcclAllGather(c: C) -> Callable[..., int]:  # noqa: N802
    return lambda send, recv, count, dtype, comm, stream: _move(
        c, comm, send, recv, count, dtype, stream, "HcclAllGather"
    )


def _root(root: int, api: str) -> None:
    if root != 0:
        raise _fail(R.HCCL_E_PARA, f"{api}: root {root} is not a rank of a one-rank communicator (only 0)")


def HcclBroadcast(c: C) -> Callable[..., int]:  # noqa: N802
    def body(buf: Any, count: int, dtype: int, root: int, comm: Any, stream: Any) -> int:
        _root(root, "HcclBroadcast")
        return _move(c, comm, buf, buf, count, dtype, stream, "HcclBroadcast")

    return body


def HcclBarrier(c: C) -> Callable[[Any, Any], int]:  # noqa: N802
    def body(comm: Any, stream: Any) -> int:
        _comm(c, comm)
        return 0

    return body


def _no_peer(api: str) -> Callable[[C], Callable[..., int]]:
    def make(c: C) -> Callable[..., int]:
        def body(buf: Any, count: int, dtype: int, peer: int, comm: Any, stream: Any) -> int:
            _comm(c, comm)
            raise _fail(R.HCCL_E_PARA, f"{api}: rank {peer} is no peer: a one-rank communicator has none")

        return body

    return make


CONFIG: dict[int, int] = {HcclConfig.HCCL_DETERMINISTIC: 0}  # HcclSetConfig's values (the process's)


def HcclSetConfig(c: C) -> Callable[[int, Any], int]:  # noqa: N802
    """HCCL_DETERMINISTIC: 0 (non-deterministic), 1 (deterministic) or 2 (strict): one rank is all three."""

    def body(config: int, value: Any) -> int:
        if config not in CONFIG:
            raise _fail(R.HCCL_E_PARA, f"config {config} is not an HcclConfig")
        if config == HcclConfig.HCCL_DETERMINISTIC and value.value not in (0, 1, 2):
            raise _fail(R.HCCL_E_PARA, f"HCCL_DETERMINISTIC takes 0, 1 or 2, not {value.value}")
        CONFIG[config] = value.value
        return 0

    return body


def HcclGetConfig(c: C) -> Callable[[int, Any], int]:  # noqa: N802
    def body(config: int, value: Any) -> int:
        if config not in CONFIG:
            raise _fail(R.HCCL_E_PARA, f"config {config} is not an HcclConfig")
        if value == c.ffi.NULL:
            raise _fail(R.HCCL_E_PTR, "configValue is NULL")
        value.value = CONFIG[config]
        return 0

    return body


def HcclGetCommConfigCapability(c: C) -> Callable[[], int]:  # noqa: N802
    """HCCL_COMM_CONFIG_RESERVED (12): every field of HcclCommConfig is understood (the comm name is used, the rest
    has nothing to tune with one rank)."""
    return lambda: CONFIG_CAPABILITY


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {
    "HcclGetCommConfigCapability": HcclGetCommConfigCapability,
    "HcclSetConfig": HcclSetConfig,
    "HcclGetConfig": HcclGetConfig,
    "HcclGetRootInfo": HcclGetRootInfo,
    "HcclCommInitRootInfo": HcclCommInitRootInfo,
    "HcclCommInitRootInfoConfig": HcclCommInitRootInfoConfig,
    "HcclCommInitClusterInfo": HcclCommInitClusterInfo,
    "HcclCommInitClusterInfoConfig": HcclCommInitClusterInfoConfig,
    "HcclCommDestroy": HcclCommDestroy,
    "HcclGetCommName": HcclGetCommName,
    "HcclGetRankSize": _out_u32(lambda comm: comm.ranks, "rankSize"),
    "HcclGetRankId": _out_u32(lambda comm: comm.rank, "rank"),
    "HcclGetCommAsyncError": HcclGetCommAsyncError,
    "HcclGetErrorString": HcclGetErrorString,
    "HcclAllReduce": HcclAllReduce,
    "HcclReduce": HcclReduce,
    "HcclReduceScatter": HcclReduceScatter,
    "HcclAllGather": HcclAllGather,
    "HcclBroadcast": HcclBroadcast,
    "HcclBarrier": HcclBarrier,
    "HcclSend": _no_peer("HcclSend"),
    "HcclRecv": _no_peer("HcclRecv"),
}
