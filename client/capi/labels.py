"""Labels from C: aclrtCreateLabelList reads the program's array of `num` labels -- only when `num` is one the
runtime accepts, since the runtime checks it before it reads the array (the daemon answers any other with 107000)
-- and writes the list through `labelList`. The other label calls take the generic conversion."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.capi.convert import C, call
from proto.errors import ACL_ERROR_INVALID_PARAM, AclError
from proto.labels import MAX_LABELS


def aclrtCreateLabelList(c: C) -> Callable[..., int]:  # noqa: N802
    def body(labels: Any, num: int, label_list: Any) -> int:
        if labels == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "labels is NULL: it must point to num labels")
        if label_list == c.ffi.NULL:
            raise AclError(ACL_ERROR_INVALID_PARAM, "labelList is NULL: it must point to where the list goes")
        handles = [c.address(labels[i]) for i in range(num)] if 0 < num <= MAX_LABELS else []
        label_list[0] = c.ffi.cast("aclrtLabelList", call("aclrtCreateLabelList", handles, num))
        return 0

    return body


SPECIAL: dict[str, Callable[[C], Callable[..., Any]]] = {"aclrtCreateLabelList": aclrtCreateLabelList}
