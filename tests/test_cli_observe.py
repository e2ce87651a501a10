"""`vnpu status` and `vnpu trace` against a live daemon (in this test's event loop; the command runs in a thread, or
as a process, so the daemon keeps serving while it waits).

The workload: the seed-like model of tests/server/api/test_observe.py replayed while it waits on its EXTERNAL
event, and a stream blocked on another EXTERNAL event with three kernels queued behind the wait.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

import proto.aclnn as nn
from proto.constants import aclDataType
from server.cli import format_size, main, parse_duration
from tests.server.api.callers import RestCaller
from tests.server.api.conftest import LiveServer, free_port, start_live
from tests.server.api.conftest import test_settings as make_settings
from tests.server.api.test_calls import Remote
from tests.server.api.test_observe import seed_model
from tests.server.npu.devicekit import tensor_at

F32 = aclDataType.ACL_FLOAT
EXTERNAL = 0x20
TOKEN = "cli-token"


@contextlib.asynccontextmanager
async def daemon(**overrides: object) -> AsyncIterator[LiveServer]:
    server, task = await start_live(make_settings(**overrides))
    try:
        yield server
    finally:
        server.server.should_exit = True
        await asyncio.wait_for(task, 15)


@contextlib.asynccontextmanager
async def caller(server: LiveServer, token: str | None = None) -> AsyncIterator[RestCaller]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as http:
        yield RestCaller(http)


async def stuck_workload(c: RestCaller) -> dict[str, int]:
    """The model replaying on s1, stopped at its EXTERNAL wait; `blocked` waiting on `gate` with 3 kernels queued;
    20 MiB of device memory in use. Release with `release`."""
    ids = await seed_model(c)
    r = Remote(c)
    await c("aclrtMalloc", size=20 << 20, policy=0)
    y = tensor_at(await r.put(np.zeros(8)), (8,), F32)
    blocked = (await c("aclrtCreateStream"))["stream"]
    gate = (await c("aclrtCreateEventWithFlag", flag=EXTERNAL))["event"]
    await c("aclrtStreamWaitEvent", stream=blocked, event=gate)
    for _ in range(3):
        await r.launch("Muls", blocked, y, nn.aclCreateScalar(1.0, F32), y)
    await c("aclmdlRIExecuteAsync", modelRI=ids["model"], stream=ids["s1"])
    return ids | {"blocked": blocked, "gate": gate}


async def release(c: RestCaller, ids: dict[str, int]) -> None:
    await c("aclrtRecordEvent", event=ids["ext"], stream=ids["s2"])
    await c("aclrtRecordEvent", event=ids["gate"], stream=ids["s2"])
    await c("aclrtSynchronizeDevice")


async def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = await asyncio.wait_for(asyncio.to_thread(main, list(argv)), 30)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "220")  # rich's width when the output is not a terminal
    monkeypatch.delenv("VNPU_ENDPOINT", raising=False)
    monkeypatch.delenv("VNPU_TOKEN", raising=False)


def rows_with(text: str, needle: str) -> list[list[str]]:
    """The cells of the table rows that contain `needle`."""
    return [[cell.strip() for cell in line.strip("│").split("│")] for line in text.splitlines() if needle in line]


async def test_status_shows_devices_memory_streams_and_models(capsys: pytest.CaptureFixture[str]) -> None:
    async with daemon() as server, caller(server) as c:
        ids = await stuck_workload(c)
        try:
            await asyncio.sleep(0.05)
            code, out, err = await run_cli(capsys, "status", "--endpoint", server.url)
            [held] = {ctx["memory"] for ctx in (await c.client.get("/v1/devices/0")).json()["contexts"]}
        finally:
            await release(c, ids)
    assert code == 0, err
    assert out.startswith(f"vnpu at {server.url}\n")
    for title in ("devices", "contexts", "streams", "models"):
        assert any(line.strip() == title for line in out.splitlines()), (title, out)
    [device0] = rows_with(out, "20 MiB / 64 MiB (31.3%)")
    [device1] = rows_with(out, "0 bytes / 64 MiB (0.0%)")
    assert device0[0] == "0" and device0[3:] == ["4 / 1984", "2 / 65536", "1 / 1024", "1"]
    assert device1[0] == "1" and device1[3:] == ["0 / 1984", "0 / 65536", "0 / 1024", "1"]
    model = f"{ids['model']:#x}"
    [running] = rows_with(out, "aclmdlRIExecuteAsync")
    assert running[2:] == [f"{ids['s1']:#x}", "stream", "1", f"aclmdlRIExecuteAsync of model {model}"]
    [blocked] = rows_with(out, "aclrtStreamWaitEvent")  # the wait and the 3 kernels behind it
    assert blocked[2:5] == [f"{ids['blocked']:#x}", "stream", "4"] and f"event {ids['gate']:#x}" in blocked[5]
    assert rows_with(out, f"{ids['s2']:#x}")[0][4:] == ["0", "idle"]
    [context] = rows_with(out, running[1])[:1]  # the context's row comes first
    # sessions, device(s), memory held (device + pinned), age, streams, events, models
    assert context[1:3] == ["1", "0"] and context[5:] == ["4", "4", "1"], context
    assert context[3] == format_size(held) and held >= 20 << 20 and re.fullmatch(r"\d+\.\d s", context[4]), context
    [row] = rows_with(out, f"running on {ids['s1']:#x}")
    group = f"{ids['group']:#x}: aclnnAdds kernel Adds, aclnnAdds kernel Adds; 0 update(s)"
    assert row == [model, "0", running[1], f"running on {ids['s1']:#x}", "0", group]


async def test_status_in_a_narrow_terminal_drops_the_memory_bar(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80 columns each device is one line: no empty bar column, and no cell wrapped onto a second line."""
    monkeypatch.setenv("COLUMNS", "80")
    async with daemon() as server, caller(server) as c:
        await c("aclInit", configPath=None)
        await c("aclrtSetDevice", deviceId=0)
        await c("aclrtMalloc", size=(20 << 20) + 1000, policy=0)  # a share and a size that take room
        code, out, err = await run_cli(capsys, "status", "--endpoint", server.url)
    assert code == 0, err
    assert max(map(len, out.splitlines())) <= 80, out
    lines = [line.strip() for line in out.splitlines()]
    table = lines[lines.index("devices") + 4 : lines.index("contexts") - 1]  # the rows between the rules
    assert [rows_with(line, "│")[0] for line in table] == [
        ["0", "20 MiB / 64 MiB", "1 / 1984", "0 / 65536", "0 / 1024", "1"],
        ["1", "0 bytes / 64 MiB", "0 / 1984", "0 / 65536", "0 / 1024", "1"],
    ], out


def test_status_count_without_watch_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["status", "--count", "3"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip().endswith("status: --count needs --watch (it counts the refreshes)")


async def test_status_as_a_process_and_watch(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    async with daemon(token=TOKEN) as server, caller(server, TOKEN) as c:
        ids = await stuck_workload(c)
        try:
            await status_process_and_watch(capsys, server, ids)
        finally:
            await release(c, ids)
        # without the token, and with a wrong one
        assert await run_cli(capsys, "status", "--endpoint", server.url) == (
            1,
            "",
            "vnpu status: the daemon requires a token: --token or VNPU_TOKEN\n",
        )
        assert (await run_cli(capsys, "status", "--endpoint", server.url, "--token", "nope"))[2].endswith("refused\n")
    code, _, err = await run_cli(capsys, "status", "--endpoint", f"http://127.0.0.1:{free_port()}")
    assert code == 1 and err.startswith("vnpu status: cannot reach the daemon at http://127.0.0.1:")


async def status_process_and_watch(capsys: pytest.CaptureFixture[str], server: LiveServer, ids: dict[str, int]) -> None:
    """`python -m server.cli status` as a process, then `--watch` with `--count` (a file keeps the last picture)."""
    command = [sys.executable, "-m", "server.cli", "status", "--endpoint", server.url, "--token", TOKEN]
    env = {"COLUMNS": "220", "PATH": os.environ.get("PATH", "")}
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode()
    assert f"aclmdlRIExecuteAsync of model {ids['model']:#x}" in out.decode()
    code, text, _ = await run_cli(
        capsys, "status", "--endpoint", server.url, "--token", TOKEN, "--watch", "0.05", "--count", "3"
    )
    assert code == 0 and "aclrtStreamWaitEvent on event" in text


async def replay(c: RestCaller, ids: dict[str, int], times: int, hold: float) -> None:
    """Replay the model `times` times; each replay waits `hold` s on its EXTERNAL event, and its task group is
    updated (from the second stream) before the event is recorded."""
    r = Remote(c)
    y = tensor_at(await r.put(np.zeros(8)), (8,), F32)
    for n in range(times):
        await c("aclmdlRIExecuteAsync", modelRI=ids["model"], stream=ids["s1"])
        await asyncio.sleep(hold)
        await c("aclmdlRICaptureTaskUpdateBegin", stream=ids["s2"], handle=ids["group"])
        for value in (1.0, float(n)):
            await r.launch("Adds", ids["s2"], y, nn.aclCreateScalar(value, F32), nn.aclCreateScalar(1.0, F32), y)
        await c("aclmdlRICaptureTaskUpdateEnd", stream=ids["s2"])
        await c("aclrtRecordEvent", event=ids["ext"], stream=ids["s2"])
        await c("aclrtSynchronizeStream", stream=ids["s1"])
        await c("aclrtResetEvent", event=ids["ext"], stream=ids["s2"])
        await c("aclrtSynchronizeStream", stream=ids["s2"])


def lanes(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    by_lane: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            by_lane[e["tid"]].append(e)
    return by_lane


async def test_trace_writes_one_chrome_trace_of_the_duration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    async with daemon(token=TOKEN) as server, caller(server, TOKEN) as c:
        ids = await seed_model(c)
        before = (await c("aclrtMalloc", size=64, policy=0))["devPtr"]
        await c("aclrtMemsetAsync", devPtr=before, maxCount=64, value=0, count=64, stream=ids["s2"])
        await c("aclrtSynchronizeStream", stream=ids["s2"])
        output = tmp_path / "trace.json"
        argv = ["trace", "-o", str(output), "--endpoint", server.url, "--token", TOKEN, "--duration", "2.5s"]
        command = asyncio.ensure_future(run_cli(capsys, *argv, "--interval", "100ms"))
        await asyncio.sleep(0.5)  # its first poll, which marks "from now", is done by then
        await replay(c, ids, times=3, hold=0.1)
        code, out, err = await command
        assert code == 0, err
        assert out.startswith("wrote ") and str(output) in out and "ui.perfetto.dev" in out
        document = json.loads(output.read_text())
        assert document["displayTimeUnit"] == "ms"
        events = document["traceEvents"]
        assert {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "device 0"}} in events
        model = f"model {ids['model']:#x}"
        by_lane = lanes(events)
        origin, second = by_lane[f"{model} stream #0"], by_lane[f"{model} stream #1"]
        # the tasks recorded since the command started (the memset before it is not there), in order per lane
        assert not any(e["cat"] == "memset" for e in events if e["ph"] == "X")
        for lane in by_lane.values():
            starts = [e["ts"] for e in lane]
            assert starts == sorted(starts) and all(e["dur"] >= 0 for e in lane)
        # fork record, join wait, EXTERNAL wait, then the task group (an event spanning its 2 kernels)
        assert [e["cat"] for e in origin] == ["record", "wait", "wait", "group", "kernel", "kernel"] * 3
        assert [e["cat"] for e in second] == ["wait", "kernel", "record"] * 3
        assert [e["cat"] for e in by_lane[f"stream {ids['s2']:#x} of device 0"]] == ["update", "record", "reset"] * 3
        external = [e for e in origin if e["cat"] == "wait" and "0x20" in e["name"]]
        assert len(external) == 3 and all(e["dur"] >= 80_000 for e in external)  # each blocked about `hold`
        assert {e["args"].get("Task Group") for e in origin if e["cat"] == "kernel"} == {f"{ids['group']:#x}"}
        # each update was applied while the replay waited, before the group ran: 1, 2, then 3 updates
        updates = [e for e in events if e["ph"] == "X" and e["cat"] == "update"]
        groups = [e for e in origin if e["cat"] == "group"]
        for n, (update, wait, group) in enumerate(zip(updates, external, groups, strict=True), 1):
            assert wait["ts"] < update["ts"] and update["ts"] + update["dur"] <= group["ts"]
            assert group["name"] == f"task group {ids['group']:#x}"  # stable: Perfetto aggregates the runs
            assert f"(2 kernel(s), {n} update(s))" in group["args"]["Detail"]
        replays = by_lane[f"stream {ids['s1']:#x} of device 0"]
        assert [e["cat"] for e in replays] == ["model"] * 3
        # --all also takes what the buffer held before (the memset)
        code, _, err = await run_cli(capsys, *argv[:-1], "0", "--all")
        assert code == 0, err
        assert any(e["cat"] == "memset" for e in json.loads(output.read_text())["traceEvents"] if e["ph"] == "X")


async def test_trace_all_after_the_program_ended_writes_its_events(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    async with daemon() as server, httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        session = (await http.post("/v1/sessions")).json()
        c = RestCaller(http, session["session"])
        ids = await seed_model(c)
        await c("aclrtMemsetAsync", devPtr=(await c("aclrtMalloc", size=64, policy=0))["devPtr"], maxCount=64,
                value=0, count=64, stream=ids["s2"])  # fmt: skip
        await c("aclrtSynchronizeStream", stream=ids["s2"])
        await http.delete(f"/v1/sessions/{session['session']}")
        await asyncio.sleep(0.5)  # past the context's grace: reclaimed
        assert not (await http.get("/v1/devices/0")).json()["contexts"]
        output = tmp_path / "ended.json"
        argv = ["trace", "-o", str(output), "--endpoint", server.url, "--duration", "0"]
        code, out, err = await run_cli(capsys, *argv, "--all")
        assert code == 0, err
        events = [e for e in json.loads(output.read_text())["traceEvents"] if e["ph"] == "X"]
        assert [e["cat"] for e in events if e["cat"] != "memcpy"] == ["memset"]
        assert {e["args"]["Context"] for e in events} == {session["context"]}
        assert f"wrote {len(events)} task event(s) of 1 context(s), 1 of them ended" in out
        # --all alone takes the buffer at once, without waiting out the default 5 s
        begin = time.monotonic()
        code, out, _ = await run_cli(capsys, "trace", "-o", str(output), "--endpoint", server.url, "--all")
        assert code == 0 and f"wrote {len(events)} task event(s)" in out and time.monotonic() - begin < 4
        # from now, nothing runs: the file is empty and the command says why
        code, out, err = await run_cli(capsys, *argv)
        assert code == 0 and out.startswith("wrote 0 task event(s) of 0 context(s)")
        assert "nothing ran while recording (--all takes what the buffer already holds" in err
        code, out, err = await run_cli(capsys, *argv, "--all", "--context", "0123456789abcdef")
        assert code == 0 and out.startswith("wrote 0 task event(s)")
        assert err == (
            "vnpu trace: no context '0123456789abcdef' among yours, live or recently ended: take an id from "
            "`vnpu status` or from a trace's Context\n"
        )


async def test_trace_says_why_it_wrote_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Zero events has a reason the command can tell: tracing is off, or the program never reached this daemon,
    or it ran no task."""
    output = tmp_path / "t.json"
    async with daemon(trace_capacity=0) as server:
        argv = ["trace", "-o", str(output), "--endpoint", server.url, "--duration", "0"]
        code, out, err = await run_cli(capsys, *argv)
    assert code == 0 and err == "vnpu trace: tracing is off on the daemon (VNPU_TRACE_CAPACITY=0)\n"
    async with daemon() as server:
        argv = ["trace", "-o", str(output), "--endpoint", server.url, "--interval", "50ms", "--"]
        code, out, err = await run_cli(capsys, *argv, sys.executable, "-c", "pass")
        assert code == 0 and out.startswith("wrote 0 task event(s)")
        assert err.splitlines()[0] == (
            f"vnpu trace: {sys.executable} opened no context on {server.url}: does it call aclInit and "
            "aclrtSetDevice, and does its VNPU_ENDPOINT name this daemon?"
        )
        busy = "from client.acl import *; aclInit(None); aclrtSetDevice(0); aclrtMalloc(64, 0)"
        code, out, err = await run_cli(capsys, *argv, sys.executable, "-c", busy)
        assert code == 0 and err.splitlines()[0] == (
            f"vnpu trace: {sys.executable} ran no task on the device (calls such as aclrtMalloc are not tasks)"
        )


PROGRAM = """
import sys
from client.acl import *
aclInit(None)
aclrtSetDevice(0)
s = aclrtCreateStream()
p = aclrtMalloc(256, 0)
for i in range(5):
    aclrtMemsetAsync(p, 256, i, 256, s)
aclrtSynchronizeStream(s)
aclrtFree(p)
aclrtDestroyStream(s)
aclrtResetDevice(0)
aclFinalize()
sys.exit(3)
"""


async def test_trace_of_one_program_records_exactly_its_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    async with daemon() as server, caller(server) as c:
        await c("aclInit", configPath=None)
        await c("aclrtSetDevice", deviceId=0)
        other = (await c("aclrtMalloc", size=64, policy=0))["devPtr"]
        output = tmp_path / "run.json"
        argv = ["trace", "-o", str(output), "--endpoint", server.url, "--interval", "50ms"]
        command = asyncio.ensure_future(run_cli(capsys, *argv, "--", sys.executable, "-c", PROGRAM))
        for value in range(20):  # another program's work meanwhile: not in the file
            await c("aclrtMemset", devPtr=other, maxCount=64, value=value, count=64)
            await asyncio.sleep(0.02)
        code, out, err = await command
        missing = await run_cli(capsys, *argv, "--", str(tmp_path / "no-such-program"))
    assert missing[0] == 127 and "cannot run" in missing[2]
    assert code == 3, err  # the program's exit code
    assert f"{sys.executable} -c" in err and "exited with 3" in err
    events = [e for e in json.loads(output.read_text())["traceEvents"] if e["ph"] == "X"]
    assert [e["cat"] for e in events] == ["memset"] * 5 and len({e["args"]["Context"] for e in events}) == 1
    assert out.startswith("wrote 5 task event(s) of 1 context(s) ")


def test_durations() -> None:
    assert [parse_duration(t) for t in ("5s", "500ms", "2m", "1.5", " 3 s ", ".5s", "1h")] == [
        5.0,
        0.5,
        120.0,
        1.5,
        3.0,
        0.5,
        3600.0,
    ]
    for bad in ("", "5x", "-1s", "s"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_duration(bad)
