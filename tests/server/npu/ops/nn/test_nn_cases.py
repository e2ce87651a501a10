"""ops-nn's operators end to end, one row each (see opcases.py): activations, index reads and writes, matrix
products, norms, quantization, sampling."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from aclnn_testkit import FakeMemory

from tests.server.npu.ops.opcases import (
    BF16,
    F16,
    F32,
    I8,
    I32,
    I64,
    U64,
    Case,
    In,
    Ints,
    List,
    Out,
    Ref,
    Scalar,
    as_f32,
    run,
)

S = (3, 4)
MATMUL_ATOL = 1e-5
SMALL = In((5,), F32, low=1e-4, high=1e-3)  # dequant scales: int8 products of 32 terms stay inside fp16


def _sigmoid(x: Any) -> Any:
    return 1 / (1 + np.exp(-x))


def _rms(x: Any, gamma: Any, eps: float) -> tuple[Any, Any]:
    rstd = 1 / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
    return x * rstd * gamma, rstd


def _layer(x: Any, w: Any, b: Any, eps: float) -> dict[str, Any]:
    mean = x.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps)
    return {"out": (x - mean) * rstd * w + b, "meanOutOptional": mean, "rstdOutOptional": rstd}


def _group(x: Any, gamma: Any, beta: Any) -> dict[str, Any]:
    g = x.reshape(2, 2, -1)
    mean = g.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    y = ((g - mean) * rstd).reshape(2, 4, 3) * gamma[None, :, None] + beta[None, :, None]
    return {"out": y, "meanOut": mean.reshape(2, 2), "rstdOut": rstd.reshape(2, 2)}


def _sync_stats(through: Any = None, **v: Any) -> dict[str, Any]:
    """SyncBatchNormGatherStats in float64: counts truncated (the op_api's cast to INT32), the biased variance for
    a count of 1; `through` rounds the batch statistics into mean's dtype first (the kernel's outputs)."""
    count = np.trunc(v["sampleCount"]).sum()
    batch_mean = v["totalSum"].sum(0) / count
    batch_var = v["totalSquareSum"].sum(0) / count - batch_mean**2
    invstd = 1 / np.sqrt(batch_var + as_f32(v["eps"]))
    m = as_f32(v["momentum"])
    unbiased = batch_var * count / (count - 1) if count > 1 else batch_var
    if through is not None:
        batch_mean, invstd = batch_mean.astype(through).astype(np.float64), invstd.astype(through).astype(np.float64)
    return {"batchMean": batch_mean, "batchInvstd": invstd, "mean": v["mean"] * (1 - m) + m * batch_mean,
            "variance": v["variance"] * (1 - m) + m * unbiased}  # fmt: skip


def _sync_args(n: int, c: int, stats: Any, counts: Any, outputs: Any = None, **change: Any) -> dict[str, Any]:
    outputs = stats if outputs is None else outputs  # ACL_FLOAT is 0
    args = {"totalSum": In((n, c), stats), "totalSquareSum": In((n, c), stats, low=4.0, high=8.0),
            "sampleCount": counts, "mean": Ref((c,), stats), "variance": Ref((c,), stats, positive=True),
            "momentum": 0.1, "eps": 1e-5, "batchMean": Out((c,), outputs),
            "batchInvstd": Out((c,), outputs)}  # fmt: skip
    return args | change


def _scatter(x: Any, index: Any, src: Any, add: bool) -> Any:
    out = x.copy()
    for i in range(index.shape[0]):
        for j in range(index.shape[1]):
            if add:
                out[i, index[i, j]] += src[i, j]
            else:
                out[i, index[i, j]] = src[i, j]
    return out


def _dynamic_quant(x: Any) -> dict[str, Any]:
    scale = np.abs(x).max(-1) / 127
    return {"yOut": np.clip(np.rint(x / scale[:, None]), -128, 127), "scaleOut": scale}


def _top_k_top_p(logits: Any, k: Any) -> Any:
    out = np.full(logits.shape, -np.inf)
    for b, row in enumerate(logits):
        kth = np.sort(row)[::-1][k[b] - 1]
        out[b] = np.where(row >= kth, row, -np.inf)
    return out


def _index_put(ref: Any, values: Any) -> Any:
    out = ref.copy()
    out[[0, 2]] = values
    return out


ACTIVATIONS = [
    Case("SwiGlu", {"x": In((3, 8), F16), "dim": -1, "out": Out((3, 4), F16)},
         lambda **v: {"out": v["x"][:, :4] * _sigmoid(v["x"][:, :4]) * v["x"][:, 4:]}),
    Case("Glu", {"self": In((4, 6)), "dim": 1, "out": Out((4, 3))},
         lambda **v: {"out": v["self"][:, :3] * _sigmoid(v["self"][:, 3:])}, ulps=4, atol=1e-6),
    Case("Softplus", {"self": In(S), "beta": Scalar(2.0), "threshold": Scalar(1.0), "out": Out(S)},
         lambda **v: {"out": np.where(2 * v["self"] > 1, v["self"], np.log1p(np.exp(2 * v["self"])) / 2)}, ulps=4),
    Case("LeakyRelu", {"self": In(S, BF16), "negativeSlope": Scalar(0.1), "out": Out(S, BF16)},
         lambda **v: {"out": np.where(v["self"] > 0, v["self"], v["self"] * as_f32(0.1))}),
    Case("Elu", {"self": In(S), "alpha": Scalar(1.5), "scale": Scalar(1.0), "inputScale": Scalar(1.0), "out": Out(S)},
         lambda **v: {"out": np.where(v["self"] > 0, v["self"], 1.5 * np.expm1(v["self"]))}, ulps=4),
    Case("Celu", {"self": In(S), "alpha": Scalar(2.0), "out": Out(S)},
         lambda **v: {"out": np.maximum(v["self"], 0) + np.minimum(0, 2 * np.expm1(v["self"] / 2))}, ulps=4),
    Case("GeluV2", {"x": In(S, F16), "approximate": 1, "y": Out(S, F16)},
         lambda **v: {"y": 0.5 * v["x"] * (1 + np.tanh(np.sqrt(2 / np.pi) * (v["x"] + 0.044715 * v["x"] ** 3)))}),
    Case("Softshrink", {"self": In(S), "lambd": Scalar(0.5), "out": Out(S)},
         lambda **v: {"out": np.where(np.abs(v["self"]) > 0.5, v["self"] - 0.5 * np.sign(v["self"]), 0)}),
    Case("Hardshrink", {"self": In(S), "lambd": Scalar(0.5), "out": Out(S)},
         lambda **v: {"out": np.where(np.abs(v["self"]) > 0.5, v["self"], 0)}),
    Case("Swish", {"self": In(S), "betaOptional": Scalar(1.5), "out": Out(S)},
         lambda **v: {"out": v["self"] * _sigmoid(1.5 * v["self"])}, ulps=4, atol=1e-6),
    Case("Prelu", {"self": In((2, 3, 4)), "weight": In((3,)), "out": Out((2, 3, 4))},
         lambda **v: {"out": np.where(v["self"] > 0, v["self"], v["weight"][None, :, None] * v["self"])}),
    Case("LogSoftmax", {"self": In(S), "dim": 1, "out": Out(S)},
         lambda **v: {"out": v["self"] - np.log(np.exp(v["self"]).sum(1, keepdims=True))}, ulps=4, atol=1e-6),
]  # fmt: skip
INDEX = [
    Case("Embedding", {"weight": In((6, 4)), "indices": In((2, 3), I64, values=[[0, 5, 2], [1, 1, 4]]),
                       "out": Out((2, 3, 4))}, lambda **v: {"out": v["weight"][v["indices"]]}),
    Case("Gather", {"self": In(S), "dim": 1, "index": In((3, 2), I32, values=[[0, 3], [1, 1], [2, 0]]),
                    "out": Out((3, 2))}, lambda **v: {"out": np.take_along_axis(v["self"], v["index"], 1)}),
    Case("IndexSelect", {"self": In(S), "dim": 0, "index": In((2,), I64, values=[2, 0]), "out": Out((2, 4))},
         lambda **v: {"out": v["self"][[2, 0]]}),
    Case("Index", {"self": In(S), "indices": List((In((2,), I64, values=[1, 2]),)), "out": Out((2, 4))},
         lambda **v: {"out": v["self"][[1, 2]]}),
    Case("IndexPutImpl", {"selfRef": Ref((4, 3)), "indices": List((In((2,), I64, values=[0, 2]),)),
                          "values": In((2, 3)), "accumulate": False, "unsafe": False},
         lambda **v: {"selfRef": _index_put(v["selfRef"], v["values"])}),
    Case("InplaceIndexCopy", {"selfRef": Ref((4, 3)), "dim": 0, "index": In((2,), I64, values=[3, 1]),
                              "source": In((2, 3))},
         lambda **v: {"selfRef": np.concatenate([v["selfRef"][:1], v["source"][1:2], v["selfRef"][2:3],
                                                 v["source"][:1]])}),
    Case("IndexCopy", {"selfRef": In((4, 3)), "dim": 0, "index": In((1,), I64, values=[2]), "source": In((1, 3)),
                       "outRef": Ref((4, 3))},
         lambda **v: {"outRef": np.concatenate([v["selfRef"][:2], v["source"], v["selfRef"][3:]])}),
    Case("ScatterNdUpdate", {"varRef": Ref((5, 3)), "indices": In((2, 1), I64, values=[[4], [0]]),
                             "updates": In((2, 3))},
         lambda **v: {"varRef": np.concatenate([v["updates"][1:2], v["varRef"][1:4], v["updates"][:1]])}),
    Case("InplaceScatterUpdate", {"data": Ref((2, 6, 4)), "indices": In((2,), I64, values=[1, 3]),
                                  "updates": In((2, 1, 4)), "axis": -2},
         lambda **v: {"data": _scatter_update(v["data"], v["updates"])}),
    Case("Scatter", {"self": In(S), "dim": 1, "index": In((3, 2), I64, values=[[0, 1], [2, 3], [3, 0]]),
                     "src": In((3, 2)), "reduce": 0, "out": Out(S)},
         lambda **v: {"out": _scatter(v["self"], v["index"], v["src"], add=False)}),
    Case("ScatterAdd", {"self": In(S), "dim": 1, "index": In((3, 2), I64, values=[[0, 0], [2, 3], [3, 1]]),
                        "src": In((3, 2)), "out": Out(S)},
         lambda **v: {"out": _scatter(v["self"], v["index"], v["src"], add=True)}, atol=1e-6),
    Case("IndexAdd", {"self": In(S), "dim": 0, "index": In((2,), I64, values=[2, 2]), "source": In((2, 4)),
                      "alpha": Scalar(0.5), "out": Out(S)},
         lambda **v: {"out": v["self"] + np.array([[0.0] * 4, [0.0] * 4, list(0.5 * v["source"].sum(0))])}),
    Case("Flip", {"self": In((2, 3, 4)), "dims": Ints((0, 2)), "out": Out((2, 3, 4))},
         lambda **v: {"out": np.flip(v["self"], (0, 2))}),
]  # fmt: skip
MATMUL = [
    Case("Mm", {"self": In((4, 9)), "mat2": In((9, 5)), "out": Out((4, 5)), "cubeMathType": 0},
         lambda **v: {"out": v["self"] @ v["mat2"]}, atol=MATMUL_ATOL),
    Case("BatchMatMul", {"self": In((2, 3, 8), F16), "mat2": In((2, 8, 4), F16), "out": Out((2, 3, 4), F16),
                         "cubeMathType": 0}, lambda **v: {"out": v["self"] @ v["mat2"]}, atol=1e-3),
    Case("Mv", {"self": In((4, 6)), "vec": In((6,)), "out": Out((4,)), "cubeMathType": 1},
         lambda **v: {"out": v["self"] @ v["vec"]}, atol=MATMUL_ATOL),
    Case("Addmm", {"self": In((5,)), "mat1": In((3, 7)), "mat2": In((7, 5)), "beta": Scalar(0.5), "alpha": Scalar(2.0),
                   "out": Out((3, 5)), "cubeMathType": 0},
         lambda **v: {"out": 0.5 * v["self"] + 2 * v["mat1"] @ v["mat2"]}, atol=MATMUL_ATOL),
    Case("Baddbmm", {"self": In((2, 3, 4)), "batch1": In((2, 3, 5)), "batch2": In((2, 5, 4)), "beta": Scalar(1.0),
                     "alpha": Scalar(1.0), "out": Out((2, 3, 4)), "cubeMathType": 0},
         lambda **v: {"out": v["self"] + v["batch1"] @ v["batch2"]}, atol=MATMUL_ATOL),
]  # fmt: skip
NORM = [
    Case("RmsNorm", {"x": In((3, 8), F16), "gamma": In((8,), F32), "epsilon": 1e-6, "yOut": Out((3, 8), F16),
                     "rstdOut": Out((3, 1))},
         lambda **v: dict(zip(("yOut", "rstdOut"), _rms(v["x"], v["gamma"], 1e-6), strict=True)), ulps=4),
    Case("AddRmsNorm", {"x1": In((2, 8)), "x2": In((2, 8)), "gamma": In((8,)), "epsilon": 1e-5,
                        "yOut": Out((2, 8)), "rstdOut": Out((2, 1)), "xOut": Out((2, 8))},
         lambda **v: dict(zip(("yOut", "rstdOut"), _rms(v["x1"] + v["x2"], v["gamma"], 1e-5), strict=True))
         | {"xOut": v["x1"] + v["x2"]}, ulps=8, atol=1e-6),
    Case("LayerNorm", {"input": In((3, 6)), "normalizedShape": Ints((6,)), "weightOptional": In((6,)),
                       "biasOptional": In((6,)), "eps": 1e-5, "out": Out((3, 6)), "meanOutOptional": Out((3, 1)),
                       "rstdOutOptional": Out((3, 1))},
         lambda **v: _layer(v["input"], v["weightOptional"], v["biasOptional"], 1e-5), ulps=8, atol=1e-6),
    Case("LayerNormWithImplMode", {"input": In((3, 6)), "normalizedShape": Ints((6,)), "weightOptional": None,
                                   "biasOptional": None, "eps": 1e-5, "out": Out((3, 6)), "meanOutOptional": None,
                                   "rstdOutOptional": None, "implMode": 0},
         lambda **v: {"out": _layer(v["input"], 1.0, 0.0, 1e-5)["out"]}, ulps=8, atol=1e-6),
    Case("GroupNorm", {"self": In((2, 4, 3)), "gamma": In((4,)), "beta": In((4,)), "N": 2, "C": 4, "HxW": 3,
                       "group": 2, "eps": 1e-5, "out": Out((2, 4, 3)), "meanOut": Out((2, 2)), "rstdOut": Out((2, 2))},
         lambda **v: _group(v["self"], v["gamma"], v["beta"]), ulps=8, atol=1e-6),
    Case("SyncBatchNormGatherStats", _sync_args(3, 6, F32, In((3,), I32, values=[5, 7, 3])),
         lambda **v: _sync_stats(**v), ulps=8, atol=1e-6),
    Case("SyncBatchNormGatherStats", _sync_args(2, 5, F16, In((2,), F32, values=[4.7, 6.2]), momentum=0.9, eps=1e-3),
         lambda **v: _sync_stats(**v), ulps=2, name="SyncBatchNormGatherStats-fp16-truncated-counts"),
    Case("SyncBatchNormGatherStats", _sync_args(3, 4, F16, In((3,), F16, values=[2, 3, 4]), F32),
         lambda **v: _sync_stats(np.float16, **v), ulps=2, name="SyncBatchNormGatherStats-fp32-outputs"),
    Case("SyncBatchNormGatherStats", _sync_args(1, 3, F32, In((1,), I32, values=[1]), momentum=0.5),
         lambda **v: _sync_stats(**v), ulps=8, atol=1e-6, name="SyncBatchNormGatherStats-one-sample"),
]  # fmt: skip
KG_SCALES = np.array([[(1 + i / 16) * 2.0 ** -(8 + j) for i in range(16)] for j in range(2)], np.float32)


def _packed_scales() -> Any:
    """KG_SCALES in the UINT64 form: float32 bits | 1 << 46 (aclnnTransQuantParamV2's, no offset)."""
    return KG_SCALES.view(np.uint32).astype(np.uint64) | np.uint64(1 << 46)


def _nibbles(words: Any) -> Any:
    """int4 values of INT32 words, the lowest nibble first, sign-extended."""
    bits = np.asarray(words, np.int64) & 0xFFFFFFFF
    values = np.stack([(bits >> (4 * i)) & 0xF for i in range(8)], axis=-1)
    return np.where(values >= 8, values - 16, values).reshape(words.shape[0], -1)


def _per_block(a: Any, b: Any, sa: Any, sb: Any) -> Any:
    """sum over 128-wide k blocks j of (a[:, j] @ b[j]) * sa[:, j] * sb[j, n // 128], in float64."""
    blocks = [(a[:, j * 128 : (j + 1) * 128] @ b[j * 128 : (j + 1) * 128]) for j in range(sa.shape[1])]
    return sum(p * sa[:, j : j + 1] * np.repeat(sb[j : j + 1], 128, axis=1) for j, p in enumerate(blocks))


QUANT = [
    Case("DynamicQuant", {"x": In((3, 16), F16), "smoothScalesOptional": None, "yOut": Out((3, 16), I8),
                          "scaleOut": Out((3,))},
         lambda **v: _dynamic_quant(v["x"]), ulps=2),
    Case("DynamicQuantV2", {"x": In((3, 16), BF16), "smoothScalesOptional": None, "groupIndexOptional": None,
                            "dstType": 2, "yOut": Out((3, 16), I8), "scaleOut": Out((3,)), "offsetOut": None},
         lambda **v: _dynamic_quant(v["x"]), ulps=2),
    Case("QuantMatmulV4", {"x1": In((3, 32), I8), "x2": In((32, 5), I8), "scale": SMALL, "offset": None,
                           "pertokenScaleOptional": None, "bias": None, "transposeX1": False, "transposeX2": False,
                           "out": Out((3, 5), F16)},
         lambda **v: {"out": (v["x1"] @ v["x2"]) * v["scale"]}, ulps=2),
    Case("QuantMatmulV5", {"x1": In((3, 32), I8), "x2": In((5, 32), I8), "x1Scale": None, "x2Scale": SMALL,
                           "yScale": None, "x1Offset": None, "x2Offset": None, "yOffset": None, "bias": None,
                           "transposeX1": False, "transposeX2": True, "groupSize": 0, "out": Out((3, 5), BF16)},
         lambda **v: {"out": (v["x1"] @ v["x2"].T) * v["x2Scale"]}, ulps=2),
    # the G-B mode: [gsM, gsN, gsK] = [1, 128, 128] (groupSize 1 << 32 | 128 << 16 | 128), per-token-block x1Scale
    # (m, k / 128), per-block x2Scale (n / 128, k / 128) as x2 is laid out, a float bias
    Case("QuantMatmulV5", {"x1": In((3, 512), I8), "x2": In((256, 512), I8), "x1Scale": In((3, 4), F32, low=1e-3,
                           high=1e-2), "x2Scale": In((2, 4), F32, low=1e-3, high=1e-2), "yScale": None,
                           "x1Offset": None, "x2Offset": None, "yOffset": None, "bias": In((256,), F32),
                           "transposeX1": False, "transposeX2": True, "groupSize": 4303356032,
                           "out": Out((3, 256), BF16)},
         lambda **v: {"out": _per_block(v["x1"], v["x2"].T, v["x1Scale"], v["x2Scale"].T) + v["bias"]}, ulps=2,
         name="QuantMatmulV5-G-B"),
    # the K-G mode with yOffset: int4 weights packed in INT32 (k, n / 8), per-group UINT64 scales (k / 256, n)
    Case("QuantMatmulV5", {"x1": In((2, 512), I8), "x2": In((512, 2), I32), "x1Scale": In((2, 1), F32, low=1e-3,
                           high=1e-2), "x2Scale": In((2, 16), U64, values=_packed_scales()), "yScale": None,
                           "x1Offset": None, "x2Offset": None, "yOffset": In((16,), F32), "bias": None,
                           "transposeX1": False, "transposeX2": False, "groupSize": 256, "out": Out((2, 16), F16)},
         lambda **v: {"out": (v["x1"] @ (_nibbles(v["x2"]) * np.repeat(KG_SCALES, 256, axis=0)) + v["yOffset"])
                      * v["x1Scale"]}, ulps=2, name="QuantMatmulV5-K-G"),
    Case("WeightQuantBatchMatmulV2", {"x": In((3, 32), F16), "weight": In((32, 4), I8), "antiquantScale": In((4,), F16),
                                      "antiquantOffsetOptional": None, "quantScaleOptional": None,
                                      "quantOffsetOptional": None, "biasOptional": None, "antiquantGroupSize": 0,
                                      "y": Out((3, 4), F16)},
         lambda **v: {"y": v["x"] @ (v["weight"] * v["antiquantScale"]).astype(np.float16).astype(np.float64)},
         ulps=4, atol=1e-2),
    Case("ApplyTopKTopP", {"logits": In((2, 6)), "p": None, "k": In((2,), I32, values=[2, 3]), "out": Out((2, 6))},
         lambda **v: {"out": _top_k_top_p(v["logits"], v["k"])}),
]  # fmt: skip


def _scatter_update(data: Any, updates: Any) -> Any:
    out = data.copy()
    out[0, 1:2] = updates[0]
    out[1, 3:4] = updates[1]
    return out


CASES = ACTIVATIONS + INDEX + MATMUL + NORM + QUANT


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_nn(case: Case, mem: FakeMemory, rng: np.random.Generator) -> None:
    run(case, mem, rng)
