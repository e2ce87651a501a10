"""The conformance suite's float64 references (`examples/cann_ops/references*.py`, written apart from the kernels)
against vnpu's kernels on random data: a reference that agreed with nothing would judge nothing."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from server.npu.ops.transformer.rope import rope_with_sin_cos_cache
from tests.server.npu.ops.test_ops_dump import verdict_module


@pytest.mark.parametrize("neox", [True, False])
def test_the_rope_with_sin_cos_cache_reference(neox: bool) -> None:
    """vLLM's rotary embedding: 3 tokens, 2 query heads and 1 key head of 64 with rotaryDim 32 (the rest kept)."""
    verdict = verdict_module()
    rng = np.random.default_rng(5)
    positions = np.array([3, 0, 3], np.int64)
    query = rng.standard_normal((3, 128)).astype(ml_dtypes.bfloat16)
    key = rng.standard_normal((3, 64)).astype(ml_dtypes.bfloat16)
    cache = rng.standard_normal((4, 32)).astype(ml_dtypes.bfloat16)
    query_out, key_out = np.zeros_like(query), np.zeros_like(key)
    rope_with_sin_cos_cache(positions, query, key, cache, None, 64, neox, query_out, key_out, None)
    args = {"positions": positions, "queryIn": query, "keyIn": key, "cosSinCache": cache, "mropeSection": None,
            "headSize": 64, "isNeoxStyle": neox}  # fmt: skip
    want = verdict.REFERENCES["RopeWithSinCosCache"](args)
    assert verdict.agrees(query_out, verdict.rounded(want["queryOut"], "bfloat16"), "bfloat16")
    assert verdict.agrees(key_out, verdict.rounded(want["keyOut"], "bfloat16"), "bfloat16")
    np.testing.assert_array_equal(key_out[:, 32:], key[:, 32:])  # past rotaryDim: copied
    c, s = cache[3, :16].astype(np.float64), cache[3, 16:].astype(np.float64)
    x = query[0].astype(np.float64)
    first = x[0] * c[0] - x[16] * s[0] if neox else x[0] * c[0] - x[1] * s[0]
    assert np.isclose(want["queryOut"][0, 0], first)
