"""IndexFill and its twins (ops-nn index/index_fill_d): self with the slices `index` names along `dim` set to value.

IndexFill and InplaceIndexFill take the indices as a tensor (INT32/INT64, at most 1-D; values checked when the
kernel runs: negative ones count from the end, out-of-range ones are skipped); IndexFillTensor and
InplaceIndexFillTensor as an int array, whose values phase 1 checks against the size of dim.
"""

from __future__ import annotations

from typing import Final

from proto.aclnn import dtypes
from proto.aclnn.decl import Args, OpArgError
from proto.aclnn.dtypes import DT, FLOATS, INTS
from proto.aclnn.entry import Row
from proto.aclnn.rules.base import Checked, check_out, int_attr, ints, require_dtype, scalar, tensor, wrap_dim

INDEX: Final = frozenset({DT.ACL_INT32, DT.ACL_INT64})
FILLED: Final = FLOATS | INTS | {DT.ACL_BOOL}
FILLED_BY_ARRAY: Final = frozenset({DT.ACL_FLOAT16, DT.ACL_FLOAT, DT.ACL_BF16, DT.ACL_INT32, DT.ACL_INT64,
                                    DT.ACL_BOOL})  # fmt: skip


def _index_fill(*, array: bool) -> Checked:
    def checks(args: Args) -> None:
        first = "self" if "self" in args else "selfRef"
        x = tensor(args, first)
        require_dtype(first, x.data_type, FILLED_BY_ARRAY if array else FILLED)
        d = wrap_dim("dim", int_attr(args, "dim"), len(x.view_dims))
        size = x.view_dims[d] if x.view_dims else 1
        if array:
            for i in ints(args, "index") or ():
                if not -size <= i < size:
                    raise OpArgError(f"index holds {i}, out of range for dim {d} of size {size}")
        else:
            index = tensor(args, "index")
            require_dtype("index", index.data_type, INDEX)
            if len(index.view_dims) > 1:
                raise OpArgError(f"index has {len(index.view_dims)} dims; it must have at most 1")
        value = scalar(args, "value")
        if not dtypes.can_cast(value.data_type, x.data_type) and not dtypes.is_float(value.data_type):
            raise OpArgError(f"value has dtype {dtypes.name(value.data_type)}, which cannot be cast to {first}'s "
                             f"{dtypes.name(x.data_type)}")  # fmt: skip
        if first == "self":
            check_out(args, "out", x.data_type, x.view_dims, exact=True)

    return Checked(checks, doc="ops-nn index/index_fill_d, aclnn_index_fill.h, aclnn_index_fill_tensor.h")


TABLE: Final[dict[str, Row]] = {
    "IndexFill": _index_fill(array=False),
    "InplaceIndexFill": _index_fill(array=False),
    "IndexFillTensor": _index_fill(array=True),
    "InplaceIndexFillTensor": _index_fill(array=True),
}
