"""Function kernels: a plain numpy function called by the operator's C argument names, planned the same way for
vnpu's per-area kernels (`server.npu.ops.{math,nn,transformer}.FUNCTIONS`) and user-declared operators.

What a function gets, by kind (`proto.aclnn.decl.ArgKind`):

- a tensor: a numpy view of device memory, strided as the tensor says (inputs read-only, written ones
  writeable); an ACL_INT4 tensor (two values to a byte) an `ml_dtypes.int4` array of its logical shape, unpacked
  when the plan runs and packed back afterwards when written (`server.npu.ops.common.int4`);
- a tensor list: a list of those; an absent optional tensor or list: None;
- a scalar: its value; a scalar list: a list of values; an int, bool or float array: a tuple;
- a dtype attribute: a numpy dtype; a string: a str; every other attribute: its value;
- `workspace`: a uint8 view of the workspace phase 1 sized (None for 0 bytes).

A C name that is a Python keyword (`from`, `lambda`) is passed with a trailing underscore (`from_`, `lambda_`).
An AclError the function raises is the launch's; any other exception fails the task as the core it runs on would:
a vector-core exception (507035) for a vector operator, an AI-core one (507015) for a cube operator, naming the
operator and its module.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any, Final

import numpy as np

from proto.aclnn import KernelDesc, aclBoolArray, aclFloatArray, aclIntArray, aclScalar, aclScalarList, aclTensor
from proto.aclnn import aclTensorList as TensorList
from proto.aclnn.dtypes import PACKED
from proto.constants import aclDataType, aclFormat
from proto.errors import ACL_ERROR_RT_AICORE_EXCEPTION, ACL_ERROR_RT_VECTOR_CORE_EXCEPTION, AclError
from server.npu.ops.common import int4
from server.npu.ops.dtypes import np_dtype
from server.npu.ops.launch import Plan
from server.npu.ops.views import Views

Function = Callable[..., object]
UINT8: Final = aclDataType.ACL_UINT8


def py_name(name: str) -> str:
    """The Python parameter name of a C argument: `from` -> `from_`."""
    return f"{name}_" if keyword.iskeyword(name) else name


class Packed:
    """An ACL_INT4 tensor's bytes: unpacked into an int4 array when the plan runs, packed back when written."""

    __slots__ = ("numel", "raw", "shape", "values", "written")

    def __init__(self, tensor: aclTensor, views: Views, written: bool) -> None:
        first, nbytes = tensor.byte_range()
        raw = aclTensor((nbytes,), UINT8, (1,), 0, aclFormat.ACL_FORMAT_ND, (nbytes,), first)
        self.raw = views(raw, written) if nbytes else np.zeros(0, np.uint8)
        self.shape, self.numel, self.written = tensor.view_dims, tensor.numel, written
        self.values = np.zeros(tensor.view_dims, int4.INT4)

    def load(self) -> np.ndarray:
        flat = int4.unpack(np.ascontiguousarray(self.raw))[: self.numel]
        self.values = flat.reshape(self.shape).astype(int4.INT4)
        if not self.written:
            self.values.flags.writeable = False
        return self.values

    def store(self) -> None:
        flat = self.values.astype(np.int8).ravel()
        if self.numel % 2:  # the last byte's high nibble belongs to the next element: keep it
            high = np.int8(((int(self.raw[-1]) >> 4) ^ 8) - 8)
            flat = np.append(flat, high)
        self.raw[...] = int4.pack(flat, np.uint8)


def _tensor(tensor: aclTensor | None, views: Views, written: bool, packed: list[tuple[str, int, Packed]], key: str,
            index: int = -1) -> Any:  # fmt: skip
    if tensor is None:
        return None
    if tensor.data_type in PACKED:
        found = Packed(tensor, views, written)
        packed.append((key, index, found))
        return found.values
    return views(tensor, written)


def arguments(kernel: KernelDesc, views: Views) -> tuple[dict[str, Any], list[tuple[str, int, Packed]]]:
    """The function's keyword arguments for `kernel` (its C names, Python keywords suffixed), and the packed int4
    tensors among them (name, list index or -1, holder)."""
    values: dict[str, Any] = {}
    packed: list[tuple[str, int, Packed]] = []
    written = set(kernel.decl.outputs)
    for arg in kernel.decl.args:
        value, key = kernel.args[arg.name], py_name(arg.name)
        out = arg.name in written
        if isinstance(value, aclTensor):
            values[key] = _tensor(value, views, out, packed, key)
        elif isinstance(value, TensorList):
            values[key] = [_tensor(t, views, out, packed, key, i) for i, t in enumerate(value.tensors)]
        elif isinstance(value, aclScalar):
            values[key] = value.value
        elif isinstance(value, aclScalarList):
            values[key] = [s.value for s in value.scalars]
        elif isinstance(value, aclIntArray | aclBoolArray | aclFloatArray):
            values[key] = tuple(value.values)
        elif isinstance(value, aclDataType):
            values[key] = np_dtype(value)
        else:
            values[key] = value
    return values, packed


def plan(function: Function, kernel: KernelDesc, views: Views, workspace: np.ndarray | None, module: str) -> Plan:
    """The plan of one launch of `function` over the launch's views."""
    values, packed = arguments(kernel, views)
    values["workspace"] = workspace
    decl = kernel.decl
    api = decl.c_name
    code = ACL_ERROR_RT_AICORE_EXCEPTION if decl.kernel_kind == "cube" else ACL_ERROR_RT_VECTOR_CORE_EXCEPTION

    def call() -> None:
        try:
            function(**values)
        except AclError:
            raise
        except Exception as error:
            raise AclError(code, f"the numpy kernel of {api} ({module}) failed: {error!r}", api) from None

    if not packed:
        return call

    def unpacking() -> None:
        for key, index, holder in packed:
            loaded = holder.load()
            if index < 0:
                values[key] = loaded
            else:
                values[key][index] = loaded
        call()
        for _, _, holder in packed:
            if holder.written:
                holder.store()

    return unpacking
