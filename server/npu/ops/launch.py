"""Launch: what one kernel sees while it runs (its description, device memory, its workspace)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from proto.aclnn import KernelDesc, aclScalar
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops.dtypes import compute_dtype, np_dtype
from server.npu.ops.views import Region, tensor_view


@dataclass(frozen=True)
class Launch:
    """One kernel launch over device memory: read views of inputs, write views of outputs, the workspace."""

    kernel: KernelDesc
    region: Region
    workspace: np.ndarray | None

    def read(self, name: str) -> np.ndarray:
        """A read-only view of tensor argument `name`."""
        return tensor_view(self.kernel.tensor(name), self.region, writeable=False)

    def write(self, name: str) -> np.ndarray:
        """A writeable view of tensor argument `name`."""
        return tensor_view(self.kernel.tensor(name), self.region)

    def scalar(self, name: str, dtype: np.dtype) -> np.ndarray:
        """Scalar argument `name` as a 0-d array of `dtype` (integers wrap, as C's conversion does)."""
        value = self.kernel.args[name]
        assert isinstance(value, aclScalar)
        return np.asarray(value.value).astype(dtype)

    def operand(self, name: str, dtype: np.dtype) -> np.ndarray:
        """A tensor argument's read view, or a scalar argument as a 0-d array of `dtype`."""
        if isinstance(self.kernel.args[name], aclScalar):
            return self.scalar(name, dtype)
        return self.read(name)

    @property
    def result(self) -> np.dtype:
        """The numpy dtype of the operator's result (the promoted dtype, before the cast into out)."""
        return np_dtype(self.kernel.decl.rule.result_dtype(self.kernel.args))

    @property
    def compute(self) -> np.dtype:
        """The numpy dtype the result is computed in (see `proto.aclnn.dtypes.compute_dtype`)."""
        return compute_dtype(self.kernel.decl.rule.result_dtype(self.kernel.args))

    @contextmanager
    def output(self, name: str) -> Iterator[np.ndarray]:
        """The array to compute into: out's view, or a result-dtype temporary copied into out afterwards.

        The temporary exists only when the result is fp16/bf16 (computed in float32) and out has another
        dtype: the result rounds to its own dtype first and is then cast, as CANN's Cast after the kernel.
        """
        out, result = self.write(name), self.result
        if out.dtype == result or result == self.compute:
            yield out
            return
        temporary = np.empty(out.shape, result)
        yield temporary
        np.copyto(out, temporary, casting="unsafe")

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


Kernel = Callable[[Launch], None]
