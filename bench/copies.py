"""Figures 5 and 6: bulk copies through aclrtMallocHost buffers, and large kernels."""

from __future__ import annotations

import socket
import statistics
import time
from collections.abc import Callable

import numpy as np

from bench.daemon import free_port
from bench.echo_server import round_trips
from bench.placement import TWO_CORES
from bench.report import Goal, Row, interleave, timed
from bench.transports import raw_echo
from bench.wire import Bench, close_session, open_session, tensor
from client import acl

MiB = 1 << 20


def figure5(bench: Bench) -> list[Row]:
    """H2D and D2H of N bytes between an aclrtMallocHost buffer and device memory (aclrtMemcpy).

    Shared-memory mode (the client maps the daemon's segment): the host side is written/read in place, the call
    copies; a sample is the median of three back-to-back copies, as is the numpy floor's. Remote mode
    (VNPU_HOST_MEMORY=remote): H2D is `HostBuffer.write` (the bytes over the wire) + the copy; D2H is the copy +
    `HostBuffer.read`. Floors: a numpy copy of N bytes in this process -- up to 1 MiB, where a request/response
    costs more than the copy, one raw TCP round trip (a plain-Python echo, 64 B) followed by that numpy copy, what
    any synchronous copy over a socket pays --, and the echo of N bytes over the daemon's WebSocket (its rate
    counts the bytes of both directions: 2N / round trip)."""
    sizes = bench.pick([1 * MiB, 16 * MiB, 256 * MiB], [1 * MiB])
    remote = open_session(bench.daemon.endpoint, host_memory="remote")
    rows: list[Row] = []
    try:
        with raw_echo("tcp", str(free_port())) as echo:
            for size in sizes:
                rows += _copies(bench, remote, size, *echo)
    finally:
        bench.use(remote)
        close_session(remote)
        bench.use()
    return rows


def _median_rate(size: int, copy: Callable[[], object]) -> float:
    """Bytes/s of the median of three back-to-back copies: the copies of this process (numpy, shared memory)
    are cheap enough to repeat, and the first one after the big transient buffers of a remote or echo transfer
    runs up to 2x slow on this machine (measured), whichever side it is."""
    return statistics.median(size / timed(copy) for _ in range(3))


def _copies(bench: Bench, remote: acl.Session, size: int, echo: socket.socket, echo_pid: int) -> list[Row]:
    """The rows of one size. Up to 1 MiB the shared-memory copies and their floor run with the servers (daemon,
    echo) on one core and this process on another (`bench.placement`: a round trip is the floor's larger part)."""
    kind_h2d, kind_d2h = acl.ACL_MEMCPY_HOST_TO_DEVICE, acl.ACL_MEMCPY_DEVICE_TO_HOST
    data = np.random.default_rng(size).integers(0, 255, size, dtype=np.uint8)
    src, dst = data.copy(), np.empty_like(data)

    bench.use()
    local_host = acl.aclrtMallocHost(size)
    local_dev = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
    if not local_host.local:
        raise RuntimeError("the main session does not map the daemon's shared memory")
    local_host.numpy()[:] = data
    bench.use(remote)
    remote_host = acl.aclrtMallocHost(size)
    remote_dev = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)

    def shm_h2d() -> float:
        bench.use()
        return _median_rate(size, lambda: acl.aclrtMemcpy(local_dev, size, local_host, size, kind_h2d))

    def shm_d2h() -> float:
        bench.use()
        return _median_rate(size, lambda: acl.aclrtMemcpy(local_host, size, local_dev, size, kind_d2h))

    def remote_h2d() -> float:
        bench.use(remote)

        def go() -> None:
            remote_host.write(data)
            acl.aclrtMemcpy(remote_dev, size, remote_host, size, kind_h2d)

        return size / timed(go)

    def remote_d2h() -> float:
        bench.use(remote)

        def go() -> None:
            acl.aclrtMemcpy(remote_host, size, remote_dev, size, kind_d2h)
            if len(remote_host.read()) != size:
                raise RuntimeError("short read")

        return size / timed(go)

    def numpy() -> float:
        return _median_rate(size, lambda: np.copyto(dst, src))

    def round_trip_and_numpy() -> float:
        return _median_rate(size, lambda: (round_trips(echo, 1), np.copyto(dst, src)))

    def wire_echo() -> float:
        return 2 * size / bench.echo.transfer(data.tobytes())

    small = size <= MiB  # a round trip costs more than the copy: the floor is both
    if small:
        servers = (bench.daemon.pid, echo_pid)
        shm_h2d, shm_d2h, round_trip_and_numpy = (
            TWO_CORES.around(servers, measure) for measure in (shm_h2d, shm_d2h, round_trip_and_numpy)
        )
    reps = bench.reps if size < 256 * MiB else max(3, bench.reps - 2)
    s_h2d, s_d2h, n, r_h2d, r_d2h, e, rn = interleave(
        reps, shm_h2d, shm_d2h, numpy, remote_h2d, remote_d2h, wire_echo, round_trip_and_numpy
    )

    # the bytes arrived: device memory of both sessions holds `data`
    bench.use()
    acl.aclrtMemcpy(local_host, size, local_dev, size, kind_d2h)
    ok = bool(np.array_equal(local_host.numpy(), data))
    bench.use(remote)
    ok = ok and remote_host.read() == data.tobytes()
    acl.aclrtFreeHost(remote_host)
    acl.aclrtFree(remote_dev)
    bench.use()
    acl.aclrtFreeHost(local_host)
    acl.aclrtFree(local_dev)
    if not ok:
        raise RuntimeError(f"figure 5: the {size}-byte copies did not carry the data")

    label = f"{size // MiB} MiB"
    rows = []
    floor, floor_label = (
        (rn, f"one raw TCP round trip + numpy copy of the same bytes, {TWO_CORES.name}")
        if small
        else (n, "numpy copy of the same bytes")
    )
    for direction, samples in (("H2D", s_h2d), ("D2H", s_d2h)):
        rows.append(
            Row(
                "5",
                f"{direction} {label}, shared-memory mode (aclrtMemcpy, aclrtMallocHost buffer)"
                + (f", daemon and client {TWO_CORES.name}" if small else ""),
                "B/s",
                samples,
                floor_label,
                floor,
                ratio=[a / b for a, b in zip(samples, floor, strict=True)],
                ratio_meaning="of the floor" if small else "of numpy",
                goal=Goal(">=", 0.8, 1.0) if small else Goal(">=", 0.5, 0.8),
                extra={"numpy_copy_B_per_s": n, "of_numpy": [a / b for a, b in zip(samples, n, strict=True)]},
            )
        )
    for direction, samples in (("H2D", r_h2d), ("D2H", r_d2h)):
        rows.append(
            Row(
                "5",
                f"{direction} {label}, remote mode (HostBuffer {'write' if direction == 'H2D' else 'read'} + "
                "aclrtMemcpy)",
                "B/s",
                samples,
                "WebSocket binary echo (2N / round trip)",
                e,
                ratio=[a / b for a, b in zip(samples, e, strict=True)],
                ratio_meaning="of the WebSocket",
                goal=Goal(">=", 0.5, 0.8),
            )
        )
    return rows


def _upload(arrays: list[np.ndarray], ptrs: list[int]) -> None:
    """Real data into device memory (a never-written arena page reads as the zero page, which would flatter a
    kernel), through one shared-memory host buffer."""
    nbytes = max(a.nbytes for a in arrays)
    host = acl.aclrtMallocHost(nbytes)
    for array, ptr in zip(arrays, ptrs, strict=False):
        host.write(array)
        acl.aclrtMemcpy(ptr, array.nbytes, host, array.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
    acl.aclrtFreeHost(host)


def _download(ptr: int, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    acl.aclrtMemcpy(out, out.nbytes, ptr, out.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    return out


def figure6(bench: Bench) -> list[Row]:
    """Device time of one large kernel (timed events around it, behind a first launch that keeps the stream
    busy) vs the same numpy call in this process, on the same data. Both sides use numpy's default BLAS threads;
    each measurement starts after a 0.2 s pause so that the other process's BLAS threads have stopped spinning."""
    bench.use()
    stream = acl.aclrtCreateStream()
    start, end = acl.aclrtCreateEvent(), acl.aclrtCreateEvent()
    rows: list[Row] = []

    # Add of n float32
    n = bench.pick(16 << 20, 1 << 20)
    ptrs, tensors = zip(*(tensor([n]) for _ in range(3)), strict=True)
    alpha = acl.aclCreateScalar(1.0, acl.ACL_FLOAT)
    a, b, o = np.random.default_rng(1).random((3, n), dtype=np.float32)
    _upload([a, b, o], list(ptrs))

    def add() -> None:
        ws_size, executor = acl.aclnnAddGetWorkspaceSize(tensors[0], tensors[1], alpha, tensors[2])
        acl.aclnnAdd(None, ws_size, executor, stream)

    rows.append(_kernel_row(bench, stream, start, end, add, lambda: np.add(a, b, out=o), f"Add of {n >> 20}M float32"))
    rows[-1].goal = Goal("<=", 1.2, 1.05)
    if not np.array_equal(_download(ptrs[2], o), o):
        raise RuntimeError("figure 6: the device's Add differs from numpy's")
    for t in tensors:
        acl.aclDestroyTensor(t)
    for p in ptrs:
        acl.aclrtFree(p)
    acl.aclDestroyScalar(alpha)

    # Matmul m×m float32
    m = bench.pick(2048, 256)
    ptrs, tensors = zip(*(tensor([m, m]) for _ in range(3)), strict=True)
    x, y, z = np.random.default_rng(2).random((3, m, m), dtype=np.float32)
    _upload([x, y], list(ptrs))
    ws_size, executor = acl.aclnnMatmulGetWorkspaceSize(tensors[0], tensors[1], tensors[2], 0)
    workspace = acl.aclrtMalloc(ws_size, acl.ACL_MEM_MALLOC_HUGE_FIRST) if ws_size else None
    acl.aclDestroyAclOpExecutor(executor)

    def matmul() -> None:
        size, ex = acl.aclnnMatmulGetWorkspaceSize(tensors[0], tensors[1], tensors[2], 0)
        acl.aclnnMatmul(workspace, size, ex, stream)

    rows.append(_kernel_row(bench, stream, start, end, matmul, lambda: np.matmul(x, y, out=z), f"Matmul {m}² float32"))
    rows[-1].goal = Goal("<=", 1.1, 1.02)
    rows[-1].extra["workspace_bytes"] = ws_size
    if not np.allclose(_download(ptrs[2], z), z, rtol=1e-4, atol=1e-3):
        raise RuntimeError("figure 6: the device's Matmul differs from numpy's")
    for t in tensors:
        acl.aclDestroyTensor(t)
    for p in ptrs:
        acl.aclrtFree(p)
    if workspace:
        acl.aclrtFree(workspace)
    for event in (start, end):
        acl.aclrtDestroyEvent(event)
    acl.aclrtDestroyStream(stream)
    return rows


def _kernel_row(bench: Bench, stream: int, start: int, end: int, launch: object, local: object, label: str) -> Row:
    assert callable(launch) and callable(local)
    pause = bench.pick(0.2, 0.01)

    def vnpu() -> float:
        time.sleep(pause)
        launch()
        acl.aclrtRecordEvent(start, stream)
        launch()
        acl.aclrtRecordEvent(end, stream)
        acl.aclrtSynchronizeStream(stream)
        return float(acl.aclrtEventElapsedTime(start, end)) / 1000

    def numpy() -> float:
        time.sleep(pause)
        begin = time.perf_counter()
        local()
        return time.perf_counter() - begin

    ours, floor = interleave(bench.reps, vnpu, numpy)
    return Row(
        "6",
        f"{label}, device time",
        "s",
        ours,
        "in-process numpy (out=), same data",
        floor,
        ratio=[a / b for a, b in zip(ours, floor, strict=True)],
        ratio_meaning="of numpy",
    )
