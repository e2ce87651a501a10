"""How many elements one message may hold (reliability 15, 16): parsing turns every one-byte element into a
Python object (~75x the frame's size), so a frame of tiny elements could take gigabytes and block the loop
before any validation. `MAX_ELEMENTS` bounds the entries of all maps and arrays of one WebSocket frame or one
REST body -- a batch of 128 calls holds a few thousand -- while bulk data (bytes, base64 text) counts as one.

`unpack_costed` also tells what the decoded frame holds in memory (reliability 19): its bytes plus `ENTRY_COST`
per map or array entry, an upper bound of a decoded call's objects (measured with tracemalloc: a pipelined
aclrtMemsetAsync is 110 bytes on the wire and 576 decoded; counted 878), so a budget of queued calls is memory.
"""

from __future__ import annotations

from typing import Any

import msgpack

from proto.errors import ACL_ERROR_INVALID_PARAM, AclError

MAX_ELEMENTS = 1 << 18  # entries of maps and arrays per message
ENTRY_COST = 48  # bytes a decoded entry may hold: its slot and its object (a short str, an int, a float)
PACK_START = 512  # bytes a reply's packer starts with: a waiting call's reply fits


class TooManyElements(AclError):
    def __init__(self, where: str) -> None:
        super().__init__(
            ACL_ERROR_INVALID_PARAM,
            f"{where} holds more than {MAX_ELEMENTS} map and array entries: send bulk data as bytes, or split it",
        )


def pack(message: Any) -> bytes:
    """A reply as a msgpack frame. `msgpack.packb` gives every call a Packer with a 256 KiB buffer (a malloc and a
    free each time); this one starts small and grows only for a large reply, and is gone with it (bench figure 13)."""
    packed: bytes = msgpack.Packer(use_bin_type=True, buf_size=PACK_START).pack(message)
    return packed


def unpack(data: bytes) -> Any:
    """A msgpack frame, decoded within the element budget (TooManyElements otherwise)."""
    return unpack_costed(data)[0]


def unpack_costed(data: bytes) -> tuple[Any, int]:
    """A msgpack frame decoded within the element budget, and the bytes its objects hold (an upper bound)."""
    left = MAX_ELEMENTS

    def spend(container: Any) -> Any:
        nonlocal left
        left -= len(container) + 1
        if left < 0:
            raise TooManyElements("the frame")
        return container

    limit = MAX_ELEMENTS  # no single map or array above the budget is even allocated
    try:
        message = msgpack.unpackb(
            data, raw=False, strict_map_key=False, object_hook=spend, list_hook=spend,
            max_array_len=limit, max_map_len=limit,
        )  # fmt: skip
    except ValueError as error:
        if "exceeds max_" in str(error):
            raise TooManyElements("the frame") from None
        raise
    return message, len(data) + ENTRY_COST * (MAX_ELEMENTS - left)


def check_json(body: bytes) -> None:
    """Refuse a JSON body that may hold more elements than the budget, before it is parsed: every element after
    the first of a container is preceded by a comma, so commas and brackets bound the count from above."""
    if len(body) > MAX_ELEMENTS and body.count(b",") + body.count(b"[") + body.count(b"{") > MAX_ELEMENTS:
        raise TooManyElements("the request body")
