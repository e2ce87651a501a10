"""The daemon as `vnpu serve` runs it, with tracemalloc started by its first "reset" (figure 13), on 127.0.0.1:PORT.

    python -m bench.traced_daemon PORT

A control channel of this launcher (not of the product): one command a line on stdin, one answer a line on stdout,
`trace {json}`. "reset": gc.collect(), tracemalloc.reset_peak(), and the current traced size recorded; "read":
gc.collect(), then the current and peak traced size and the live blocks (all, and those with a frame under server/).
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import tracemalloc
from pathlib import Path

SERVER = str(Path(__file__).resolve().parent.parent / "server")


def _answer(payload: dict[str, object]) -> None:
    sys.stdout.write("trace " + json.dumps(payload) + "\n")
    sys.stdout.flush()


def _control() -> None:
    for line in sys.stdin:
        command = line.strip()
        gc.collect()
        if command == "reset":
            if not tracemalloc.is_tracing():  # started once the daemon listens: under it, startup takes minutes
                tracemalloc.start(25)
            tracemalloc.reset_peak()
            _answer({"current": tracemalloc.get_traced_memory()[0]})
        elif command == "read":
            current, peak = tracemalloc.get_traced_memory()
            traces = tracemalloc.take_snapshot().traces
            ours = sum(1 for t in traces if any(f.filename.startswith(SERVER) for f in t.traceback))
            _answer({"current": current, "peak": peak, "blocks": len(traces), "server_blocks": ours})


def main(argv: list[str]) -> int:
    threading.Thread(target=_control, name="trace-control", daemon=True).start()
    from server.cli import main as cli

    return cli(["serve", "--host", "127.0.0.1", "--port", argv[0], "--memory", "1GiB", "--log-level", "warning"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
