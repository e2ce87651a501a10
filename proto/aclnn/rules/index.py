"""Index families of ops-nn index/: reads (Embedding, Gather, IndexSelect, Index) and writes (the scatters,
IndexPutImpl, index copies, IndexAdd).

Phase 1 checks what the arguments' metadata decide: index dtypes (INT32/INT64, BOOL masks where torch takes
them), ranks and shapes, dims in range, out shapes. Index values live in device memory: the kernel checks them
when it runs (161002 naming the index argument).
"""

from __future__ import annotations

from typing import Final

from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import ALL, DT
from proto.aclnn.entry import Row
from proto.aclnn.host import aclTensor
from proto.aclnn.rules.base import (
    Checked,
    broadcast_all,
    broadcast_shapes,
    check_out,
    int_attr,
    require_dtype,
    require_rank,
    require_same_dtype,
    shape_str,
    tensor,
    tensors,
    with_axis,
    wrap_dim,
)

INDEX: Final = frozenset({DT.ACL_INT32, DT.ACL_INT64})
MASKS: Final = INDEX | {DT.ACL_BOOL, DT.ACL_UINT8}


def _embedding(args: Args) -> None:
    weight, indices = tensor(args, "weight"), tensor(args, "indices")
    require_rank("weight", weight, 2)
    require_dtype("weight", weight.data_type, ALL)
    require_dtype("indices", indices.data_type, INDEX)
    check_out(args, "out", weight.data_type, (*indices.view_dims, weight.view_dims[1]), exact=True)


def _gather(args: Args) -> None:
    x, index = tensor(args, "self"), tensor(args, "index")
    require_dtype("self", x.data_type, ALL)
    require_dtype("index", index.data_type, INDEX)
    rank = len(x.view_dims)
    d = wrap_dim("dim", int_attr(args, "dim"), rank)
    if len(index.view_dims) != rank:
        raise OpArgError(f"index has {len(index.view_dims)} dims; it must have self's {rank}")
    for a, (i, s) in enumerate(zip(index.view_dims, x.view_dims, strict=True)):
        if a != d and i > s:
            raise OpArgError(f"index has {i} elements on axis {a}; it must be at most self's {s}")
    check_out(args, "out", x.data_type, index.view_dims, exact=True)


def _index_select(args: Args) -> None:
    x, index = tensor(args, "self"), tensor(args, "index")
    require_dtype("self", x.data_type, ALL)
    require_rank("self", x, 0, 8)
    require_dtype("index", index.data_type, INDEX)
    require_rank("index", index, 0, 1)
    d = wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
    shape = with_axis(x.view_dims, d, index.numel) if x.view_dims else (index.numel,)
    check_out(args, "out", x.data_type, shape if x.view_dims else tensor(args, "out").view_dims, exact=True)


def _advanced(x_name: str, x: aclTensor, entries: tuple[aclTensor, ...]) -> tuple[int, ...] | None:
    """The indexed shape of torch's advanced indexing (None when a mask makes it data-dependent)."""
    rank = max(len(x.view_dims), 1)
    if len(entries) > rank:
        raise OpArgError(f"indices holds {len(entries)} tensors; {x_name} has {rank} axes")
    shape = x.view_dims or (1,)
    picked: list[int] = []
    axis, masked = 0, False
    for i, t in enumerate(entries):
        require_dtype(f"indices[{i}]", t.data_type, MASKS)
        if t.numel == 0 and len(t.view_dims) == 1:
            axis += 1
            continue
        if t.data_type in (DT.ACL_BOOL, DT.ACL_UINT8):
            if t.view_dims != shape[axis : axis + len(t.view_dims)]:
                have, want = shape_str(t.view_dims), shape_str(shape[axis : axis + len(t.view_dims)])
                raise OpArgError(f"indices[{i}] is a mask of shape {have}; it must match {x_name}'s axes {want}")
            masked, axis = True, axis + len(t.view_dims)
            continue
        picked.append(axis)
        axis += 1
    if masked:
        return None
    integer = [t for t in entries if t.data_type in INDEX and not (t.numel == 0 and len(t.view_dims) == 1)]
    if not integer:
        return shape
    joined = broadcast_all(*((f"indices[{i}]", t) for i, t in enumerate(integer)))
    rest = [s for a, s in enumerate(shape) if a not in picked]
    if picked == list(range(picked[0], picked[-1] + 1)):
        return (*rest[: picked[0]], *joined, *rest[picked[0] :])
    return (*joined, *rest)


def _index(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, ALL)
    shape = _advanced("self", x, tensors(args, "indices"))
    out = tensor(args, "out")
    check_out(args, "out", x.data_type, shape if shape is not None else out.view_dims, exact=True)


def _index_put(args: Args) -> None:
    ref, values = tensor(args, "selfRef"), tensor(args, "values")
    require_dtype("selfRef", ref.data_type, ALL)
    require_rank("selfRef", ref, 0, 8)
    require_same_dtype("values", values, "selfRef", ref)
    shape = _advanced("selfRef", ref, tensors(args, "indices"))
    if shape is not None and broadcast_shapes(shape, values.view_dims) != shape:
        raise OpArgError(
            f"values has shape {shape_str(values.view_dims)}, which does not broadcast to {shape_str(shape)}"
        )


def _scatter_update(args: Args) -> None:
    data, indices, updates = tensor(args, "data"), tensor(args, "indices"), tensor(args, "updates")
    require_rank("data", data, 2, 8)
    require_same_dtype("updates", updates, "data", data)
    require_dtype("indices", indices.data_type, INDEX)
    require_rank("indices", indices, 0, 2)
    if len(indices.view_dims) == 2 and indices.view_dims[1] != 2:
        raise OpArgError(f"indices has shape {shape_str(indices.view_dims)}; a 2-D indices has rows of 2")
    rank = len(data.view_dims)
    axis = int_attr(args, "axis")
    if not -rank < axis < rank or axis % rank == 0:
        raise OpArgError(f"axis is {axis}; it must lie in ({-rank}, {rank}) and not be 0")
    if len(updates.view_dims) != rank:
        raise OpArgError(f"updates has {len(updates.view_dims)} dims; it must have data's {rank}")
    rows = indices.view_dims[0] if indices.view_dims else 1
    a = axis % rank
    for i, (u, s) in enumerate(zip(updates.view_dims, data.view_dims, strict=True)):
        ok = (u == rows and u <= s) if i == 0 else (u <= s if i == a else u == s)
        if not ok:
            raise OpArgError(
                f"updates has shape {shape_str(updates.view_dims)}; it does not fit data {shape_str(data.view_dims)}"
            )


def _scatter_nd_update(args: Args) -> None:
    var, indices, updates = tensor(args, "varRef"), tensor(args, "indices"), tensor(args, "updates")
    require_rank("varRef", var, 1, 8)
    require_dtype("indices", indices.data_type, INDEX)
    require_rank("indices", indices, 2, 8)
    k = indices.view_dims[-1]
    if not 1 <= k <= min(7, len(var.view_dims)):
        raise OpArgError(f"indices' last axis is {k}; it must be 1 to {min(7, len(var.view_dims))} (varRef's rank)")
    require_same_dtype("updates", updates, "varRef", var)
    want = (*indices.view_dims[:-1], *var.view_dims[k:])
    if updates.view_dims != want:
        raise OpArgError(f"updates has shape {shape_str(updates.view_dims)}; it must be {shape_str(want)}")


def _index_copy(out_name: str) -> Checked:
    def checks(args: Args) -> None:
        ref, index, source = tensor(args, "selfRef"), tensor(args, "index"), tensor(args, "source")
        require_dtype("index", index.data_type, INDEX)
        require_rank("index", index, 0, 1)
        require_same_dtype("source", source, "selfRef", ref)
        d = wrap_dim("dim", int_attr(args, "dim"), len(ref.view_dims))
        want = with_axis(ref.view_dims, d, index.numel) if ref.view_dims else (index.numel,)
        if source.view_dims != want and not (not ref.view_dims and source.numel == index.numel):
            raise OpArgError(f"source has shape {shape_str(source.view_dims)}; it must be {shape_str(want)}")
        if out_name != "selfRef":
            check_out(args, out_name, ref.data_type, ref.view_dims, exact=True)

    return Checked(checks, doc="index/scatter_update/docs/aclnnIndexCopy&aclnnInplaceIndexCopy.md")


def _scatter(value: str) -> Checked:
    def checks(args: Args) -> None:
        x, index = tensor(args, "self"), tensor(args, "index")
        require_dtype("self", x.data_type, ALL)
        require_dtype("index", index.data_type, INDEX)
        rank = len(x.view_dims)
        d = wrap_dim("dim", int_attr(args, "dim"), rank)
        if len(index.view_dims) != rank:
            raise OpArgError(f"index has {len(index.view_dims)} dims; it must have self's {rank}")
        if "reduce" in args and int_attr(args, "reduce") not in (0, 1, 2):
            raise OpArgError(f"reduce is {int_attr(args, 'reduce')}; it must be 0 (none), 1 (add) or 2 (multiply)")
        src = args.get(value)
        if isinstance(src, aclTensor):
            require_same_dtype(value, src, "self", x)
            for a, (i, s, v) in enumerate(zip(index.view_dims, x.view_dims, src.view_dims, strict=False)):
                if i > v or (a != d and i > s):
                    raise OpArgError(f"index has {i} elements on axis {a}; it must fit {value} and self")
        check_out(args, "out", x.data_type, x.view_dims, exact=True)

    return Checked(checks, doc="index/scatter_elements, aclnn_scatter.h, aclnn_scatter_add.h")


def _index_add(args: Args) -> None:
    x, index, source = tensor(args, "self"), tensor(args, "index"), tensor(args, "source")
    require_dtype("self", x.data_type, ALL)
    require_dtype("index", index.data_type, INDEX)
    require_rank("index", index, 0, 1)
    require_same_dtype("source", source, "self", x)
    d = wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
    want = with_axis(x.view_dims, d, index.numel) if x.view_dims else source.view_dims
    if source.view_dims != want:
        raise OpArgError(f"source has shape {shape_str(source.view_dims)}; it must be {shape_str(want)}")
    check_out(args, "out", x.data_type, x.view_dims, exact=True)


TABLE: Final[dict[str, Row]] = {
    "Embedding": Checked(_embedding, doc="index/embedding/docs/aclnnEmbedding.md"),
    "Gather": Checked(_gather, doc="index/gather_elements_v2/docs/aclnnGather.md"),
    "IndexSelect": Checked(_index_select, doc="index/gather_v2/docs/aclnnIndexSelect.md"),
    "Index": Checked(_index, doc="index/index/docs/aclnnIndex.md"),
    "IndexPutImpl": Checked(_index_put, doc="index/index_put_v2/docs/aclnnIndexPutImpl.md"),
    "InplaceScatterUpdate": Checked(_scatter_update, doc="index/scatter/docs/aclnnInplaceScatterUpdate.md"),
    "ScatterNdUpdate": Checked(_scatter_nd_update, doc="index/scatter_nd_update/docs/aclnnScatterNdUpdate.md"),
    "InplaceIndexCopy": _index_copy("selfRef"),
    "IndexCopy": _index_copy("outRef"),
    "Scatter": _scatter("src"),
    "ScatterAdd": _scatter("src"),
    "IndexAdd": Checked(_index_add, doc="index/index_add, aclnn_index_add.h"),
}
