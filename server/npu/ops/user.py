"""The kernels of user-declared operators (`proto.operators`): their numpy functions, called by C argument name as
vnpu's own function kernels are (`server.npu.ops.function`)."""

from __future__ import annotations

from proto.operators import USER, Operator


def lookup(op: str) -> Operator | None:
    return USER.get(op)
