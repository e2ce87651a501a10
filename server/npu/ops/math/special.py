"""ops-math's bitwise and special elementwise operators: BitwiseAnd/Or/Xor (tensor and scalar), RightShift, Gcd,
XLogY (three forms), IsClose, NanToNum, Signbit, Real, Polar, LinalgCross, Lerps, Sinc, IsNegInf/IsPosInf,
LeftShift(s), LogAddExp(2), Rsub(s), RemainderScalarTensor, Square, Xlog1py, RoundDecimals, DivMod(s), IsIn*, Equal
and Complex.

Integers compute exactly (in int64, or uint64 for UINT64) and wrap into out; floats compute in float32 (float64
for DOUBLE) and round once into out. Each kernel's docstring names its constraints (the operator's
docs/aclnn<Op>.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.numeric import is_float, store, wide
from server.npu.ops.math.binary import binary

Array = np.ndarray


def _xlogy(x: Any, y: Any) -> Any:
    """x · log(y), 0 where x is 0 and y is not NaN (torch.xlogy)."""
    product = x * np.log(y)
    return np.where((np.asarray(x) == 0) & ~np.isnan(y), 0, product)


def xlogy_scalar_self(self: Any, other: Array, out: Array, workspace: Array | None) -> None:
    """out = self · log(other) with a scalar self (0 where self is 0, unless other is NaN).

    Constraints (math/xlogy, aclnnXLogYScalarSelf): other a real dtype; self a scalar that promotes with it; out
    other's shape, a float dtype."""
    y = wide(other) if is_float(other.dtype) else other.astype(np.float32)
    with np.errstate(all="ignore"):
        store(out, _xlogy(y.dtype.type(self), y))


def _right_shift(x: Array, s: Array) -> Array:
    """x >> s: a negative shift is 0, a shift past the width fills with the sign bit (0 for unsigned)."""
    if x.dtype == np.uint64 or s.dtype == np.uint64:
        shift = np.asarray(s).astype(np.int64)
        values = np.asarray(x).astype(np.uint64)
        return np.where(shift >= 64, 0, values >> np.clip(shift, 0, 63).astype(np.uint64))
    return np.asarray(x).astype(np.int64) >> np.clip(np.asarray(s).astype(np.int64), 0, 63)


def right_shift(input: Array, shiftBits: Array, out: Array, workspace: Array | None) -> None:
    """out = input >> shiftBits, broadcasting, arithmetic for signed dtypes (a negative shift counts as 0).

    Constraints (math/right_shift, aclnnRightShift): input and shiftBits INT8-64/UINT8-64 that promote, shapes that
    broadcast; out the broadcast shape, an integer dtype."""
    store(out, _right_shift(input, shiftBits))


def is_close(self: Array, other: Array, rtol: float, atol: float, equalNan: bool, out: Array,
             workspace: Array | None) -> None:  # fmt: skip
    """out = |self - other| <= atol + rtol · |other| (equal values, infinities included, are close; NaNs only
    with equalNan), broadcasting.

    Constraints (math/is_close, aclnnIsClose): self and other of one real dtype, shapes that broadcast; out BOOL of
    the broadcast shape."""
    a, b = (wide(t) if is_float(t.dtype) else t.astype(np.float64) for t in (self, other))
    with np.errstate(all="ignore"):
        close = (a == b) | (np.isfinite(a) & np.isfinite(b) & (np.abs(a - b) <= atol + rtol * np.abs(b)))
    if equalNan:
        close |= np.isnan(a) & np.isnan(b)
    np.copyto(out, close)


def nan_to_num(self: Array, nan: float, posinf: float, neginf: float, out: Array, workspace: Array | None) -> None:
    """out = self with NaN, +inf and -inf replaced by nan, posinf and neginf (rounded to self's dtype); integers
    and bools are copied.

    Constraints (math/nan_to_num, aclnnNanToNum): self FLOAT16/FLOAT/BFLOAT16/INT8-64/UINT8/BOOL; out self's dtype
    and shape."""
    if not is_float(self.dtype):
        np.copyto(out, self)
        return
    x = wide(self)
    result = np.where(np.isnan(x), np.float32(nan), x)
    result = np.where(np.isposinf(x), np.float32(posinf), result)
    store(out, np.where(np.isneginf(x), np.float32(neginf), result))


def signbit(self: Array, out: Array, workspace: Array | None) -> None:
    """out = the sign bit of self (True for -0.0 and negative NaNs; x < 0 for integers; False for bools).

    Constraints (math/signbit, aclnnSignbit): self any real dtype; out self's shape, BOOL or a dtype BOOL casts to."""
    if is_float(self.dtype):
        np.copyto(out, np.signbit(wide(self)), casting="unsafe")
    else:
        np.copyto(out, self < 0 if self.dtype != np.bool_ else np.zeros(self.shape, bool), casting="unsafe")


def real(self: Array, out: Array, workspace: Array | None) -> None:
    """out = the real part of self (a real self is copied).

    Constraints (math/real, aclnnReal): self FLOAT/FLOAT16/COMPLEX64/COMPLEX128; out FLOAT for FLOAT and COMPLEX64,
    FLOAT16 for FLOAT16, DOUBLE for COMPLEX128; the same shape."""
    store(out, np.real(self))


def polar(input: Array, angle: Array, out: Array, workspace: Array | None) -> None:
    """out = input · cos(angle) + i · input · sin(angle), broadcasting (torch.polar).

    Constraints (math/polar, aclnnPolar): input and angle FLOAT; out COMPLEX64 of the broadcast shape."""
    r, theta = wide(input), wide(angle)
    result = np.empty(out.shape, np.complex64)
    result.real, result.imag = r * np.cos(theta), r * np.sin(theta)
    np.copyto(out, result)


def linalg_cross(self: Array, other: Array, dim: int, out: Array, workspace: Array | None) -> None:
    """out = the cross product of self and other along dim (whose size is 3), broadcasting the other axes.

    Constraints (math/cross, aclnnLinalgCross): self, other and out of one dtype (FLOAT16/FLOAT/BFLOAT16/DOUBLE/
    INT8-64/UINT8/COMPLEX64/COMPLEX128); out the broadcast shape; dim in [-ndim, ndim)."""
    compute = (lambda t: wide(t)) if is_float(self.dtype) else (lambda t: t.astype(np.int64))
    if np.iscomplexobj(self):
        compute = np.asarray
    a, b = np.broadcast_arrays(compute(self), compute(other))
    store(out, np.cross(a, b, axis=dim % out.ndim))


def _floats(x: Array) -> Array:
    return wide(x) if is_float(x.dtype) else x.astype(np.float32)


def lerps(self: Array, end: Array, weight: float, out: Array, workspace: Array | None) -> None:
    """out = self + weight · (end - self) with a scalar weight, broadcasting (torch.lerp).

    Constraints (math/lerp, aclnnLerps): self and end FLOAT/FLOAT16/BFLOAT16 of one dtype that broadcast; weight a
    number; out the broadcast shape, a float dtype."""
    a, b = wide(self), wide(end)
    store(out, a + a.dtype.type(weight) * (b - a))


def inplace_lerps(selfRef: Array, end: Array, weight: float, workspace: Array | None) -> None:
    """selfRef = Lerps(selfRef, end, weight); end broadcasts to selfRef's shape."""
    lerps(selfRef, end, weight, selfRef, workspace)


def sinc(self: Array, out: Array, workspace: Array | None) -> None:
    """out = sin(πx) / (πx), 1 at 0 (computed in float64: πx loses the zeros' position in float32).

    Constraints (math/sinc, aclnnSinc): self any real dtype (integers and BOOL give FLOAT); out self's shape."""
    x = self.astype(np.float64)
    with np.errstate(all="ignore"):
        store(out, np.where(x == 0, 1.0, np.sin(np.pi * x) / (np.pi * x)))


def inplace_sinc(selfRef: Array, workspace: Array | None) -> None:
    """selfRef = sinc(selfRef) (aclnnInplaceSinc: selfRef FLOAT/FLOAT16/BFLOAT16/DOUBLE)."""
    sinc(selfRef, selfRef, workspace)


def is_neg_inf(self: Array, out: Array, workspace: Array | None) -> None:
    """out = self is -inf (aclnnIsNegInf: self FLOAT/FLOAT16/BFLOAT16/DOUBLE; out BOOL of self's shape)."""
    np.copyto(out, np.isneginf(wide(self)), casting="unsafe")


def is_pos_inf(self: Array, out: Array, workspace: Array | None) -> None:
    """out = self is +inf (aclnnIsPosInf: as IsNegInf)."""
    np.copyto(out, np.isposinf(wide(self)), casting="unsafe")


def left_shift(self: Array, shiftBits: Any, out: Array, workspace: Array | None) -> None:
    """out = self << shiftBits, broadcasting, wrapping in out's dtype (a shift past 63 or negative gives 0).

    Constraints (math/left_shift, aclnnLeftShift/aclnnLeftShifts): self and shiftBits INT8-64/UINT8-64 (a tensor or a
    scalar) that promote; out the broadcast shape, an integer dtype."""
    shift = np.asarray(shiftBits).astype(np.int64)
    values = self.astype(np.uint64)  # two's complement bits: the shift wraps as the NPU's does
    shifted = values << np.clip(shift, 0, 63).astype(np.uint64)
    store(out, np.where((shift < 0) | (shift > 63), 0, shifted).astype(np.uint64).view(np.int64))


def _log_add_exp(base2: bool) -> Callable[..., None]:
    def kernel(self: Array, other: Array, out: Array, workspace: Array | None) -> None:
        with np.errstate(all="ignore"):
            store(out, (np.logaddexp2 if base2 else np.logaddexp)(_floats(self), _floats(other)))

    kernel.__name__ = "log_add_exp2" if base2 else "log_add_exp"
    kernel.__doc__ = (
        f"out = log{'2' if base2 else ''}({'2' if base2 else 'e'}^self + {'2' if base2 else 'e'}^other), "
        "broadcasting, without overflow. Constraints (math/log_add_exp): self and other any real dtype that "
        "broadcast (integers computed as FLOAT); out FLOAT/FLOAT16/BFLOAT16 of the broadcast shape."
    )
    return kernel


def _remainder(x: Any, y: Any) -> Any:
    """The divisor's sign; an integer divisor of zero leaves the dividend (the operator's documentation)."""
    if is_float(np.asarray(x).dtype) or is_float(np.asarray(y).dtype):
        return np.remainder(x, y)
    zero = np.asarray(y) == 0
    return np.where(zero, x, np.remainder(x, np.where(zero, 1, y)))


def square(self: Array, out: Array, workspace: Array | None) -> None:
    """out = self · self (integers wrap in their dtype).

    Constraints (math/square, aclnnSquare): self FLOAT/FLOAT16/BFLOAT16/INT32/INT64; out self's dtype and shape."""
    x = wide(self) if is_float(self.dtype) else self.astype(np.int64)
    store(out, x * x)


def xlog1py(x: Array, y: Array, z: Array, workspace: Array | None) -> None:
    """z = x · log1p(y), 0 where x is 0 and y is not NaN, broadcasting.

    Constraints (math/xlog1py, aclnnXlog1py): x and y FLOAT/FLOAT16/BFLOAT16 of one dtype that broadcast; z their
    dtype and broadcast shape."""
    a, b = wide(x), wide(y)
    with np.errstate(all="ignore"):
        store(z, np.where((a == 0) & ~np.isnan(b), 0, a * np.log1p(b)))


def round_decimals(self: Array, decimals: int, out: Array, workspace: Array | None) -> None:
    """out = self rounded half to even at `decimals` places (negative: to tens, hundreds, ...), as torch.round.

    Constraints (math/round, aclnnRoundDecimals): self FLOAT/FLOAT16/BFLOAT16/DOUBLE/INT32/INT64; out self's dtype and
    shape. Integers with decimals >= 0 are unchanged."""
    if not is_float(self.dtype):
        if decimals >= 0:
            np.copyto(out, self)
            return
        scale = 10 ** (-decimals)
        store(out, np.round(self.astype(np.float64) / scale) * scale)
        return
    x = wide(self)
    scale = x.dtype.type(10.0 ** abs(decimals))
    with np.errstate(all="ignore"):
        store(out, np.round(x * scale) / scale if decimals >= 0 else np.round(x / scale) * scale)


def inplace_round_decimals(selfRef: Array, decimals: int, workspace: Array | None) -> None:
    """selfRef = RoundDecimals(selfRef, decimals)."""
    round_decimals(selfRef, decimals, selfRef, workspace)


def div_mod(self: Any, other: Any, mode: int, out: Array, workspace: Array | None) -> None:
    """out = self / other (mode 0, true division), rounded toward zero (1) or down (2), broadcasting (torch.div's
    rounding_mode). Integers divide exactly in modes 1 and 2 (a zero divisor is refused); floats compute in float32.

    Constraints (math/div, aclnnDivMod/aclnnDivMods): self and other real dtypes that promote (other a tensor or a
    scalar); mode 0, 1 or 2; out the broadcast shape, a dtype the result casts to (a float one for mode 0)."""
    a, b = np.asarray(self), np.asarray(other)
    floating = is_float(a.dtype) or is_float(b.dtype) or isinstance(other, float) or mode == 0
    if not floating:
        x, y = a.astype(np.int64), b.astype(np.int64)
        if np.any(y == 0):
            raise invalid("DivMod", "other", "holds a zero: integer division by zero")
        quotient = np.floor_divide(x, y)
        if mode == 1:  # toward zero: floor, then one up where the signs differ and it did not divide exactly
            quotient = quotient + ((np.remainder(x, y) != 0) & ((x < 0) != (y < 0)))
        store(out, quotient)
        return
    dividend = _floats(a)
    divisor = _floats(b) if isinstance(other, np.ndarray) else dividend.dtype.type(other)
    with np.errstate(all="ignore"):
        result = dividend / divisor
        store(out, result if mode == 0 else np.trunc(result) if mode == 1 else np.floor(result))


def inplace_div_mod(selfRef: Array, other: Any, mode: int, workspace: Array | None) -> None:
    """selfRef = DivMod(selfRef, other, mode)."""
    div_mod(selfRef, other, mode, selfRef, workspace)


def _is_in(element: Any, test: Any, invert: bool, out: Array) -> None:
    floating = any(isinstance(v, float) or (isinstance(v, np.ndarray) and is_float(v.dtype)) for v in (element, test))
    a, b = (np.asarray(v).astype(np.float64 if floating else np.int64) for v in (element, test))
    np.copyto(out, (a != b) if invert else (a == b))


def is_in_scalar_tensor(element: Any, testElements: Array, assumeUnique: bool, invert: bool, out: Array,
                        workspace: Array | None) -> None:  # fmt: skip
    """out (0-D) = element is among testElements (negated by invert): torch.isin with a scalar element. A NaN
    element is among nothing.

    Constraints (math/equal, aclnnIsInScalarTensor): testElements any real dtype (UINT16 too), element a scalar that
    promotes with it; out a 0-D BOOL. assumeUnique changes nothing."""
    found = np.zeros(testElements.shape, bool)
    _is_in(element, testElements, False, found)
    out[...] = bool(found.any()) != invert


def is_in_tensor_scalar(element: Array, testElement: Any, assumeUnique: bool, invert: bool, out: Array,
                        workspace: Array | None) -> None:  # fmt: skip
    """out = element == testElement (negated by invert): torch.isin with one test element. Constraints
    (aclnnIsInTensorScalar): as IsInScalarTensor, out element's shape."""
    _is_in(element, testElement, invert, out)


def equal(self: Array, other: Array, out: Array, workspace: Array | None) -> None:
    """out[0] = self and other have the same shape and equal elements (torch.equal; NaN is not equal).

    Constraints (math/tensor_equal, aclnnEqual): self and other real dtypes that promote (any shapes); out BOOL [1]."""
    floating = is_float(self.dtype) or is_float(other.dtype)
    a, b = (t.astype(np.float64 if floating else np.int64) for t in (self, other))
    out[...] = self.shape == other.shape and bool(np.all(a == b))


def complex_(real: Array, imag: Array, out: Array, workspace: Array | None) -> None:
    """out = real + i · imag, broadcasting (torch.complex).

    Constraints (math/complex, aclnnComplex): real and imag FLOAT/FLOAT16/DOUBLE of one dtype that broadcast; out
    COMPLEX64 (COMPLEX128 for DOUBLE) of the broadcast shape."""
    result = np.empty(out.shape, out.dtype)
    result.real, result.imag = real, imag
    np.copyto(out, result)


def _extreme_n(name: str, pick: Callable[[Any, Any], Any]) -> Callable[..., None]:
    def kernel(tensors: list[Array], out: Array, workspace: Array | None) -> None:
        values = [wide(t) if is_float(t.dtype) else t for t in tensors]
        result = values[0]
        for v in values[1:]:
            result = pick(result, v)  # NaN propagates, as torch.maximum/minimum
        store(out, np.broadcast_to(result, out.shape))

    kernel.__name__ = name
    kernel.__doc__ = (
        f"out = the elementwise {pick.__name__} of the list, broadcasting. Constraints (math/maximum|minimum, "
        "aclnnMaxN/aclnnMinN): tensors of one dtype (FLOAT/FLOAT16/BFLOAT16/INT8/INT32/INT64) that broadcast; out "
        "their dtype and the broadcast shape."
    )
    return kernel


_ADD_V3 = binary("AddV3", np.add, "self + alpha · other (self a scalar)", scaled=True)


def inplace_add_v3(selfRef: Any, other: Array, alpha: Any, workspace: Array | None) -> None:
    """other = selfRef + alpha · other, selfRef a scalar (aclnnInplaceAddV3 writes its tensor, other)."""
    _ADD_V3(self=selfRef, other=other, alpha=alpha, out=other, workspace=workspace)


_B = binary
FUNCTIONS: dict[str, Callable[..., None]] = {
    "BitwiseAndTensor": _B("BitwiseAndTensor", np.bitwise_and, "self & other"),
    "BitwiseAndScalar": _B("BitwiseAndScalar", np.bitwise_and, "self & other"),
    "BitwiseAndTensorOut": _B("BitwiseAndTensorOut", np.bitwise_and, "self & other"),
    "BitwiseOrTensor": _B("BitwiseOrTensor", np.bitwise_or, "self | other"),
    "BitwiseOrScalar": _B("BitwiseOrScalar", np.bitwise_or, "self | other"),
    "BitwiseXorTensor": _B("BitwiseXorTensor", np.bitwise_xor, "self ^ other"),
    "BitwiseXorScalar": _B("BitwiseXorScalar", np.bitwise_xor, "self ^ other"),
    "RightShift": right_shift,
    "Gcd": _B("Gcd", np.gcd, "gcd(self, other) (non-negative)"),
    "XLogYTensor": _B("XLogYTensor", _xlogy, "self · log(other), 0 where self is 0", floats=True),
    "XLogYScalarOther": _B("XLogYScalarOther", _xlogy, "self · log(other), 0 where self is 0", floats=True),
    "XLogYScalarSelf": xlogy_scalar_self,
    "IsClose": is_close,
    "NanToNum": nan_to_num,
    "Signbit": signbit,
    "Real": real,
    "Polar": polar,
    "LinalgCross": linalg_cross,
    "Lerps": lerps,
    "InplaceLerps": inplace_lerps,
    "Sinc": sinc,
    "InplaceSinc": inplace_sinc,
    "IsNegInf": is_neg_inf,
    "IsPosInf": is_pos_inf,
    "LeftShift": left_shift,
    "LeftShifts": left_shift,
    "LogAddExp": _log_add_exp(base2=False),
    "LogAddExp2": _log_add_exp(base2=True),
    "Rsub": _B("Rsub", np.subtract, "other - alpha · self", x="other", y="self", scaled=True),
    "Rsubs": _B("Rsubs", np.subtract, "other - alpha · self", x="other", y="self", scaled=True),
    "RemainderScalarTensor": _B("RemainderScalarTensor", _remainder, "self mod other (divisor's sign)"),
    "Square": square,
    "Xlog1py": xlog1py,
    "RoundDecimals": round_decimals,
    "InplaceRoundDecimals": inplace_round_decimals,
    "DivMod": div_mod,
    "DivMods": div_mod,
    "InplaceDivMod": inplace_div_mod,
    "InplaceDivMods": inplace_div_mod,
    "IsInScalarTensor": is_in_scalar_tensor,
    "IsInTensorScalar": is_in_tensor_scalar,
    "Equal": equal,
    "Complex": complex_,
    "AddV3": _ADD_V3,
    "InplaceAddV3": inplace_add_v3,
    "MaxN": _extreme_n("max_n", np.maximum),
    "MinN": _extreme_n("min_n", np.minimum),
}
