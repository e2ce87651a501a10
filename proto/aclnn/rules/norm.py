"""Normalization and quantization families of ops-nn (norm/, quant/, matmul/ quantized, sampling): RmsNorm,
AddRmsNorm, LayerNorm(WithImplMode), GroupNorm, SyncBatchNormGatherStats, DynamicQuant(V2), QuantMatmulV4/V5,
WeightQuantBatchMatmulV2, ApplyTopKTopP.

Each rule is its documentation's table: the dtype pairs, the normalized axes, the statistics' shapes (1 on the
normalized axes), the quantized dtypes and their packing.
"""

from __future__ import annotations

from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import DT
from proto.aclnn.entry import Row, cube, nullable
from proto.aclnn.host import aclTensor
from proto.aclnn.rules.base import (
    Checked,
    check_out,
    flag,
    int_attr,
    ints,
    number,
    opt_tensor,
    require_dtype,
    require_in,
    require_range,
    require_rank,
    require_same_dtype,
    require_shape,
    shape_str,
    tensor,
)
from proto.aclnn.rules.matmul import matmul_shape
from proto.constants import aclDataType, aclFormat
from proto.errors import ACLNN_ERR_PARAM_NULLPTR

HALF: Final = frozenset({DT.ACL_FLOAT16, DT.ACL_BF16})
NORM: Final = HALF | {DT.ACL_FLOAT}
RMS_PAIRS: Final = {(DT.ACL_FLOAT16, DT.ACL_FLOAT), (DT.ACL_BF16, DT.ACL_FLOAT), (DT.ACL_FLOAT16, DT.ACL_FLOAT16),
                    (DT.ACL_FLOAT, DT.ACL_FLOAT), (DT.ACL_BF16, DT.ACL_BF16)}  # fmt: skip


def _stats_shape(x: aclTensor, count: int) -> tuple[int, ...]:
    return (*x.view_dims[: len(x.view_dims) - count], *(1,) * count)


def _trailing(name: str, x: aclTensor, shape: tuple[int, ...], what: str) -> None:
    n = len(shape)
    if not 0 < n <= len(x.view_dims) or x.view_dims[len(x.view_dims) - n :] != shape:
        raise OpArgError(f"{what} {shape_str(shape)} must be the last axes of {name}'s {shape_str(x.view_dims)}")


def _stat(args: Args, name: str, shape: tuple[int, ...], dtype: aclDataType) -> None:
    if args[name] is not None:
        check_out(args, name, dtype, shape, exact=True)


def _rms_norm(args: Args) -> None:
    x, gamma = tensor(args, "x"), tensor(args, "gamma")
    require_dtype("x", x.data_type, NORM)
    require_rank("x", x, 1, 8)
    if (x.data_type, gamma.data_type) not in RMS_PAIRS:
        raise OpArgError(
            f"gamma has dtype {dtypes.name(gamma.data_type)}; with x {dtypes.name(x.data_type)} it must be x's or FLOAT"
        )
    _trailing("x", x, gamma.view_dims, "gamma's shape")
    require_range("epsilon", number(args, "epsilon"), 0)
    check_out(args, "yOut", x.data_type, x.view_dims, exact=True)
    _stat(args, "rstdOut", _stats_shape(x, len(gamma.view_dims)), DT.ACL_FLOAT)


def _add_rms_norm(args: Args) -> None:
    x1, x2, gamma = tensor(args, "x1"), tensor(args, "x2"), tensor(args, "gamma")
    require_dtype("x1", x1.data_type, NORM)
    require_same_dtype("x2", x2, "x1", x1)
    require_same_dtype("gamma", gamma, "x1", x1)
    require_shape("x2", x2, x1.view_dims, "x1's")
    g = gamma.view_dims[1:] if len(gamma.view_dims) == 2 and gamma.view_dims[0] == 1 else gamma.view_dims
    _trailing("x1", x1, g, "gamma's shape")
    require_range("epsilon", number(args, "epsilon"), 0)
    check_out(args, "yOut", x1.data_type, x1.view_dims, exact=True)
    _stat(args, "rstdOut", _stats_shape(x1, len(g)), DT.ACL_FLOAT)
    _stat(args, "xOut", x1.view_dims, x1.data_type)


def _layer_norm(args: Args) -> None:
    x = tensor(args, "input")
    require_dtype("input", x.data_type, NORM)
    require_rank("input", x, 1, 8)
    shape = ints(args, "normalizedShape") or ()
    _trailing("input", x, shape, "normalizedShape")
    given = [(n, t) for n in ("weightOptional", "biasOptional") if (t := opt_tensor(args, n)) is not None]
    for name, t in given:
        require_shape(name, t, shape, "normalizedShape")
        require_dtype(name, t.data_type, frozenset({x.data_type, DT.ACL_FLOAT}))
    if len(given) == 2:
        require_same_dtype(given[1][0], given[1][1], given[0][0], given[0][1])
    require_range("eps", number(args, "eps"), 0)
    check_out(args, "out", x.data_type, x.view_dims, exact=True)
    for name in ("meanOutOptional", "rstdOutOptional"):
        _stat(args, name, _stats_shape(x, len(shape)), x.data_type)
    if "implMode" in args:
        require_in("implMode", int_attr(args, "implMode"), (0, 1, 2))


def _group_norm(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, NORM)
    n, c, hxw, group = (int_attr(args, k) for k in ("N", "C", "HxW", "group"))
    require_rank("self", x, 2, 8)
    if x.view_dims[:2] != (n, c) or x.numel != n * c * hxw:
        raise OpArgError(
            f"self has shape {shape_str(x.view_dims)}; it must be [N, C, ...] = [{n}, {c}, ...] of N·C·HxW elements"
        )
    if group <= 0 or c % group:
        raise OpArgError(f"group is {group}; it must be positive and divide C = {c}")
    for name in ("gamma", "beta"):
        t = opt_tensor(args, name)
        if t is not None:
            require_shape(name, t, (c,), "C")
            require_same_dtype(name, t, "self", x)
    check_out(args, "out", x.data_type, x.view_dims, exact=True)
    for name in ("meanOut", "rstdOut"):
        _stat(args, name, (n, group), x.data_type)


SYNC_STATS: Final = frozenset({DT.ACL_FLOAT, DT.ACL_FLOAT16})  # Atlas A2/A3: no BFLOAT16 (the doc's note)
SYNC_TENSORS: Final = ("totalSum", "totalSquareSum", "sampleCount", "mean", "variance", "batchMean", "batchInvstd")
F = aclFormat
PRIVATE_FORMATS: Final = frozenset(
    {F.ACL_FORMAT_NC1HWC0, F.ACL_FORMAT_FRACTAL_Z, F.ACL_FORMAT_NC1HWC0_C04, F.ACL_FORMAT_FRACTAL_NZ,
     F.ACL_FORMAT_NDC1HWC0, F.ACL_FRACTAL_Z_3D, F.ACL_FORMAT_FRACTAL_NZ_C0_16, F.ACL_FORMAT_FRACTAL_NZ_C0_32,
     F.ACL_FORMAT_FRACTAL_NZ_C0_2, F.ACL_FORMAT_FRACTAL_NZ_C0_4, F.ACL_FORMAT_FRACTAL_NZ_C0_8}
)  # fmt: skip
"""The NPU's own layouts (5-D C0 blocks, fractal matrices), which operators that take ND refuse."""


def _sync_batch_norm_gather_stats(args: Args) -> None:
    """The op_api's checks in its order (norm/sync_batch_norm_gather_stats): dtypes, one dtype for the statistics and
    one for the two outputs, no private format on the inputs, ranks (2, 2, 1, 1, 1, 1, 1), the shapes [n, c], [n],
    [c]..., and n > 0 (c may be 0: nothing to compute)."""
    t = {name: tensor(args, name) for name in SYNC_TENSORS}
    for name, value in t.items():
        require_dtype(name, value.data_type, SYNC_STATS | {DT.ACL_INT32} if name == "sampleCount" else SYNC_STATS)
    for name in ("totalSquareSum", "mean", "variance"):
        require_same_dtype(name, t[name], "totalSum", t["totalSum"])
    require_same_dtype("batchInvstd", t["batchInvstd"], "batchMean", t["batchMean"])
    for name in SYNC_TENSORS[:5]:
        if t[name].format in PRIVATE_FORMATS:
            raise OpArgError(f"{name} has format {t[name].format.name}; it must be ND, NCL, NCHW or NCDHW")
    for name, value in t.items():
        require_rank(name, value, 2 if name in SYNC_TENSORS[:2] else 1)
    n, c = t["totalSum"].view_dims
    require_shape("totalSquareSum", t["totalSquareSum"], (n, c), "totalSum's")
    require_shape("sampleCount", t["sampleCount"], (n,), "totalSum's first axis")
    for name in SYNC_TENSORS[3:]:
        require_shape(name, t[name], (c,), "totalSum's second axis")
    if n == 0:
        raise OpArgError(f"totalSum has shape {shape_str(t['totalSum'].view_dims)}; its first axis must be > 0")


QUANT_OUT: Final = {DT.ACL_INT8: 1, DT.ACL_INT4: 1, DT.ACL_INT32: 8}


def _dynamic_quant(args: Args) -> None:
    x = tensor(args, "x")
    require_dtype("x", x.data_type, HALF)
    require_rank("x", x, 2, 8)
    smooth, group_index = opt_tensor(args, "smoothScalesOptional"), args.get("groupIndexOptional")
    if smooth is not None:
        require_same_dtype("smoothScalesOptional", smooth, "x", x)
        if smooth.view_dims[-1:] != x.view_dims[-1:] or len(smooth.view_dims) > (2 if group_index else 1):
            raise OpArgError(
                f"smoothScalesOptional has shape {shape_str(smooth.view_dims)}; it must end with x's last axis"
            )
    y = tensor(args, "yOut")
    require_dtype("yOut", y.data_type, frozenset(QUANT_OUT))
    if "dstType" in args:
        expected = {2: DT.ACL_INT8, 29: DT.ACL_INT4, 3: DT.ACL_INT32}.get(int_attr(args, "dstType"))
        if expected != y.data_type:
            raise OpArgError(
                f"dstType is {int_attr(args, 'dstType')}; with yOut {dtypes.name(y.data_type)} it must be 2, 29 or 3"
            )
    per = QUANT_OUT[y.data_type]
    last = x.view_dims[-1]
    if last % per or (y.data_type == DT.ACL_INT4 and last % 2):
        raise OpArgError(
            f"x's last axis {last} must be a multiple of {max(per, 2)} for yOut {dtypes.name(y.data_type)}"
        )
    require_shape("yOut", y, (*x.view_dims[:-1], last // per))
    for name in ("scaleOut", "offsetOut"):
        if args.get(name) is not None:
            check_out(args, name, DT.ACL_FLOAT, x.view_dims[:-1], exact=True)


def _logical(t: aclTensor, transpose: bool) -> tuple[int, ...]:
    """An int operand's logical shape (INT32 words hold eight int4 along the last axis), transposed if asked."""
    shape = t.view_dims
    if t.data_type == DT.ACL_INT32:
        shape = (*shape[:-1], shape[-1] * 8)
    return (*shape[:-2], shape[-1], shape[-2]) if transpose else shape


def _quant_matmul(args: Args) -> None:
    x1, x2 = tensor(args, "x1"), tensor(args, "x2")
    for name, t in (("x1", x1), ("x2", x2)):
        require_dtype(name, t.data_type, frozenset({DT.ACL_INT8, DT.ACL_INT32, DT.ACL_INT4}))
        require_rank(name, t, 2, 6)
    a, b = _logical(x1, flag(args, "transposeX1")), _logical(x2, flag(args, "transposeX2"))
    if a[-1] != b[-2]:
        raise OpArgError(f"x2 has shape {shape_str(x2.view_dims)}; its k {b[-2]} does not match x1's {a[-1]}")
    shape = matmul_shape(a, b)
    if shape is None:
        raise OpArgError(f"x2's batch {shape_str(b[:-2])} does not broadcast with x1's {shape_str(a[:-2])}")
    out = tensor(args, "out")
    require_dtype("out", out.data_type, frozenset({DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_INT8, DT.ACL_INT32}))
    require_shape("out", out, shape, "x1 @ x2")
    if "groupSize" in args:
        for name in ("yScale", "x1Offset"):
            if args[name] is not None:
                raise OpArgError(f"{name} is given: vnpu does not implement the T-CG mode of aclnnQuantMatmulV5")
        if args["yOffset"] is not None:
            _k_group(args, x1, x2, a[-2], a[-1], b[-1])
            return
        scales = [opt_tensor(args, name) for name in ("x1Scale", "x2Scale")]
        if int_attr(args, "groupSize") != 0 or all(t is not None and len(t.view_dims) >= 2 for t in scales):
            _per_block(args, x1, x2, a[-2], a[-1], b[-1])


def _k_group(args: Args, x1: aclTensor, x2: aclTensor, m: int, k: int, n: int) -> None:
    """QuantMatmulV5's K-G mode with yOffset (its docs' K-G constraints): x1 INT8 (m, k), x2 INT32 (k, n / 8) of
    packed int4, x1Scale FLOAT32 (m, 1), x2Scale UINT64/INT64 (ceil(k / 256), n), yOffset FLOAT32 (n), no bias or
    x2Offset, out FLOAT16/BFLOAT16, no transposes; groupSize [0, 0, 256]; k a multiple of 256 below 29576."""
    require_dtype("x1", x1.data_type, frozenset({DT.ACL_INT8}))
    require_dtype("x2", x2.data_type, frozenset({DT.ACL_INT32}))
    require_rank("x1", x1, 2, 2)
    require_rank("x2", x2, 2, 2)
    if flag(args, "transposeX1") or flag(args, "transposeX2"):
        raise OpArgError("the K-G mode takes transposeX1 and transposeX2 false")
    for name in ("bias", "x2Offset"):
        if args.get(name) is not None:
            raise OpArgError(f"{name} must be NULL in the K-G mode (yOffset given)")
    size = int_attr(args, "groupSize")
    if [(size >> 32) & 0xFFFF, (size >> 16) & 0xFFFF, size & 0xFFFF] != [0, 0, 256]:
        raise OpArgError(f"groupSize is {size}; the K-G mode takes [gsM, gsN, gsK] = [0, 0, 256]")
    if k % 256 or k >= 29576:
        raise OpArgError(f"the K-G mode needs k a multiple of 256 below 29576, is {k}")
    x1_scale, x2_scale, y_offset = (_needed(args, name, "K-G") for name in ("x1Scale", "x2Scale", "yOffset"))
    require_dtype("x1Scale", x1_scale.data_type, frozenset({DT.ACL_FLOAT}))
    require_dtype("x2Scale", x2_scale.data_type, frozenset({DT.ACL_UINT64, DT.ACL_INT64}))
    require_dtype("yOffset", y_offset.data_type, frozenset({DT.ACL_FLOAT}))
    require_shape("x1Scale", x1_scale, (m, 1), "(m, 1)")
    require_shape("x2Scale", x2_scale, (k // 256, n), "(k / 256, n)")
    require_shape("yOffset", y_offset, (n,), "(n)")
    require_dtype("out", tensor(args, "out").data_type, frozenset({DT.ACL_FLOAT16, DT.ACL_BF16}))


def _needed(args: Args, name: str, mode: str) -> aclTensor:
    """An optional tensor the mode needs: 161001 naming it when NULL."""
    found = opt_tensor(args, name)
    if found is None:
        raise OpArgError(f"{name} is NULL; the {mode} mode needs it", ACLNN_ERR_PARAM_NULLPTR)
    return found


def _per_block(args: Args, x1: aclTensor, x2: aclTensor, m: int, k: int, n: int) -> None:
    """QuantMatmulV5's G-B mode on A2/A3 (its docs' G-B constraints): x1 INT8 (m, k), x2 INT8 (n, k) transposed,
    x1Scale FLOAT32 (m, ceil(k / 128)), x2Scale FLOAT32 (ceil(n / 128), ceil(k / 128)), bias FLOAT32 (n) or none,
    out BFLOAT16; groupSize [gsM, gsN, gsK] = [1, 128, 128] (a 0 inferred from the scales' shapes); k a multiple of
    512, n of 256."""
    for name, t in (("x1", x1), ("x2", x2)):
        require_dtype(name, t.data_type, frozenset({DT.ACL_INT8}))
        require_rank(name, t, 2, 2)
    if flag(args, "transposeX1") or not flag(args, "transposeX2"):
        raise OpArgError("the G-B mode takes transposeX1 false and transposeX2 true")
    if args.get("x2Offset") is not None:
        raise OpArgError("x2Offset must be NULL in the G-B mode")
    x1_scale, x2_scale = _needed(args, "x1Scale", "G-B"), _needed(args, "x2Scale", "G-B")
    require_dtype("x1Scale", x1_scale.data_type, frozenset({DT.ACL_FLOAT}))
    require_dtype("x2Scale", x2_scale.data_type, frozenset({DT.ACL_FLOAT}))
    size = int_attr(args, "groupSize")
    given = [(size >> 32) & 0xFFFF, (size >> 16) & 0xFFFF, size & 0xFFFF]
    one, two = x1_scale.view_dims or (1,), x2_scale.view_dims or (1,)  # (m, k-blocks), (n-blocks, k-blocks)
    inferred = [-(-m // max(one[0], 1)), -(-n // max(two[0], 1)), -(-k // max(one[-1], 1))]
    group = [g or i for g, i in zip(given, inferred, strict=True)]
    if group != [1, 128, 128]:
        raise OpArgError(f"groupSize [gsM, gsN, gsK] is {group}; the G-B mode takes [1, 128, 128]")
    if k % 512 or n % 256:
        raise OpArgError(f"the G-B mode needs k a multiple of 512 (is {k}) and n of 256 (is {n})")
    require_shape("x1Scale", x1_scale, (m, -(-k // 128)), "(m, ceil(k / 128))")
    require_shape("x2Scale", x2_scale, (-(-n // 128), -(-k // 128)), "(ceil(n / 128), ceil(k / 128))")
    if args.get("bias") is not None:
        bias = tensor(args, "bias")
        require_dtype("bias", bias.data_type, frozenset({DT.ACL_FLOAT}))
        require_shape("bias", bias, (n,), "(n)")
    require_dtype("out", tensor(args, "out").data_type, frozenset({DT.ACL_BF16}))


def _weight_quant(args: Args) -> None:
    x, weight = tensor(args, "x"), tensor(args, "weight")
    require_dtype("x", x.data_type, HALF)
    require_rank("x", x, 2)
    require_dtype("weight", weight.data_type, frozenset({DT.ACL_INT8, DT.ACL_INT4, DT.ACL_INT32}))
    require_rank("weight", weight, 2)
    per = 8 if weight.data_type == DT.ACL_INT32 else 1
    k, n = weight.view_dims[0], weight.view_dims[1] * per
    if x.view_dims[1] != k:
        raise OpArgError(f"weight has shape {shape_str(weight.view_dims)}; its k {k} must be x's {x.view_dims[1]}")
    group = int_attr(args, "antiquantGroupSize")
    if group and (group % 32 or not 32 <= group <= k - 1):
        raise OpArgError(f"antiquantGroupSize is {group}; it must be 0 or a multiple of 32 in [32, {k - 1}]")
    y = tensor(args, "y")
    require_dtype("y", y.data_type, HALF | {DT.ACL_INT8})
    require_shape("y", y, (x.view_dims[0], n))


def _top_k_top_p(args: Args) -> None:
    logits = tensor(args, "logits")
    require_dtype("logits", logits.data_type, NORM)
    require_rank("logits", logits, 2)
    batch = logits.view_dims[0]
    for name, allowed in (("p", frozenset({logits.data_type})), ("k", frozenset({DT.ACL_INT32}))):
        t = opt_tensor(args, name)
        if t is not None:
            require_dtype(name, t.data_type, allowed)
            require_shape(name, t, (batch,), "one per row of logits")
    check_out(args, "out", logits.data_type, logits.view_dims, exact=True)


TABLE: Final[dict[str, Row]] = {
    "RmsNorm": nullable(Checked(_rms_norm, doc="norm/rms_norm/docs/aclnnRmsNorm.md"), "rstdOut"),
    "AddRmsNorm": nullable(Checked(_add_rms_norm, doc="norm/add_rms_norm/docs"), "rstdOut", "xOut"),
    "LayerNorm": Checked(_layer_norm, doc="norm/layer_norm_v4/docs/aclnnLayerNorm&aclnnLayerNormWithImplMode.md"),
    "LayerNormWithImplMode": Checked(_layer_norm, doc="norm/layer_norm_v4/docs"),
    "GroupNorm": nullable(
        Checked(_group_norm, doc="norm/group_norm/docs/aclnnGroupNorm.md"), "gamma", "beta", "meanOut", "rstdOut"
    ),
    "SyncBatchNormGatherStats": Checked(
        _sync_batch_norm_gather_stats, doc="norm/sync_batch_norm_gather_stats/docs/aclnnSyncBatchNormGatherStats.md"
    ),
    "DynamicQuant": Checked(_dynamic_quant, doc="quant/dynamic_quant/docs/aclnnDynamicQuant.md"),
    "DynamicQuantV2": nullable(Checked(_dynamic_quant, doc="quant/dynamic_quant_v2/docs"), "offsetOut"),
    "QuantMatmulV4": cube(
        Checked(_quant_matmul, doc="matmul/quant_batch_matmul_v3/docs/aclnnQuantMatmulV4.md"), "offset", "bias"
    ),
    "QuantMatmulV5": cube(
        Checked(_quant_matmul, doc="matmul/quant_batch_matmul_v4/docs/aclnnQuantMatmulV5.md"),
        "x1Scale",
        "yScale",
        "x1Offset",
        "x2Offset",
        "yOffset",
        "bias",
    ),
    "WeightQuantBatchMatmulV2": cube(Checked(_weight_quant, doc="matmul/weight_quant_batch_matmul_v2/docs")),
    "ApplyTopKTopP": nullable(Checked(_top_k_top_p, doc="index/apply_top_k_top_p_with_sorted/docs"), "p", "k"),
}
