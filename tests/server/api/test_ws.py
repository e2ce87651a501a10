"""The WebSocket transport: pipelining, errors of pipelined calls, threads of one connection, and the seed's
concurrent task update driven from two connections (two processes) of one context."""

from __future__ import annotations

import asyncio

import httpx
import msgpack
import numpy as np

import proto.aclnn as nn
from proto.constants import aclDataType
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_PARAM_INVALID, ACLNN_ERR_PARAM_INVALID
from tests.server.api.callers import WsCaller
from tests.server.api.conftest import LiveServer
from tests.server.api.test_calls import Remote
from tests.server.npu.devicekit import tensor_at

F32 = aclDataType.ACL_FLOAT


async def setup(live: LiveServer) -> WsCaller:
    c = await WsCaller.connect(live.ws_url)
    await c("aclInit", configPath=None)
    await c("aclrtSetDevice", deviceId=0)
    return c


async def test_pipelined_calls_answer_only_when_asked(live: LiveServer) -> None:
    c = await setup(live)
    try:
        r = Remote(c)
        x = await r.put(np.zeros(1024))
        xt = tensor_at(x, (1024,), F32)
        s = (await c("aclrtCreateStream"))["stream"]
        one = nn.aclCreateScalar(1.0, F32)
        for _ in range(500):  # x += 1, five hundred launches without waiting
            ws, ex = nn.aclnnAddsGetWorkspaceSize(xt, one, one, xt)
            await c.send(
                "aclnnAdds", reply=False, workspace=0, workspaceSize=ws, executor=ex.kernel.to_wire(), stream=s
            )
        await c("aclrtSynchronizeStream", stream=s)
        assert c.orphans == []  # nothing came back for the pipelined calls
        np.testing.assert_array_equal(await r.get(x, (1024,)), np.full(1024, 500))
    finally:
        await c.close()


async def test_a_failing_pipelined_call_reports_its_id_and_name(live: LiveServer) -> None:
    c = await setup(live)
    try:
        a = (await c("aclrtMalloc", size=64, policy=0))["devPtr"]
        s = (await c("aclrtCreateStream"))["stream"]
        bad = await c.send("aclrtMemcpyAsync", reply=False, dst=a, destMax=128, src=a + 32, count=128, kind=3, stream=s)
        malformed = await c.send("aclrtMemsetAsync", reply=False, devPtr=a, maxCount=-1, value=0, count=8, stream=s)
        await c("aclrtSynchronizeStream", stream=s)  # ordered after both on this thread
        errors = {m["id"]: m["error"] for m in c.orphans}
        assert errors[bad]["code"] == ACL_ERROR_RT_PARAM_INVALID and errors[bad]["api"] == "aclrtMemcpyAsync"
        assert "past its end" in errors[bad]["message"]
        assert errors[malformed]["code"] == ACL_ERROR_INVALID_PARAM and "maxCount" in errors[malformed]["message"]
        async with httpx.AsyncClient(base_url=live.url) as http:
            metrics = (await http.get("/metrics")).text
        assert 'vnpu_pipelined_errors_total{api="aclrtMemcpyAsync"} 1.0' in metrics
        assert 'vnpu_pipelined_errors_total{api="aclrtMemsetAsync"} 1.0' in metrics
        await c("aclrtMemsetAsync", devPtr=a, maxCount=64, value=7, count=64, stream=s)  # the session goes on
        await c("aclrtSynchronizeStream", stream=s)
        assert (await c("aclrtMemcpy", dst=None, destMax=64, src=a, count=64, kind=2))["data"] == b"\x07" * 64
    finally:
        await c.close()


async def test_threads_of_one_connection_run_independently(live: LiveServer) -> None:
    """Thread A blocks in a synchronize on a stream that waits for an event; thread B, on the same connection,
    records the event. Per-connection FIFO would deadlock; per-thread order does not."""
    c = await setup(live)
    try:
        b_set = await c.send("aclrtSetDevice", thread="B", deviceId=0)
        await c.reply(b_set)
        s = (await c("aclrtCreateStream"))["stream"]
        ev = (await c("aclrtCreateEventWithFlag", flag=1))["event"]
        await c("aclrtStreamWaitEvent", stream=s, event=ev)
        sync = await c.send("aclrtSynchronizeStream", stream=s)  # thread "main" blocks here
        await asyncio.sleep(0.05)
        assert not c._waiting[sync].done()
        record = await c.send("aclrtRecordEvent", thread="B", event=ev, stream=0)
        await c.reply(record)
        await c.reply(sync)
    finally:
        await c.close()


async def test_calls_of_several_threads_start_in_the_order_received(live: LiveServer) -> None:
    """Pipelined launches of two threads on one stream, in one frame: main's x *= 2, B's x += 1, main's x *= 2 run
    in that order, ((x * 2) + 1) * 2, as the client made them -- not main's two first because main's worker had
    them queued (torch_npu's task queue launches from its own thread between the main thread's calls)."""
    c = await setup(live)
    try:
        await c.reply(await c.send("aclrtSetDevice", thread="B", deviceId=0))
        r = Remote(c)
        values = np.arange(64, dtype=np.float32)
        x = await r.put(values)
        xt = tensor_at(x, (64,), F32)
        s = (await c("aclrtCreateStream"))["stream"]
        two, one = nn.aclCreateScalar(2.0, F32), nn.aclCreateScalar(1.0, F32)
        ws, muls = nn.aclnnMulsGetWorkspaceSize(xt, two, xt)
        _, adds = nn.aclnnAddsGetWorkspaceSize(xt, one, one, xt)
        launch = {"workspace": 0, "workspaceSize": ws, "stream": s}

        def envelope(ident: int, api: str, thread: str, executor: object) -> dict[str, object]:
            args = {**launch, "executor": executor}
            return {"id": ident, "api": api, "args": args, "thread": thread, "reply": False}

        batch = [
            envelope(9101, "aclnnMuls", "main", muls.kernel.to_wire()),
            envelope(9102, "aclnnAdds", "B", adds.kernel.to_wire()),
            envelope(9103, "aclnnMuls", "main", muls.kernel.to_wire()),
        ]
        await c.ws.send(msgpack.packb(batch, use_bin_type=True))
        await c("aclrtSynchronizeStream", stream=s)
        assert c.orphans == []
        np.testing.assert_allclose(await r.get(x, (64,)), (values.astype(np.float64) * 2 + 1) * 2, rtol=1e-6)
    finally:
        await c.close()


async def test_seed_concurrent_update_from_a_second_connection(live: LiveServer) -> None:
    """Connection 1 captures and replays the model; connection 2 joins the same context, as a second process
    would, and drives the update stream and the EXTERNAL event: outputs 2.2, then 6.6, alternating."""
    main = await setup(live)
    updater = await WsCaller.connect(live.ws_url, context=main.hello["context"])
    try:
        assert updater.hello["context"] == main.hello["context"]
        await updater("aclInit", configPath=None)
        await updater("aclrtSetDevice", deviceId=0)
        r = Remote(main)
        self_d, other_d, out_d, tmp_d = [await r.put(np.zeros(8)) for _ in range(4)]
        self_t, other_t, out_t, tmp_t = (tensor_at(p, (4, 2), F32) for p in (self_d, other_d, out_d, tmp_d))
        hosts = [(await main("aclrtMallocHost", size=32))["hostPtr"] for _ in range(3)]
        self_h, other_h, out_h = hosts
        await main("vnpuHostWrite", hostPtr=self_h, data=np.zeros(8, np.float32).tobytes())
        await main("vnpuHostWrite", hostPtr=other_h, data=np.ones(8, np.float32).tobytes())
        s1 = (await main("aclrtCreateStream"))["stream"]
        event = (await main("aclrtCreateEventWithFlag", flag=0x20))["event"]
        alpha = nn.aclCreateScalar(1.1, F32)
        await main("aclmdlRICaptureBegin", stream=s1, mode=0)
        await main("aclrtMemcpyAsync", dst=self_d, destMax=32, src=self_h, count=32, kind=1, stream=s1)
        await main("aclrtMemcpyAsync", dst=other_d, destMax=32, src=other_h, count=32, kind=1, stream=s1)
        await r.launch("Add", s1, self_t, other_t, alpha, tmp_t)
        await main("aclrtStreamWaitEvent", stream=s1, event=event)
        await main("aclrtResetEvent", event=event, stream=s1)
        await main("aclmdlRICaptureTaskGrpBegin", stream=s1)
        await r.launch("Add", s1, tmp_t, other_t, alpha, out_t)
        handle = (await main("aclmdlRICaptureTaskGrpEnd", stream=s1))["handle"]
        await main("aclrtMemcpyAsync", dst=out_h, destMax=32, src=out_d, count=32, kind=2, stream=s1)
        model = (await main("aclmdlRICaptureEnd", stream=s1))["modelRI"]
        update_stream = (await updater("aclrtCreateStream"))["stream"]
        u = Remote(updater)
        for i in range(12):
            value = 5.5 if i % 2 else 1.1
            await main("aclmdlRIExecuteAsync", modelRI=model, stream=s1)
            await updater("aclmdlRICaptureTaskUpdateBegin", stream=update_stream, handle=handle)
            await u.launch("Add", update_stream, tmp_t, other_t, nn.aclCreateScalar(value, F32), out_t)
            await updater("aclmdlRICaptureTaskUpdateEnd", stream=update_stream)
            await updater("aclrtRecordEvent", event=event, stream=update_stream)
            await updater("aclrtSynchronizeStream", stream=update_stream)
            await main("aclrtSynchronizeStream", stream=s1)
            out = np.frombuffer((await main("vnpuHostRead", hostPtr=out_h, count=32))["data"], np.float32)
            np.testing.assert_allclose(out, np.full(8, 1.1 + value), rtol=1e-6)
    finally:
        await updater.close()
        await main.close()


async def test_a_batch_frame_runs_its_envelopes_in_order(live: LiveServer) -> None:
    """One frame holding an array of envelopes = those envelopes sent one by one: in order, a bad one answered
    with its id while the others run, packed (msgpack bytes) and JSON-form executors alike."""
    c = await setup(live)
    try:
        r = Remote(c)
        rng = np.random.default_rng(7)
        values = rng.standard_normal(256).astype(np.float32)
        x = await r.put(values)
        xt = tensor_at(x, (256,), F32)
        s = (await c("aclrtCreateStream"))["stream"]
        two = nn.aclCreateScalar(2.0, F32)
        ws, ex = nn.aclnnMulsGetWorkspaceSize(xt, two, xt)
        packed = msgpack.packb(ex.kernel.to_wire(), use_bin_type=True)

        def envelope(ident: int, api: str, **args: object) -> dict[str, object]:
            return {"id": ident, "api": api, "args": args, "thread": "main", "reply": False}

        muls = {"workspace": 0, "workspaceSize": ws, "stream": s}
        batch = [
            envelope(9001, "aclnnMuls", executor=packed, **muls),  # x *= 2
            envelope(9002, "aclnnMuls", executor=b"\xc1 not msgpack", **muls),
            envelope(9003, "aclnnMuls", executor=ex.kernel.to_wire(), **muls),  # x *= 2
            "not an envelope",
            envelope(9004, "aclrtMemsetAsync", devPtr=x, maxCount=1024, value=0, count=4, stream=s),  # x[0] = 0
        ]
        await c.ws.send(msgpack.packb(batch, use_bin_type=True))
        await c("aclrtSynchronizeStream", stream=s)
        errors = {m["id"]: m["error"] for m in c.orphans}
        assert set(errors) == {9002, None}
        assert errors[9002]["code"] == ACLNN_ERR_PARAM_INVALID and "not msgpack" in errors[9002]["message"]
        assert "must be a map, got str" in errors[None]["message"]
        expected = values.astype(np.float64) * 4
        expected[0] = 0
        np.testing.assert_allclose(await r.get(x, (256,)), expected, rtol=1e-6)
    finally:
        await c.close()
