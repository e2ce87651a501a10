import random

import pytest

from server.npu.memory.allocator import OffsetAllocator, OutOfSpace


def test_first_fit_split_and_coalesce() -> None:
    a = OffsetAllocator(1024, 64)
    x, sx = a.alloc(100)
    y, _ = a.alloc(64)
    z, _ = a.alloc(1)
    assert (x, sx, y, z) == (0, 128, 128, 192)
    a.free(y, 64)
    assert a.alloc(10) == (128, 64)  # the hole is reused first
    a.free(128, 64)
    a.free(x, sx)
    a.free(z, 64)
    assert a.free_blocks() == [(0, 1024)]
    assert a.free_bytes == 1024


def test_out_of_space_reports_largest_block() -> None:
    a = OffsetAllocator(256, 64)
    a.alloc(64)
    b, _ = a.alloc(64)
    a.alloc(64)
    a.free(b, 64)
    with pytest.raises(OutOfSpace) as info:
        a.alloc(128)
    assert (info.value.free, info.value.largest) == (128, 64)


def test_random_alloc_free_never_overlaps_and_returns_to_one_block() -> None:
    rng = random.Random(7)
    a = OffsetAllocator(1 << 16, 64)
    live: dict[int, int] = {}
    for _ in range(2000):
        if live and rng.random() < 0.45:
            off = rng.choice(list(live))
            a.free(off, live.pop(off))
        else:
            try:
                off, size = a.alloc(rng.randint(1, 2000))
            except OutOfSpace:
                continue
            assert off % 64 == 0
            assert all(off + size <= o or o + s <= off for o, s in live.items())
            live[off] = size
        assert a.free_bytes == (1 << 16) - sum(live.values())
    for off, size in live.items():
        a.free(off, size)
    assert a.free_blocks() == [(0, 1 << 16)]
