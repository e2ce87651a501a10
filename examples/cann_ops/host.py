"""References for the host functions of the operator library: functions that launch nothing (the daemon dumps
nothing), computed on the host into memory the function allocates. Their inputs are the example's own arrays, read
from its source: a host reference takes the example's text and returns the series it must print, or raises
ValueError when it cannot read the inputs there."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
from printed import Series, agrees

HostReference = Callable[[str], list[float]]
HOST: dict[str, HostReference] = {}
CALL = re.compile(r"\b(aclnn\w+)\s*\(")


def _floats(source: str, name: str) -> np.ndarray:
    """The values of `float name[n] = {...};` or `std::vector<float> name = {...};` in the example."""
    found = re.search(rf"\b{name}\s*(?:\[\s*\d*\s*\])?\s*=?\s*\{{([^}}]*)\}}", source)
    if found is None:
        raise ValueError(f"no initializer of {name}")
    return np.array([float(v.rstrip("fF")) for v in found[1].split(",") if v.strip()], np.float32)


def _arguments(source: str, function: str) -> list[str]:
    found = re.search(rf"\b{function}\s*\(([^;]*)\)\s*;", source)
    if found is None:
        raise ValueError(f"no call of {function}")
    return [a.strip() for a in found[1].split(",")]


def _trans_quant_param(source: str) -> list[float]:
    """ops-nn quant/trans_quant_param (its doc and op_api): each scale's float32 bits | 1 << 46; each offset
    rounded half away from zero, clamped to [-256, 255], its 9 bits at 37-45 with bits 32-45 cleared first;
    max(scaleSize, offsetSize) values, a count other than 1 padded with zeros to a multiple of 16."""
    scale_name, _, offset_name, *_ = _arguments(source, "aclnnTransQuantParam")
    scales = _floats(source, scale_name)
    offsets = _floats(source, offset_name) if offset_name not in ("nullptr", "NULL") else np.zeros(0, np.float32)
    count = max(len(scales), len(offsets))
    padded = count if count == 1 else -(-count // 16) * 16
    packed = [0] * padded
    for i, scale in enumerate(scales):
        packed[i] = int(scale.view(np.uint32)) | 1 << 46
    for i, offset in enumerate(offsets.astype(np.float64)):
        nine = max(-256, min(255, int(np.floor(abs(offset) + 0.5) * np.sign(offset))))
        packed[i] = (packed[i] & 0x4000FFFFFFFF) | (nine & 0x1FF) << 37
    return [float(v) for v in packed]


HOST["aclnnTransQuantParam"] = _trans_quant_param


def host_calls(source: str) -> list[str]:
    """The host functions the example calls, in HOST's names."""
    return sorted({name for name in CALL.findall(source) if name in HOST})


def host_values(series: list[Series], code: str) -> tuple[bool, str]:
    """An example of host functions: each printed series against the values the host references expect."""
    checked = []
    for function in host_calls(code):
        try:
            want = HOST[function](code)
        except ValueError as error:
            return False, f"no reference for {function}: {error}"
        hit = [s for s in series if len(s.values) == len(want) and agrees(np.array(s.values), np.array(want), "")]
        if not hit:
            shown = [s.values[:4] for s in series]
            return False, f"wrong value: {function} printed {shown}, reference {want[:4]}"
        checked.append(function)
    return True, "host function " + ", ".join(checked) + ": its printed values checked"
