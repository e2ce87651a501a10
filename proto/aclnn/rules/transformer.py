"""The rest of ops-transformer vnpu implements: the paged KV-cache write (ScatterPaKvCache), rotary position
embeddings (RotaryPositionEmbedding, ApplyRotaryPosEmb, RopeWithSinCosCache, InterleaveRope), MoE routing
(MoeGatingTopKSoftmax) and grouped matmul (GroupedMatmulV4/V5).
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
    broadcast_shapes,
    check_out,
    int_attr,
    ints,
    opt_tensor,
    require_dtype,
    require_in,
    require_range,
    require_rank,
    require_same_dtype,
    require_shape,
    shape_str,
    tensor,
    tensors,
    text,
)

FLOATS3: Final = frozenset({DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_FLOAT})
HALF: Final = frozenset({DT.ACL_FLOAT16, DT.ACL_BF16})
INDEX: Final = frozenset({DT.ACL_INT32, DT.ACL_INT64})


def _kv_cache(args: Args) -> None:
    key, key_cache, slots = tensor(args, "key"), tensor(args, "keyCacheRef"), tensor(args, "slotMapping")
    require_dtype("key", key.data_type, HALF | {DT.ACL_INT8})
    require_same_dtype("keyCacheRef", key_cache, "key", key)
    require_rank("key", key, 3)
    require_rank("keyCacheRef", key_cache, 4)
    require_dtype("slotMapping", slots.data_type, INDEX)
    require_rank("slotMapping", slots, 1)
    if slots.view_dims[0] != key.view_dims[0]:
        raise OpArgError(f"slotMapping has {slots.view_dims[0]} slots; key has {key.view_dims[0]} tokens")
    mode = text(args, "cacheModeOptional") or "Norm"
    require_in("cacheModeOptional", mode, ("Norm", "PA_NZ"))
    scatter = text(args, "scatterModeOptional") or "None"
    require_in("scatterModeOptional", scatter, ("None",))
    for name in ("compressLensOptional", "compressSeqOffsetOptional", "seqLensOptional"):
        if args[name] is not None:
            raise OpArgError(f"{name} is given: vnpu does not implement the compressed cache scenarios")
    # stridesOptional and offsetsOptional take effect only with scatterMode "Nct" (its docs), refused above: ignored
    value, value_cache = tensor(args, "value"), tensor(args, "valueCacheRef")
    if value.numel and value_cache.numel:
        require_same_dtype("valueCacheRef", value_cache, "key", key)
        require_same_dtype("value", value, "key", key)
        require_rank("value", value, 3)
        require_rank("valueCacheRef", value_cache, 4)
        if value.view_dims[0] != key.view_dims[0]:
            raise OpArgError(f"value has {value.view_dims[0]} tokens; key has {key.view_dims[0]}")


def _rope_shapes(x_name: str, x: aclTensor, cos: aclTensor, sin: aclTensor) -> None:
    require_same_dtype("cos", cos, x_name, x)
    require_same_dtype("sin", sin, x_name, x)
    if cos.view_dims != sin.view_dims:
        raise OpArgError(f"sin has shape {shape_str(sin.view_dims)}; it must be cos's {shape_str(cos.view_dims)}")
    if cos.view_dims[-1:] != x.view_dims[-1:] or broadcast_shapes(x.view_dims, cos.view_dims) != x.view_dims:
        have, want = shape_str(cos.view_dims), shape_str(x.view_dims)
        raise OpArgError(f"cos has shape {have}, which does not broadcast to {x_name}'s {want}")
    if x.view_dims[-1] % 2:
        raise OpArgError(f"{x_name}'s last axis D = {x.view_dims[-1]} must be even")


def _rotary(args: Args) -> None:
    x = tensor(args, "x")
    require_dtype("x", x.data_type, FLOATS3)
    require_rank("x", x, 4)
    mode = int_attr(args, "mode")
    require_in("mode", mode, (0, 1, 2, 3))
    _rope_shapes("x", x, tensor(args, "cos"), tensor(args, "sin"))
    if mode == 2 and x.view_dims[-1] % 4:
        raise OpArgError(f"mode 2 (quarter) needs D a multiple of 4; x's D is {x.view_dims[-1]}")
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


def _apply_rotary(args: Args) -> None:
    q, k = tensor(args, "queryRef"), tensor(args, "keyRef")
    require_dtype("queryRef", q.data_type, FLOATS3)
    require_same_dtype("keyRef", k, "queryRef", q)
    require_rank("queryRef", q, 4)
    require_rank("keyRef", k, 4)
    require_in("layout", int_attr(args, "layout"), (1,))
    if q.view_dims[:2] != k.view_dims[:2] or q.view_dims[3] != k.view_dims[3]:
        raise OpArgError(f"keyRef has shape {shape_str(k.view_dims)}; it must be (B, S, Nk, D) with queryRef's B, S, D")
    cos = tensor(args, "cos")
    _rope_shapes("queryRef", q, cos, tensor(args, "sin"))


def _rope_cache(args: Args) -> None:
    positions, cache = tensor(args, "positions"), tensor(args, "cosSinCache")
    query, key = tensor(args, "queryIn"), tensor(args, "keyIn")
    require_dtype("positions", positions.data_type, frozenset({DT.ACL_INT64}))
    require_dtype("queryIn", query.data_type, FLOATS3)
    require_same_dtype("keyIn", key, "queryIn", query)
    require_same_dtype("cosSinCache", cache, "queryIn", query)
    require_rank("cosSinCache", cache, 2)
    head = int_attr(args, "headSize")
    rotary = cache.view_dims[1]
    if head <= 0 or rotary > head or rotary % 2:
        raise OpArgError(f"headSize is {head}; it must be positive and at least cosSinCache's rotary dim {rotary}")
    sections = ints(args, "mropeSection")
    rows = 3 if sections else 1
    tokens = query.view_dims[0]
    want = (rows, tokens) if sections else (tokens,)
    if positions.view_dims != want:
        raise OpArgError(f"positions has shape {shape_str(positions.view_dims)}; it must be {shape_str(want)}")
    if sections and sum(sections) != rotary // 2:
        raise OpArgError(f"mropeSection {list(sections)} must sum to rotaryDim / 2 = {rotary // 2}")
    for name, t in (("queryIn", query), ("keyIn", key)):
        require_rank(name, t, 2)
        if t.view_dims[0] != tokens or t.view_dims[1] % head:
            raise OpArgError(f"{name} has shape {shape_str(t.view_dims)}; it must be (T = {tokens}, heads · {head})")
    check_out(args, "queryOut", query.data_type, query.view_dims, exact=True)
    check_out(args, "keyOut", key.data_type, key.view_dims, exact=True)


def _interleave(args: Args) -> None:
    x = tensor(args, "x")
    require_dtype("x", x.data_type, HALF)
    require_rank("x", x, 4)
    _rope_shapes("x", x, tensor(args, "cos"), tensor(args, "sin"))
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


def _moe_gating(args: Args) -> None:
    x = tensor(args, "x")
    require_dtype("x", x.data_type, FLOATS3)
    require_rank("x", x, 2, 3)
    experts, k = x.view_dims[-1], int_attr(args, "k")
    require_range("k", k, 0, min(experts, 1024))
    finished = opt_tensor(args, "finishedOptional")
    if finished is not None:
        require_dtype("finishedOptional", finished.data_type, frozenset({DT.ACL_BOOL}))
        require_shape("finishedOptional", finished, x.view_dims[:-1], "x's rows")
    shape = (*x.view_dims[:-1], k)
    check_out(args, "yOut", x.data_type, shape, exact=True)
    for name in ("expertIdxOut", "rowIdxOut"):
        check_out(args, name, DT.ACL_INT32, shape, frozenset({DT.ACL_INT32}), exact=True)


def _grouped_matmul(args: Args) -> None:
    xs, ws, outs = tensors(args, "x"), tensors(args, "weight"), tensors(args, "out")
    for name, found in (("x", xs), ("weight", ws), ("out", outs)):
        if not found:
            raise OpArgError(f"{name} is empty; it must hold at least one tensor")
    require_in("splitItem", int_attr(args, "splitItem"), (0, 1, 2, 3))
    require_in("groupType", int_attr(args, "groupType"), (-1, 0, 2))
    require_in("groupListType", int_attr(args, "groupListType"), (0, 1, 2))
    if int_attr(args, "actType") != 0:
        raise OpArgError(f"actType is {int_attr(args, 'actType')}: vnpu implements no fused activation (0 only)")
    for name in ("activationFeatureOutOptional", "dynQuantScaleOutOptional"):
        if tensors(args, name):
            raise OpArgError(f"{name} is given; the documentation allows only null")
    floats = FLOATS3
    for i, x in enumerate(xs):
        require_dtype(f"x[{i}]", x.data_type, floats | {DT.ACL_INT8})
    for i, w in enumerate(ws):
        require_dtype(f"weight[{i}]", w.data_type, floats | {DT.ACL_INT8, DT.ACL_INT4, DT.ACL_INT32})
        require_rank(f"weight[{i}]", w, 2, 3)
    group_list = opt_tensor(args, "groupListOptional")
    if group_list is not None:
        require_dtype("groupListOptional", group_list.data_type, frozenset({DT.ACL_INT64}))
    if len(ws) > 1 and len(xs) not in (1, len(ws)):
        raise OpArgError(f"x holds {len(xs)} tensors and weight {len(ws)}; x must hold 1 or one per weight")
    if dtypes.is_float(xs[0].data_type) and ws[0].data_type in floats and ws[0].data_type != xs[0].data_type:
        raise OpArgError(f"weight[0] has dtype {dtypes.name(ws[0].data_type)}; a float weight must be x's")


TABLE: Final[dict[str, Row]] = {
    "ScatterPaKvCache": Checked(_kv_cache, doc="attention/scatter_pa_kv_cache/docs/aclnnScatterPaKvCache.md"),
    "RotaryPositionEmbedding": Checked(_rotary, doc="posembedding/rotary_position_embedding/docs"),
    "ApplyRotaryPosEmb": Checked(_apply_rotary, doc="posembedding/apply_rotary_pos_emb/docs"),
    "RopeWithSinCosCache": nullable(
        Checked(_rope_cache, doc="posembedding/rope_with_sin_cos_cache/docs"), "mropeSection"
    ),
    "InterleaveRope": Checked(_interleave, doc="posembedding/interleave_rope/README.md"),
    "MoeGatingTopKSoftmax": Checked(_moe_gating, doc="moe/moe_gating_top_k_softmax/docs"),
    "GroupedMatmulV4": cube(Checked(_grouped_matmul, doc="gmm/grouped_matmul/docs/aclnnGroupedMatmulV4.md")),
    "GroupedMatmulV5": cube(Checked(_grouped_matmul, doc="gmm/grouped_matmul/docs/aclnnGroupedMatmulV5.md")),
}
