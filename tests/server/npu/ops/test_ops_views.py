"""tensor_view: strided, offset views of device memory, no copies, read-only inputs; the ViewCache; run_kernel's
dispatch."""

from __future__ import annotations

import numpy as np
import pytest
from aclnn_testkit import FakeMemory, sample

from proto.aclnn import (
    OPS,
    RULES,
    aclCreateTensor,
    aclnnAddGetWorkspaceSize,
    aclnnDivGetWorkspaceSize,
    aclnnMatmulGetWorkspaceSize,
    aclScalar,
)
from proto.constants import aclDataType, aclFormat
from proto.errors import ACL_ERROR_RT_DEVICE_MEM_ERROR, ACLNN_ERR_INNER, ACLNN_ERR_INNER_FIND_KERNEL, AclError
from server.npu import ops
from server.npu.memory.arena import Epoch
from server.npu.ops import ViewCache, implemented, run_kernel, tensor_view

DT = aclDataType


@pytest.mark.parametrize("dtype", [DT.ACL_FLOAT, DT.ACL_BF16, DT.ACL_INT64, DT.ACL_BOOL])
@pytest.mark.parametrize(
    "layout", [{}, {"step": 3}, {"offset": 5}, {"order": (2, 0, 1)}, {"step": 2, "offset": 1, "order": (1, 2, 0)}]
)
def test_a_view_reads_the_elements_the_tensor_describes(
    mem: FakeMemory, rng: np.random.Generator, dtype: aclDataType, layout: dict[str, object]
) -> None:
    data = sample(rng, (2, 3, 4), dtype)
    t = mem.tensor(data, dtype, **layout)  # type: ignore[arg-type]
    view = tensor_view(t, mem.region)
    np.testing.assert_array_equal(view, data)
    assert np.shares_memory(view, mem.buffer)
    view[...] = sample(rng, (2, 3, 4), dtype)
    np.testing.assert_array_equal(mem.read(t), view)


def test_input_views_are_read_only(mem: FakeMemory, rng: np.random.Generator) -> None:
    t = mem.tensor(sample(rng, (4,), DT.ACL_FLOAT), DT.ACL_FLOAT)
    view = tensor_view(t, mem.region, writeable=False)
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 1.0


def test_zero_dim_broadcast_and_empty_views(mem: FakeMemory) -> None:
    storage = mem.tensor(np.array([1.5, 2.5, 3.5], np.float32), DT.ACL_FLOAT)
    zero_d = mem.alias(storage, [], [], 2)
    assert tensor_view(zero_d, mem.region).shape == () and tensor_view(zero_d, mem.region)[()] == 3.5
    rows = tensor_view(mem.alias(storage, [2, 3], [0, 1], 0), mem.region)
    np.testing.assert_array_equal(rows, [[1.5, 2.5, 3.5]] * 2)
    nowhere = aclCreateTensor([0, 4], DT.ACL_FLOAT, [4, 1], 0, aclFormat.ACL_FORMAT_ND, [0], 0)
    assert tensor_view(nowhere, mem.region).shape == (0, 4)


def test_memory_errors_come_from_the_region(mem: FakeMemory) -> None:
    t = mem.tensor(np.zeros(4, np.float32), DT.ACL_FLOAT)
    past_the_end = aclCreateTensor([4], DT.ACL_FLOAT, [1], 0, aclFormat.ACL_FORMAT_ND, [4], t.data + 8)
    with pytest.raises(AclError) as caught:
        tensor_view(past_the_end, mem.region)
    assert caught.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR


def test_a_region_of_the_wrong_size_is_an_inner_error(mem: FakeMemory) -> None:
    t = mem.tensor(np.zeros(4, np.float32), DT.ACL_FLOAT)
    with pytest.raises(AclError) as caught:
        tensor_view(t, lambda ptr, n: np.zeros(n - 1, np.uint8))
    assert caught.value.code == ACLNN_ERR_INNER


def test_the_implemented_operators_are_the_ruled_ones() -> None:
    """Every row of the rule table has a kernel and every kernel a row: phase 1 passes only where a launch runs."""
    assert implemented() == set(RULES)
    assert all(OPS[name].implemented for name in RULES)


def test_run_kernel_checks_the_workspace(mem: FakeMemory, rng: np.random.Generator) -> None:
    a = mem.tensor(sample(rng, (2, 3), DT.ACL_FLOAT), DT.ACL_FLOAT)
    b = mem.tensor(sample(rng, (3, 2), DT.ACL_FLOAT), DT.ACL_FLOAT)
    out = mem.empty((2, 2), DT.ACL_FLOAT)
    size, executor = aclnnMatmulGetWorkspaceSize(a, b, out, 0)
    for workspace in (None, np.zeros(size - 1, np.uint8)):
        with pytest.raises(AclError, match=f"workspace holds .* aclnnMatmul needs {size}") as caught:
            run_kernel(executor.kernel, mem.region, workspace)
        assert caught.value.api == "aclnnMatmul"


def test_run_kernel_without_a_kernel_is_561003(mem: FakeMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    x = mem.tensor(np.ones(2, np.float32), DT.ACL_FLOAT)
    kernel = aclnnAddGetWorkspaceSize(x, x, aclScalar(1.0, DT.ACL_FLOAT), x)[1].kernel
    monkeypatch.delitem(ops.KERNELS, "Add")
    with pytest.raises(AclError) as caught:
        run_kernel(kernel, mem.region, None)
    assert (caught.value.code, caught.value.api) == (ACLNN_ERR_INNER_FIND_KERNEL, "aclnnAdd")


def test_run_kernel_silences_floating_point_warnings(mem: FakeMemory) -> None:
    x = mem.tensor(np.array([1.0, 0.0, -1.0], np.float32), DT.ACL_FLOAT)
    zero = mem.tensor(np.zeros(3, np.float32), DT.ACL_FLOAT)
    out = mem.empty((3,), DT.ACL_FLOAT)
    mem.launch(aclnnDivGetWorkspaceSize, x, zero, out)
    np.testing.assert_array_equal(mem.read(out), [np.inf, np.nan, -np.inf])


def test_a_view_cache_shares_one_view_per_memory_and_mode(mem: FakeMemory) -> None:
    cache = ViewCache(mem.region, Epoch())
    t = mem.tensor(np.arange(4, dtype=np.float32), DT.ACL_FLOAT)
    twin = aclCreateTensor([4], DT.ACL_FLOAT, [1], 0, aclFormat.ACL_FORMAT_ND, [4], t.data)  # equal, not the same
    assert twin is not t and cache(twin, False) is cache(t, False)
    assert cache(t, True) is not cache(t, False) and cache(t, True).flags.writeable
    as_ints = aclCreateTensor([4], DT.ACL_INT32, [1], 0, aclFormat.ACL_FORMAT_ND, [4], t.data)
    assert cache(as_ints, False).dtype == np.int32  # same bytes, another dtype: another view
    shifted = mem.alias(t, [2], [2], 1)
    np.testing.assert_array_equal(cache(shifted, False), [1.0, 3.0])
    assert len(cache) == 4


def test_a_view_cache_is_bounded(mem: FakeMemory) -> None:
    cache = ViewCache(mem.region, Epoch(), capacity=3)
    storage = mem.tensor(np.arange(16, dtype=np.float32), DT.ACL_FLOAT)
    for offset in range(10):
        assert cache(mem.alias(storage, [2], [1], offset), False)[0] == offset
        assert len(cache) <= 3


def test_a_view_cache_forgets_everything_when_memory_is_freed(mem: FakeMemory) -> None:
    epoch = Epoch()
    cache = ViewCache(mem.region, epoch)
    t = mem.tensor(np.ones(4, np.float32), DT.ACL_FLOAT)
    first = cache(t, True)
    del mem.blocks[t.data]  # freed...
    assert cache(t, True) is first  # ...but nobody said so: the cache cannot know (the epoch is the contract)
    epoch.value += 1
    with pytest.raises(AclError) as caught:
        cache(t, True)  # resolved again, against live memory: refused
    assert caught.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR and len(cache) == 0
