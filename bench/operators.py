"""Figure 14: the operator library -- each implemented kernel's device time vs the same computation in numpy in this
process, paged decode attention (FusedInferAttentionScoreV4) vs a numpy reference, updating its sequence lengths in
place vs capturing the step again, and a 2-layer LLaMA-style decode step replayed vs eager (bench/llama_step.py).

The kernels' workloads are their test rows (tests/server/npu/ops/*cases.py), the pointwise ones scaled up to
256×1024 elements (a 3×4 row measures only the launch). The numpy side runs the kernel's own numpy code on the same
data in this process (`server.npu.ops.plan_kernel` over local memory): what the device adds is the launch (the
task, its views, the stream). Device time is two events around the launch on a busy stream, as figure 6.
"""

from __future__ import annotations

import importlib
import statistics
import sys
import time
from typing import Any

import ml_dtypes
import numpy as np

from bench.daemon import ROOT
from bench.report import Goal, Row, interleave
from bench.wire import Bench
from client import acl

SCALED = {(3, 5): (256, 1024), (5,): (1024,), (3, 4): (256, 1024), (4,): (1024,)}  # pointwise rows' shapes
BF16 = np.dtype(ml_dtypes.bfloat16)


def _rows() -> list[Any]:
    sys.path.insert(0, str(ROOT / "tests" / "server" / "npu" / "ops"))  # the rows' kit (aclnn_testkit)
    from tests.server.npu.ops.test_first_ops_cases import CASE_MODULES

    seen: set[str] = set()
    rows = []
    for module in CASE_MODULES:
        for case in importlib.import_module(module).CASES:
            if case.op not in seen:
                seen.add(case.op)
                rows.append(case)
    return rows


def _scaled(case: Any) -> Any:
    """The row with its tensors' shapes scaled when it is a pointwise operator's (the elementwise and pointwise
    families' rules take any shape) of the (3, 5)/(3, 4) shapes."""
    from dataclasses import replace

    from proto.aclnn.rules import elementwise, pointwise
    from tests.server.npu.ops import opcases as oc

    if case.op not in pointwise.TABLE and case.op not in elementwise.TABLE:
        return case
    tensors = [spec for spec in case.args.values() if isinstance(spec, oc.In | oc.Out | oc.Ref)]
    if not tensors or any(spec.shape not in SCALED or getattr(spec, "values", None) is not None for spec in tensors):
        return case
    args = {
        name: replace(spec, shape=SCALED[spec.shape]) if isinstance(spec, oc.In | oc.Out | oc.Ref) else spec
        for name, spec in case.args.items()
    }
    return replace(case, args=args)


class DeviceArgs:
    """A row's arguments in the daemon's memory (the same random values as the local ones)."""

    def __init__(self, case: Any, local: Any, mem: Any) -> None:
        from tests.server.npu.ops import opcases as oc

        self.ptrs: list[int] = []
        self.host: dict[str, Any] = {}
        for (name, spec), value in zip(case.args.items(), local.host, strict=True):
            if isinstance(spec, oc.In | oc.Out | oc.Ref):
                self.host[name] = self._tensor(value, mem)
            elif isinstance(spec, oc.List):
                self.host[name] = acl.aclCreateTensorList([self._tensor(t, mem) for t in value.tensors])
            else:
                self.host[name] = value

    def _tensor(self, local: Any, mem: Any) -> Any:
        data = mem.read(local)
        nbytes = max(local.byte_range()[1], 1)
        ptr = acl.aclrtMalloc(nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.ptrs.append(ptr)
        flat = np.ascontiguousarray(data).reshape(-1)  # a 0-d array cannot change its itemsize in a view
        raw = (flat.view(np.uint16) if flat.dtype == BF16 else flat).view(np.uint8)
        if raw.nbytes:
            acl.aclrtMemcpy(ptr, raw.nbytes, raw.tobytes(), raw.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        dims = list(local.view_dims)
        strides = [int(np.prod(dims[i + 1 :])) for i in range(len(dims))]
        return acl.aclCreateTensor(dims, local.data_type, strides, 0, acl.ACL_FORMAT_ND, dims or [1], ptr)

    def free(self) -> None:
        for ptr in self.ptrs:
            acl.aclrtFree(ptr)


def _measure(
    bench: Bench, case: Any, rng: np.random.Generator, stream: int, events: tuple[int, int]
) -> list[list[float]]:
    """[device samples, numpy samples] of one row: the daemon's launch between events, the local plan's call."""
    from aclnn_testkit import FakeMemory

    import proto.aclnn as nn
    from server.npu.ops import plan_kernel
    from tests.server.npu.ops import opcases as oc

    decl = nn.OPS[case.op]
    mem = FakeMemory(rng, size=64 << 20)
    local = oc.build(case, mem, rng)
    ordered = dict(zip(case.args, local.host, strict=True))
    size, executor = nn.function(decl.ws_name)(*(ordered[n] for n in decl.arg_names))  # type: ignore[misc]
    workspace = mem.region(mem.alloc(size), size) if size else None
    plan = plan_kernel(executor.kernel, mem.views, workspace)
    device = DeviceArgs(case, local, mem)
    space = acl.aclrtMalloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST) if size else None
    phase1, launch = getattr(acl, decl.ws_name), getattr(acl, decl.c_name)
    values = [device.host[n] for n in decl.arg_names]
    start, end = events

    def on_device() -> float:
        launch(space, size, phase1(*values)[1], stream)  # keeps the stream busy
        acl.aclrtRecordEvent(start, stream)
        launch(space, size, phase1(*values)[1], stream)
        acl.aclrtRecordEvent(end, stream)
        acl.aclrtSynchronizeStream(stream)
        return float(acl.aclrtEventElapsedTime(start, end)) / 1000

    def in_numpy() -> float:
        begin = time.perf_counter()
        with np.errstate(all="ignore"):
            plan()
        return time.perf_counter() - begin

    samples = interleave(bench.reps, on_device, in_numpy)
    device.free()
    if space:
        acl.aclrtFree(space)
    return samples


def kernels_row(bench: Bench) -> Row:
    """Every implemented kernel: the median over repetitions of device time / local numpy time, per operator."""
    stream = acl.aclrtCreateStream()
    events = acl.aclrtCreateEvent(), acl.aclrtCreateEvent()
    rng = np.random.default_rng(14)
    ratios: dict[str, float] = {}
    devices: list[float] = []
    numpys: list[float] = []
    cases = _rows()
    for case in cases[: bench.pick(len(cases), 24)]:
        ours, floor = _measure(bench, _scaled(case), rng, stream, events)
        devices.append(statistics.median(ours))
        numpys.append(statistics.median(floor))
        ratios[case.op] = statistics.median(a / b for a, b in zip(ours, floor, strict=True))
    for event in events:
        acl.aclrtDestroyEvent(event)
    acl.aclrtDestroyStream(stream)
    worst = sorted(ratios.items(), key=lambda item: -item[1])[:10]
    row = Row(
        "14",
        f"{len(ratios)} implemented kernels (their test rows; pointwise at 256K elements), device time",
        "s",
        devices,
        "the kernel's numpy in this process, same data",
        numpys,
        ratio=list(ratios.values()),
        ratio_meaning="of numpy (median over the operators)",
        goal=Goal("<=", 1.3),
    )
    row.extra["worst_ten"] = {op: round(r, 2) for op, r in worst}
    row.extra["per_operator"] = {op: round(r, 3) for op, r in sorted(ratios.items())}
    bench.log("figure 14 worst ten: " + ", ".join(f"{op} {r:.2f}x" for op, r in worst))
    return row


class Decode:
    """One paged decode attention in the daemon: batch 8, 32 query heads, 8 KV heads, head dim 128, 2,048 cached
    tokens per sequence in blocks of 128 (bf16 cache, BSH), a shuffled block table."""

    def __init__(self, bench: Bench) -> None:
        self.b, self.n, self.kvn, self.d = 8, 32, 8, 128
        self.tokens, self.block = bench.pick(2048, 256), 128
        per = self.tokens // self.block
        rng = np.random.default_rng(2048)
        self.q = rng.standard_normal((self.b, 1, self.n * self.d)).astype(BF16)
        self.k = rng.standard_normal((self.b * per, self.block, self.kvn * self.d)).astype(BF16)
        self.v = rng.standard_normal((self.b * per, self.block, self.kvn * self.d)).astype(BF16)
        self.table = rng.permutation(self.b * per).reshape(self.b, per).astype(np.int32)
        self.ptrs: list[int] = []
        self.query, self.key, self.value = (self._upload(x, acl.ACL_BF16) for x in (self.q, self.k, self.v))
        self.tables = self._upload(self.table, acl.ACL_INT32)
        self.out = self._upload(np.zeros(self.q.shape, BF16), acl.ACL_BF16)
        self.lengths = [self.tokens] * self.b

    def _upload(self, x: np.ndarray, dtype: int) -> Any:
        raw = x.view(np.uint16) if x.dtype == BF16 else x
        ptr = acl.aclrtMalloc(raw.nbytes, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        acl.aclrtMemcpy(ptr, raw.nbytes, raw.tobytes(), raw.nbytes, acl.ACL_MEMCPY_HOST_TO_DEVICE)
        self.ptrs.append(ptr)
        dims = list(x.shape)
        strides = [int(np.prod(dims[i + 1 :])) for i in range(len(dims))]
        return acl.aclCreateTensor(dims, dtype, strides, 0, acl.ACL_FORMAT_ND, dims, ptr)

    def phase1(self, lengths: list[int]) -> tuple[int, Any]:
        optional: list[Any] = [None] * 26
        optional[3], optional[11] = acl.aclCreateIntArray(lengths), self.tables
        return acl.aclnnFusedInferAttentionScoreV4GetWorkspaceSize(  # type: ignore[no-any-return]
            self.query, acl.aclCreateTensorList([self.key]), acl.aclCreateTensorList([self.value]), *optional,
            self.n, 1 / np.sqrt(self.d), 2147483647, 2147483647, "BSH", self.kvn, 0, 0, self.block, 0, False, 0, 0, 0,
            self.out, None,
        )  # fmt: skip

    def launch(self, stream: int, lengths: list[int] | None = None) -> None:
        size, executor = self.phase1(lengths or self.lengths)
        acl.aclnnFusedInferAttentionScoreV4(None, size, executor, stream)

    def reference(self) -> np.ndarray:
        """The same attention in numpy, float32 (the blocks gathered, grouped heads, softmax, weighted sum)."""
        b, n, kvn, d, t = self.b, self.n, self.kvn, self.d, self.tokens
        keys = self.k[self.table].reshape(b, t, kvn, d).astype(np.float32)
        values = self.v[self.table].reshape(b, t, kvn, d).astype(np.float32)
        q = self.q.reshape(b, kvn, n // kvn, d).astype(np.float32)
        scores = np.einsum("bgnd,btgd->bgnt", q, keys) * np.float32(1 / np.sqrt(d))
        scores -= scores.max(-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(-1, keepdims=True)
        result: np.ndarray = np.einsum("bgnt,btgd->bgnd", probs, values).reshape(b, 1, n * d)
        return result

    def free(self) -> None:
        for ptr in self.ptrs:
            acl.aclrtFree(ptr)


def decode_rows(bench: Bench) -> list[Row]:
    decode = Decode(bench)
    stream, update_stream = acl.aclrtCreateStream(), acl.aclrtCreateStream()
    start, end = acl.aclrtCreateEvent(), acl.aclrtCreateEvent()
    pause = bench.pick(0.2, 0.01)

    def on_device() -> float:
        time.sleep(pause)
        decode.launch(stream)
        acl.aclrtRecordEvent(start, stream)
        decode.launch(stream)
        acl.aclrtRecordEvent(end, stream)
        acl.aclrtSynchronizeStream(stream)
        return float(acl.aclrtEventElapsedTime(start, end)) / 1000

    def in_numpy() -> float:
        time.sleep(pause)
        begin = time.perf_counter()
        decode.reference()
        return time.perf_counter() - begin

    ours, floor = interleave(bench.reps, on_device, in_numpy)
    got = np.empty(decode.q.shape, np.uint16)
    acl.aclrtMemcpy(got, got.nbytes, decode.ptrs[-1], got.nbytes, acl.ACL_MEMCPY_DEVICE_TO_HOST)
    if not np.allclose(got.view(BF16).astype(np.float32), decode.reference(), atol=2e-2):
        raise RuntimeError("figure 14: the device's FusedInferAttentionScoreV4 differs from the numpy reference")
    rows = [
        Row(
            "14",
            f"FusedInferAttentionScoreV4 paged decode (B 8, N 32/8, D 128, {decode.tokens} tokens, block 128, bf16)",
            "s",
            ours,
            "the same attention in numpy (float32 einsum)",
            floor,
            ratio=[a / b for a, b in zip(ours, floor, strict=True)],
            ratio_meaning="of numpy",
            goal=Goal("<=", 1.5),
        )
    ]
    rows += _update_row(bench, decode, stream, update_stream)
    for event in (start, end):
        acl.aclrtDestroyEvent(event)
    acl.aclrtDestroyStream(stream)
    acl.aclrtDestroyStream(update_stream)
    decode.free()
    return rows


def _capture_step(decode: Decode, stream: int, event: int, others: int) -> tuple[int, int]:
    """The decode step captured: the EXTERNAL wait and reset, `others` small kernels (the step's other operators),
    FIA in a task group in the middle."""
    from bench.wire import AddOperands

    ops = AddOperands(8)
    acl.aclmdlRICaptureBegin(stream, acl.ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
    acl.aclrtStreamWaitEvent(stream, event)
    acl.aclrtResetEvent(event, stream)
    for i in range(others):
        if i == others // 2:
            acl.aclmdlRICaptureTaskGrpBegin(stream)
            decode.launch(stream)
            group = acl.aclmdlRICaptureTaskGrpEnd(stream)
        ops.launch(stream)
    model: int = acl.aclmdlRICaptureEnd(stream)
    return model, group


def _update_row(bench: Bench, decode: Decode, stream: int, update_stream: int) -> list[Row]:
    """Updating FIA's sequence lengths in a captured 100-kernel step vs capturing the step again. The host's cost
    of an update is what vllm-ascend pays per layer and step: UpdateBegin, phase 1, the launch, UpdateEnd and the
    record the replay waits on -- the update is applied on the update stream while the host goes on (the
    synchronize after it is not timed). Capturing again costs until CaptureEnd returns the new model. A second row
    times the update with its synchronize (applied before the host goes on), for comparison."""
    event = acl.aclrtCreateEventWithFlag(acl.ACL_EVENT_EXTERNAL)
    others = 99
    model, group = _capture_step(decode, stream, event, others)
    step = [0]

    def update(synchronized: bool) -> float:
        step[0] += 1
        lengths = [decode.tokens - 64 + step[0] % 64] * decode.b
        begin = time.perf_counter()
        acl.aclmdlRICaptureTaskUpdateBegin(update_stream, group)
        decode.launch(update_stream, lengths)
        acl.aclmdlRICaptureTaskUpdateEnd(update_stream)
        acl.aclrtRecordEvent(event, update_stream)
        if synchronized:
            acl.aclrtSynchronizeStream(update_stream)
        elapsed = time.perf_counter() - begin
        acl.aclrtSynchronizeStream(update_stream)  # the next measurement starts with nothing queued
        return elapsed

    def recapture() -> float:
        begin = time.perf_counter()
        again, _ = _capture_step(decode, stream, event, others)
        elapsed = time.perf_counter() - begin
        acl.aclmdlRIDestroy(again)
        return elapsed

    cheap, dear, applied = interleave(bench.reps, lambda: update(False), recapture, lambda: update(True))
    acl.aclmdlRIDestroy(model)
    acl.aclrtDestroyEvent(event)
    label = "update FIA's sequence lengths in a 100-kernel step (UpdateBegin + phase 1 + launch + UpdateEnd + record"
    return [
        Row(
            "14",
            label + "; applied on the update stream while the host goes on)",
            "s",
            cheap,
            "capture the step again (until CaptureEnd returns the model)",
            dear,
            ratio=[b / a for a, b in zip(cheap, dear, strict=True)],
            ratio_meaning="faster",
            goal=Goal(">=", 20),
        ),
        Row(
            "14",
            label + " + synchronize: the update applied before the host goes on)",
            "s",
            applied,
            "capture the step again",
            dear,
            ratio=[b / a for a, b in zip(applied, dear, strict=True)],
            ratio_meaning="faster",
        ),
    ]


def figure14(bench: Bench) -> list[Row]:
    from bench.llama_step import llama_row

    bench.use()
    return [kernels_row(bench), *decode_rows(bench), llama_row(bench)]
