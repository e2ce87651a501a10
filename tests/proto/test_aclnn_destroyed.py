"""A destroyed host object (tensor, scalar, int array) is refused by phase 1 and by a second destroy, naming the call;
the memo of phase 1 (the very same objects launch again without checks) does not hide it."""

import pytest

from proto.aclnn.host import (
    aclCreateIntArray,
    aclCreateScalar,
    aclCreateTensor,
    aclDestroyIntArray,
    aclDestroyScalar,
    aclDestroyTensor,
    aclTensor,
)
from proto.aclnn.phase1 import aclnnAddGetWorkspaceSize, aclnnReduceSumGetWorkspaceSize
from proto.constants import aclDataType, aclFormat
from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_SUCCESS, AclError

BASE = 0x12C000000000
F32, ND = aclDataType.ACL_FLOAT, aclFormat.ACL_FORMAT_ND


def tensor(at: int) -> aclTensor:
    return aclCreateTensor([2, 3], F32, [3, 1], 0, ND, [2, 3], at)


def test_phase1_refuses_a_destroyed_tensor_even_after_it_was_remembered() -> None:
    a, b, out, alpha = tensor(BASE), tensor(BASE + 64), tensor(BASE + 128), aclCreateScalar(1.0, F32)
    size, executor = aclnnAddGetWorkspaceSize(a, b, alpha, out)
    assert size == 0 and executor.kernel.op == "Add"
    aclnnAddGetWorkspaceSize(a, b, alpha, out)  # remembered: the same objects skip the checks
    assert aclDestroyTensor(b) == ACLNN_SUCCESS
    with pytest.raises(AclError) as caught:
        aclnnAddGetWorkspaceSize(a, b, alpha, out)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID
    assert "other is an aclTensor that was destroyed by aclDestroyTensor" in caught.value.message
    with pytest.raises(AclError) as again:
        aclDestroyTensor(b)
    assert again.value.code == ACLNN_ERR_PARAM_INVALID and "already destroyed" in again.value.message
    # an equal tensor created anew is another object, and works
    assert aclnnAddGetWorkspaceSize(a, tensor(BASE + 64), alpha, out)[1].kernel.op == "Add"


def test_destroyed_scalar_and_int_array_are_refused() -> None:
    a, out = tensor(BASE), tensor(BASE + 128)
    alpha = aclCreateScalar(2.0, F32)
    assert aclDestroyScalar(alpha) == ACLNN_SUCCESS
    with pytest.raises(AclError, match="alpha is an aclScalar that was destroyed by aclDestroyScalar"):
        aclnnAddGetWorkspaceSize(a, a, alpha, out)
    dims = aclCreateIntArray([1])
    row = aclCreateTensor([2], F32, [1], 0, ND, [2], BASE + 256)
    aclnnReduceSumGetWorkspaceSize(a, dims, False, F32, row)
    assert aclDestroyIntArray(dims) == ACLNN_SUCCESS
    with pytest.raises(AclError, match="dims is an aclIntArray that was destroyed by aclDestroyIntArray"):
        aclnnReduceSumGetWorkspaceSize(a, dims, False, F32, row)
    with pytest.raises(AclError, match="already destroyed"):
        aclDestroyIntArray(dims)
