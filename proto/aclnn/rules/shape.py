"""Shape and layout families (ops-math conversion/): joins and splits (Cat, Stack, SplitWithSize), views made
copies (Slice, Permute, Repeat, Expand, Flip, Roll), triangles (Triu, Tril and in place).

Each computes the output's shape from its arguments and requires it exactly; copies keep self's dtype (Cat and
Stack promote the list's dtypes).
"""

from __future__ import annotations

from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import ALL, DT
from proto.aclnn.entry import Row
from proto.aclnn.host import aclTensor
from proto.aclnn.rules.base import (
    Checked,
    check_out,
    int_attr,
    ints,
    promote_all,
    require_dtype,
    require_rank,
    shape_str,
    tensor,
    tensors,
    with_axis,
    wrap_dim,
)


def _list(args: Args, name: str) -> tuple[aclTensor, ...]:
    found = tensors(args, name)
    if not found:
        raise OpArgError(f"{name} is empty; it must hold at least one tensor")
    for i, t in enumerate(found):
        require_dtype(f"{name}[{i}]", t.data_type, ALL)
    return found


def _cat(args: Args) -> None:
    parts = [t for t in _list(args, "tensors") if not (len(t.view_dims) == 1 and t.view_dims[0] == 0)]
    dtype = promote_all(*((f"tensors[{i}]", t) for i, t in enumerate(tensors(args, "tensors"))))
    if not parts:
        check_out(args, "out", dtype, tensor(args, "out").view_dims)
        return
    first = parts[0].view_dims
    d = wrap_dim("dim", int_attr(args, "dim"), len(first))
    total = 0
    for i, t in enumerate(parts):
        shape = t.view_dims
        if len(shape) != len(first) or shape[:d] + shape[d + 1 :] != first[:d] + first[d + 1 :]:
            raise OpArgError(
                f"tensors[{i}] has shape {shape_str(shape)}; it must match {shape_str(first)} but along dim {d}"
            )
        total += shape[d]
    check_out(args, "out", dtype, with_axis(first, d, total))


def _stack(args: Args) -> None:
    found = _list(args, "tensors")
    dtype = promote_all(*((f"tensors[{i}]", t) for i, t in enumerate(found)))
    first = found[0].view_dims
    for i, t in enumerate(found):
        if t.view_dims != first:
            raise OpArgError(
                f"tensors[{i}] has shape {shape_str(t.view_dims)}; every tensor must be {shape_str(first)}"
            )
    d = wrap_dim("dim", int_attr(args, "dim"), len(first) + 1)
    check_out(args, "out", dtype, with_axis(first, d, len(found), insert=True))


def _split_with_size(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, ALL)
    sizes = ints(args, "splitSize") or ()
    d = wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
    if any(s < 0 for s in sizes) or sum(sizes) != (x.view_dims[d] if x.view_dims else 1):
        raise OpArgError(
            f"splitSize {list(sizes)} must be non-negative and sum to self's {x.view_dims[d]} along dim {d}"
        )
    outs = tensors(args, "out")
    if len(outs) != len(sizes):
        raise OpArgError(f"out holds {len(outs)} tensors; splitSize asks for {len(sizes)}")
    for i, (size, t) in enumerate(zip(sizes, outs, strict=True)):
        want = with_axis(x.view_dims, d, size)
        if t.view_dims != want or t.data_type != x.data_type:
            raise OpArgError(
                f"out[{i}] is {shape_str(t.view_dims)} {dtypes.name(t.data_type)}; it must be {shape_str(want)} "
                f"{dtypes.name(x.data_type)}"
            )


def _slice(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, ALL)
    require_rank("self", x, 1, 8)
    step = int_attr(args, "step")
    if step <= 0:
        raise OpArgError(f"step is {step}; it must be positive")
    d = wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
    length = len(range(x.view_dims[d])[slice(int_attr(args, "start"), int_attr(args, "end"), step)])
    check_out(args, "out", x.data_type, with_axis(x.view_dims, d, length), exact=True)


def _permutation(name: str, values: tuple[int, ...], rank: int) -> list[int]:
    order = [wrap_dim(name, v, rank) for v in values]
    if sorted(order) != list(range(rank)):
        raise OpArgError(f"{name} {list(values)} is not a permutation of the {rank} axes of self")
    return order


def _permute(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, ALL)
    order = _permutation("dims", ints(args, "dims") or (), len(x.view_dims))
    check_out(args, "out", x.data_type, tuple(x.view_dims[i] for i in order), exact=True)


def _repeat(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, ALL)
    repeats = ints(args, "repeats") or ()
    if len(repeats) < len(x.view_dims) or any(r < 0 for r in repeats):
        raise OpArgError(f"repeats {list(repeats)} must be non-negative and at least {len(x.view_dims)} long")
    padded = (1,) * (len(repeats) - len(x.view_dims)) + x.view_dims
    check_out(args, "out", x.data_type, tuple(r * s for r, s in zip(repeats, padded, strict=True)), exact=True)


def _expand(args: Args) -> None:
    x = tensor(args, "self")
    require_dtype("self", x.data_type, ALL)
    size = ints(args, "size") or ()
    if len(size) < len(x.view_dims):
        raise OpArgError(f"size {list(size)} has fewer axes than self's {shape_str(x.view_dims)}")
    padded = (1,) * (len(size) - len(x.view_dims)) + x.view_dims
    want = []
    for i, (s, have) in enumerate(zip(size, padded, strict=True)):
        target = have if s == -1 and i >= len(size) - len(x.view_dims) else s
        if target < 0 or (have != 1 and have != target):
            raise OpArgError(f"size {list(size)} does not expand self's {shape_str(x.view_dims)} (axis {i})")
        want.append(target)
    check_out(args, "out", x.data_type, tuple(want), exact=True)


def _same_shape(x_name: str, out_name: str) -> Checked:
    def checks(args: Args) -> None:
        x = tensor(args, x_name)
        require_dtype(x_name, x.data_type, ALL)
        check_out(args, out_name, x.data_type, x.view_dims, exact=True)

    return Checked(checks)


def _flip(args: Args) -> None:
    x = tensor(args, "self")
    axes = [wrap_dim("dims", d, len(x.view_dims)) for d in ints(args, "dims") or ()]
    if len(set(axes)) != len(axes):
        raise OpArgError(f"dims {list(ints(args, 'dims') or ())} names an axis twice")
    _same_shape("self", "out").check(args)


ROLL_DTYPES: Final = frozenset(
    {DT.ACL_BF16, DT.ACL_FLOAT16, DT.ACL_FLOAT, DT.ACL_INT8, DT.ACL_UINT8, DT.ACL_INT16, DT.ACL_INT32, DT.ACL_INT64,
     DT.ACL_UINT32, DT.ACL_BOOL}
)  # fmt: skip
"""aclnnRoll's dtypes on Atlas A2/A3 (conversion/roll/docs/aclnnRoll.md and its op_api's list for them): no DOUBLE;
COMPLEX64 only on Ascend 950 (the doc's note; the experimental variant of its custom package takes it on A2 too,
see docs/operators.md)."""


def _roll(args: Args) -> None:
    """The op_api's checks in its order: dtypes (x's, then out's, then one dtype), out's shape, the two arrays'
    lengths, then the dims' range (at most 8 dims: aclCreateTensor refuses more)."""
    x = tensor(args, "x")
    require_dtype("x", x.data_type, ROLL_DTYPES)
    check_out(args, "out", x.data_type, x.view_dims, ROLL_DTYPES, exact=True)
    shifts, dims = ints(args, "shifts") or (), ints(args, "dims") or ()
    if (dims and len(shifts) != len(dims)) or (not dims and len(shifts) != 1):
        raise OpArgError(
            f"shifts {list(shifts)} must have one entry per dims entry ({list(dims)}), or one with no dims"
        )
    for d in dims:
        wrap_dim("dims", d, len(x.view_dims))


def _triangle(x_name: str, out_name: str) -> Checked:
    def checks(args: Args) -> None:
        require_rank(x_name, tensor(args, x_name), 2, 8)
        _same_shape(x_name, out_name).check(args)

    return Checked(checks, doc="ops-math conversion/triu, tril")


TABLE: Final[dict[str, Row]] = {
    "Cat": Checked(_cat, doc="conversion/concat_d/op_api/aclnn_cat.h"),
    "Stack": Checked(_stack, doc="conversion/stack/op_api/aclnn_stack.h"),
    "SplitWithSize": Checked(_split_with_size, doc="conversion/split_v/op_api/aclnn_split_with_size.h"),
    "Slice": Checked(_slice, doc="conversion/slice/op_api/aclnn_slice.h"),
    "Permute": Checked(_permute, doc="conversion/transpose/op_api/aclnn_permute.h"),
    "Repeat": Checked(_repeat, doc="experimental/math/tile, aclnn_repeat.h"),
    "Expand": Checked(_expand, doc="math/expand, aclnn_expand.h"),
    "Flip": Checked(_flip, doc="index/reverse_v2, aclnn_flip.h"),
    "Roll": Checked(_roll, doc="conversion/roll, aclnn_roll.h"),
    "Triu": _triangle("self", "out"),
    "Tril": _triangle("self", "out"),
    "InplaceTriu": _triangle("selfRef", "selfRef"),
    "InplaceTril": _triangle("selfRef", "selfRef"),
}
