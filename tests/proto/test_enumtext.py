"""How C enum members are written for people (`proto.enumtext`): listed in a bad value's message, read by name."""

from __future__ import annotations

import pytest

from proto.constants import aclmdlRICaptureMode, aclrtMemMallocPolicy
from proto.enumtext import by_name, members, not_member

MODES = (
    "ACL_MODEL_RI_CAPTURE_MODE_GLOBAL=0, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL=1, ACL_MODEL_RI_CAPTURE_MODE_RELAXED=2"
)


def test_a_bad_value_lists_the_members() -> None:
    assert not_member("mode", 7, aclmdlRICaptureMode) == f"mode 7 is not an aclmdlRICaptureMode: use {MODES}"
    assert not_member("mode", -1, aclmdlRICaptureMode).startswith("mode -1 is not")
    assert not_member("mode", 4096, aclmdlRICaptureMode).startswith("mode 4096 (0x1000) is not")  # big: hex too
    bits = not_member("policy", 3, aclrtMemMallocPolicy, only={0, 1}, bits=True)
    assert (
        bits
        == "policy 3 (0x3) is not an aclrtMemMallocPolicy: use ACL_MEM_MALLOC_HUGE_FIRST=0, ACL_MEM_MALLOC_HUGE_ONLY=1"
    )
    assert members(aclrtMemMallocPolicy, only={0x100}) == "ACL_MEM_TYPE_LOW_BAND_WIDTH=0x100"  # flag bits in hex


def test_names_are_read_exactly_and_combined_only_where_members_combine() -> None:
    assert by_name("mode", "ACL_MODEL_RI_CAPTURE_MODE_RELAXED", aclmdlRICaptureMode) == 2
    both = "ACL_MEM_MALLOC_HUGE_ONLY | ACL_MEM_TYPE_HIGH_BAND_WIDTH"
    assert by_name("policy", both, aclrtMemMallocPolicy, combine=True) == 0x1001
    for name, combine in (("acl_model_ri_capture_mode_relaxed", False), ("RELAXED", False), (both, False)):
        with pytest.raises(ValueError) as bad:
            by_name("mode", name, aclmdlRICaptureMode, combine)
        assert str(bad.value) == f"mode {name!r} is not the name of an aclmdlRICaptureMode: use {MODES}"
    with pytest.raises(ValueError, match=r"\(names may be joined by \|\)$"):
        by_name("policy", "ACL_MEM_MALLOC_HUGE_ONLY | HBM", aclrtMemMallocPolicy, combine=True)
