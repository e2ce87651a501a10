"""Helper processes of the benchmarks (`python -m bench.worker KIND ...`), each driven over stdin/stdout lines.

- `seed ENDPOINT`: sets up the seed loop (figure 8), prints `ready`, then for each `run START SECONDS` line
  (START on the monotonic clock, which all processes share) runs steps from START for SECONDS and prints
  `done STEPS ELAPSED`; `quit` (or end of input) cleans up and exits.
- `leak ENDPOINT BYTES`: allocates device and pinned host memory, a stream, an event and a model, queues work,
  prints `ready` and waits to be killed: a client that disconnects without freeing anything (figure 9).
- `rpyc PORT`: an RPyC classic server on 127.0.0.1:PORT (figure 7's alternative), until killed.
"""

from __future__ import annotations

import sys
import time


def seed(endpoint: str) -> int:
    from bench.launches import SeedLoop
    from bench.wire import close_session, open_session
    from client import acl

    session = open_session(endpoint)
    acl.use(session)
    loop = SeedLoop()
    for _ in range(3):
        loop.step()
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "run":
            start, seconds = float(words[1]), float(words[2])
            time.sleep(max(0.0, start - time.monotonic()))
            begin = time.monotonic()
            steps = 0
            while time.monotonic() - begin < seconds:
                loop.step()
                steps += 1
            print(f"done {steps} {time.monotonic() - begin:.6f}", flush=True)
    loop.check()
    loop.close()
    close_session(session)
    return 0


def leak(endpoint: str, nbytes: int) -> int:
    import numpy as np

    from bench.launches import capture
    from bench.wire import AddOperands, open_session
    from client import acl

    acl.use(open_session(endpoint))
    dev = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    host = acl.aclrtMallocHost(nbytes)
    host.write(np.ones(nbytes, np.uint8))
    stream = acl.aclrtCreateStream()
    acl.aclrtCreateEvent()
    ops = AddOperands(8)
    capture(ops, stream, 10)
    acl.aclrtMemcpyAsync(dev, nbytes, host, nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE, stream)
    acl.aclrtSynchronizeStream(stream)
    print("ready", flush=True)
    time.sleep(120)  # killed long before
    return 1


def rpyc_server(port: int) -> int:
    from rpyc.core.service import ClassicService
    from rpyc.utils.server import ThreadedServer

    server = ThreadedServer(ClassicService, hostname="127.0.0.1", port=port, protocol_config={"allow_all_attrs": True})
    server.start()
    return 0


def main(argv: list[str]) -> int:
    kind = argv[0]
    if kind == "seed":
        return seed(argv[1])
    if kind == "leak":
        return leak(argv[1], int(argv[2]))
    if kind == "rpyc":
        return rpyc_server(int(argv[1]))
    raise SystemExit(f"unknown worker kind {kind!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
