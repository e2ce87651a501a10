"""A copy's `kind` against where its pointers lie, as the runtime checks it.

The ACL layer takes the kinds HOST_TO_HOST .. DEFAULT and HOST_TO_BUF_TO_DEVICE, and refuses the others (100000;
hicann/runtime `src/acl/aclrt_impl/memory.cpp`, `MemcpyKindTranslate`). An asynchronous copy then looks at its
pointers (`src/runtime/api/impl/api_error.cc`, `MemcpyAsyncCheckLocation` and `MemcpyKindAutoCorrect`):
- between device and pinned host memory the kind is set from the pointers, whatever was passed;
- with pageable host memory (not aclrtMallocHost'd) on one side only some kinds are allowed, and another one is
  refused (107000); DEFAULT takes the natural kind;
- a copy from host to host memory is not supported (207000).
A synchronous copy takes `kind` as a reserved parameter: the system decides by the pointers alone (CANN's
aclrtMemcpy documentation; the runtime hands it to the driver). vnpu copies by the pointers and notes a kind that
contradicts them in the trace, as it notes a kind the asynchronous copy sets from them (docs/behaviour.md).
"""

from __future__ import annotations

from typing import Final

from proto.constants import aclrtMemcpyKind
from proto.enumtext import not_member
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID, AclError

K = aclrtMemcpyKind
DEVICE, HOST, PAGEABLE = "device", "pinned host", "pageable host"
H2H, H2D, D2H, D2D = K.ACL_MEMCPY_HOST_TO_HOST, K.ACL_MEMCPY_HOST_TO_DEVICE, K.ACL_MEMCPY_DEVICE_TO_HOST, K(3)
ACL_KINDS: Final = frozenset({H2H, H2D, D2H, D2D, K.ACL_MEMCPY_DEFAULT, K.ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE})
# (source, destination) -> (the kind the runtime sets, or the kinds it allows and the one DEFAULT becomes)
FORCED: Final = {(HOST, DEVICE): H2D, (DEVICE, HOST): D2H, (HOST, HOST): H2H, (DEVICE, DEVICE): D2D}
ALLOWED: Final = {
    (PAGEABLE, DEVICE): ((H2D, D2D), H2D),
    (DEVICE, PAGEABLE): ((D2H, D2D), D2H),
    (HOST, PAGEABLE): ((H2H, H2D), H2H),
    (PAGEABLE, HOST): ((H2H, D2H), H2H),
    (PAGEABLE, PAGEABLE): ((H2H, H2D, D2H, D2D), H2H),
}


def check_acl_kind(kind: int) -> None:
    """100000 unless the ACL layer translates `kind` (INNER and INTER DEVICE_TO_DEVICE are not among them)."""
    if kind not in ACL_KINDS:
        if kind in K._value2member_map_:
            raise AclError(
                ACL_ERROR_INVALID_PARAM,
                f"kind {K(kind).name} is not one aclrtMemcpy and aclrtMemcpyAsync take: use HOST_TO_HOST, "
                "HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE, DEFAULT or HOST_TO_BUF_TO_DEVICE",
            )
        raise AclError(ACL_ERROR_INVALID_PARAM, not_member("kind", kind, aclrtMemcpyKind))


def copy_kind(kind: int, src: str, dst: str, asynchronous: bool) -> aclrtMemcpyKind:
    """The kind the copy runs as, from `src` and `dst` (DEVICE, HOST or PAGEABLE). An asynchronous copy gets 107000
    for a kind the pointers contradict where the runtime refuses it, and 207000 from host to host memory."""
    if kind == K.ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE:
        return K(kind)
    forced = FORCED.get((src, dst))
    if forced is not None:
        return _not_host_to_host(forced, asynchronous)
    allowed, natural = ALLOWED[(src, dst)]
    if kind == K.ACL_MEMCPY_DEFAULT:
        return _not_host_to_host(natural, asynchronous)
    if kind not in allowed:
        if not asynchronous:
            return natural
        raise AclError(
            ACL_ERROR_RT_PARAM_INVALID,
            f"kind {K(kind).name} contradicts the pointers: src is {src} memory and dst is {dst} memory, for which "
            f"the runtime takes {' or '.join(k.name for k in allowed)} (or ACL_MEMCPY_DEFAULT)",
        )
    return _not_host_to_host(K(kind), asynchronous)


def _not_host_to_host(kind: aclrtMemcpyKind, asynchronous: bool) -> aclrtMemcpyKind:
    if asynchronous and kind == H2H:
        raise AclError(
            ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
            "an asynchronous copy from host memory to host memory is not supported by the runtime: use aclrtMemcpy",
        )
    return kind
