"""aclnnGroupedMatmulV4/V5: a matmul per group, for MoE experts (hicann/ops-transformer gmm/grouped_matmul).

y_i = x_i @ weight_i + bias_i for g groups, the groups given as tensor lists or cut out of single tensors by
groupListOptional along the grouped axis (groupType 0: M, the tokens; 2: K). groupListType says how groupList
counts: 0 cumulative ends, 1 per-group sizes, 2 rows of (group id, size) whose second column is the size.
splitItem 0/1 writes one output tensor per group, 2/3 one tensor holding them all.

Per group (docs/aclnnGroupedMatmulV4.md, V5.md; the V5 header adds tuningConfigOptional, a tuning hint):
- float: y = x @ w + bias (FLOAT16 with FLOAT16 bias, BFLOAT16 with FLOAT32 bias, FLOAT32), float32 accumulation;
- antiquant (x float, weight INT8/INT4): y = x @ ((w + antiquantOffset) · antiquantScale) + bias, the dequantized
  weight rounded to x's dtype (the cube's operand); scales per channel [n] or per group [G, n] (single-tensor
  weight: [g, n] / [g, G, n]);
- quant (x and weight INT8): y = (x @ w [+ INT32 bias]) · scale [· perTokenScale] [+ float bias] [+ offset]; an INT8
  out saturates, an INT32 out is x @ w + bias unscaled; UINT64/INT64 scales are TransQuantParamV2's packed form.
Rows of a single output that no group covers (groupList summing to less than M) are left untouched.
vnpu refuses actType ≠ 0 (fused activations), groupType 1 (N axis, unsupported on A2/A3 too) and the
activation/dynamic-quant outputs (documented as "nullptr only").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from server.npu.ops.common import int4
from server.npu.ops.common.errors import invalid, unsupported
from server.npu.ops.common.numeric import is_float, store, wide
from server.npu.ops.common.quant import dequant_scale, saturate

Array = np.ndarray
Tensors = Sequence[Array] | None
OP = "GroupedMatmulV4"


def _sizes(op: str, group_list: Array | None, kind: int) -> list[int] | None:
    if group_list is None:
        return None
    values = np.asarray(group_list).astype(np.int64)
    if kind == 0:
        flat = values.reshape(-1)
        if (np.diff(flat) < 0).any() or (flat.size and flat[0] < 0):
            raise invalid(op, "groupListOptional", f"{flat.tolist()} is not non-decreasing (groupListType 0)")
        return [int(v) for v in np.diff(np.concatenate([[0], flat]))]
    if kind == 1:
        sizes = values.reshape(-1)
    elif kind == 2:
        if values.ndim != 2 or values.shape[1] != 2:
            raise invalid(op, "groupListOptional", f"shape {values.shape}: groupListType 2 takes rows of 2")
        sizes = values[:, 1]
    else:
        raise invalid(op, "groupListType", f"is {kind}; it must be 0, 1 or 2")
    if (sizes < 0).any():
        raise invalid(op, "groupListOptional", f"{sizes.tolist()} has a negative size")
    return [int(s) for s in sizes]


def _pick(tensors: Tensors, i: int, groups: int) -> Array | None:
    """Group i's tensor of a per-group list: one tensor per group, or one tensor whose axis 0 is the group."""
    if tensors is None or len(tensors) == 0:
        return None
    if len(tensors) == groups:
        return tensors[i]
    picked: Array = tensors[0][i]
    return picked


def _antiquant(w: Array, scale: Array, offset: Array | None, dtype: np.dtype[Any]) -> Array:
    k, n = w.shape
    s = wide(scale).reshape(-1, n)
    shift = None if offset is None else wide(offset).reshape(-1, n)
    if k % s.shape[0]:
        raise invalid(OP, "antiquantScaleOptional", f"{s.shape[0]} groups do not divide k = {k}")
    repeat = k // s.shape[0]
    dq = w.astype(np.float32)
    if shift is not None:
        dq = dq + np.repeat(shift, repeat, axis=0)
    operand: Array = (dq * np.repeat(s, repeat, axis=0)).astype(dtype).astype(np.float32)
    return operand


def _group(
    x: Array, w: Array, bias: Array | None, scale: Array | None, offset: Array | None, aq_scale: Array | None,
    aq_offset: Array | None, per_token: Array | None, out_dtype: np.dtype[Any],
) -> Array:  # fmt: skip
    """One group's y (float32, or the integer out dtype's values)."""
    if x.shape[-1] != w.shape[0]:
        raise invalid(OP, "weight", f"a group's weight {w.shape} does not multiply its x {x.shape}")
    quantized_w = w.dtype in (np.int8, np.int32) or w.dtype == int4.INT4
    if is_float(x.dtype):
        if quantized_w:
            if aq_scale is None:
                raise invalid(OP, "antiquantScaleOptional", "is required for an integer weight with a float x")
            weights = int4.unpack(w) if w.dtype != np.int8 else w
            operand = _antiquant(weights, aq_scale, aq_offset, x.dtype)
        else:
            operand = wide(w)
        y: Array = np.matmul(wide(x), operand)
        return y if bias is None else y + wide(bias)
    a = (int4.unpack(x) if x.dtype != np.int8 else x).astype(np.int64)
    b = (int4.unpack(w) if w.dtype != np.int8 else w).astype(np.int64)
    acc: Array = np.matmul(a, b)
    integer_bias = bias is not None and bias.dtype == np.int32
    if integer_bias and bias is not None:
        acc = acc + bias.astype(np.int64)
    if out_dtype == np.int32 or scale is None:
        return acc
    factor, packed_offset = dequant_scale(scale)
    result: Array = acc.astype(np.float32) * factor.reshape(-1)
    if per_token is not None:
        result = result * wide(per_token).reshape(-1, 1)
    if bias is not None and not integer_bias:
        result = result + wide(bias)
    shift = offset if offset is not None else packed_offset
    if shift is not None and out_dtype == np.int8:
        result = result + wide(shift).reshape(-1)
    return result


def _write(target: Array, values: Array) -> None:
    if target.dtype in (np.int8, np.int32) and values.dtype != target.dtype:
        target[...] = saturate(values, target.dtype) if target.dtype == np.int8 else values.astype(np.int32)
    else:
        store(target, values)


def grouped_matmul(
    x: Sequence[Array], weight: Sequence[Array], bias: Tensors, scale: Tensors, offset: Tensors,
    antiquant_scale: Tensors, antiquant_offset: Tensors, per_token: Tensors, group_list: Array | None,
    split_item: int, group_type: int, group_list_type: int, act_type: int, out: Sequence[Array],
) -> None:  # fmt: skip
    """The shared body of GroupedMatmulV4/V5 (see the module)."""
    if act_type != 0:
        raise unsupported(OP, "actType", f"fused activation {act_type}")
    if group_type not in (-1, 0, 2):
        raise unsupported(OP, "groupType", f"groupType {group_type} (N-axis grouping)")
    if split_item not in (0, 1, 2, 3):
        raise invalid(OP, "splitItem", f"is {split_item}; it must be 0, 1, 2 or 3")
    sizes = _sizes(OP, group_list, group_list_type)
    if group_type == -1 or len(x) > 1:
        pairs = list(zip(x, weight, strict=False))
        if len(x) != len(weight):
            raise invalid(OP, "weight", f"has {len(weight)} tensors; x has {len(x)}")
    else:
        if sizes is None:
            raise invalid(OP, "groupListOptional", f"is required to split a single tensor (groupType {group_type})")
        bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        single = x[0]
        axis_len = single.shape[0] if group_type == 0 else single.shape[1]
        if bounds[-1] > axis_len:
            raise invalid(OP, "groupListOptional", f"covers {int(bounds[-1])} rows; x has {axis_len}")
        whole_w = len(weight) == 1
        pairs = []
        for i in range(len(sizes)):
            lo, hi = int(bounds[i]), int(bounds[i + 1])
            part = single[lo:hi] if group_type == 0 else single[:, lo:hi]
            w = (weight[0][i] if weight[0].ndim == 3 else weight[0][lo:hi]) if whole_w else weight[i]
            pairs.append((part, w))
    groups = len(pairs)
    results = []
    for i, (xi, wi) in enumerate(pairs):
        token_scale = None
        if per_token is not None and len(per_token) and sizes is not None:
            lo = int(np.sum(sizes[:i]))
            token_scale = per_token[0][lo : lo + xi.shape[0]]
        results.append(_group(
            xi, wi, _pick(bias, i, groups), _pick(scale, i, groups), _pick(offset, i, groups),
            _pick(antiquant_scale, i, groups), _pick(antiquant_offset, i, groups), token_scale, out[0].dtype,
        ))  # fmt: skip
    if len(out) == groups and (split_item in (0, 1) or groups == 1):
        for target, values in zip(out, results, strict=True):
            _write(target, values.reshape(target.shape))
    elif group_type == 2:
        _write(out[0], np.stack(results).reshape(out[0].shape))
    else:
        start = 0
        for values in results:
            _write(out[0][start : start + values.shape[0]], values)
            start += values.shape[0]


def grouped_matmul_v4(
    x: list[Array], weight: list[Array], biasOptional: Tensors, scaleOptional: Tensors, offsetOptional: Tensors,
    antiquantScaleOptional: Tensors, antiquantOffsetOptional: Tensors, perTokenScaleOptional: Tensors,
    groupListOptional: Array | None, activationInputOptional: Tensors, activationQuantScaleOptional: Tensors,
    activationQuantOffsetOptional: Tensors, splitItem: int, groupType: int, groupListType: int, actType: int,
    out: list[Array], activationFeatureOutOptional: Tensors, dynQuantScaleOutOptional: Tensors,
    workspace: Array | None,
) -> None:  # fmt: skip
    """y_i = x_i @ weight_i (+ bias_i, quantization) per group (see the module)."""
    grouped_matmul(
        x, weight, biasOptional, scaleOptional, offsetOptional, antiquantScaleOptional, antiquantOffsetOptional,
        perTokenScaleOptional, groupListOptional, splitItem, groupType, groupListType, actType, out,
    )  # fmt: skip


def grouped_matmul_v5(
    x: list[Array], weight: list[Array], biasOptional: Tensors, scaleOptional: Tensors, offsetOptional: Tensors,
    antiquantScaleOptional: Tensors, antiquantOffsetOptional: Tensors, perTokenScaleOptional: Tensors,
    groupListOptional: Array | None, activationInputOptional: Tensors, activationQuantScaleOptional: Tensors,
    activationQuantOffsetOptional: Tensors, splitItem: int, groupType: int, groupListType: int, actType: int,
    tuningConfigOptional: Sequence[int] | None, out: list[Array], activationFeatureOutOptional: Tensors,
    dynQuantScaleOutOptional: Tensors, workspace: Array | None,
) -> None:  # fmt: skip
    """GroupedMatmulV4 with a tuning hint (tuningConfigOptional, ignored): see the module."""
    grouped_matmul(
        x, weight, biasOptional, scaleOptional, offsetOptional, antiquantScaleOptional, antiquantOffsetOptional,
        perTokenScaleOptional, groupListOptional, splitItem, groupType, groupListType, actType, out,
    )  # fmt: skip


FUNCTIONS: dict[str, Callable[..., None]] = {
    "GroupedMatmulV4": grouped_matmul_v4,
    "GroupedMatmulV5": grouped_matmul_v5,
}
