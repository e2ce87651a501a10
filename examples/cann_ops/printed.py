"""What an example printed, and whether printed values agree with a reference: the series of `label[i] is: v`
lines, the tolerance their printed precision leaves, a float64 reference rounded into the output's dtype, and
values printed as another type's bits."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

VALUE = r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)"
PRINTED = re.compile(rf"(?P<label>[A-Za-z_][\w ]*?)\s*\[\s*(?P<index>\d+)\s*\]\s*(?:is:|is|=|:)?\s*(?P<value>{VALUE})")
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-5, "float64": 1e-9}


@dataclass
class Series:
    label: str
    values: list[float] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)


def printed_series(text: str) -> list[Series]:
    """The value series an example printed, in order: one per label, a new one when its index starts again."""
    found: list[Series] = []
    current: dict[str, Series] = {}
    for line in text.splitlines():
        for match in PRINTED.finditer(line):
            label, index = match["label"].strip(), int(match["index"])
            series = current.get(label)
            if series is None or index != len(series.values):
                if index != 0:
                    continue
                series = current[label] = Series(label)
                found.append(series)
            series.values.append(float(match["value"]))
            series.texts.append(match["value"])
    return found


def printed_tolerance(text: str) -> float:
    """Half a unit of the last printed digit."""
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    scale = 10.0 ** int(exponent) if exponent else 1.0
    return 0.5 * 10.0**-decimals * scale if text not in ("inf", "nan") else 0.0


def rounded(reference: np.ndarray, dtype: str) -> np.ndarray:
    """The float64 reference rounded into the output's dtype (as the device's one rounding), back in float64."""
    import ml_dtypes

    target = getattr(ml_dtypes, dtype) if hasattr(ml_dtypes, dtype) and not hasattr(np, dtype) else np.dtype(dtype)
    with np.errstate(all="ignore"):
        return np.asarray(reference, np.float64).astype(target).astype(np.float64)


def agrees(got: np.ndarray, want: np.ndarray, dtype: str, printed: list[str] | None = None) -> bool:
    if np.iscomplexobj(got) or np.iscomplexobj(want):  # each part as a float of the part's dtype
        part = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
        real = agrees(np.real(got), np.real(want), part, printed)
        return real and agrees(np.imag(got), np.imag(want), part, printed)
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    if got.shape != want.shape:
        return False
    slack = np.array([printed_tolerance(t) for t in printed]) if printed else 0.0
    scale = np.max(np.abs(want[np.isfinite(want)]), initial=0.0)
    rtol = RTOL.get(dtype, 0.0)
    tolerance = slack + rtol * np.abs(want) + rtol * 1e-3 * scale
    with np.errstate(invalid="ignore"):
        close = np.abs(got - want) <= tolerance
    same = (np.isnan(got) & np.isnan(want)) | (got == want)
    return bool(np.all(close | same))


BIT_VIEWS = {1: ("int8", "uint8"), 2: ("float16", "int16", "uint16"), 4: ("float32", "int32", "uint32"),
             8: ("float64", "int64", "uint64")}  # fmt: skip


def as_bits(printed: Series, reference: np.ndarray, dtype: str) -> str:
    """Whether the program printed the reference's bytes read as another type (an example that keeps an int32
    output in a float vector prints its bits as floats, one that reads an fp16 output into a float vector prints
    pairs of halves as floats, as it would on CANN): "values" when they
    show the values, the dtype when every one prints as 0 (nothing is checked), "" when they do not match."""
    try:
        exact = np.asarray(rounded(reference, dtype) if np.asarray(reference).dtype.kind == "f" else reference)
        raw = np.ascontiguousarray(exact.astype(dtype))
    except (TypeError, ValueError):
        return ""
    n = len(printed.values)
    views = [v for size, names in BIT_VIEWS.items() if raw.nbytes % size == 0 for v in names if v != str(raw.dtype)]
    for view in views:  # the same size first; then wider or narrower (a float vector over an fp16 output)
        with np.errstate(all="ignore"):
            shown = raw.ravel().view(view)[:n].astype(np.float64)
            m = len(shown)  # a wider view has fewer values: what is printed past them is past the output
            if m and agrees(printed.values[:m], shown, view, printed.texts[:m]):
                zero = np.abs(shown) <= np.array([printed_tolerance(t) for t in printed.texts[:m]])
                return dtype if bool(np.all(zero)) else "values"
    return ""
