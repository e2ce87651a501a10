"""The ACL functions that run in the calling process, with no device: type sizes, fp16 conversion, versions,
CANN attributes, the run mode and the stream priority range (spec-breadth 1.4, 16). The client exports them
under their C names, and the C toolkit through `HOST`, which gives each its C out-parameters.

Behaviour read from the runtime's ACL layer (src/acl/aclrt_impl: data_buffer.cpp, types/fp16_impl.cpp, acl.cpp),
written here in vnpu's own terms.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from proto import allocator
from proto.constants import aclCannAttr, aclCANNPackageName, aclDataType
from proto.errors import (
    ACL_ERROR_INTERNAL_ERROR,
    ACL_ERROR_INVALID_FILE,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_PARAM_INVALID,
    AclError,
)
from proto.identity import CANN_VERSION, NPU_ARCHES, SOC_NAME

ACL_MAJOR_VERSION: Final = 1  # the ACL interface version the headers declare (aclrtGetVersion)
ACL_MINOR_VERSION: Final = 17
ACL_PATCH_VERSION: Final = 0
ACL_PKG_VERSION_MAX_SIZE: Final = 128  # aclsysGetVersionStr's buffer, its NUL included
ACL_HOST_RUN_MODE: Final = 1  # aclrtRunMode ACL_HOST: the program runs on a host, not on the device
STREAM_PRIORITY_LEAST: Final = 7
STREAM_PRIORITY_GREATEST: Final = 0
# CANN attributes (aclCannAttr) and the runtime version each needs; the SoC vnpu presents has bf16 and inf/nan
CANN_ATTRIBUTE_SINCE: Final = {
    aclCannAttr.ACL_CANN_ATTR_INF_NAN: (7, 1),
    aclCannAttr.ACL_CANN_ATTR_BF16: (7, 1),
    aclCannAttr.ACL_CANN_ATTR_JIT_COMPILE: (6, 4),
}

_T = aclDataType
_SIZES: Final = {
    **dict.fromkeys((_T.ACL_STRING, _T.ACL_DT_UNDEFINED), 0),
    **dict.fromkeys((_T.ACL_BOOL, _T.ACL_INT8, _T.ACL_UINT8, _T.ACL_INT4, _T.ACL_UINT1, _T.ACL_HIFLOAT8), 1),
    **dict.fromkeys((_T.ACL_FLOAT8_E5M2, _T.ACL_FLOAT8_E4M3FN, _T.ACL_FLOAT8_E8M0), 1),
    **dict.fromkeys((_T.ACL_FLOAT16, _T.ACL_INT16, _T.ACL_UINT16, _T.ACL_BF16), 2),
    **dict.fromkeys((_T.ACL_FLOAT, _T.ACL_INT32, _T.ACL_UINT32, _T.ACL_COMPLEX32), 4),
    _T.ACL_COMPLEX128: 16,
}


def aclDataTypeSize(dataType: int) -> int:  # noqa: N802, N803
    """Bytes per element; 8 for every type not listed (as the runtime answers, out-of-range values included)."""
    size: int = _SIZES.get(dataType, 8)  # type: ignore[call-overload]
    return size


def aclFloat16ToFloat(value: int) -> float:  # noqa: N802
    """The runtime's conversion: exact for finite halves; the exponent field is not special-cased, so the bit
    patterns of Inf and NaN become 65536 and larger finite values."""
    sign, exponent, mantissa = value >> 15 & 1, value >> 10 & 0x1F, value & 0x3FF
    if exponent == 0 and mantissa == 0:
        return -0.0 if sign else 0.0
    significand = mantissa if exponent == 0 else mantissa | 0x400
    magnitude = significand * 2.0 ** (max(exponent, 1) - 25)
    return -magnitude if sign else magnitude


def aclFloatToFloat16(value: float) -> int:  # noqa: N802
    """The runtime's conversion: round half to even; |x| >= 65536, Inf and NaN saturate to +-65504 (0x7BFF)."""
    bits: int = struct.unpack("<I", struct.pack("<f", value))[0]
    sign, exponent, mantissa = bits >> 31, bits >> 23 & 0xFF, bits & 0x7FFFFF
    if exponent > 127 + 15:
        half_exponent, half_mantissa = 0x1E, 0x3FF
    elif exponent <= 127 - 15:
        half_exponent = 0
        if exponent >= 127 - 24:
            shifted = (mantissa | 0x800000) << (exponent - (127 - 24))
            half_mantissa = (shifted >> 23) + _rounds_up(shifted, 23)
        else:
            half_mantissa = 1 if exponent == 127 - 25 and mantissa else 0
    else:
        half_exponent = exponent - (127 - 15)
        half_mantissa = (mantissa >> 13) + _rounds_up(mantissa, 13)
        if half_mantissa & 0x400:
            half_exponent += 1
    if half_exponent >= 0x1F:
        half_exponent, half_mantissa = 0x1E, 0x3FF
    elif half_exponent == 0 and half_mantissa == 0x400:
        half_exponent, half_mantissa = 1, 0
    return sign << 15 | half_exponent << 10 | half_mantissa & 0x3FF


def _rounds_up(bits: int, dropped: int) -> int:
    """1 when dropping the low `dropped` bits rounds up, to nearest, ties to even."""
    half = 1 << (dropped - 1)
    kept_odd, rest = bits >> dropped & 1, bits & ((half << 1) - 1)
    return int(rest > half or (rest == half and bool(kept_odd)))


def aclrtGetRunMode() -> int:  # noqa: N802
    return ACL_HOST_RUN_MODE


def aclrtGetSocName() -> str:  # noqa: N802
    """Answered before aclInit too (CANN's sample tooling asks it first)."""
    return SOC_NAME


def aclrtCheckArchCompatibility(socVersion: str | None) -> int:  # noqa: N802, N803
    """1 when `socVersion` has the NPU architecture of the SoC vnpu presents, else 0; an unknown name is 107000."""
    if not socVersion:
        raise AclError(ACL_ERROR_RT_PARAM_INVALID, "socVersion is NULL or empty", "aclrtCheckArchCompatibility")
    arch = NPU_ARCHES.get(socVersion)
    if arch is None:
        raise AclError(
            ACL_ERROR_RT_PARAM_INVALID,
            f"{socVersion!r} is not a SoC name the runtime knows",
            "aclrtCheckArchCompatibility",
        )
    return int(arch == NPU_ARCHES[SOC_NAME])


def aclrtGetVersion() -> tuple[int, int, int]:  # noqa: N802
    return ACL_MAJOR_VERSION, ACL_MINOR_VERSION, ACL_PATCH_VERSION


def aclrtDeviceGetStreamPriorityRange() -> tuple[int, int]:  # noqa: N802
    """(least, greatest): a larger number is a lower priority."""
    return STREAM_PRIORITY_LEAST, STREAM_PRIORITY_GREATEST


def aclrtDeviceGetBareTgid() -> int:  # noqa: N802
    """The process id the IPC and sharing whitelists take."""
    return os.getpid()


def aclGetCannAttributeList() -> list[int]:  # noqa: N802
    """The aclCannAttr values available with this CANN version on this SoC, in enum order."""
    return [int(attr) for attr in sorted(CANN_ATTRIBUTE_SINCE) if aclGetCannAttribute(attr)]


def aclGetCannAttribute(cannAttr: int) -> int:  # noqa: N802, N803
    since = CANN_ATTRIBUTE_SINCE.get(cannAttr)  # type: ignore[call-overload]
    if since is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"cannAttr {cannAttr} is not an aclCannAttr (0, 1 or 2)")
    major, minor, *_ = (int(part) for part in CANN_VERSION.split("."))
    return int((major, minor) >= since)


def aclsysGetVersionStr(pkgName: str | None) -> str:  # noqa: N802, N803
    """The `Version=` of $ASCEND_HOME_PATH/share/info/<pkgName>/version.info (vnpu's toolkit has `runtime`)."""
    if not pkgName:
        raise AclError(ACL_ERROR_INVALID_PARAM, "pkgName is NULL")
    text = _version_file(pkgName)
    for line in text.splitlines():
        if "Version=" in line:
            version = line.split("Version=", 1)[1].strip()
            if version:
                if len(version) >= ACL_PKG_VERSION_MAX_SIZE:
                    raise AclError(
                        ACL_ERROR_INTERNAL_ERROR,
                        f"the version of {pkgName} is {len(version)} characters, more than versionStr holds",
                    )
                return version
    raise AclError(ACL_ERROR_INVALID_FILE, f"the version file of {pkgName} has no Version= line")


# aclsysGetCANNVersion: the package directory each aclCANNPackageName reads (the runtime's own table)
CANN_PACKAGES: Final = {
    aclCANNPackageName.ACL_PKG_NAME_CANN: "runtime",
    aclCANNPackageName.ACL_PKG_NAME_RUNTIME: "runtime",
    aclCANNPackageName.ACL_PKG_NAME_COMPILER: "bisheng-compiler",
    aclCANNPackageName.ACL_PKG_NAME_HCCL: "hccl",
    aclCANNPackageName.ACL_PKG_NAME_TOOLKIT: "oam-tools",
    aclCANNPackageName.ACL_PKG_NAME_OPP: "ops-legacy",
    aclCANNPackageName.ACL_PKG_NAME_OPP_KERNEL: "ops-legacy",
}


def aclsysGetCANNVersion(name: int) -> tuple[str, str, str, str, str]:  # noqa: N802
    """(version, major, minor, release, patch) of a package, from its version.info as aclsysGetVersionStr reads it
    (an "X.Y.Z-suffix" version's suffix joins the last part; missing parts are "0"). The driver's version lives
    outside the toolkit (/etc/ascend_install.info), which vnpu has not: 100003."""
    if name == aclCANNPackageName.ACL_PKG_NAME_DRIVER:
        raise AclError(ACL_ERROR_INVALID_FILE, "vnpu has no driver package (/etc/ascend_install.info)")
    package = CANN_PACKAGES.get(name)  # type: ignore[call-overload]
    if package is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, f"name {name} is not an aclCANNPackageName")
    text = aclsysGetVersionStr(package)
    if "-" in text:
        head, tail = text.split("-", 1)
        text = f"{head}.{tail.replace('.', '')}"
    parts = text.split(".")
    if len(parts) < 2:
        raise AclError(ACL_ERROR_INVALID_FILE, f"the version {text!r} of {package} has fewer than two parts")
    major, minor, release, patch = [*parts, "0", "0"][:4]
    return text, major, minor, release, patch


def aclsysGetVersionNum(pkgName: str | None) -> int:  # noqa: N802, N803
    """major*10^7 + minor*10^5 + patch*10^3, less 300/200/100 for alpha/beta/rc plus the number after it."""
    version = aclsysGetVersionStr(pkgName)
    found = _VERSION.match(version)
    if found is None:
        raise AclError(ACL_ERROR_INTERNAL_ERROR, f"the version {version!r} of {pkgName} is not X.Y.Z[.alphaN]")
    major, minor, patch, stage, number = found.groups()
    value = int(major) * 10**7 + int(minor) * 10**5 + int(patch) * 10**3
    if stage:
        value += -_STAGES[stage.lower()] + int(number or 0)
    return value


_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:[.-]?(alpha|beta|rc)[.-]?(\d+)?)?$", re.IGNORECASE)
_STAGES: Final = {"alpha": 300, "beta": 200, "rc": 100}


def _version_file(package: str) -> str:
    home = os.environ.get("ASCEND_HOME_PATH")
    if not home or not Path(home).is_dir():
        raise AclError(
            ACL_ERROR_INVALID_FILE,
            "ASCEND_HOME_PATH is not set to a directory (source the toolkit's bin/setenv.bash: `vnpu toolkit`)",
        )
    names = [package, package.replace("-", "_") if "-" in package else package.replace("_", "-")]
    for name in dict.fromkeys(names):
        path = Path(home) / "share" / "info" / name / "version.info"
        if path.is_file():
            return path.read_text()
    raise AclError(ACL_ERROR_INVALID_FILE, f"{Path(home) / 'share' / 'info' / package / 'version.info'} does not exist")


@dataclass
class aclDataBuffer:  # noqa: N801
    """A pointer and a size, held on the host; destroying it never frees the memory it names."""

    data: int
    size: int


def aclCreateDataBuffer(data: int | None, size: int) -> aclDataBuffer:  # noqa: N802
    """NULL data and size 0 are accepted, as in the runtime."""
    return aclDataBuffer(data or 0, size)


def aclDestroyDataBuffer(dataBuffer: aclDataBuffer | None) -> None:  # noqa: N802, N803
    if dataBuffer is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, "dataBuffer is NULL", "aclDestroyDataBuffer")


def aclUpdateDataBuffer(dataBuffer: aclDataBuffer | None, data: int | None, size: int) -> None:  # noqa: N802, N803
    if dataBuffer is None:
        raise AclError(ACL_ERROR_INVALID_PARAM, "dataBuffer is NULL", "aclUpdateDataBuffer")
    dataBuffer.data, dataBuffer.size = data or 0, size


def aclGetDataBufferAddr(dataBuffer: aclDataBuffer | None) -> int:  # noqa: N802, N803
    return 0 if dataBuffer is None else dataBuffer.data


def aclGetDataBufferSizeV2(dataBuffer: aclDataBuffer | None) -> int:  # noqa: N802, N803
    return 0 if dataBuffer is None else dataBuffer.size


def aclGetDataBufferSize(dataBuffer: aclDataBuffer | None) -> int:  # noqa: N802, N803
    """The size truncated to 32 bits (deprecated in the runtime for that reason)."""
    return aclGetDataBufferSizeV2(dataBuffer) & 0xFFFF_FFFF


@dataclass(frozen=True)
class HostCall:
    """A host function as C sees it: its C argument names in order, and its out-parameters (empty: the result is
    the C return value itself). `nullable`: an out-parameter may be NULL (it is then not written)."""

    function: Callable[..., Any]
    args: tuple[str, ...] = ()
    outs: tuple[str, ...] = ()
    nullable: bool = False


HOST: Final[dict[str, HostCall]] = {
    "aclDataTypeSize": HostCall(aclDataTypeSize, ("dataType",)),
    "aclFloat16ToFloat": HostCall(aclFloat16ToFloat, ("value",)),
    "aclFloatToFloat16": HostCall(aclFloatToFloat16, ("value",)),
    "aclrtGetRunMode": HostCall(aclrtGetRunMode, outs=("runMode",)),
    "aclrtGetVersion": HostCall(aclrtGetVersion, outs=("majorVersion", "minorVersion", "patchVersion")),
    "aclrtDeviceGetStreamPriorityRange": HostCall(
        aclrtDeviceGetStreamPriorityRange, outs=("leastPriority", "greatestPriority"), nullable=True
    ),
    "aclrtDeviceGetBareTgid": HostCall(aclrtDeviceGetBareTgid, outs=("pid",)),
    "aclrtCheckArchCompatibility": HostCall(aclrtCheckArchCompatibility, ("socVersion",), ("canCompatible",)),
    "aclGetCannAttribute": HostCall(aclGetCannAttribute, ("cannAttr",), ("value",)),
    "aclsysGetVersionNum": HostCall(aclsysGetVersionNum, ("pkgName",), ("versionNum",)),
}
DATA_BUFFER_FUNCTIONS: Final = (
    aclCreateDataBuffer,
    aclDestroyDataBuffer,
    aclUpdateDataBuffer,
    aclGetDataBufferAddr,
    aclGetDataBufferSizeV2,
    aclGetDataBufferSize,
)
FUNCTIONS: Final = {
    f.__name__: f
    for f in (
        *(h.function for h in HOST.values()),
        aclrtGetSocName,
        aclGetCannAttributeList,
        aclsysGetVersionStr,
        aclsysGetCANNVersion,
        *DATA_BUFFER_FUNCTIONS,
        *allocator.FUNCTIONS,
    )
}
