"""One harness for the operators' test rows: a row names the operator, its arguments by C name (random inputs,
outputs, scalars, attributes) and a float64 numpy reference; `run` makes the host objects over a fake device
memory, runs the operator's phase 1 (`proto.aclnn`), revalidates and launches its kernel through the device's
planner (`server.npu.ops`), and compares every written tensor with the reference.

A reference gets the inputs' values as float64 arrays (integers as int64, bools as bool; the values actually
stored, so fp16/bf16 rounding of the inputs is in), scalars and attributes as they are, and returns the expected
value of each written tensor by name. Floats compare within `ulps` units in the last place of the output's dtype
(plus `atol`); integers and bools exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aclnn_testkit import FakeMemory, sample

import proto.aclnn as nn
from proto.aclnn.dtypes import INFO, Kind
from proto.constants import aclDataType
from server.npu.ops.dtypes import NUMPY
from tests.server.npu.ops.common.refkit import assert_rounded

DT = aclDataType
F32, F16, BF16, F64 = DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE
I32, I64, I8, U8, BOOL = DT.ACL_INT32, DT.ACL_INT64, DT.ACL_INT8, DT.ACL_UINT8, DT.ACL_BOOL
U64 = DT.ACL_UINT64


@dataclass(frozen=True)
class In:
    """A random input tensor (`values` fixes its values; `positive` keeps floats > 0.1; `low`/`high` bound them;
    `step` lays it out strided)."""

    shape: tuple[int, ...]
    dtype: aclDataType = F32
    values: Any = None
    positive: bool = False
    low: float | None = None
    high: float | None = None
    step: int = 1


@dataclass(frozen=True)
class Out:
    """An output tensor (garbage until the kernel writes it)."""

    shape: tuple[int, ...]
    dtype: aclDataType = F32


@dataclass(frozen=True)
class Ref:
    """A tensor read and written in place (random initial values, compared afterwards; `low`/`high` bound
    them as In's do)."""

    shape: tuple[int, ...]
    dtype: aclDataType = F32
    values: Any = None
    positive: bool = False
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Scalar:
    value: bool | int | float
    dtype: aclDataType = F32


@dataclass(frozen=True)
class Ints:
    values: tuple[int, ...]


@dataclass(frozen=True)
class Floats:
    values: tuple[float, ...]


@dataclass(frozen=True)
class Bools:
    values: tuple[bool, ...]


@dataclass(frozen=True)
class List:
    """A tensor list of inputs (In) or outputs (Out)."""

    items: tuple[In | Out, ...]


Reference = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Case:
    """One test row: aclnn<op>(args...) whose written tensors must equal ref(values)."""

    op: str
    args: dict[str, Any]
    ref: Reference
    ulps: float = 2
    atol: float = 0.0
    name: str = ""
    skip: tuple[str, ...] = field(default=())  # written tensors not compared (reserved outputs)

    @property
    def id(self) -> str:
        return self.name or self.op


def _values(rng: np.random.Generator, spec: In | Ref) -> np.ndarray:
    dtype = spec.dtype
    if spec.values is not None:
        return np.asarray(spec.values).astype(NUMPY[dtype])
    values = sample(rng, spec.shape, dtype)
    if INFO[dtype].kind is Kind.FLOAT:
        v = values.astype(np.float64)
        if spec.positive:
            v = np.abs(v) + 0.1
        low, high = getattr(spec, "low", None), getattr(spec, "high", None)
        if low is not None or high is not None:
            lo, hi = (-2.0 if low is None else low), (2.0 if high is None else high)
            v = lo + (hi - lo) * rng.random(spec.shape)
        values = v.astype(NUMPY[dtype])
    elif spec.positive:
        values = (np.abs(values.astype(np.int64)) + 1).astype(NUMPY[dtype])
    return values


def _as_reference(values: np.ndarray) -> np.ndarray:
    if values.dtype == np.bool_ or np.issubdtype(values.dtype, np.integer):
        return values.astype(np.int64) if values.dtype != np.bool_ else values
    return values.astype(np.float64)


@dataclass
class Launch:
    """The host objects of one row and what to compare afterwards."""

    host: list[Any] = field(default_factory=list)
    given: dict[str, Any] = field(default_factory=dict)
    written: dict[str, Any] = field(default_factory=dict)  # name -> tensor or list of tensors


def build(case: Case, mem: FakeMemory, rng: np.random.Generator) -> Launch:
    launch = Launch()
    for name, spec in case.args.items():
        host, given = _make(spec, mem, rng, launch, name)
        launch.host.append(host)
        launch.given[name] = given
    return launch


def _make(spec: Any, mem: FakeMemory, rng: np.random.Generator, launch: Launch, name: str) -> tuple[Any, Any]:
    if isinstance(spec, In | Ref):
        values = _values(rng, spec)
        tensor = mem.tensor(values, spec.dtype, step=getattr(spec, "step", 1))
        if isinstance(spec, Ref):
            launch.written[name] = tensor
        return tensor, _as_reference(mem.read(tensor))
    if isinstance(spec, Out):
        tensor = mem.empty(spec.shape, spec.dtype)
        launch.written[name] = tensor
        return tensor, None
    if isinstance(spec, List):
        made = [_make(item, mem, rng, Launch(), name) for item in spec.items]
        tensors = [host for host, _ in made]
        if spec.items and isinstance(spec.items[0], Out):
            launch.written[name] = tensors
        return nn.aclCreateTensorList(tensors), [given for _, given in made]
    if isinstance(spec, Scalar):
        scalar = nn.aclCreateScalar(spec.value, spec.dtype)
        return scalar, scalar.value
    if isinstance(spec, Ints):
        return nn.aclCreateIntArray(spec.values), spec.values
    if isinstance(spec, Floats):
        array = nn.aclCreateFloatArray(spec.values)
        return array, array.values
    if isinstance(spec, Bools):
        return nn.aclCreateBoolArray(spec.values), spec.values
    return spec, spec


def run(case: Case, mem: FakeMemory, rng: np.random.Generator) -> None:
    """Launch the row and compare its written tensors with the reference."""
    decl = nn.OPS[case.op]
    assert list(case.args) == list(decl.arg_names) or set(case.args) == set(decl.arg_names), (
        f"{case.id}: the row names {sorted(set(case.args) ^ set(decl.arg_names))} wrongly; {case.op} takes "
        f"{', '.join(decl.arg_names)}"
    )
    launch = build(case, mem, rng)
    phase1 = nn.function(f"aclnn{case.op}GetWorkspaceSize")
    assert phase1 is not None, case.op
    host = dict(zip(case.args, launch.host, strict=True))
    mem.launch(phase1, *(host[name] for name in decl.arg_names))
    expected = case.ref(**launch.given)
    assert set(expected) | set(case.skip) >= set(launch.written), (case.id, sorted(launch.written))
    for name, want in expected.items():
        got = launch.written[name]
        if isinstance(got, list):
            for i, (t, w) in enumerate(zip(got, want, strict=True)):
                compare(f"{case.id}: {name}[{i}]", mem.read(t), w, case)
        else:
            compare(f"{case.id}: {name}", mem.read(got), want, case)


def compare(label: str, got: np.ndarray, want: Any, case: Case) -> None:
    want = np.broadcast_to(np.asarray(want), got.shape) if np.ndim(want) == 0 else np.asarray(want)
    assert got.shape == want.shape, (label, got.shape, want.shape)
    if got.dtype.kind == "c":  # the real and imaginary parts, each as a float of the part's dtype
        compare(f"{label} (real)", got.real, np.real(want), case)
        compare(f"{label} (imag)", got.imag, np.imag(want), case)
    elif got.dtype.kind in "fc" or str(got.dtype) == "bfloat16":
        try:
            assert_rounded(got, want.astype(np.float64), ulps=case.ulps, atol=case.atol)
        except AssertionError as error:
            raise AssertionError(f"{label}: {error}") from None
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=label)


def f64(x: Any) -> Any:
    return np.asarray(x, np.float64)


def rounded(values: Any, dtype: aclDataType) -> np.ndarray:
    """float64 values rounded to `dtype` and back (what an input of that dtype holds)."""
    return np.asarray(values).astype(NUMPY[dtype]).astype(np.float64)


def as_f32(value: float) -> float:
    return float(np.float32(value))


def fill_ids(cases: Sequence[Case]) -> list[str]:
    return [c.id for c in cases]
