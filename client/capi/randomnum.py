"""aclrtRandomNumAsync from C: the program's aclrtRandomNumTaskInfo read field by field into the client's struct
(`proto.randomnum`), launched through `client.acl`, and the data type the ACL layer writes over the caller's
`dataType` copied back into the program's struct -- C memory, written as the runtime writes it, also when the
launch then fails (the ACL layer writes it before calling the runtime). Pointers in pinned host memory are
translated as everywhere; parameter addresses inside valueOrAddr are bytes of the struct, passed as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.capi.convert import C, call
from proto.randomnum import (
    VALUE_BYTES,
    ParamInfoUnion,
    aclrtRandomNumFuncParaInfo,
    aclrtRandomNumTaskInfo,
    aclrtRandomParaInfo,
)


def _para(c: C, para: Any) -> aclrtRandomParaInfo:
    return aclrtRandomParaInfo(para.isAddr, bytearray(c.ffi.buffer(para.valueOrAddr, VALUE_BYTES)), para.size)


def task_info(c: C, struct: Any) -> aclrtRandomNumTaskInfo:
    """The C struct's fields (the union read through its widest member, which covers both slots)."""
    func = struct.randomNumFuncParaInfo
    both = func.paramInfo.uniformDisInfo

    def pointer(p: Any) -> int:
        return c.pinned.to_daemon(c.address(p))

    return aclrtRandomNumTaskInfo(
        dataType=struct.dataType,
        randomNumFuncParaInfo=aclrtRandomNumFuncParaInfo(
            func.funcType, ParamInfoUnion(_para(c, both.min), _para(c, both.max))
        ),
        randomParaAddr=pointer(struct.randomParaAddr),
        randomResultAddr=pointer(struct.randomResultAddr),
        randomCounterAddr=pointer(struct.randomCounterAddr),
        randomSeed=_para(c, struct.randomSeed),
        randomNum=_para(c, struct.randomNum),
    )


def aclrtRandomNumAsync(c: C) -> Callable[..., int]:  # noqa: N802
    def body(info: Any, stream: Any, reserve: Any) -> int:
        if info == c.ffi.NULL:
            call("aclrtRandomNumAsync", None, c.address(stream), c.address(reserve))  # the daemon's 100000
            return 0
        launched = task_info(c, info)
        try:
            call("aclrtRandomNumAsync", launched, c.address(stream), c.address(reserve))
        finally:
            info.dataType = launched.dataType
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {"aclrtRandomNumAsync": aclrtRandomNumAsync}
