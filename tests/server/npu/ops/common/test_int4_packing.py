"""vnpu's int4 convention (server/npu/ops/common/int4.py): two values per byte or eight per int32 word, the lowest
nibble first, two's complement."""

from __future__ import annotations

import numpy as np
import pytest

from server.npu.ops.common import int4


def test_known_bytes() -> None:
    packed = np.array([[0x21, 0xF8]], np.uint8)  # values 1, 2, -8, -1
    assert int4.unpack(packed).tolist() == [[1, 2, -8, -1]]
    word = np.array([0x76543210], np.uint32).view(np.int32)
    assert int4.unpack(word).tolist() == [0, 1, 2, 3, 4, 5, 6, 7]


@pytest.mark.parametrize("container", [np.int8, np.uint8, np.int32, int4.INT4])
def test_round_trip(container: type) -> None:
    values = np.random.default_rng(3).integers(-8, 8, (4, 3, 16)).astype(np.int8)
    assert (int4.unpack(int4.pack(values, container)) == values).all()


def test_refuses_other_containers() -> None:
    with pytest.raises(TypeError):
        int4.unpack(np.zeros(4, np.float32))
    with pytest.raises(ValueError):
        int4.pack(np.zeros(3, np.int8), np.int8)
