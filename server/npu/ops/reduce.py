"""Reductions: ReduceSum and Mean over a set of dims (none = all), into the named dtype.

The input is cast to the result dtype first, as torch does (fp16/bf16 accumulate in float32; integers wrap,
which equals torch's int64 accumulation cast back). The sum lands directly in out when out has the
accumulation dtype; only an fp16/bf16 out takes an out-sized temporary. A mean over no elements is NaN.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

from proto.aclnn.rules.reduce import Reduce
from server.npu.ops.launch import Kernel, Launch, Plan


def reduction(mean: bool) -> Kernel:
    def plan(launch: Launch) -> Plan:
        args, rule = launch.kernel.args, launch.kernel.decl.rule
        assert isinstance(rule, Reduce)
        x, out, dtype = launch.read("self"), launch.write("out"), launch.compute
        axes, keepdims = rule.axes(args), rule.keepdims(args)
        count = math.prod(x.shape[a] for a in axes)

        def run() -> None:
            result = out if out.dtype == dtype else np.empty(out.shape, dtype)
            np.sum(x, axis=axes, dtype=dtype, keepdims=keepdims, out=result)
            if mean:
                np.divide(result, count, out=result)
            if result is not out:
                np.copyto(out, result, casting="unsafe")

        return run

    return plan


KERNELS: Final[dict[str, Kernel]] = {"ReduceSum": reduction(mean=False), "Mean": reduction(mean=True)}
