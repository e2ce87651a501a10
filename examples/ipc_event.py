"""An IPC event between two processes, as CANN's ipcevent sample: one records, the other's stream waits for it.

    parent:  create an ACL_EVENT_IPC event; hold a stream behind a gate; queue a record of the IPC event on it;
             start the child with the event's 64-byte handle
    child:   open the handle (another process, its own context); make a stream wait on the event; say so
    parent:  once the child waits, open the gate: the record runs, and the child's stream goes on

The child checks that its stream is blocked until the parent's record and free after it; the script exits
non-zero otherwise (or when the child does not answer within 30 s).

    VNPU_ENDPOINT=http://127.0.0.1:9470 python examples/ipc_event.py
"""

# ruff: noqa: F403, F405
# (the C names come from the star import, as from acl/acl.h)

from __future__ import annotations

import subprocess
import sys
import time

from client.acl import *

TIMEOUT_S = 30


def ACL_LOG(who: str, fmt: str, *args: object) -> None:
    print(f"[INFO] {who}: " + fmt % args, flush=True)


def child(handle_hex: str) -> int:
    aclInit(None)
    aclrtSetDevice(0)
    event = aclrtIpcOpenEventHandle(bytes.fromhex(handle_hex))
    stream = aclrtCreateStream()
    aclrtStreamWaitEvent(stream, event)
    time.sleep(0.05)
    blocked = aclrtStreamQuery(stream) == ACL_STREAM_STATUS_NOT_READY
    ACL_LOG("child", "my stream waits for the parent's record: %s", blocked)
    sys.stdin.readline()  # the parent opens its gate now
    aclrtSynchronizeStream(stream)
    released = aclrtQueryEventStatus(event) == ACL_EVENT_RECORDED_STATUS_COMPLETE
    ACL_LOG("child", "released by the parent's record: %s", released)
    aclrtDestroyEvent(event)  # forgets it here; the parent's event lives on
    aclrtDestroyStream(stream)
    aclrtResetDevice(0)
    aclFinalize()
    return 0 if blocked and released else 1


def parent() -> int:
    aclInit(None)
    aclrtSetDevice(0)
    event = aclrtCreateEventExWithFlag(ACL_EVENT_IPC)
    gate = aclrtCreateEvent()
    stream = aclrtCreateStream()
    aclrtStreamWaitEvent(stream, gate)  # the stream holds until the gate is recorded
    aclrtRecordEvent(event, stream)
    handle = aclrtIpcGetEventHandle(event)
    ACL_LOG("parent", "exported a %d-byte handle", len(handle))
    other = subprocess.Popen(
        [sys.executable, __file__, "--child", handle.hex()], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert other.stdin is not None and other.stdout is not None
    line = other.stdout.readline()
    print(line, end="", flush=True)
    aclrtRecordEvent(gate, None)  # the record of the IPC event runs now
    other.stdin.write("go\n")
    other.stdin.flush()
    try:
        rest, _ = other.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        other.kill()
        ACL_LOG("parent", "the child did not finish in %d s", TIMEOUT_S)
        return 1
    print(rest, end="", flush=True)
    aclrtSynchronizeStream(stream)
    aclrtDestroyEvent(event)
    aclrtDestroyEvent(gate)
    aclrtDestroyStream(stream)
    aclrtResetDevice(0)
    aclFinalize()
    ACL_LOG("parent", "the child exited with %d", other.returncode)
    return other.returncode


if __name__ == "__main__":
    sys.exit(child(sys.argv[2]) if sys.argv[1:2] == ["--child"] else parent())
