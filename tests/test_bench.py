"""`vnpu bench --quick` runs every figure end to end, so the benchmarks never rot. No timing is asserted: the CI
machine is shared and noisy, and a smoke run's numbers mean little; what must hold is that each figure ran,
produced its numbers and its row, and that the JSON and the table say so."""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
import uvicorn
import websockets

from bench.report import Goal, Row, fmt, table
from server.api.settings import Settings
from server.app import create_app

ROOT = Path(__file__).resolve().parent.parent
FIGURES = [str(n) for n in range(1, 17)]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_quick_run_produces_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), VNPU_TOOLKIT_DIR=str(tmp_path / "toolkit"))  # figure 10 builds it
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "bench", "--quick", "--out", str(out)],
        cwd=tmp_path,  # the command finds the source tree by itself
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["mode"] == "quick"
    assert result["failures"] == []
    assert result["machine"]["nproc"] >= 1 and result["machine_description"]
    rows = result["rows"]
    assert sorted({r["figure"] for r in rows}, key=int) == FIGURES
    for row in rows:
        assert row["value"] and row["value"]["samples"], row["label"]
        if row["floor_label"]:
            assert row["floor"]["samples"] and row["ratio"]["samples"], row["label"]
        if row["goal"] is not None:
            assert row["met"] in (True, False), row["label"]  # judged, whichever way
    # the table printed, one line per row, every figure in it
    lines = [line for line in done.stdout.splitlines() if line.startswith("| ") and not line.startswith("| #")]
    assert len(lines) == len(rows)
    assert {line.split("|")[1].strip() for line in lines} == set(FIGURES)
    assert result["table"] in done.stdout


def test_goals_and_the_table() -> None:
    ratio = Row("1", "a", "/s", [10.0, 12.0, 11.0], "floor", [20.0, 20.0, 20.0], ratio=[0.5, 0.6, 0.55])
    ratio.goal = Goal(">=", 0.5, 0.8)
    assert ratio.met() is True and ratio.moonshot_met() is False
    exact = Row("9", "b", "B", [0.0, 4096.0], goal=Goal("exact", 0, on="value"))
    assert exact.met() is False  # one sample off the baseline is enough
    smaller = Row("2", "c", "s", [3e-6], "np", [1e-6], ratio=[3.0], goal=Goal("<=", 10, 5))
    assert smaller.met() is True and smaller.moonshot_met() is True
    text = table([ratio, exact, smaller])
    assert "**missed**" in text and "met, moonshot too" in text and "| met |" in text
    assert fmt(1.5e-6, "s") == "1.5 µs" and fmt(2048, "B") == "2 KiB" and fmt(6.7e3, "/s") == "6.7k/s"


async def test_the_echo_floor_echoes_msgpack_and_honours_the_token() -> None:
    """`/v1/echo` (the floor of figures 1, 4 and 5): each msgpack frame comes back as it went, a text frame or
    garbage gets an error envelope, and with a token configured the handshake needs it, as on /v1/ws."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = Settings(port=port, memory=16 << 20, token="sesame", log_level="warning")
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.get_running_loop().create_task(server.serve())
    try:
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.01)
        url = f"ws://127.0.0.1:{port}/v1/echo"
        for refused in (url, url + "?token=wrong"):
            with pytest.raises(websockets.InvalidStatus) as info:
                async with websockets.connect(refused, open_timeout=5):
                    pass
            assert info.value.response.status_code == 401
        async with websockets.connect(url, additional_headers={"Authorization": "Bearer sesame"}) as ws:
            message = {"id": 7, "api": "aclnnAdd", "args": {"data": b"\x00\x01" * 1000, "n": [1, 2.5, None]}}
            for _ in range(3):  # pipelined: three out, three back, in order
                await ws.send(msgpack.packb(message, use_bin_type=True))
            for _ in range(3):
                assert msgpack.unpackb(await ws.recv()) == message
            await ws.send("text")
            assert msgpack.unpackb(await ws.recv())["error"]["code"] == 100000
            await ws.send(b"\xc1")  # never valid msgpack
            assert "not msgpack" in msgpack.unpackb(await ws.recv())["error"]["message"]
        async with websockets.connect(url + "?token=sesame") as ws:
            await ws.send(msgpack.packb([1, "two"]))
            assert msgpack.unpackb(await ws.recv()) == [1, "two"]
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_waiting_call_profile_sees_every_stage() -> None:
    """bench/profile_wait pairs the daemon's stamps with the client's: every stage of the table gets a number."""
    from bench.profile_wait import STAGES

    done = subprocess.run(
        [sys.executable, "-m", "bench.profile_wait", "--calls", "50"],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = dict(
        line.strip("|").rsplit("|", 1)
        for line in done.stdout.splitlines()
        if line.startswith("| ") and "µs" not in line
    )
    stages = {what.strip(): float(value) for what, value in rows.items()}
    for _, _, what in STAGES:
        assert not math.isnan(stages[what]), f"{what}: no call was seen at both of its ends"
    assert stages["total (median, stamped)"] > 0


LLAMA = """
from bench.llama_step import llama_row
from client import acl

class Quick:
    reps = 1

acl.aclInit(None)
acl.aclrtSetDevice(0)
row = llama_row(Quick())
print(row.extra["launches"], len(row.value), len(row.floor), row.goal)
"""


def test_the_llama_step_replays_what_the_eager_step_computes() -> None:
    """Figure 14's LLaMA-style step (bench/llama_step.py) on the embedded device: its 33 launches capture, and the
    replay's logits equal the eager step's bit for bit (llama_row raises otherwise); reported, no goal."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), VNPU_ENDPOINT="embedded")
    done = subprocess.run([sys.executable, "-c", LLAMA], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["33", "1", "1", "None"]
