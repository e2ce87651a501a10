"""Host objects: aclCreateTensor/Scalar/IntArray validation, byte ranges, destroy calls, executor lifecycle."""

from __future__ import annotations

import dataclasses
import math

import pytest
from aclnn_kit import scalar, tensor

from proto.aclnn import (
    aclCreateIntArray,
    aclCreateScalar,
    aclCreateTensor,
    aclDestroyAclOpExecutor,
    aclDestroyIntArray,
    aclDestroyScalar,
    aclDestroyTensor,
    aclnnAddGetWorkspaceSize,
    aclnnSoftmaxGetWorkspaceSize,
    aclSetAclOpExecutorRepeatable,
    aclTensor,
    consume,
)
from proto.constants import aclDataType, aclFormat
from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS, AclError

DT = aclDataType
ND = aclFormat.ACL_FORMAT_ND
GOOD = {
    "view_dims": [2, 3],
    "data_type": DT.ACL_FLOAT,
    "strides": [3, 1],
    "offset": 0,
    "format": ND,
    "storage_dims": [2, 3],
    "data": 0x1000,
}


def create(**change: object) -> aclTensor:
    return aclCreateTensor(**{**GOOD, **change})  # type: ignore[arg-type]


def test_create_tensor_keeps_c_argument_order_and_normalizes() -> None:
    t = aclCreateTensor([2, 3], 0, [3, 1], 0, 2, [2, 3], 0x1000)
    assert t == aclTensor((2, 3), DT.ACL_FLOAT, (3, 1), 0, ND, (2, 3), 0x1000)
    assert t.data_type is DT.ACL_FLOAT and t.format is ND
    assert (t.itemsize, t.numel, t.last_element) == (4, 6, 5)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"view_dims": [2, -1]}, "view_dims[1]"),
        ({"view_dims": [1] * 9, "strides": [1] * 9, "storage_dims": [1]}, "at most 8"),
        ({"view_dims": [2.0, 3]}, "view_dims[0]"),
        ({"view_dims": "23"}, "view_dims must be a sequence"),
        ({"strides": [3]}, "strides has 1 entries but view_dims has 2"),
        ({"strides": [-3, 1], "offset": 3}, "strides[0]"),
        ({"offset": -1}, "offset"),
        ({"data": -8}, "data"),
        ({"data_type": 99}, "data_type"),
        ({"data_type": DT.ACL_STRING}, "ACL_STRING"),
        ({"data_type": DT.ACL_UINT1}, "ACL_UINT1"),
        ({"format": 1234}, "format"),
        ({"storage_dims": [5]}, "storage_dims [5] hold 5 elements"),
        ({"offset": 1}, "reaches element 6"),
        ({"storage_dims": [1] * 9}, "storage_dims has 9 dims"),
    ],
)
def test_create_tensor_refuses_bad_arguments_naming_them(change: dict[str, object], named: str) -> None:
    with pytest.raises(AclError) as caught:
        create(**change)
    assert caught.value.code == ACLNN_ERR_PARAM_INVALID
    assert caught.value.api == "aclCreateTensor"
    assert named in caught.value.message


def test_a_replaced_tensor_is_validated_too() -> None:
    with pytest.raises(AclError, match="reaches element"):
        dataclasses.replace(create(), offset=10)


def test_byte_range_covers_the_strided_view_from_its_offset() -> None:
    t = create(view_dims=[2, 3], strides=[8, 2], offset=5, storage_dims=[64], data_type=DT.ACL_FLOAT16)
    # last element: 5 + 1*8 + 2*2 = 17; bytes [0x1000 + 10, 0x1000 + 36)
    assert t.byte_range() == (0x1000 + 10, (1 * 8 + 2 * 2 + 1) * 2)
    assert create().byte_range() == (0x1000, 24)


def test_byte_range_of_broadcast_zero_dim_and_empty_tensors() -> None:
    broadcast = create(view_dims=[4, 3], strides=[0, 1], storage_dims=[3])
    assert broadcast.byte_range() == (0x1000, 12)
    scalar_view = create(view_dims=[], strides=[], offset=2, storage_dims=[3], data_type=DT.ACL_INT64)
    assert scalar_view.byte_range() == (0x1000 + 16, 8)
    empty = create(view_dims=[0, 3], strides=[3, 1], offset=7, storage_dims=[0])
    assert empty.byte_range() == (0x1000 + 28, 0)


def test_is_dense_ignores_unit_dims_and_accepts_permutations() -> None:
    assert tensor([2, 3]).is_dense()
    assert tensor([2, 3], strides=[1, 2]).is_dense()
    assert tensor([2, 1, 3], strides=[3, 99, 1]).is_dense()
    assert not tensor([2, 3], strides=[6, 2]).is_dense()
    assert not tensor([4, 3], strides=[0, 1]).is_dense()


@pytest.mark.parametrize(
    ("value", "dtype", "stored"),
    [
        (0.1, DT.ACL_FLOAT16, 0.0999755859375),
        (0.1, DT.ACL_DOUBLE, 0.1),
        (3, DT.ACL_FLOAT, 3.0),
        (1e300, DT.ACL_FLOAT, math.inf),
        (-128, DT.ACL_INT8, -128),
        (255, DT.ACL_UINT8, 255),
        (2**64 - 1, DT.ACL_UINT64, 2**64 - 1),
        (True, DT.ACL_BOOL, True),
    ],
)
def test_create_scalar_stores_the_value_as_c_does(value: float, dtype: aclDataType, stored: float) -> None:
    s = aclCreateScalar(value, dtype)
    assert s.value == stored and type(s.value) is type(stored)
    assert s.data_type is dtype


@pytest.mark.parametrize(
    ("value", "dtype", "named"),
    [
        (128, DT.ACL_INT8, "does not fit ACL_INT8"),
        (-1, DT.ACL_UINT8, "does not fit ACL_UINT8"),
        (1.5, DT.ACL_INT32, "must be an int"),
        (1, DT.ACL_BOOL, "must be a bool"),
        (True, DT.ACL_INT32, "must be a number"),
        ("1", DT.ACL_FLOAT, "must be a number"),
        (1.0, DT.ACL_COMPLEX64, "not supported for scalars"),
        (1.0, 1000, "data_type"),
    ],
)
def test_create_scalar_refuses_values_the_dtype_cannot_hold(value: object, dtype: int, named: str) -> None:
    with pytest.raises(AclError) as caught:
        aclCreateScalar(value, dtype)  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.api) == (ACLNN_ERR_PARAM_INVALID, "aclCreateScalar")
    assert named in caught.value.message


def test_create_int_array() -> None:
    assert aclCreateIntArray([0, -1, 2**63 - 1]).values == (0, -1, 2**63 - 1)
    assert aclCreateIntArray([]).values == ()
    for bad in ([1.0], [True], [2**63], 5):
        with pytest.raises(AclError, match="values") as caught:
            aclCreateIntArray(bad)  # type: ignore[arg-type]
        assert caught.value.api == "aclCreateIntArray"


def test_destroy_functions_check_their_argument() -> None:
    assert aclDestroyTensor(tensor([2])) == ACLNN_SUCCESS
    assert aclDestroyScalar(scalar(1.0)) == ACLNN_SUCCESS
    assert aclDestroyIntArray(aclCreateIntArray([1])) == ACLNN_SUCCESS
    for destroy in (aclDestroyTensor, aclDestroyScalar, aclDestroyIntArray):
        with pytest.raises(AclError) as caught:
            destroy(None)
        assert caught.value.code == ACLNN_ERR_PARAM_NULLPTR
        assert caught.value.api == destroy.__name__
    with pytest.raises(AclError, match="must be an aclTensor") as wrong:
        aclDestroyTensor(scalar(1.0))  # type: ignore[arg-type]
    assert wrong.value.code == ACLNN_ERR_PARAM_INVALID


def _executor():  # type: ignore[no-untyped-def]
    x = tensor([4])
    return aclnnAddGetWorkspaceSize(x, tensor([4]), scalar(1.0), tensor([4]))[1]


def test_an_executor_is_single_use() -> None:
    executor = _executor()
    kernel = consume(executor, "aclnnAdd")
    assert kernel.op == "Add" and executor.consumed
    with pytest.raises(AclError, match="single-use") as caught:
        consume(executor, "aclnnAdd")
    assert (caught.value.code, caught.value.api) == (ACLNN_ERR_PARAM_INVALID, "aclnnAdd")
    with pytest.raises(AclError, match="released by its phase-2 call"):
        aclDestroyAclOpExecutor(executor)
    with pytest.raises(AclError, match="single-use"):
        aclSetAclOpExecutorRepeatable(executor)


def test_a_repeatable_executor_runs_until_destroyed() -> None:
    executor = _executor()
    assert aclSetAclOpExecutorRepeatable(executor) == ACLNN_SUCCESS
    first, second = consume(executor, "aclnnAdd"), consume(executor, "aclnnAdd")
    assert first is second
    assert aclSetAclOpExecutorRepeatable(executor) == ACLNN_SUCCESS
    assert aclDestroyAclOpExecutor(executor) == ACLNN_SUCCESS
    for call in (lambda: consume(executor, "aclnnAdd"), lambda: aclDestroyAclOpExecutor(executor)):
        with pytest.raises(AclError, match="already destroyed") as caught:
            call()
        assert caught.value.code == ACLNN_ERR_PARAM_INVALID


def test_an_unused_executor_may_be_destroyed_and_then_not_launched() -> None:
    executor = _executor()
    assert aclDestroyAclOpExecutor(executor) == ACLNN_SUCCESS
    with pytest.raises(AclError, match="already destroyed"):
        consume(executor, "aclnnAdd")


def test_consume_refuses_an_executor_of_another_operator() -> None:
    executor = _executor()
    with pytest.raises(AclError, match="created by aclnnAddGetWorkspaceSize, not aclnnMulGetWorkspaceSize") as caught:
        consume(executor, "aclnnMul")
    assert caught.value.api == "aclnnMul"
    assert not executor.consumed


def test_null_executors_are_161001() -> None:
    for call, api in (
        (lambda: consume(None, "aclnnAdd"), "aclnnAdd"),
        (lambda: aclSetAclOpExecutorRepeatable(None), "aclSetAclOpExecutorRepeatable"),
        (lambda: aclDestroyAclOpExecutor(None), "aclDestroyAclOpExecutor"),
    ):
        with pytest.raises(AclError, match="executor is a null pointer") as caught:
            call()
        assert (caught.value.code, caught.value.api) == (ACLNN_ERR_PARAM_NULLPTR, api)


def test_int_subclasses_are_range_checked_at_once() -> None:
    """`x in range(...)` searches an int subclass (an IntEnum) element by element: 2**63 steps. Every int64 check
    compares instead, so these return at once."""
    big = aclDataType.ACL_INT64  # an IntEnum member used as a plain int
    assert aclCreateScalar(big, aclDataType.ACL_INT64).value == 9
    with pytest.raises(AclError, match="does not fit ACL_INT8"):
        aclCreateScalar(aclFormat.ACL_FORMAT_FRACTAL_NZ * 100, aclDataType.ACL_INT8)
    t = aclCreateTensor([2, 3], aclDataType.ACL_FLOAT, [3, 1], 0, aclFormat.ACL_FORMAT_ND, [2, 3], 4096)
    _, executor = aclnnSoftmaxGetWorkspaceSize(t, aclDataType.ACL_FLOAT16, t)  # dim given as an IntEnum (1)
    assert executor.kernel.args["dim"] == 1
