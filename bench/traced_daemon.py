"""The daemon as `vnpu serve` runs it, with tracemalloc started by its first "reset" (figure 13), on 127.0.0.1:PORT.

    python -m bench.traced_daemon PORT

A control channel of this launcher (not of the product): one command a line on stdin, one answer a line on stdout,
`trace {json}`. "reset": gc.collect(), tracemalloc.reset_peak(), the current traced size and a snapshot recorded;
"read": gc.collect(), then the current and peak traced size, the live blocks (all, and those with a frame under
server/), and the sites that grew most since the reset (the innermost frame of the project's own code that
allocated, with the bytes and blocks it added).
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = str(ROOT / "server")
TOP = 12  # sites reported by "read"


def _answer(payload: dict[str, object]) -> None:
    sys.stdout.write("trace " + json.dumps(payload) + "\n")
    sys.stdout.flush()


def _site(trace: tracemalloc.Trace) -> str:
    """Where the project's own code allocated a block: its innermost frame under ROOT, else the innermost one."""
    frames = list(reversed(trace.traceback))  # a Traceback runs from the oldest frame to the newest
    mine = [f for f in frames if f.filename.startswith(str(ROOT)) and "/.venv/" not in f.filename]
    frame = mine[0] if mine else frames[0]
    name = Path(frame.filename)
    return f"{name.relative_to(ROOT) if name.is_relative_to(ROOT) else name}:{frame.lineno}"


def _grown(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot) -> list[list[object]]:
    """The TOP sites whose live bytes grew most between the snapshots: [site, bytes, blocks]."""
    sizes: dict[str, list[int]] = {}
    for sign, snapshot in ((-1, before), (1, after)):
        for trace in snapshot.traces:
            entry = sizes.setdefault(_site(trace), [0, 0])
            entry[0] += sign * trace.size
            entry[1] += sign
    grown = sorted(sizes.items(), key=lambda item: -item[1][0])[:TOP]
    return [[site, size, blocks] for site, (size, blocks) in grown if size > 0]


def _control() -> None:
    baseline: tracemalloc.Snapshot | None = None
    for line in sys.stdin:
        command = line.strip()
        gc.collect()
        if command == "reset":
            if not tracemalloc.is_tracing():  # started once the daemon listens: under it, startup takes minutes
                tracemalloc.start(25)
            baseline = tracemalloc.take_snapshot()
            tracemalloc.reset_peak()
            _answer({"current": tracemalloc.get_traced_memory()[0]})
        elif command == "read":
            current, peak = tracemalloc.get_traced_memory()
            snapshot = tracemalloc.take_snapshot()
            traces = snapshot.traces
            ours = sum(1 for t in traces if any(f.filename.startswith(SERVER) for f in t.traceback))
            grown = _grown(baseline, snapshot) if baseline is not None else []
            answer = {"current": current, "peak": peak, "blocks": len(traces), "server_blocks": ours, "grown": grown}
            _answer(answer)


def main(argv: list[str]) -> int:
    threading.Thread(target=_control, name="trace-control", daemon=True).start()
    from server.cli import main as cli

    return cli(["serve", "--host", "127.0.0.1", "--port", argv[0], "--memory", "1GiB", "--log-level", "warning"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
