"""A debug setting: write each aclnn launch's arguments to files (`vnpu serve --dump-launches DIR`).

Each run of a kernel writes `DIR/<number>-<op>.npz`: `in.<name>` for every tensor (and tensor-list member
`in.<name>.<i>`) as it was before the kernel ran, `out.<name>` for every tensor it wrote as it is afterwards, and
`meta`, a JSON text of the operator, the other arguments (scalars with their dtype, int arrays, attributes) and
which tensors are written. Numbers follow the order the kernels ran in, across the daemon. It is what a float64
reference needs to recompute a launch: CANN's example programs hard-code their inputs and print their outputs,
and `examples/cann_ops_examples.sh` checks what they print against the reference of each launch they made.
Slow (every tensor is copied twice and written) and unbounded: for debugging, never for serving.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from enum import IntEnum
from pathlib import Path
from typing import Any

import numpy as np

from proto.aclnn import KernelDesc, aclIntArray, aclScalar, aclTensor

Views = Callable[[aclTensor, bool], np.ndarray]
_directory: Path | None = None
_numbers = itertools.count(1)
_lock = threading.Lock()


def configure(directory: str | Path | None) -> None:
    """Start writing launches into `directory` (made if missing), or stop (None)."""
    global _directory
    _directory = None if directory is None else Path(directory)
    if _directory is not None:
        _directory.mkdir(parents=True, exist_ok=True)


def active() -> bool:
    return _directory is not None


def _members(value: object) -> list[aclTensor] | None:
    """The tensors of a tensor list (any host object holding `tensors`), else None."""
    tensors = getattr(value, "tensors", None)
    return list(tensors) if isinstance(tensors, list | tuple) else None


def _meta_value(value: object) -> Any:
    if isinstance(value, aclScalar):
        return {"scalar": value.value, "dtype": value.data_type.name}
    if isinstance(value, aclIntArray):
        return {"int_array": list(value.values)}
    if isinstance(value, IntEnum):
        return value.name
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    for field in ("values", "scalars"):  # bool/float arrays, scalar lists
        items = getattr(value, field, None)
        if isinstance(items, list | tuple):
            return {type(value).__name__: [_meta_value(item) for item in items]}
    return repr(value)


def _arrays(
    kernel: KernelDesc, views: Views, names: list[str], prefix: str, dtypes: dict[str, str]
) -> dict[str, np.ndarray]:
    """Copies of the named tensors' views; a dtype numpy cannot save (bf16, fp8: ml_dtypes) as its bits, its
    name in `dtypes`."""
    arrays: dict[str, np.ndarray] = {}
    for name in names:
        value = kernel.args[name]
        found = [(f"{prefix}.{name}", value)] if isinstance(value, aclTensor) else []
        found += [(f"{prefix}.{name}.{i}", member) for i, member in enumerate(_members(value) or ())]
        for key, tensor in found:
            array = np.array(views(tensor, False))
            dtypes[key] = str(array.dtype)
            arrays[key] = array if array.dtype.isbuiltin == 1 else array.view(f"u{array.dtype.itemsize}")
    return arrays


def wrap(plan: Callable[[], object], kernel: KernelDesc, views: Views) -> Callable[[], object]:
    """`plan` that also writes its launch's arguments, before and after, when dumping is on."""
    written = list(kernel.decl.outputs)
    names = list(kernel.args)
    meta = {
        "op": kernel.op,
        "written": written,
        "args": {n: _meta_value(v) for n, v in kernel.args.items() if not isinstance(v, aclTensor) and not _members(v)},
        "tensors": [n for n, v in kernel.args.items() if isinstance(v, aclTensor) or _members(v) is not None],
    }

    def dumping() -> object:
        directory = _directory
        if directory is None:
            return plan()
        dtypes: dict[str, str] = {}
        before = _arrays(kernel, views, names, "in", dtypes)
        result = plan()
        after = _arrays(kernel, views, written, "out", dtypes)
        with _lock:
            number = next(_numbers)
        text = json.dumps({**meta, "dtypes": dtypes})
        arrays: dict[str, Any] = {"meta": np.array(text), **before, **after}
        np.savez(directory / f"{number:06d}-{kernel.op}.npz", **arrays)
        return result

    return dumping
