"""bench/soak.py in a short form: its own daemon, client processes mixing eager launches, model replays with task
updates, copies and allocations (each result checked), and the figures it prints. docs/reliability.md has the
figures of the full one-minute run."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from typing import Any

import pytest

from tests.load.conftest import ROOT, child_env

SOAK = ROOT / "bench" / "soak.py"


def soak(*args: str, timeout: float) -> tuple[int, str, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, str(SOAK), *args],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    found = re.search(r"^figures: (\{.*\})$", done.stdout, re.MULTILINE)
    assert found, f"no figures line (exit {done.returncode}):\n{done.stdout}\n{done.stderr[-3000:]}"
    return done.returncode, done.stdout, json.loads(found.group(1))


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_a_short_soak_passes_with_its_figures() -> None:
    status, out, f = soak("--seconds", "12", "--processes", "4", timeout=120)
    assert status == 0, out
    assert out.rstrip().endswith("soak passed") and "FAILED" not in out, out
    assert f["errors"] == 0 and f["processes"] == 4
    assert f["calls"] > 2000 and f["calls_per_s"] > 200, f  # the 2-core machine does ~5000 calls/s
    assert f["waiting_calls"] > 1000 and 0 < f["p50_ms"] <= f["p99_ms"] < 1000, f
    assert all(f["done"].get(kind, 0) > 10 for kind in ("eager", "replay", "copies", "allocations")), f["done"]
    assert f["device_used_after"] == 0 and f["exit_status"] == 0, f
    assert min(f["rss_launch"], f["rss_warm"], f["rss_end"]) > 10 << 20, f
    assert f["rss_end"] - f["rss_warm"] <= f["rss_growth_bound"], f
    lines = {
        "calls": rf"calls: {f['calls']} in [\d.]+ s = {round(f['calls_per_s'])} calls/s",
        "latency": rf"latency of waiting calls: p50 {f['p50_ms']:.2f} ms, p99 {f['p99_ms']:.2f} ms",
        "errors": r"^errors: 0$",
        "rss": r"daemon RSS: [\d.]+ MiB at launch, [\d.]+ MiB after the warm-up, [\d.]+ MiB at the end",
        "memory": r"device memory in use after the clients left: 0 bytes",
    }
    for what, pattern in lines.items():
        assert re.search(pattern, out, re.MULTILINE), (what, out)
    assert not math.isnan(f["elapsed"]) and f["elapsed"] >= 12


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_the_soak_fails_when_the_rss_bound_is_passed() -> None:
    """The failure path: a bound no daemon can keep (RSS may not even stay where it was) gives exit status 1."""
    status, out, f = soak("--seconds", "3", "--processes", "1", "--rss-growth-mib", "-1024", timeout=80)
    assert status == 1, out
    assert "FAILED: the daemon's RSS grew by more than -1024 MiB after the warm-up" in out, out
    assert out.rstrip().endswith("soak FAILED") and f["errors"] == 0, out
