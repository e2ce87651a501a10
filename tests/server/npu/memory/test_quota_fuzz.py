"""Two tenants race from threads for streams, events and memory (random creates and destroys, bounded): neither
ever holds more than its quota, a refusal comes only when the tenant holds all of it (never the device's own limit,
the quotas add up to less), and everything comes back at the end."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

import httpx

from proto.errors import ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_NO_EVENT_RESOURCE, ACL_ERROR_RT_NO_STREAM_RESOURCE
from server.api.sessions import Registry
from tests.server.api.conftest import start_live
from tests.server.api.conftest import test_settings as make_settings

MiB = 1 << 20
THREADS, OPS, BLOCK = 3, 60, 4 * MiB  # per tenant; the daemon's device has 64 MiB, 20 streams, 20 events
CODES = {ACL_ERROR_RT_NO_STREAM_RESOURCE: "stream", ACL_ERROR_RT_NO_EVENT_RESOURCE: "event"}
CODES[ACL_ERROR_RT_MEMORY_ALLOCATION] = "memory"
CREATE: dict[str, tuple[str, dict[str, int]]] = {
    "stream": ("aclrtCreateStream", {}),
    "event": ("aclrtCreateEvent", {}),
    "memory": ("aclrtMalloc", {"size": BLOCK, "policy": 0}),
}
DESTROY = {
    "stream": ("aclrtDestroyStream", "stream"),
    "event": ("aclrtDestroyEvent", "event"),
    "memory": ("aclrtFree", "devPtr"),
}
HELD = re.compile(r"tenant '(\w+)' holds (\d+) of its quota of (\d+) ")


def worker(url: str, token: str, seed: int) -> dict[str, int]:
    """Random creates (more often) and destroys in a session of its own; the refusals it saw, by kind."""
    rng, refusals = random.Random(seed), dict.fromkeys(CODES.values(), 0)
    held: dict[str, list[int]] = {"stream": [], "event": [], "memory": []}
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=10) as http:
        http.headers["x-vnpu-session"] = http.post("/v1/sessions").json()["session"]

        def call(api: str, **args: object) -> dict[str, object]:
            return http.post(f"/v1/call/{api}", json=args).json()  # type: ignore[no-any-return]

        call("aclInit", configPath=None)
        call("aclrtSetDevice", deviceId=0)
        for _ in range(OPS):
            kind = rng.choice(list(held))
            if held[kind] and rng.random() < 0.35:
                api, name = DESTROY[kind]
                assert call(api, **{name: held[kind].pop(rng.randrange(len(held[kind])))}) == {}
                continue
            api, args = CREATE[kind]
            answer = call(api, **args)
            if "error" in answer:
                error = answer["error"]
                assert isinstance(error, dict) and CODES[error["code"]] == kind, error
                match = HELD.match(error["message"])
                assert match is not None, error  # the tenant's quota, never the device's limit
                used, maximum = int(match[2]), int(match[3])
                assert used == maximum if kind != "memory" else maximum - BLOCK < used <= maximum, error
                refusals[kind] += 1
            else:
                held[kind].append(next(v for v in answer.values() if isinstance(v, int)))
        for kind, handles in held.items():
            api, name = DESTROY[kind]
            for handle in handles:
                assert call(api, **{name: handle}) == {}
        assert http.delete(f"/v1/sessions/{http.headers['x-vnpu-session']}").status_code == 204
    return refusals


async def test_two_tenants_race_for_the_device(tmp_path: Path) -> None:
    (tmp_path / "tokens").write_text("alice token-of-alice\nbob token-of-bob\n")
    settings = make_settings(
        tokens_file=str(tmp_path / "tokens"), tenant_share=0.4, max_streams=20, max_events=20, context_grace=0.05
    )
    server, task = await start_live(settings)
    registry: Registry = server.app.state.registry
    seen: list[dict[str, int]] = []

    async def watch() -> None:  # nobody ever holds more than its quota
        while True:
            for quota in registry.quotas.values():
                assert all(s.used <= s.maximum for s in quota.shares.values()), quota.used()
                seen.append(quota.used())
            await asyncio.sleep(0.002)

    watcher = asyncio.get_running_loop().create_task(watch())
    try:
        runs = [
            asyncio.to_thread(worker, server.url, f"token-of-{tenant}", seed)
            for seed, tenant in enumerate(["alice", "bob"] * THREADS)
        ]
        refusals = await asyncio.wait_for(asyncio.gather(*runs), 60)
        assert not watcher.done()
        for tenant in (0, 1):  # each tenant reached each of its quotas, so the refusals above were tested
            assert all(sum(r[kind] for r in refusals[tenant::2]) > 0 for kind in CODES.values()), refusals
        assert any(u["stream"] == 8 for u in seen) and max(u["memory"] for u in seen) == 6 * BLOCK
        zero = {"stream": 0, "event": 0, "model": 0, "memory": 0, "queue": 0, "context": 0, "session": 0}
        for _ in range(250):
            if all(q.used() == zero for q in registry.quotas.values()):
                break
            await asyncio.sleep(0.02)
        assert [q.used() for q in registry.quotas.values()] == [zero, zero]
        device = server.app.state.machine.devices[0]
        assert (device.streams.used, device.events.used, device.arena.used_bytes) == (0, 0, 0)
    finally:
        watcher.cancel()
        server.server.should_exit = True
        await asyncio.wait_for(task, 10)
