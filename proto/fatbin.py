"""The kernel binary vnpu's `ascendc_fatbin_library()` writes: a text file listing the kernels it holds.

    vnpu-fatbin 1
    kernel add_custom

aclrtBinaryLoadFromFile accepts it (aclrtBinaryGetFunction then knows which names the binary has) and any other
file too: a real kernel binary's names cannot be read by vnpu, so any name is looked up in the registry."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

MAGIC: Final = b"vnpu-fatbin 1\n"


def dumps(kernels: Iterable[str]) -> bytes:
    return MAGIC + b"".join(f"kernel {name}\n".encode() for name in kernels)


def kernel_names(data: bytes) -> tuple[str, ...] | None:
    """The kernels a vnpu fatbin lists; None for any other binary."""
    if not data.startswith(MAGIC):
        return None
    lines = data[len(MAGIC) :].decode(errors="replace").splitlines()
    return tuple(line.split(None, 1)[1].strip() for line in lines if line.startswith("kernel "))
