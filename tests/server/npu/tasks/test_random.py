"""aclrtRandomNumAsync (spec-breadth 15): every function and data type against a reference written here from the
algorithm documented in server/npu/tasks/randomgen.py (numpy's Philox keyed by the seed, counting from the device
counter); the counter's advance; statistics of bounded samples; parameters and counter read when the task runs;
capture and replay; the runtime's checks and codes, and the stream working after each."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from proto.constants import aclDataType, aclmdlRICaptureMode, aclrtRandomNumFuncType
from proto.errors import ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_DEVICE_MEM_ERROR, ACL_ERROR_RT_PARAM_INVALID, AclError
from proto.randomnum import aclrtRandomNumTaskInfo, aclrtRandomParaInfo
from server.npu import Runtime
from tests.server.npu.core.test_stream_control import fails
from tests.server.npu.devicekit import download, read_bytes, upload, upload_into

DT, F = aclDataType, aclrtRandomNumFuncType
DROPOUT, UNIFORM = F.ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK, F.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS
NORMAL, TRUNCATED = F.ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, F.ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS
DTYPES = {
    DT.ACL_FLOAT: np.dtype(np.float32),
    DT.ACL_FLOAT16: np.dtype(np.float16),
    DT.ACL_BF16: np.dtype(ml_dtypes.bfloat16),
    DT.ACL_INT32: np.dtype(np.int32),
    DT.ACL_INT64: np.dtype(np.int64),
    DT.ACL_UINT32: np.dtype(np.uint32),
    DT.ACL_UINT64: np.dtype(np.uint64),
}
FLOATS = (DT.ACL_FLOAT, DT.ACL_FLOAT16, DT.ACL_BF16)
N = 1001  # not a whole number of Philox blocks in any function: the skipped words are part of the contract


# --- the reference, from randomgen's docstring --------------------------------------------------------------------


class Stream:
    """The documented words: Philox keyed by (seed, 0) from counter c, and the counter to store back."""

    def __init__(self, seed: int, counter: int) -> None:
        self.gen, self.start, self.used = np.random.Philox(key=seed, counter=counter), counter, 0

    def take(self, n: int) -> np.ndarray:
        self.used += n
        return self.gen.random_raw(n)

    def counter(self) -> int:
        return (self.start + math.ceil(self.used / 4)) % 2**128  # four words a block, a block per count


def unit(w: np.ndarray) -> np.ndarray:
    return (w >> np.uint64(11)).astype(np.float64) / 2.0**53


def box_muller(w: np.ndarray) -> np.ndarray:
    v = ((w[0::2] >> np.uint64(11)) + np.uint64(1)).astype(np.float64) / 2.0**53
    result: np.ndarray = np.sqrt(-2.0 * np.log(v)) * np.cos(2.0 * np.pi * unit(w[1::2]))
    return result


def expected(func: int, dtype: np.dtype, first: float, second: float, n: int, words: Stream) -> np.ndarray:
    if func == DROPOUT:
        bits = [int(u >= first) for u in unit(words.take(n))]
        bits += [0] * (-n % 8)
        return np.array([sum(b << k for k, b in enumerate(bits[i : i + 8])) for i in range(0, n, 8)], np.uint8)
    if func == UNIFORM and dtype.kind in "iu":
        lo, hi = int(first), int(second)
        return np.array([lo + int(w) % (hi - lo) if hi > lo else lo for w in words.take(n)], dtype)
    if func == UNIFORM:
        return (first + (second - first) * unit(words.take(n))).astype(dtype)
    z = box_muller(words.take(2 * n))
    while func == TRUNCATED and (again := [i for i in range(n) if abs(z[i]) > 2.0]):
        for i, value in zip(again, box_muller(words.take(2 * len(again))), strict=True):
            z[i] = value
    return (first + second * z).astype(dtype)


# --- launching -------------------------------------------------------------------------------------------------


def value(x: float, dtype: np.dtype | type) -> aclrtRandomParaInfo:
    return aclrtRandomParaInfo.immediate(np.array(x, dtype).tobytes())


def u64(x: int) -> aclrtRandomParaInfo:
    return aclrtRandomParaInfo.immediate(x.to_bytes(8, "little"))


def task(
    func: int,
    data_type: int,
    params: tuple[aclrtRandomParaInfo, ...],
    seed: aclrtRandomParaInfo,
    count: aclrtRandomParaInfo,
    result: int | None,
    counter: int | None,
    para_addr: int | None = None,
) -> aclrtRandomNumTaskInfo:
    info = aclrtRandomNumTaskInfo(data_type, randomParaAddr=para_addr, randomResultAddr=result)
    info.randomCounterAddr, info.randomSeed, info.randomNum = counter, seed, count
    info.randomNumFuncParaInfo.funcType = func
    for i, param in enumerate(params):
        info.randomNumFuncParaInfo.paramInfo.slots[i] = param
    return info


def out_bytes(func: int, dtype: np.dtype, n: int) -> int:
    return math.ceil(n / 8) if func == DROPOUT else n * dtype.itemsize


def read_values(rt: Runtime, ptr: int, func: int, dtype: np.dtype, n: int) -> np.ndarray:
    data = read_bytes(rt, ptr, out_bytes(func, dtype, n))
    return np.frombuffer(data, np.uint8 if func == DROPOUT else dtype)


def read_counter(rt: Runtime, ptr: int) -> int:
    return int.from_bytes(read_bytes(rt, ptr, 16), "little")


def fresh_counter(rt: Runtime, start: int = 0) -> int:
    ptr = rt.aclrtMalloc(16, 0)
    upload_into(rt, ptr, np.frombuffer(start.to_bytes(16, "little"), np.uint8))
    return ptr


def same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))  # bit for bit


CASES = [(UNIFORM, dt) for dt in DTYPES] + [(f, dt) for f in (NORMAL, TRUNCATED, DROPOUT) for dt in FLOATS]
PARAMETERS = {UNIFORM: (-3.0, 5.5), NORMAL: (3.0, 2.0), TRUNCATED: (1.0, 2.0), DROPOUT: (0.375, 0.0)}
INT_RANGES = {DT.ACL_INT32: (-50, 1000), DT.ACL_INT64: (-(2**62), 2**62 + 7), DT.ACL_UINT32: (7, 2**32 - 1),
              DT.ACL_UINT64: (0, 2**64 - 1)}  # fmt: skip


@pytest.mark.parametrize(("func", "data_type"), CASES, ids=lambda x: x.name.rsplit("_", 1)[-1])
async def test_the_values_are_the_documented_generators(rt: Runtime, func: int, data_type: aclDataType) -> None:
    dtype = DTYPES[data_type]
    first, second = INT_RANGES.get(data_type, PARAMETERS[func])  # type: ignore[arg-type]
    seed, start = 0x1234_5678_9ABC + int(data_type), 2**64 + 3 * int(func)  # a counter beyond its low word
    out, counter = rt.aclrtMalloc(out_bytes(func, dtype, N), 0), fresh_counter(rt, start)
    params = (value(first, dtype), value(second, dtype))[: 1 if func == DROPOUT else 2]
    stream = rt.aclrtCreateStream()
    rt.aclrtRandomNumAsync(task(func, data_type, params, u64(seed), u64(N), out, counter).to_wire(), stream, None)
    await rt.aclrtSynchronizeStream(stream)
    words = Stream(seed, start)
    same(read_values(rt, out, func, dtype, N), expected(func, dtype, first, second, N, words))
    assert read_counter(rt, counter) == words.counter() > start


async def test_each_launch_continues_the_sequence_and_seed_and_counter_reproduce_it(rt: Runtime) -> None:
    f32 = DTYPES[DT.ACL_FLOAT]
    out, counter = rt.aclrtMalloc(4 * 64, 0), fresh_counter(rt)
    info = task(NORMAL, DT.ACL_FLOAT, (value(0, f32), value(1, f32)), u64(99), u64(32), out, counter)
    stream = rt.aclrtCreateStream()
    runs = []
    for _ in range(2):
        rt.aclrtRandomNumAsync(info.to_wire(), stream, None)
        await rt.aclrtSynchronizeStream(stream)
        runs.append(read_values(rt, out, NORMAL, f32, 32))
    assert read_counter(rt, counter) == 32  # 2 launches x 32 values x 2 words / 4 words a block
    assert not np.array_equal(runs[0], runs[1])
    both = task(NORMAL, DT.ACL_FLOAT, (value(0, f32), value(1, f32)), u64(99), u64(64), out, fresh_counter(rt))
    rt.aclrtRandomNumAsync(both.to_wire(), stream, None)  # 32 values fill whole blocks: the two are one launch
    await rt.aclrtSynchronizeStream(stream)
    same(read_values(rt, out, NORMAL, f32, 64), np.concatenate(runs))
    upload_into(rt, counter, np.zeros(16, np.uint8))  # the sample's memset: the first launch again
    rt.aclrtRandomNumAsync(info.to_wire(), stream, None)
    await rt.aclrtSynchronizeStream(stream)
    same(read_values(rt, out, NORMAL, f32, 32), runs[0])
    other = task(NORMAL, DT.ACL_FLOAT, (value(0, f32), value(1, f32)), u64(100), u64(32), out, fresh_counter(rt))
    rt.aclrtRandomNumAsync(other.to_wire(), stream, None)  # another seed, the same counter: other numbers
    await rt.aclrtSynchronizeStream(stream)
    assert not np.array_equal(read_values(rt, out, NORMAL, f32, 32), runs[0])


async def test_the_counter_wraps_at_128_bits(rt: Runtime) -> None:
    out, counter = rt.aclrtMalloc(8, 0), fresh_counter(rt, 2**128 - 1)
    u32 = DTYPES[DT.ACL_UINT32]
    info = task(UNIFORM, DT.ACL_UINT32, (value(0, u32), value(2**32 - 1, u32)), u64(1), u64(2), out, counter)
    rt.aclrtRandomNumAsync(info.to_wire(), None, None)  # NULL: the default stream
    await rt.aclrtSynchronizeDevice()
    assert read_counter(rt, counter) == 0


async def test_bounded_samples_look_like_their_distributions(rt: Runtime) -> None:
    n = 20_000
    stream = rt.aclrtCreateStream()
    counter = fresh_counter(rt)

    async def sample(func: int, data_type: aclDataType, first: float, second: float) -> np.ndarray:
        dtype = DTYPES[data_type]
        out = rt.aclrtMalloc(out_bytes(func, dtype, n), 0)
        params = (value(first, dtype), value(second, dtype))[: 1 if func == DROPOUT else 2]
        rt.aclrtRandomNumAsync(task(func, data_type, params, u64(2024), u64(n), out, counter).to_wire(), stream, None)
        await rt.aclrtSynchronizeStream(stream)
        return read_values(rt, out, func, dtype, n)

    uniform = (await sample(UNIFORM, DT.ACL_FLOAT, -3.0, 5.0)).astype(np.float64)
    assert uniform.min() >= -3.0 and uniform.max() < 5.0
    assert abs(uniform.mean() - 1.0) < 0.08 and abs(uniform.std() - 8 / math.sqrt(12)) < 0.05
    assert np.histogram(uniform, 8, (-3, 5))[0].min() > n / 8 * 0.9  # every eighth of the range is filled
    ints = await sample(UNIFORM, DT.ACL_INT32, 1, 100)  # the sample's int32 range
    assert ints.min() == 1 and ints.max() == 99 and len(np.unique(ints)) == 99
    normal = (await sample(NORMAL, DT.ACL_FLOAT, 3.0, 2.0)).astype(np.float64)
    assert abs(normal.mean() - 3.0) < 0.06 and abs(normal.std() - 2.0) < 0.05
    tails = np.mean(np.abs(normal - 3.0) > 4.0)  # beyond two standard deviations: 4.55 %
    assert 0.035 < tails < 0.056
    truncated = (await sample(TRUNCATED, DT.ACL_BF16, 1.0, 2.0)).astype(np.float64)
    assert truncated.min() >= -3.0 and truncated.max() <= 5.0  # mean 1 +- 2 x 2 (rounded to bf16 at most)
    assert abs(truncated.mean() - 1.0) < 0.06 and abs(truncated.std() - 2.0 * 0.8796) < 0.06
    half = (await sample(NORMAL, DT.ACL_FLOAT16, -1.0, 0.5)).astype(np.float64)
    assert abs(half.mean() + 1.0) < 0.02 and abs(half.std() - 0.5) < 0.02
    mask = await sample(DROPOUT, DT.ACL_FLOAT16, 0.4, 0.0)  # the sample's ratio
    kept = np.unpackbits(mask, bitorder="little")[:n]
    assert abs(kept.mean() - 0.6) < 0.02  # kept with probability 1 - dropoutRation


async def test_dropout_ratios_at_the_edges_keep_all_or_nothing(rt: Runtime) -> None:
    f32 = DTYPES[DT.ACL_FLOAT]
    out, counter = rt.aclrtMalloc(16, 0), fresh_counter(rt)
    for ratio, byte in ((0.0, 0xFF), (1.0, 0x00)):
        upload_into(rt, out, np.full(16, 0xA5, np.uint8))
        info = task(DROPOUT, DT.ACL_FLOAT, (value(ratio, f32),), u64(3), u64(100), out, counter)
        rt.aclrtRandomNumAsync(info.to_wire(), None, None)
        await rt.aclrtSynchronizeDevice()
        mask = np.frombuffer(read_bytes(rt, out, 16), np.uint8)
        assert list(mask[:12]) == [byte] * 12 and mask[12] == byte & 0x0F  # 100 bits: the last 4 bits are 0
        assert list(mask[13:]) == [0xA5] * 3  # nothing past ceil(100 / 8) bytes


async def test_parameters_by_address_and_the_counter_are_read_when_the_task_runs(rt: Runtime) -> None:
    f32 = DTYPES[DT.ACL_FLOAT]
    low, high = upload(rt, np.float32([0.0])), upload(rt, np.float32([1.0]))
    seed, count = upload(rt, np.uint64([1])), upload(rt, np.uint64([1]))
    out, counter = rt.aclrtMalloc(4 * 64, 0), fresh_counter(rt)
    params = (aclrtRandomParaInfo.address(low), aclrtRandomParaInfo.address(high))
    info = task(UNIFORM, DT.ACL_FLOAT, params, aclrtRandomParaInfo.address(seed), aclrtRandomParaInfo.address(count),
                out, counter)  # fmt: skip
    stream, gate = rt.aclrtCreateStream(), rt.aclrtCreateEvent()
    rt.aclrtStreamWaitEvent(stream, gate)
    rt.aclrtRandomNumAsync(info.to_wire(), stream, None)
    for ptr, array in ((low, np.float32([10.0])), (high, np.float32([20.0])), (seed, np.uint64([77])),
                       (count, np.uint64([50])), (counter, np.uint64([9, 1]))):  # fmt: skip
        upload_into(rt, ptr, array)  # after the launch, before it runs
    rt.aclrtRecordEvent(gate, None)
    await rt.aclrtSynchronizeStream(stream)
    words = Stream(77, 9 + 2**64)
    same(read_values(rt, out, UNIFORM, f32, 50), expected(UNIFORM, f32, 10.0, 20.0, 50, words))
    assert read_counter(rt, counter) == words.counter()


async def test_a_captured_task_continues_the_counter_at_each_replay(rt: Runtime) -> None:
    f16 = DTYPES[DT.ACL_FLOAT16]
    out, counter = rt.aclrtMalloc(2 * 100, 0), fresh_counter(rt)
    info = task(TRUNCATED, DT.ACL_FLOAT16, (value(0.5, f16), value(0.25, f16)), u64(8), u64(100), out, counter)
    stream = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(stream, aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    rt.aclrtRandomNumAsync(info.to_wire(), stream, None)
    model = rt.aclmdlRICaptureEnd(stream)
    assert read_counter(rt, counter) == 0  # captured, not run
    words = Stream(8, 0)
    for _ in range(3):
        rt.aclmdlRIExecuteAsync(model, stream)
        await rt.aclrtSynchronizeStream(stream)
        want = expected(TRUNCATED, f16, 0.5, 0.25, 100, words)
        same(read_values(rt, out, TRUNCATED, f16, 100), want)
        assert read_counter(rt, counter) == words.counter()
        words = Stream(8, words.counter())  # the next replay starts at a fresh block


async def test_the_parameter_block_goes_to_random_para_addr_and_a_replay_reads_it(rt: Runtime) -> None:
    f32 = DTYPES[DT.ACL_FLOAT]
    block, out, counter = rt.aclrtMalloc(16, 0), rt.aclrtMalloc(4 * 40, 0), fresh_counter(rt)
    info = task(UNIFORM, DT.ACL_FLOAT, (value(0.0, f32), value(1.0, f32)), u64(4), u64(40), out, counter, block)
    stream = rt.aclrtCreateStream()
    rt.aclmdlRICaptureBegin(stream, aclmdlRICaptureMode.ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
    rt.aclrtRandomNumAsync(info.to_wire(), stream, None)
    model = rt.aclmdlRICaptureEnd(stream)

    def packed(low: float, high: float) -> bytes:  # each parameter's 4 bytes, zero-extended to 8
        return np.float32(low).tobytes() + bytes(4) + np.float32(high).tobytes() + bytes(4)

    assert read_bytes(rt, block, 16) == packed(0.0, 1.0)  # written during the call, before the task ran
    upload_into(rt, block, np.frombuffer(packed(10.0, 11.0), np.uint8))
    rt.aclmdlRIExecuteAsync(model, stream)
    await rt.aclrtSynchronizeStream(stream)
    same(read_values(rt, out, UNIFORM, f32, 40), expected(UNIFORM, f32, 10.0, 11.0, 40, Stream(4, 0)))


def valid(rt: Runtime) -> tuple[aclrtRandomNumTaskInfo, int, int]:
    f32 = DTYPES[DT.ACL_FLOAT]
    out, counter = rt.aclrtMalloc(4 * 8, 0), fresh_counter(rt)
    return task(UNIFORM, DT.ACL_FLOAT, (value(1, f32), value(2, f32)), u64(5), u64(8), out, counter), out, counter


def changed(info: aclrtRandomNumTaskInfo, **fields: object) -> aclrtRandomNumTaskInfo:
    """A copy of `info` with `path__to__field=value` set (`randomSeed__size=0`, `slot1__isAddr=2`)."""
    copy = aclrtRandomNumTaskInfo.from_wire(info.to_wire())
    for path, new in fields.items():
        *parents, leaf = path.split("__")
        node: object = copy
        for name in parents:
            slots = copy.randomNumFuncParaInfo.paramInfo.slots
            node = slots[int(name[4:])] if name.startswith("slot") else getattr(node, name)
        setattr(node, leaf, new)
    return copy


async def test_the_checks_and_their_codes(rt: Runtime) -> None:
    info, out, counter = valid(rt)
    host, tiny = rt.aclrtMallocHost(64), rt.aclrtMalloc(8, 0)
    call = rt.aclrtRandomNumAsync
    before = read_bytes(rt, out, 32)
    bad = {  # (changes, code, words in the message)
        "NULL": (None, ACL_ERROR_INVALID_PARAM, "taskInfo is NULL"),
        "double": ({"dataType": DT.ACL_DOUBLE}, ACL_ERROR_INVALID_PARAM, "ACL_DOUBLE is not a type"),
        "int16": ({"dataType": DT.ACL_INT16}, ACL_ERROR_INVALID_PARAM, "6 is also RT_RANDOM_NUM_DATATYPE_FP32"),
        "func 4": ({"randomNumFuncParaInfo__funcType": 4}, ACL_ERROR_RT_PARAM_INVALID, "funcType 4"),
        "func -1": ({"randomNumFuncParaInfo__funcType": -1}, ACL_ERROR_RT_PARAM_INVALID, "funcType -1"),
        "counter NULL": ({"randomCounterAddr": None}, ACL_ERROR_RT_PARAM_INVALID, "randomCounterAddr is NULL"),
        "result NULL": ({"randomResultAddr": 0}, ACL_ERROR_RT_PARAM_INVALID, "randomResultAddr is NULL"),
        "seed isAddr 2": ({"randomSeed__isAddr": 2}, ACL_ERROR_RT_PARAM_INVALID, "randomSeed.isAddr is 2"),
        "seed size 0": ({"randomSeed__size": 0}, ACL_ERROR_RT_PARAM_INVALID, "randomSeed.size is 0"),
        "seed size 9": ({"randomSeed__size": 9}, ACL_ERROR_RT_PARAM_INVALID, "1 to 8"),
        "count size 0": ({"randomNum__size": 0}, ACL_ERROR_RT_PARAM_INVALID, "randomNum.size is 0"),
        "min size 5": ({"slot0__size": 5}, ACL_ERROR_RT_PARAM_INVALID, "uniformDisInfo.min.size is 5"),
        "max isAddr 3": ({"slot1__isAddr": 3}, ACL_ERROR_RT_PARAM_INVALID, "uniformDisInfo.max.isAddr is 3"),
        "counter on the host": ({"randomCounterAddr": host}, ACL_ERROR_RT_PARAM_INVALID, "must be device memory"),
        "counter of 8 bytes": ({"randomCounterAddr": tiny}, ACL_ERROR_RT_PARAM_INVALID, "16 bytes"),
        "result too small": ({"randomNum": u64(9)}, ACL_ERROR_RT_PARAM_INVALID, "36 bytes"),
        "block too small": ({"randomParaAddr": tiny}, ACL_ERROR_RT_PARAM_INVALID, "randomParaAddr"),
        "min at no address": ({"slot0__isAddr": 1, "slot0__size": 8}, ACL_ERROR_RT_PARAM_INVALID, "(an address)"),
    }
    for name, (changes, code, words) in bad.items():
        wire = None if changes is None else changed(info, **changes).to_wire()
        error = fails(code, call, wire, None, None)
        assert words in error.message and error.api == "aclrtRandomNumAsync", (name, error)
    # the runtime's order: the ACL layer's data type first, then reserve, then funcType
    error = fails(ACL_ERROR_INVALID_PARAM, call, changed(info, dataType=99).to_wire(), None, 0x10)
    assert "dataType 99" in error.message
    error = fails(ACL_ERROR_RT_PARAM_INVALID, call, changed(info, randomNumFuncParaInfo__funcType=9).to_wire(), None, 1)
    assert error.message == "reserve must be NULL"
    for func, data_type in ((DROPOUT, DT.ACL_INT32), (NORMAL, DT.ACL_UINT64), (TRUNCATED, DT.ACL_INT64)):
        wire = changed(info, dataType=data_type, randomNumFuncParaInfo__funcType=func).to_wire()
        error = fails(ACL_ERROR_RT_PARAM_INVALID, call, wire, None, None)
        assert f"does not generate {data_type.name}" in error.message
    assert read_bytes(rt, out, 32) == before and read_counter(rt, counter) == 0  # nothing ran, nothing written
    # what the checks let through: an address is 8 bytes whatever the type, the dropout mask reads one slot
    call(changed(info, randomNum=u64(0)).to_wire(), None, None)  # no value: no word drawn
    dropout = changed(info, randomNumFuncParaInfo__funcType=DROPOUT, slot1__size=0, slot1__isAddr=7)
    call(dropout.to_wire(), None, None)  # 8 bits from 8 words: 2 blocks
    call(info.to_wire(), None, None)  # and the stream works: 8 values after them
    await rt.aclrtSynchronizeDevice()
    assert read_counter(rt, counter) == 2 + 2
    f32 = DTYPES[DT.ACL_FLOAT]
    same(read_values(rt, out, UNIFORM, f32, 8), expected(UNIFORM, f32, 1.0, 2.0, 8, Stream(5, 2)))


async def test_a_count_read_at_run_time_past_the_result_fails_the_task(rt: Runtime) -> None:
    info, _, counter = valid(rt)
    count = upload(rt, np.uint64([1000]))  # 4000 bytes into 32
    stream = rt.aclrtCreateStream()
    rt.aclrtRandomNumAsync(changed(info, randomNum=aclrtRandomParaInfo.address(count)).to_wire(), stream, None)
    with pytest.raises(AclError) as raised:
        await rt.aclrtSynchronizeStream(stream)
    assert raised.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR and "past its end" in raised.value.message
    assert read_counter(rt, counter) == 0  # the task stopped before it drew a word
    upload_into(rt, count, np.uint64([8]))
    rt.aclrtRandomNumAsync(changed(info, randomNum=aclrtRandomParaInfo.address(count)).to_wire(), stream, None)
    await rt.aclrtSynchronizeStream(stream)  # the stream goes on
    assert read_counter(rt, counter) == 2


async def test_a_result_freed_before_the_task_runs_fails_it(rt: Runtime) -> None:
    info, out, counter = valid(rt)
    stream, gate = rt.aclrtCreateStream(), rt.aclrtCreateEvent()
    rt.aclrtStreamWaitEvent(stream, gate)
    rt.aclrtRandomNumAsync(info.to_wire(), stream, None)
    rt.aclrtFree(out)
    rt.aclrtRecordEvent(gate, None)
    with pytest.raises(AclError) as raised:
        await rt.aclrtSynchronizeStream(stream)
    assert raised.value.code == ACL_ERROR_RT_DEVICE_MEM_ERROR and "has been freed" in raised.value.message
    assert list(download(rt, counter, (2,), np.uint64)) == [0, 0]  # nothing drawn
