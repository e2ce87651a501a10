"""PlanCache: one plan per kernel description, reused while memory holds; a plan reads memory when it runs."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from aclnn_testkit import FakeMemory, close, sample

import proto.aclnn as nn
from proto.aclnn import KernelDesc, aclTensor, consume, revalidate
from proto.constants import aclDataType
from proto.errors import ACL_ERROR_RT_DEVICE_MEM_ERROR, AclError
from server.npu.memory.arena import Epoch
from server.npu.ops import ViewCache
from server.npu.ops.plans import PlanCache

DT = aclDataType
F32, F16, BF16, F64, S32, S8 = DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16, DT.ACL_DOUBLE, DT.ACL_INT32, DT.ACL_INT8


def kernel(phase1: Callable[..., tuple[int, nn.aclOpExecutor]], *args: object) -> KernelDesc:
    _, executor = phase1(*args)
    return revalidate(consume(executor, phase1.__name__.removesuffix("GetWorkspaceSize")))


def plans(mem: FakeMemory, epoch: Epoch | None = None, capacity: int = 4096) -> PlanCache:
    epoch = epoch or Epoch()
    return PlanCache(ViewCache(mem.region, epoch), mem.region, epoch, capacity)


def add(mem: FakeMemory, shape: tuple[int, ...] = (4,)) -> tuple[KernelDesc, aclTensor, aclTensor, aclTensor]:
    a, b, out = (
        mem.tensor(np.ones(shape, np.float32), F32),
        mem.tensor(np.ones(shape, np.float32), F32),
        mem.empty(shape, F32),
    )
    return kernel(nn.aclnnAddGetWorkspaceSize, a, b, nn.aclCreateScalar(1, F32), out), a, b, out


def test_one_plan_per_description_and_workspace(mem: FakeMemory) -> None:
    cache = plans(mem)
    k, *_ = add(mem)
    twin, *_ = add(mem)
    assert cache.get(k, 0, 0) is cache.get(k, 0, 0)
    assert cache.get(twin, 0, 0) is not cache.get(k, 0, 0)
    workspace = mem.alloc(64)
    assert cache.get(k, workspace, 64) is not cache.get(k, 0, 0)
    assert len(cache) == 3


def test_a_plan_reads_memory_when_it_runs(mem: FakeMemory) -> None:
    cache = plans(mem)
    k, a, b, out = add(mem)
    cache.get(k, 0, 0)()
    np.testing.assert_array_equal(mem.read(out), [2, 2, 2, 2])
    mem.write(a, np.arange(4, dtype=np.float32))
    mem.write(b, np.full(4, 10, np.float32))
    cache.get(k, 0, 0)()
    np.testing.assert_array_equal(mem.read(out), [10, 11, 12, 13])


def test_the_cache_is_bounded(mem: FakeMemory) -> None:
    cache = plans(mem, capacity=3)
    for _ in range(10):
        cache.get(add(mem)[0], 0, 0)()
        assert len(cache) <= 3


def test_the_cache_forgets_its_plans_when_memory_is_freed(mem: FakeMemory) -> None:
    epoch = Epoch()
    cache = plans(mem, epoch)
    k, a, _, _ = add(mem)
    first = cache.get(k, 0, 0)
    del mem.blocks[a.data]  # freed...
    epoch.value += 1  # ...and said so
    with pytest.raises(AclError) as caught:
        cache.get(k, 0, 0)  # planned again, against live memory: refused
    assert caught.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR and len(cache) == 0
    mem.blocks[a.data] = a.itemsize * 4  # allocated again
    assert cache.get(k, 0, 0) is not first


CASES = [  # operator, dtypes of self / other / out, shapes of self / other / out, alpha
    ("Add", (F32, F32, F32), ((3, 4), (3, 4), (3, 4)), 1),
    ("Add", (F32, F32, F32), ((3, 1), (4,), (3, 4)), -1.5),
    ("Add", (F16, F32, F32), ((2, 3, 4), (1, 4), (2, 3, 4)), 2),
    ("Sub", (BF16, BF16, F32), ((3, 4), (3, 4), (3, 4)), 0.5),  # a bf16 result cast into float32 out
    ("Mul", (S32, S8, S32), ((4, 1), (1, 5), (4, 5)), None),
    ("Mul", (F64, F16, F64), ((5,), (), (5,)), None),
    ("Div", (S32, S32, F32), ((3, 4), (4,), (3, 4)), None),
    ("Div", (F16, F16, F16), ((6,), (6,), (6,)), None),
]


@pytest.mark.parametrize(("name", "dtypes", "shapes", "alpha"), CASES)
def test_warm_plans_match_a_float64_reference_on_fresh_data(
    mem: FakeMemory,
    rng: np.random.Generator,
    name: str,
    dtypes: tuple[DT, DT, DT],
    shapes: tuple[tuple[int, ...], ...],
    alpha: float | None,
) -> None:
    cache = plans(mem)
    a = mem.tensor(sample(rng, shapes[0], dtypes[0]), dtypes[0], step=2)  # strided
    b = mem.tensor(sample(rng, shapes[1], dtypes[1]), dtypes[1])
    out = mem.empty(shapes[2], dtypes[2], order=list(reversed(range(len(shapes[2])))))  # column-major
    args: list[object] = [a, b] if alpha is None else [a, b, nn.aclCreateScalar(alpha, F64)]
    k = kernel(getattr(nn, f"aclnn{name}GetWorkspaceSize"), *args, out)
    ufunc = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.true_divide}[name]
    for _ in range(3):  # new data each time: the same plan must see it
        x, y = sample(rng, shapes[0], dtypes[0]), sample(rng, shapes[1], dtypes[1])
        mem.write(a, x)
        mem.write(b, y)
        with np.errstate(all="ignore"):
            cache.get(k, 0, 0)()
            want = ufunc(x.astype(np.float64), y.astype(np.float64) * (1 if alpha is None else alpha))
        if np.issubdtype(mem.read(out).dtype, np.integer):
            want = want.astype(np.int64)
        close(mem.read(out), want, dtypes[2], rtol=2e-2 if F16 in dtypes or BF16 in dtypes else None)
    assert len(cache) == 1


OTHERS = {  # operator: its phase 1, its arguments between self and out (by dtype), out's shape
    "Relu": (nn.aclnnReluGetWorkspaceSize, lambda dt: (), (3, 4)),
    "Exp": (nn.aclnnExpGetWorkspaceSize, lambda dt: (), (3, 4)),
    "Gelu": (nn.aclnnGeluGetWorkspaceSize, lambda dt: (), (3, 4)),
    "Softmax": (nn.aclnnSoftmaxGetWorkspaceSize, lambda dt: (1,), (3, 4)),
    "ReduceSum": (nn.aclnnReduceSumGetWorkspaceSize, lambda dt: (nn.aclCreateIntArray([0]), False, dt), (4,)),
    "Mean": (nn.aclnnMeanGetWorkspaceSize, lambda dt: (nn.aclCreateIntArray([1]), True, dt), (3, 1)),
    "Cast": (nn.aclnnCastGetWorkspaceSize, lambda dt: (dt,), (3, 4)),
}


@pytest.mark.parametrize("dtype", [F32, F16])
@pytest.mark.parametrize("name", [*OTHERS, "Matmul"])
def test_warm_plans_of_other_families_equal_a_fresh_run(
    mem: FakeMemory, rng: np.random.Generator, name: str, dtype: DT
) -> None:
    """Each family's plan, run again on new data, gives what planning afresh gives (workspaces included)."""
    x = mem.tensor(sample(rng, (3, 4), dtype), dtype, step=2)
    if name == "Matmul":
        phase1, args, shape = nn.aclnnMatmulGetWorkspaceSize, (mem.tensor(sample(rng, (4, 5), dtype), dtype),), (3, 5)
    else:
        phase1, by_dtype, shape = OTHERS[name]
        args = by_dtype(dtype)
    tail = (0,) if name == "Matmul" else ()  # cubeMathType
    out, fresh = mem.empty(shape, dtype), mem.empty(shape, dtype)
    k = kernel(phase1, x, *args, out, *tail)
    twin = kernel(phase1, x, *args, fresh, *tail)
    workspace = mem.alloc(k.workspace_size) if k.workspace_size else 0
    cache = plans(mem)
    for _ in range(3):
        mem.write(x, sample(rng, (3, 4), dtype))
        with np.errstate(all="ignore"):
            cache.get(k, workspace, k.workspace_size)()
        mem.execute(twin)
        np.testing.assert_array_equal(mem.read(out), mem.read(fresh))
    assert len(cache) == 1
