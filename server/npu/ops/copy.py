"""Cast and InplaceCopy: one numpy copy with conversion (float → int truncates toward zero, as C)."""

from __future__ import annotations

from functools import partial
from typing import Final

import numpy as np

from server.npu.ops.launch import Kernel, Launch, Plan


def cast(launch: Launch) -> Plan:
    return partial(np.copyto, launch.write("out"), launch.read("self"), casting="unsafe")


def inplace_copy(launch: Launch) -> Plan:
    """selfRef ← src, broadcast and converted; numpy copies src first if the two overlap."""
    return partial(np.copyto, launch.write("selfRef"), launch.read("src"), casting="unsafe")


KERNELS: Final[dict[str, Kernel]] = {"Cast": cast, "InplaceCopy": inplace_copy}
