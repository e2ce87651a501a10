"""Launch: what one kernel sees (its description, device memory, its workspace) while it plans its run.

A kernel is a planner: given a Launch it resolves its views, dtypes and constants and returns a `Plan`, a
callable that only does the numpy work. The plan reads memory when it is called, never before, so one plan
serves every run of its description while the views it holds are valid (see `server.npu.ops.plans`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from proto.aclnn import KernelDesc, aclScalar, aclTensor
from proto.errors import ACLNN_ERR_PARAM_INVALID, AclError
from server.npu.ops.dtypes import compute_dtype, np_dtype
from server.npu.ops.views import Views


@dataclass(slots=True)
class Launch:
    """One kernel launch over device memory: read views of inputs, write views of outputs, the workspace.

    Built once per plan: slots, not frozen, and its dtypes worked out once.
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
        return self.views(self.kernel.tensor(name), False)

    def write(self, name: str) -> np.ndarray:
        """A writeable view of tensor argument `name`."""
        return self.views(self.kernel.tensor(name), True)

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

    def into(self, name: str, compute: Callable[[np.ndarray], object]) -> Plan:
        """A plan that runs `compute(target)` for output `name`: target is out's view, or a result-dtype
        temporary (made when the plan runs) copied into out afterwards.

        The temporary exists only when the result is fp16/bf16 (computed in float32) and out has another
        dtype: the result rounds to its own dtype first and is then cast, as CANN's Cast after the kernel.
        """
        out, result = self.write(name), self.result
        if out.dtype == result or result == self.compute:
            return partial(compute, out)

        def through_temporary() -> None:
            temporary = np.empty(out.shape, result)
            compute(temporary)
            np.copyto(out, temporary, casting="unsafe")

        return through_temporary

    def ufunc(self, ufunc: np.ufunc, inputs: tuple[np.ndarray] | tuple[np.ndarray, np.ndarray], name: str) -> Plan:
        """A plan for `ufunc(*inputs)` computed in the compute dtype into output `name` (`casting="unsafe"`:
        phase 1 already checked that the cast is allowed). Where every array already has the compute dtype,
        the plan is the bare ufunc call. (Spelled out per arity: a call with `*inputs` costs twice the ufunc.)"""
        dtype, out = self.compute, self.write(name)
        bare = self.result == dtype == out.dtype and all(x.dtype == dtype for x in inputs)
        if len(inputs) == 1:
            (x,) = inputs
            if bare:
                return lambda: ufunc(x, out=out)
            return self.into(name, lambda target: ufunc(x, out=target, dtype=dtype, casting="unsafe"))
        x, y = inputs
        if bare:
            return lambda: ufunc(x, y, out=out)
        return self.into(name, lambda target: ufunc(x, y, out=target, dtype=dtype, casting="unsafe"))

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


Plan = Callable[[], object]
"""A kernel's run with everything resolved: calling it reads its inputs and writes its outputs."""

Kernel = Callable[[Launch], Plan]
"""A kernel's planner: the plan of one launch (raising AclError where the launch cannot run)."""
