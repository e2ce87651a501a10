"""The rules of the operator families: dtype promotion, shape inference, output checks, workspace size.

`base` holds what every rule is made of (argument access, the common checks, `Checked`); each family module holds
its rules and the table rows of its operators (`TABLE`: operator name -> rule, gathered by `proto.aclnn.ops`). The
names a user-declared operator's rule is written with are re-exported here.
"""

from proto.aclnn.rules.base import (
    CUBE_MATH_TYPES,
    USE_FP16,
    USE_HF32,
    Checked,
    NoWorkspace,
    broadcast_shapes,
    check_out,
    dtype_attr,
    int_attr,
    reduce_axes,
    reduced_shape,
    require_attr_dtype,
    require_dtype,
    round_up,
    scalar,
    shape_str,
    tensor,
    wrap_dim,
)
from proto.aclnn.rules.elementwise import Binary, Cast, Copy, Unary
from proto.aclnn.rules.matmul import Matmul, matmul_shape
from proto.aclnn.rules.reduce import Reduce, Softmax

__all__ = [
    "CUBE_MATH_TYPES",
    "USE_FP16",
    "USE_HF32",
    "Binary",
    "Cast",
    "Checked",
    "Copy",
    "Matmul",
    "NoWorkspace",
    "Reduce",
    "Softmax",
    "Unary",
    "broadcast_shapes",
    "check_out",
    "dtype_attr",
    "int_attr",
    "matmul_shape",
    "reduce_axes",
    "reduced_shape",
    "require_attr_dtype",
    "require_dtype",
    "round_up",
    "scalar",
    "shape_str",
    "tensor",
    "wrap_dim",
]
