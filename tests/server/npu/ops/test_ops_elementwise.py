"""Elementwise kernels against float64 / exact-integer references: dtypes, broadcasting, strides, alpha, aliasing."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from aclnn_testkit import FakeMemory, close, sample

import proto.aclnn as nn
from proto.aclnn.dtypes import ALL, NUMERIC, is_float, promote_types
from proto.constants import aclDataType
from server.npu.ops.dtypes import NUMPY

DT = aclDataType
F32, F16, BF16, F64 = DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE
S8, S16, S32, S64, U8, BOOL = DT.ACL_INT8, DT.ACL_INT16, DT.ACL_INT32, DT.ACL_INT64, DT.ACL_UINT8, DT.ACL_BOOL
PAIRS = [(d, d) for d in sorted(ALL)] + [
    (F16, F32),
    (BF16, F16),
    (BF16, F32),
    (F64, F32),
    (S8, U8),
    (S32, F16),
    (S64, BF16),
    (BOOL, F32),
    (BOOL, S8),
    (U8, S32),
    (S16, S64),
]
BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.true_divide}


def reference(ufunc: np.ufunc, a: np.ndarray, b: np.ndarray, alpha: float | None, result: aclDataType) -> np.ndarray:
    """torch's result: float64 arithmetic for float results, int64 wrapped to the result for integers."""
    with np.errstate(all="ignore"):
        if is_float(result) or ufunc is np.true_divide:
            y = b.astype(np.float64) * (1.0 if alpha is None else float(alpha))
            return ufunc(a.astype(np.float64), y)
        if result == BOOL:
            y = b.astype(bool) & (True if alpha is None else bool(alpha))
            return np.logical_or(a, y) if ufunc is np.add else np.logical_and(a, y)
        y = b.astype(np.int64) * (1 if alpha is None else int(alpha))
        return ufunc(a.astype(np.int64), y).astype(NUMPY[result])


def result_of(name: str, a: aclDataType, b: aclDataType) -> aclDataType:
    dtype = promote_types(a, b)
    assert dtype is not None
    return F32 if name == "Div" and not is_float(dtype) else dtype


def alpha_for(result: aclDataType) -> tuple[bool | int, aclDataType]:
    return (True, BOOL) if result == BOOL else (2, S64)


@pytest.mark.parametrize(
    ("name", "a_dtype", "b_dtype"),
    [(n, a, b) for n in BINARY for a, b in PAIRS if not (n == "Sub" and BOOL in (a, b))],
    ids=lambda v: v if isinstance(v, str) else v.name[4:],
)
def test_binary_ops_over_dtype_pairs(
    mem: FakeMemory, rng: np.random.Generator, name: str, a_dtype: aclDataType, b_dtype: aclDataType
) -> None:
    a, b = sample(rng, (3, 4), a_dtype), sample(rng, (3, 4), b_dtype)
    result = result_of(name, a_dtype, b_dtype)
    out = mem.empty((3, 4), result)
    args = [mem.tensor(a, a_dtype), mem.tensor(b, b_dtype)]
    alpha = None
    if name in ("Add", "Sub"):
        alpha, alpha_dtype = alpha_for(result)
        args.append(nn.aclCreateScalar(alpha, alpha_dtype))
    mem.launch(getattr(nn, f"aclnn{name}GetWorkspaceSize"), *args, out)
    close(mem.read(out), reference(BINARY[name], a, b, alpha, result), result)


@pytest.mark.parametrize(
    ("dtype", "alpha", "alpha_dtype"), [(F32, 0.0, F32), (F32, -1.5, F64), (F16, 3.25, F16), (S32, -3, S8)]
)
@pytest.mark.parametrize("name", ["Add", "Sub"])
def test_alpha_scales_other(
    mem: FakeMemory, rng: np.random.Generator, name: str, dtype: aclDataType, alpha: float, alpha_dtype: aclDataType
) -> None:
    a, b = sample(rng, (50,), dtype), sample(rng, (50,), dtype)
    out = mem.empty((50,), dtype)
    scalar = nn.aclCreateScalar(alpha, alpha_dtype)
    mem.launch(getattr(nn, f"aclnn{name}GetWorkspaceSize"), mem.tensor(a, dtype), mem.tensor(b, dtype), scalar, out)
    close(mem.read(out), reference(BINARY[name], a, b, alpha, dtype), dtype)


def test_broadcasting_over_strided_offset_and_transposed_views(mem: FakeMemory, rng: np.random.Generator) -> None:
    a, b = sample(rng, (4, 1, 3), F32), sample(rng, (2, 1), F16)
    self_ = mem.tensor(a, F32, step=2, offset=3)
    other = mem.tensor(b, F16, order=(1, 0))
    out = mem.empty((4, 2, 3), F32, order=(2, 0, 1), step=2, offset=1)
    mem.launch(nn.aclnnAddGetWorkspaceSize, self_, other, nn.aclCreateScalar(0.5, F32), out)
    close(mem.read(out), a.astype(np.float64) + 0.5 * b.astype(np.float64), F32)
    assert mem.read(out).shape == (4, 2, 3)


@pytest.mark.parametrize(
    ("name", "dtype", "value", "scalar_dtype", "result"),
    [
        ("Adds", F16, 0.3, F32, F16),
        ("Adds", S32, 0.5, F32, F32),
        ("Adds", S8, 300, S64, S8),
        ("Adds", BOOL, 3, S8, S8),
        ("Adds", BOOL, True, BOOL, BOOL),
        ("Subs", U8, 2.5, F64, F32),
        ("Subs", BF16, -1.25, BF16, BF16),
        ("Subs", S64, 7, S32, S64),
        ("Muls", F64, 1e-3, F64, F64),
        ("Muls", S16, 1000, S64, S16),
        ("Muls", BOOL, False, BOOL, BOOL),
        ("Muls", U8, 0.25, F16, F32),
    ],
)
def test_tensor_scalar_ops(
    mem: FakeMemory,
    rng: np.random.Generator,
    name: str,
    dtype: aclDataType,
    value: float,
    scalar_dtype: aclDataType,
    result: aclDataType,
) -> None:
    a = sample(rng, (5, 7), dtype)
    out = mem.empty((5, 7), result)
    scalar = nn.aclCreateScalar(value, scalar_dtype)
    args: list[object] = [mem.tensor(a, dtype), scalar]
    alpha = None
    if name != "Muls":
        alpha, alpha_dtype = alpha_for(result)
        args.append(nn.aclCreateScalar(alpha, alpha_dtype))
    mem.launch(getattr(nn, f"aclnn{name}GetWorkspaceSize"), *args, out)
    stored = np.asarray(scalar.value).astype(NUMPY[result]) if not is_float(result) else np.float64(scalar.value)
    ufunc = {"Adds": np.add, "Subs": np.subtract, "Muls": np.multiply}[name]
    close(mem.read(out), reference(ufunc, a, np.broadcast_to(stored, a.shape), alpha, result), result)


def test_an_fp16_result_rounds_to_fp16_before_a_wider_out(mem: FakeMemory, rng: np.random.Generator) -> None:
    a, b = sample(rng, (64,), F16), sample(rng, (64,), F16)
    out = mem.empty((64,), F32)
    mem.launch(nn.aclnnMulGetWorkspaceSize, mem.tensor(a, F16), mem.tensor(b, F16), out)
    want = (a.astype(np.float32) * b.astype(np.float32)).astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(mem.read(out), want)
    exp_out = mem.empty((64,), F64)
    mem.launch(nn.aclnnExpGetWorkspaceSize, mem.tensor(a, F16), exp_out)
    np.testing.assert_array_equal(mem.read(exp_out), np.exp(a.astype(np.float32)).astype(np.float16))


def test_an_integer_result_wraps_before_a_float_out(mem: FakeMemory, rng: np.random.Generator) -> None:
    a, b = sample(rng, (100,), S8), sample(rng, (100,), S8)
    out = mem.empty((100,), F32)
    mem.launch(nn.aclnnMulGetWorkspaceSize, mem.tensor(a, S8), mem.tensor(b, S8), out)
    np.testing.assert_array_equal(mem.read(out), (a.astype(np.int64) * b).astype(np.int8).astype(np.float32))
    assert np.any(np.abs(a.astype(np.int64) * b) > 127)


def test_inplace_ops_write_self_ref(mem: FakeMemory, rng: np.random.Generator) -> None:
    a, b = sample(rng, (2, 3), F16), sample(rng, (3,), F32)
    self_ref = mem.tensor(a, F16, step=2)
    mem.launch(nn.aclnnInplaceAddGetWorkspaceSize, self_ref, mem.tensor(b, F32), nn.aclCreateScalar(0.5, F32))
    close(mem.read(self_ref), a.astype(np.float64) + 0.5 * b, F16)
    c, d = sample(rng, (2, 3), S32), sample(rng, (2, 1), S8)
    ints = mem.tensor(c, S32, order=(1, 0))
    mem.launch(nn.aclnnInplaceMulGetWorkspaceSize, ints, mem.tensor(d, S8))
    np.testing.assert_array_equal(mem.read(ints), c * d)


def test_an_inplace_op_on_itself_reads_before_it_writes(mem: FakeMemory, rng: np.random.Generator) -> None:
    a = sample(rng, (4, 5), F32)
    x = mem.tensor(a, F32)
    mem.launch(nn.aclnnInplaceAddGetWorkspaceSize, x, x, nn.aclCreateScalar(2.0, F32))
    close(mem.read(x), 3.0 * a, F32)
    same_view = mem.alias(x, [4, 5], [5, 1], 0)
    mem.launch(nn.aclnnInplaceMulGetWorkspaceSize, x, same_view)
    close(mem.read(x), (3.0 * a) ** 2, F32)


def test_overlapping_strided_views_behave_as_if_inputs_were_read_first(
    mem: FakeMemory, rng: np.random.Generator
) -> None:
    storage = sample(rng, (10,), F64)
    base = mem.tensor(storage, F64)
    evens = mem.alias(base, [4], [2], 0)
    shifted = mem.alias(base, [4], [2], 2)
    mem.launch(nn.aclnnInplaceAddGetWorkspaceSize, evens, shifted, nn.aclCreateScalar(1.0, F64))
    want = storage.copy()
    want[0:8:2] = storage[0:8:2] + storage[2:10:2]
    np.testing.assert_array_equal(mem.read(base), want)


UNARY: dict[str, tuple[frozenset[aclDataType], Callable[[np.ndarray], np.ndarray]]] = {
    "Relu": (NUMERIC, lambda x: np.maximum(x, 0)),
    "Abs": (ALL, np.abs),
    "Neg": (NUMERIC, np.negative),
    "Exp": (ALL, lambda x: np.exp(x.astype(np.float64))),
}


@pytest.mark.parametrize(("name", "dtype"), [(n, d) for n, (ds, _) in UNARY.items() for d in sorted(ds)])
def test_unary_ops_over_their_dtypes(mem: FakeMemory, rng: np.random.Generator, name: str, dtype: aclDataType) -> None:
    fn = UNARY[name][1]
    x = sample(rng, (3, 5), dtype)
    result = F32 if name == "Exp" and not is_float(dtype) else dtype
    out = mem.empty((3, 5), result, step=2)
    mem.launch(getattr(nn, f"aclnn{name}GetWorkspaceSize"), mem.tensor(x, dtype, order=(1, 0)), out)
    exact = x.astype(np.float64) if is_float(dtype) else x.astype(np.int64) if dtype != BOOL else x
    with np.errstate(over="ignore"):
        want = fn(exact).astype(NUMPY[result])  # exp(99) overflows ACL_FLOAT to inf, as on the device
    close(mem.read(out), want, result)


def test_integer_edge_cases_wrap_and_relu_keeps_nan(mem: FakeMemory) -> None:
    low = mem.tensor(np.array([-128, 5], np.int8), S8)
    out = mem.empty((2,), S8)
    mem.launch(nn.aclnnAbsGetWorkspaceSize, low, out)
    np.testing.assert_array_equal(mem.read(out), [-128, 5])
    bytes_ = mem.tensor(np.array([0, 1, 255], np.uint8), U8)
    negated = mem.empty((3,), U8)
    mem.launch(nn.aclnnNegGetWorkspaceSize, bytes_, negated)
    np.testing.assert_array_equal(mem.read(negated), [0, 255, 1])
    special = mem.tensor(np.array([np.nan, -np.inf, -0.5, 2.0], np.float32), F32)
    relu = mem.empty((4,), F32)
    mem.launch(nn.aclnnReluGetWorkspaceSize, special, relu)
    np.testing.assert_array_equal(mem.read(relu), [np.nan, 0.0, 0.0, 2.0])
