"""aclDataType → numpy dtype for the kernels (bfloat16 from ml_dtypes)."""

from __future__ import annotations

from typing import Final

import ml_dtypes
import numpy as np

from proto.aclnn import dtypes
from proto.constants import aclDataType

DT = aclDataType

NUMPY: Final[dict[aclDataType, np.dtype]] = {
    DT.ACL_FLOAT: np.dtype(np.float32),
    DT.ACL_FLOAT16: np.dtype(np.float16),
    DT.ACL_BF16: np.dtype(ml_dtypes.bfloat16),
    DT.ACL_DOUBLE: np.dtype(np.float64),
    DT.ACL_INT8: np.dtype(np.int8),
    DT.ACL_INT16: np.dtype(np.int16),
    DT.ACL_INT32: np.dtype(np.int32),
    DT.ACL_INT64: np.dtype(np.int64),
    DT.ACL_UINT8: np.dtype(np.uint8),
    DT.ACL_BOOL: np.dtype(np.bool_),
    DT.ACL_UINT16: np.dtype(np.uint16),
    DT.ACL_UINT32: np.dtype(np.uint32),
    DT.ACL_UINT64: np.dtype(np.uint64),
    DT.ACL_INT4: np.dtype(ml_dtypes.int4),
    DT.ACL_FLOAT8_E5M2: np.dtype(ml_dtypes.float8_e5m2),
    DT.ACL_FLOAT8_E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    DT.ACL_FLOAT8_E8M0: np.dtype(ml_dtypes.float8_e8m0fnu),
    DT.ACL_HIFLOAT8: np.dtype(np.uint8),  # no numpy type: its bytes
    DT.ACL_COMPLEX64: np.dtype(np.complex64),
    DT.ACL_COMPLEX128: np.dtype(np.complex128),
}
"""The numpy dtype of each tensor dtype (ACL_INT4 as ml_dtypes.int4, one value per element: see
`server.npu.ops.function`; ACL_HIFLOAT8 as its bytes)."""


COMPUTE: Final[dict[aclDataType, np.dtype]] = {dt: NUMPY[dtypes.compute_dtype(dt)] for dt in NUMPY}


def np_dtype(dtype: aclDataType) -> np.dtype:
    return NUMPY[dtype]


def compute_dtype(dtype: aclDataType) -> np.dtype:
    """The numpy dtype a `dtype` result is computed in: float32 for fp16/bf16, else its own."""
    return COMPUTE[dtype]
