"""Launch: what one kernel sees while it runs (its description, device memory, its workspace)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from proto.aclnn import KernelDesc, aclScalar, aclTensor
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops.dtypes import compute_dtype, np_dtype
from server.npu.ops.views import Views


@dataclass(slots=True)
class Launch:
    """One kernel launch over device memory: read views of inputs, write views of outputs, the workspace.

    Built once per kernel run, so it is kept cheap: slots, not frozen, and its dtypes worked out once.
    """

    kernel: KernelDesc
    views: Views
    workspace: np.ndarray | None
    result: np.dtype = field(init=False)  # the operator's result dtype (promoted, before the cast into out)
    compute: np.dtype = field(init=False)  # the dtype it is computed in (see `proto.aclnn.dtypes.compute_dtype`)

    def __post_init__(self) -> None:
        dtype = self.kernel.decl.rule.result_dtype(self.kernel.args)
        self.result, self.compute = np_dtype(dtype), compute_dtype(dtype)

    def read(self, name: str) -> np.ndarray:
        """A read-only view of tensor argument `name`."""
        return self.views(self._tensor(name), False)

    def write(self, name: str) -> np.ndarray:
        """A writeable view of tensor argument `name`."""
        return self.views(self._tensor(name), True)

    def _tensor(self, name: str) -> aclTensor:
        tensor = self.kernel.args[name]
        if not isinstance(tensor, aclTensor):
            raise TypeError(f"argument {name} is {type(tensor).__name__}, not aclTensor")
        return tensor

    def scalar(self, name: str, dtype: np.dtype) -> np.ndarray:
        """Scalar argument `name` as a 0-d array of `dtype` (integers wrap, as C's conversion does)."""
        value = self.kernel.args[name]
        assert isinstance(value, aclScalar)
        return np.asarray(value.value).astype(dtype)

    def operand(self, name: str, dtype: np.dtype) -> np.ndarray:
        """A tensor argument's read view, or a scalar argument as a 0-d array of `dtype`."""
        value = self.kernel.args[name]
        if isinstance(value, aclTensor):
            return self.views(value, False)
        return self.scalar(name, dtype)

    def output(self, name: str) -> Output:
        """A context giving the array to compute into: out's view, or a result-dtype temporary copied into out
        afterwards.

        The temporary exists only when the result is fp16/bf16 (computed in float32) and out has another
        dtype: the result rounds to its own dtype first and is then cast, as CANN's Cast after the kernel.
        """
        out, result = self.write(name), self.result
        if out.dtype == result or result == self.compute:
            return Output(out, None)
        return Output(out, np.empty(out.shape, result))

    def scratch(self, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """A `dtype` array of `shape` laid over the start of the workspace."""
        nbytes = math.prod(shape) * dtype.itemsize
        if self.workspace is None or self.workspace.nbytes < nbytes:
            have = 0 if self.workspace is None else self.workspace.nbytes
            raise AclError(
                ACLNN_ERR_PARAM_INVALID,
                f"the workspace holds {have} bytes; aclnn{self.kernel.op} needs {nbytes}",
                api=f"aclnn{self.kernel.op}",
            )
        return self.workspace[:nbytes].view(dtype).reshape(shape)


class Output:
    """`Launch.output`'s context (a plain class: a generator-based one costs more than a small kernel)."""

    __slots__ = ("out", "temporary")

    def __init__(self, out: np.ndarray, temporary: np.ndarray | None) -> None:
        self.out, self.temporary = out, temporary

    def __enter__(self) -> np.ndarray:
        return self.out if self.temporary is None else self.temporary

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if self.temporary is not None and kind is None:
            np.copyto(self.out, self.temporary, casting="unsafe")


Kernel = Callable[[Launch], None]
