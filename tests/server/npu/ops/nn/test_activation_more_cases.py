"""More of ops-nn's elementwise activations end to end, one row each (FastGelu, LogSigmoid, Heaviside, Threshold,
Shrink and twins), against float64 numpy references (`tests/server/npu/ops/opcases.py`); then the
phase-1 refusals their documentation lists."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from aclnn_testkit import FakeMemory

import proto.aclnn as nn
from tests.proto.aclnn_kit import refused, scalar, tensor
from tests.server.npu.ops.opcases import BF16, F16, F32, I32, I64, Case, In, Out, Ref, Scalar, run

S = (3, 5)
CASES = [
    Case("FastGelu", {"self": In(S), "out": Out(S)}, lambda **v: {"out": v["self"] / (1 + np.exp(-1.702 * v["self"]))},
         ulps=4),
    Case("FastGelu", {"self": In(S, BF16), "out": Out(S, BF16)},
         lambda **v: {"out": v["self"] / (1 + np.exp(-1.702 * v["self"]))}, name="FastGelu-bf16"),
    Case("LogSigmoid", {"self": In(S, low=-30.0, high=30.0), "out": Out(S)},
         lambda **v: {"out": -np.log1p(np.exp(-v["self"]))}, ulps=4, atol=1e-7),
    Case("LogSigmoidForward", {"self": In(S, BF16), "out": Out(S, BF16), "buffer": Out(S)},
         lambda **v: {"out": -np.logaddexp(0, -v["self"])}, skip=("buffer",)),
    Case("Heaviside", {"input": In(S, F16, values=np.arange(15).reshape(S) % 3 - 1), "values": In((5,), F16),
                       "out": Out(S, F16)},
         lambda **v: {"out": np.heaviside(v["input"], v["values"])}),
    Case("Threshold", {"self": In(S), "threshold": Scalar(0.25), "value": Scalar(-2.0), "out": Out(S)},
         lambda **v: {"out": np.where(v["self"] > 0.25, v["self"], -2.0)}),
    Case("Threshold", {"self": In(S, I32), "threshold": Scalar(3, I64), "value": Scalar(7, I64), "out": Out(S, I32)},
         lambda **v: {"out": np.where(v["self"] > 3, v["self"], 7)}, name="Threshold-int"),
    Case("InplaceThreshold", {"selfRef": Ref(S, BF16), "threshold": Scalar(0.0), "value": Scalar(0.5)},
         lambda **v: {"selfRef": np.where(v["selfRef"] > 0, v["selfRef"], 0.5)}),
    Case("Shrink", {"self": In(S, F16), "lambd": Scalar(0.5), "bias": Scalar(0.25), "out": Out(S, F16)},
         lambda **v: {"out": np.where(v["self"] > 0.5, v["self"] - 0.25,
                                      np.where(v["self"] < -0.5, v["self"] + 0.25, 0.0))}),
    Case("HardsigmoidV2", {"self": In(S, low=-4.0, high=4.0), "out": Out(S)},
         lambda **v: {"out": np.clip(v["self"] / 6 + 0.5, 0, 1)}),
    Case("HardsigmoidV2", {"self": In(S, I32, values=np.arange(15).reshape(S) - 7), "out": Out(S, I32)},
         lambda **v: {"out": (v["self"] >= 3).astype(np.int64)}, name="HardsigmoidV2-int"),
    Case("InplaceHardsigmoidV2", {"self": Ref(S, F16)}, lambda **v: {"self": np.clip(v["self"] / 6 + 0.5, 0, 1)}),
    Case("FastGeluV2", {"x": In(S, low=-3.0, high=3.0), "out": Out(S)},
         lambda **v: {"out": v["x"] * (np.sign(v["x"] + 1e-12) * (-0.1444 * (np.minimum(np.abs(0.7071 * v["x"]), 1.769)
                                                                            - 1.769) ** 2 + 0.5) + 0.5)},
         ulps=8, atol=1e-6),
    Case("FusedBiasLeakyRelu", {"x": In(S, F16), "bias": In(S, F16), "negativeSlope": 0.2, "scale": 1.414213562373,
                                "out": Out(S, F16)},
         lambda **v: {"out": np.where(v["x"] + v["bias"] >= 0, 1.414213562373, 0.2 * 1.414213562373)
                      * (v["x"] + v["bias"])}),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_activation_more(case: Case, mem: FakeMemory, rng: np.random.Generator) -> None:
    run(case, mem, rng)


def _t(*shape: int, dtype: Any = F32) -> nn.aclTensor:
    return tensor(list(shape), dtype)


def test_the_activations_refuse_what_their_documentation_refuses() -> None:
    refused(
        lambda: nn.aclnnFastGeluGetWorkspaceSize(_t(2), _t(2, dtype=F16)),
        "out has dtype ACL_FLOAT16, but the result has dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnHeavisideGetWorkspaceSize(_t(2), _t(2, dtype=F16), _t(2)),
        "values has dtype ACL_FLOAT16; it must have input's dtype ACL_FLOAT",
    )
    refused(
        lambda: nn.aclnnShrinkGetWorkspaceSize(_t(2), scalar(-0.5), scalar(0.0), _t(2)),
        "lambd is -0.5; it must be >= 0",
    )
    refused(
        lambda: nn.aclnnThresholdGetWorkspaceSize(_t(2, dtype=I32), scalar(0.5), scalar(1, I32), _t(2, dtype=I32)),
        "out has dtype ACL_INT32, which the result dtype ACL_FLOAT cannot be cast to",
    )
