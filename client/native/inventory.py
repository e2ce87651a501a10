"""What the native libraries implement, by C name, without building them: the generated plans over the prototype
table of freshly written headers (`client.native.codegen`), made once per process.

`is_implemented(name)`: the function does its work (hand-written, generated marshalling, an operator's phase with
a kernel, a special of the operator library); the others answer 207000 (`UNSUPPORTED` says why, where the runtime
itself has no such function) or, in the operator library, 561003.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from client.capi import headers as _headers
from client.native import annotations as notes
from client.native import codegen
from client.native.build import read_prototypes

IMPLEMENTED = frozenset({"hand", "call", "phase1", "phase2", "special"})
UNSUPPORTED = notes.UNSUPPORTED
"""The functions that answer 207000 with a reason (the runtime's own absences), by name."""


@functools.cache
def plans() -> dict[str, codegen.Plan]:
    with tempfile.TemporaryDirectory(prefix="vnpu-inventory-") as tmp:
        include = Path(tmp) / "include"
        _headers.write_tree(include)
        return codegen.generate(*read_prototypes(include)).plans


def is_implemented(name: str) -> bool:
    plan = plans().get(name)
    return plan is not None and plan.kind in IMPLEMENTED and name not in UNSUPPORTED
