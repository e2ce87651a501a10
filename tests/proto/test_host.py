"""The host functions of proto.host against numpy and the runtime's documented values: fp16 both ways (every
half, random floats, the saturation the runtime does instead of Inf/NaN), type sizes, versions, attributes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from proto import host
from proto.constants import aclDataType
from proto.errors import ACL_ERROR_INTERNAL_ERROR, ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM, AclError

RNG = np.random.default_rng(16)


def test_every_finite_half_converts_exactly() -> None:
    bits = np.arange(1 << 16, dtype=np.uint16)
    finite = bits[(bits >> 10 & 0x1F) != 0x1F]
    want = finite.view(np.float16).astype(np.float64)
    got = np.array([host.aclFloat16ToFloat(int(b)) for b in finite])
    np.testing.assert_array_equal(got, want)
    assert math.copysign(1, host.aclFloat16ToFloat(0x8000)) == -1


def test_inf_and_nan_halves_read_as_the_runtime_reads_them() -> None:
    assert host.aclFloat16ToFloat(0x7C00) == 65536.0 and host.aclFloat16ToFloat(0xFC00) == -65536.0
    assert host.aclFloat16ToFloat(0x7E00) == 98304.0


def test_floats_round_to_nearest_even_like_numpy() -> None:
    normal = RNG.standard_normal(20000).astype(np.float32) * np.float32(10.0) ** RNG.integers(-9, 5, 20000)
    normal = normal[np.abs(normal) < 65504]
    ties = np.float32(1) + (np.arange(1024, dtype=np.float32) + np.float32(0.5)) / np.float32(1024)  # halfway
    tiny = RNG.uniform(-(2.0**-14), 2.0**-14, 5000).astype(np.float32)  # half subnormals
    for values in (normal, ties, tiny, np.float32([0.0, -0.0, 65504.0, -65504.0, 2.0**-24, 2.0**-25, 2.0**-26])):
        want = values.astype(np.float16).view(np.uint16).astype(int)
        got = np.array([host.aclFloatToFloat16(float(v)) for v in values])
        np.testing.assert_array_equal(got, want)
    assert host.aclFloatToFloat16(1.625) == 0x3E80  # 2_system_info prints 1.625000 -> 0x3e80


@pytest.mark.parametrize("value", [65520.0, 65536.0, 1e30, math.inf, math.nan, -70000.0, -math.inf])
def test_too_large_inf_and_nan_saturate_instead_of_overflowing(value: float) -> None:
    assert host.aclFloatToFloat16(value) == (0xFBFF if math.copysign(1, value) < 0 else 0x7BFF)


def test_type_sizes() -> None:
    t = aclDataType
    want = {t.ACL_FLOAT: 4, t.ACL_FLOAT16: 2, t.ACL_BF16: 2, t.ACL_INT8: 1, t.ACL_INT64: 8, t.ACL_DOUBLE: 8,
            t.ACL_COMPLEX64: 8, t.ACL_COMPLEX128: 16, t.ACL_COMPLEX32: 4, t.ACL_STRING: 0, t.ACL_DT_UNDEFINED: 0,
            t.ACL_INT4: 1, t.ACL_HIFLOAT8: 1, t.ACL_FLOAT8_E4M3FN: 1, t.ACL_HIFLOAT4: 8}  # fmt: skip
    assert {k: host.aclDataTypeSize(k) for k in want} == want
    assert host.aclDataTypeSize(12345) == 8  # every other value, as the runtime answers


def test_versions_come_from_the_version_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = tmp_path / "share" / "info"
    for package, text in (("runtime", "Version=8.5.0\n"), ("opp_kernel", "x\nVersion= 8.5.0.alpha001 \n"),
                          ("bad", "Version=eight\n"), ("empty", "no version here\n")):  # fmt: skip
        (info / package).mkdir(parents=True)
        (info / package / "version.info").write_text(text)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    assert host.aclsysGetVersionStr("runtime") == "8.5.0" and host.aclsysGetVersionNum("runtime") == 80_500_000
    assert host.aclsysGetVersionStr("opp-kernel") == "8.5.0.alpha001"  # '-' retried as '_'
    assert host.aclsysGetVersionNum("opp_kernel") == 80_500_000 - 300 + 1
    for package, code in (("missing", ACL_ERROR_INVALID_FILE), ("empty", ACL_ERROR_INVALID_FILE),
                          ("bad", ACL_ERROR_INTERNAL_ERROR), (None, ACL_ERROR_INVALID_PARAM)):  # fmt: skip
        with pytest.raises(AclError) as info_:
            host.aclsysGetVersionNum(package)
        assert info_.value.code == code
    monkeypatch.delenv("ASCEND_HOME_PATH")
    with pytest.raises(AclError) as unset:
        host.aclsysGetVersionStr("runtime")
    assert unset.value.code == ACL_ERROR_INVALID_FILE and "ASCEND_HOME_PATH" in unset.value.message


def test_cann_attributes_and_fixed_answers() -> None:
    assert host.aclGetCannAttributeList() == [0, 1, 2]
    assert [host.aclGetCannAttribute(a) for a in (0, 1, 2)] == [1, 1, 1]
    with pytest.raises(AclError) as info:
        host.aclGetCannAttribute(-1)
    assert info.value.code == ACL_ERROR_INVALID_PARAM
    assert host.aclrtGetRunMode() == 1 and host.aclrtGetVersion() == (1, 17, 0)
    assert host.aclrtDeviceGetStreamPriorityRange() == (7, 0)


def test_data_buffers_hold_a_pointer_and_a_size() -> None:
    buffer = host.aclCreateDataBuffer(0x12C0_0000_0040, 1 << 33)
    assert host.aclGetDataBufferAddr(buffer) == 0x12C0_0000_0040
    assert host.aclGetDataBufferSizeV2(buffer) == 1 << 33 and host.aclGetDataBufferSize(buffer) == 0
    host.aclUpdateDataBuffer(buffer, None, 7)
    assert (host.aclGetDataBufferAddr(buffer), host.aclGetDataBufferSizeV2(buffer)) == (0, 7)
    assert host.aclGetDataBufferAddr(None) == 0 and host.aclGetDataBufferSizeV2(None) == 0
    for call in (lambda: host.aclDestroyDataBuffer(None), lambda: host.aclUpdateDataBuffer(None, 0, 0)):
        with pytest.raises(AclError) as info:
            call()
        assert info.value.code == ACL_ERROR_INVALID_PARAM
