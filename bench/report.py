"""Samples, rows and the table: how a figure is measured side by side and how it is shown.

A figure row holds vnpu's samples, the floor's (or the alternative's) samples taken in the same repetitions,
and the ratio of each pair (A B A B ...: pairing cancels most of a shared machine's drift). It shows the median
and the min-max of each, and compares the median ratio (or, for rows without a floor, the median value) with
the goal and the moonshot.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


def summary(samples: Sequence[float]) -> dict[str, Any]:
    return {
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
        "samples": list(samples),
    }


def interleave(reps: int, *measures: Callable[[], float], warmup: bool = True) -> list[list[float]]:
    """Run the measures A B C, A B C, ... `reps` times (after one unrecorded warm-up round); the samples of each."""
    if warmup:
        for measure in measures:
            measure()
    samples: list[list[float]] = [[] for _ in measures]
    for _ in range(reps):
        for i, measure in enumerate(measures):
            samples[i].append(measure())
    return samples


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


@dataclass(frozen=True)
class Goal:
    """`op` is '>=' or '<=' (the median ratio, or the median value when `on` is 'value', against the target);
    'exact' means every sample equals the target."""

    op: str
    target: float
    moonshot: float | None = None
    on: str = "ratio"

    def passes(self, x: float, bound: float) -> bool:
        if self.op == ">=":
            return x >= bound
        if self.op == "<=":
            return x <= bound
        return x == bound

    def text(self, unit: str) -> str:
        def show(bound: float) -> str:
            return f"{bound:g}×" if self.on == "ratio" else fmt(bound, unit)

        if self.op == "exact":
            return f"exactly {show(self.target)}"
        return f"{self.op} {show(self.target)}" + (f" / {show(self.moonshot)}" if self.moonshot is not None else "")


@dataclass
class Row:
    figure: str
    label: str
    unit: str  # of the values: "/s", "s", "B/s", "B"
    value: list[float]
    floor_label: str | None = None
    floor: list[float] | None = None
    floor_unit: str | None = None
    ratio: list[float] | None = None
    ratio_meaning: str = ""  # e.g. "vnpu rate / echo rate"
    goal: Goal | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def judged(self) -> float | None:
        if self.goal is None:
            return None
        source = self.ratio if self.goal.on == "ratio" else self.value
        if not source:
            return None
        if self.goal.op == "exact":
            return max(source, key=lambda x: abs(x - self.goal.target))  # type: ignore[union-attr]
        return statistics.median(source)

    def met(self) -> bool | None:
        x = self.judged()
        if x is None or self.goal is None:
            return None
        return self.goal.passes(x, self.goal.target)

    def moonshot_met(self) -> bool | None:
        x = self.judged()
        if x is None or self.goal is None or self.goal.moonshot is None:
            return None
        return self.goal.passes(x, self.goal.moonshot)

    def to_json(self) -> dict[str, Any]:
        return {
            "figure": self.figure,
            "label": self.label,
            "unit": self.unit,
            "value": summary(self.value) if self.value else None,
            "floor_label": self.floor_label,
            "floor": summary(self.floor) if self.floor else None,
            "floor_unit": self.floor_unit or self.unit,
            "ratio": summary(self.ratio) if self.ratio else None,
            "ratio_meaning": self.ratio_meaning,
            "goal": None
            if self.goal is None
            else {"op": self.goal.op, "target": self.goal.target, "moonshot": self.goal.moonshot, "on": self.goal.on},
            "met": self.met(),
            "moonshot_met": self.moonshot_met(),
            "note": self.note,
            "extra": self.extra,
        }


def _scaled(x: float, scales: tuple[tuple[float, str], ...], last: str, sep: str) -> str:
    """x in the largest unit it reaches once rounded to 3 significant digits (999.7 µs is 1 ms, not 1e+03 µs)."""
    for scale, name in scales:
        if abs(x) / scale >= 0.9995:
            return f"{x / scale:.3g}{sep}{name}"
    return f"{x:.3g}{sep}{last}"


def fmt(x: float, unit: str) -> str:
    """A value for people: 6.7k/s, 149 µs, 1.9 GB/s, 712 B, 1.2 MiB."""
    if unit == "s":
        if abs(x) < 0.9995e-6:
            return f"{x * 1e9:.3g} ns"
        return _scaled(x, ((1, "s"), (1e-3, "ms")), "µs", " ") if abs(x) >= 0.9995e-3 else f"{x * 1e6:.3g} µs"
    if unit == "/s":
        return _scaled(x, ((1e6, "M/s"), (1e3, "k/s")), "/s", "")
    if unit == "B/s":
        return f"{x / 1e9:.3g} GB/s"
    if unit == "B":
        if abs(x) < 1024:
            return f"{x:.0f} B".replace("-0 B", "0 B")  # a retained size that rounds to nothing
        return _scaled(x, ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")), "B", " ")
    if unit == "x":
        return f"{x:.3g}×"
    return f"{x:.3g} {unit}"


def spread(samples: Sequence[float] | None, unit: str) -> str:
    if not samples:
        return "—"
    median, lo, hi = statistics.median(samples), min(samples), max(samples)
    if len(samples) == 1 or lo == hi:
        return fmt(median, unit)
    return f"{fmt(median, unit)} ({fmt(lo, unit)}–{fmt(hi, unit)})"


def verdict(row: Row) -> str:
    met = row.met()
    if met is None:
        return "not measured" if row.goal is not None else "—"
    if not met:
        return "**missed**"
    return "met, moonshot too" if row.moonshot_met() else "met"


def table(rows: Sequence[Row]) -> str:
    lines = [
        "| # | figure | vnpu | floor / alternative | ratio | goal / moonshot | |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        floor = "—"
        if row.floor_label:
            floor = f"{row.floor_label}: {spread(row.floor, row.floor_unit or row.unit)}"
        ratio = spread(row.ratio, "x") if row.ratio else "—"
        if row.ratio and row.ratio_meaning:
            ratio += f" {row.ratio_meaning}"
        goal = row.goal.text(row.unit) if row.goal else "—"
        label = row.label + (f" ({row.note})" if row.note else "")
        lines.append(
            f"| {row.figure} | {label} | {spread(row.value, row.unit)} | {floor} | {ratio} | {goal} | {verdict(row)} |"
        )
    return "\n".join(lines)
