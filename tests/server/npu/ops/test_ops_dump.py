"""The launch dump (`VNPU_DUMP_LAUNCHES`) and the conformance verdicts built on it (`examples/cann_ops/verdict.py`):
a launch's inputs before and outputs after, read back and recomputed by the float64 reference; a printed series
that matches, one that differs, an operator vnpu lacks, a header the compiler misses."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import ml_dtypes
import numpy as np
import pytest
from aclnn_testkit import FakeMemory

import proto.aclnn as nn
from proto.constants import aclDataType
from server.npu.ops import dump

ROOT = Path(__file__).resolve().parents[4]
F32, BF16 = aclDataType.ACL_FLOAT, aclDataType.ACL_BF16


def verdict_module() -> ModuleType:
    path = ROOT / "examples" / "cann_ops" / "verdict.py"
    spec = importlib.util.spec_from_file_location("cann_ops_verdict", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def dumping(tmp_path: Path) -> Iterator[Path]:
    dump.configure(tmp_path / "dump")
    yield tmp_path / "dump"
    dump.configure(None)


def add(memory: FakeMemory, a: np.ndarray, b: np.ndarray, dtype: aclDataType, alpha: float) -> np.ndarray:
    x, y, out = memory.tensor(a, dtype), memory.tensor(b, dtype), memory.empty(a.shape, dtype)
    memory.launch(nn.aclnnAddGetWorkspaceSize, x, y, nn.aclCreateScalar(alpha, F32), out)
    return memory.read(out)


def test_a_launch_is_written_before_and_after(dumping: Path) -> None:
    verdict = verdict_module()
    rng = np.random.default_rng(5)
    memory = FakeMemory(rng)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    got = add(memory, a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16), BF16, 2.0)
    (written,) = sorted(dumping.glob("*.npz"))
    assert written.name.endswith("-Add.npz")
    launch = verdict.load_launch(written)
    assert launch.op == "Add" and launch.args["alpha"] == 2.0
    np.testing.assert_array_equal(launch.args["self"], a.astype(ml_dtypes.bfloat16).astype(np.float64))
    assert launch.outputs["out"].dtype == ml_dtypes.bfloat16 and launch.dtypes["out"] == "bfloat16"
    np.testing.assert_array_equal(launch.outputs["out"], got)
    reference = verdict.REFERENCES["Add"](dict(launch.args))["out"]
    assert verdict.agrees(got, verdict.rounded(reference, "bfloat16"), "bfloat16")


def example(logs: Path, name: str, source: str, out: str, status: int = 0, build: str = "") -> Path:
    directory = logs / "ops-math" / name
    (directory / "dump").mkdir(parents=True)
    program = directory / "test_aclnn_x.cpp"
    program.write_text(source)
    (directory / "source").write_text(str(program))
    (directory / "build.log").write_text(build)
    (directory / "build.status").write_text("1\n" if build else "0\n")
    (directory / "run.out").write_text(out)
    (directory / "run.err").write_text("")
    (directory / "run.status").write_text(f"{status}\n")
    return directory


def test_the_verdicts(dumping: Path, tmp_path: Path) -> None:
    verdict = verdict_module()
    logs = tmp_path / "logs"
    memory = FakeMemory(np.random.default_rng(1))
    a, b = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.5, 0.25], [0.125, 1.0]])
    got = add(memory, a.astype(np.float32), b.astype(np.float32), F32, 1.0)
    calls = "ret = aclnnAddGetWorkspaceSize(self, other, alpha, out, &size, &executor);"
    printed = "".join(f"result[{i}] is: {v:f}\n" for i, v in enumerate(got.ravel()))
    good = example(logs, "good", calls, "hello\n" + printed)
    for launch in dumping.glob("*.npz"):
        launch.rename(good / "dump" / launch.name)
    wrong = example(logs, "wrong", calls, printed.replace("1.500000", "1.600000"))
    for launch in (good / "dump").glob("*.npz"):
        (wrong / "dump" / launch.name).write_bytes(launch.read_bytes())
    after = "[ERROR] aclrtFree: ACL_ERROR_UNINITIALIZE (100001): no vnpu session: call aclInit first\n"
    glued = printed.replace("1.500000", "1.50" + after * 2 + "0000")  # logged into printf's unflushed buffer
    cleanup = example(logs, "cleanup", calls, glued + after)  # deleters freeing after aclFinalize
    for launch in (good / "dump").glob("*.npz"):
        (cleanup / "dump" / launch.name).write_bytes(launch.read_bytes())
    null = "[ERROR] aclrtFree: ACL_ERROR_INVALID_PARAM (100000): devPtr is NULL\n"  # refused by CANN too
    freed = example(logs, "freed", calls, null + printed)
    for launch in (good / "dump").glob("*.npz"):
        (freed / "dump" / launch.name).write_bytes(launch.read_bytes())
    example(logs, "failed", calls, "[ERROR] aclrtMemcpy: ACL_ERROR_INVALID_PARAM (100000): dst is NULL\n" + printed)
    past = "[ERROR] aclrtMemcpy: ACL_ERROR_RT_PARAM_INVALID (107000): src: 32 bytes at 0x12c000000040 (offset 0 in "
    past += "the 8-byte allocation at 0x12c000000040) run 24 bytes past its end\ncopy failed. ERROR: 107000\n"
    example(logs, "past", calls, past, 248)
    tensor = "[ERROR] aclnnIndexFill: ACLNN_ERR_PARAM_INVALID (161002): aclnnIndexFill #11 failed: index is not inside "
    tensor += "live memory of device 0: 8 bytes at 0x100 (offset 0 in the 4-byte allocation at 0x100) run 4 bytes past "
    example(logs, "tensor", calls, tensor + "its end (raised at the 1st aclrtSynchronizeStream call)\n", 234)
    again = "[ERROR] aclnnPolar: ACLNN_ERR_PARAM_INVALID (161002): executor (0x55ed) was released by its aclnnPolar "
    example(logs, "again", calls, again + "call (executors are single-use unless repeatable)\n" + printed)
    missing = "aclnnAdaptiveMaxPool3dBackwardGetWorkspaceSize(a, b, c, d, &size, &executor);"
    example(logs, "missing", missing, "aclnnAdaptiveMaxPool3dBackwardGetWorkspaceSize failed. ERROR: 561003\n", 1)
    error = "x.cpp:3:10: fatal error: aclnnop/aclnn_nothing.h: No such file or directory\n"
    example(logs, "header", "", "", build=error)
    have = verdict.implemented()
    found = {d.name: verdict.judge(d, repo, have) for repo, d in verdict.walk(logs)}
    assert (found["good"].built, found["good"].ran, found["good"].matched) == (True, True, True)
    assert found["wrong"].ran and not found["wrong"].matched
    assert found["wrong"].reason.startswith("wrong value: result printed [1.6")
    assert found["missing"].reason == "missing operator: aclnnAdaptiveMaxPool3dBackward"
    assert not found["header"].built and found["header"].reason == "missing header aclnnop/aclnn_nothing.h"
    assert (found["cleanup"].ran, found["cleanup"].matched) == (True, True)
    assert (found["freed"].ran, found["freed"].matched) == (True, True)
    assert not found["failed"].ran and found["failed"].reason.startswith("exit 0 after aclrtMemcpy")
    assert found["past"].reason.startswith("the example reaches past its allocation: aclrtMemcpy: ACL_ERROR_RT_")
    assert found["tensor"].reason.startswith("the example reaches past its allocation: aclnnIndexFill: ACLNN_ERR")
    assert found["again"].reason.startswith("the example launches an executor its first launch released: aclnnPolar")
    assert "| ops-math | 10 | 9 | 4 | 3 |" in verdict.summary(list(found.values()))


def test_empty_examples_and_host_functions(tmp_path: Path) -> None:
    """An example that calls no operator (CANN's has a few whose calls are commented out) and prints nothing ran
    as on CANN; one that calls an operator must launch it; a host function's printed values
    are checked against its reference computed from the example's own arrays."""
    verdict = verdict_module()
    logs = tmp_path / "logs"
    empty = "// aclnnScatterGetWorkspaceSize(self, dim, index, src, out, &size, &executor);\nint main() { return 0; }\n"
    example(logs, "empty", empty, "")
    example(logs, "commented", "int main() { aclInit(nullptr); /* aclnnAddGetWorkspaceSize(a); */ }", "")
    example(logs, "silent", "int main() { aclnnAddGetWorkspaceSize(a, b, c, d, &size, &executor); }", "")
    source = (
        "float scaleArray[3] = {1.0, 0.5, 3.25};\nfloat offsetArray[2] = {1.0, -300.0};\n"
        "ret = aclnnTransQuantParam(scaleArray, 3, offsetArray, 2, &result, &resultSize);\n"
    )
    scales = np.array([1.0, 0.5, 3.25], np.float32).view(np.uint32).astype(np.int64) | 1 << 46
    scales[:2] = (scales[:2] & 0x4000FFFFFFFF) | (np.array([1, -256]) & 0x1FF) << 37
    want = [*scales.tolist(), *[0] * 13]
    printed = "".join(f"result[{i}] is: {v}\n" for i, v in enumerate(want))
    example(logs, "host", source, printed)
    example(logs, "host-wrong", source, printed.replace(f"is: {want[1]}", f"is: {want[1] + 1}"))
    have = verdict.implemented()
    found = {d.name: verdict.judge(d, repo, have) for repo, d in verdict.walk(logs)}
    assert (found["empty"].matched, found["empty"].reason) == (
        True,
        "calls no operator, prints nothing: nothing to compare",
    )
    assert found["commented"].matched
    assert not found["silent"].matched and found["silent"].reason == "nothing launched"
    assert (found["host"].matched, found["host"].reason) == (
        True,
        "host function aclnnTransQuantParam: its printed values checked",
    )
    assert not found["host-wrong"].matched and found["host-wrong"].reason.startswith("wrong value: aclnnTransQuant")


def test_printed_series() -> None:
    verdict = verdict_module()
    text = "result[0] is: 1.5\nresult[1] is: -2.000000\nmean result[0] is: 3\nresult[0] is: 7e-01\nx[5] = 1\n"
    series = verdict.printed_series(text)
    assert [(s.label, s.values) for s in series] == [("result", [1.5, -2.0]), ("mean result", [3.0]), ("result", [0.7])]
    printed = sys.modules["printed"]  # the verdict's module of printed values
    assert printed.printed_tolerance("1.500000") == pytest.approx(5e-7)
    assert printed.printed_tolerance("7e-01") == pytest.approx(0.05)


def test_what_examples_print_besides_their_outputs() -> None:
    """Inputs shown too, an output printed past its end, an int output read as floats (all 0.000000: nothing is
    checked), an fp16 output printed as its bits."""
    verdict = verdict_module()
    x = np.array([1.0, -2.0, 3.0])
    launch = verdict.Launch("Neg", {"self": x, "out": 0 * x}, {"out": (-x).astype(np.float32)}, {"out": "float32"})
    shown = "".join(f"self[{i}] is: {v:f}\n" for i, v in enumerate(x))
    past = "".join(f"result[{i}] is: {v:f}\n" for i, v in enumerate([-1.0, 2.0, -3.0, 99.0]))
    assert verdict._values(verdict.printed_series(shown + past), [launch], []) == (
        True,
        "result prints 4 values of an output of 3",
    )
    small = np.array([0.0, 2.0, 3.0])  # ints whose bits read as float32 are denormals (a negative one is a NaN)
    ints = verdict.Launch("Abs", {"self": small, "out": 0 * small}, {"out": small.astype(np.int32)}, {"out": "int32"})
    as_floats = "".join(f"result[{i}] is: 0.000000\n" for i in range(3))
    matched, reason = verdict._values(verdict.printed_series(as_floats), [ints], [])  # as CANN prints them
    assert matched and reason.startswith("result prints its int32 output's bits as another type, all below")
    assert reason.endswith("its launches' outputs checked")  # instead, against their references
    wrong = verdict.Launch("Abs", {"self": small, "out": 0 * small}, {"out": np.int32([0, 2, 4])}, {"out": "int32"})
    matched, reason = verdict._values(verdict.printed_series(as_floats), [wrong], [])
    assert not matched and reason == "wrong value: aclnnAbs out (the example prints no output values)"
    slope = np.array([-11.0, 0.25])  # an input printed from its 2-value host vector, and 3 values past it
    six = np.linspace(-2.0, 3.0, 6)
    scaled = verdict.Launch("Neg", {"self": six, "weight": slope, "out": 0 * six}, {"out": -six}, {})
    past_input = "".join(f"input2[{i}] is: {v:f}\n" for i, v in enumerate([-11.0, 0.25, float("nan"), 0.0, 7.5]))
    outputs = "".join(f"result[{i}] is: {v:f}\n" for i, v in enumerate(-six))
    assert verdict._values(verdict.printed_series(past_input + outputs), [scaled], []) == (
        True,
        "input2 prints 5 values of an input of 2",
    )
    not_input = past_input.replace("0.250000", "0.500000")
    assert not verdict._values(verdict.printed_series(not_input + outputs), [scaled], [])[0]
    half = verdict.Launch("Neg", {"self": x, "out": 0 * x}, {"out": (-x).astype(np.float16)}, {"out": "float16"})
    bits = "".join(f"result[{i}] is: {v}\n" for i, v in enumerate((-x).astype(np.float16).view(np.uint16)))
    assert verdict._values(verdict.printed_series(bits), [half], []) == (True, "result printed as another type's bits")


@pytest.mark.parametrize("bias_dtype", [np.int32, np.float32])
def test_the_quant_matmul_reference_agrees_with_the_kernel(bias_dtype: type) -> None:
    """QuantMatmulV4's conformance reference (float64, written apart from the kernel) against vnpu's kernel on random
    int8 operands, per-channel and per-token scales."""
    from server.npu.ops.nn.quant_matmul import quant_matmul_v4

    verdict = verdict_module()
    rng = np.random.default_rng(4)
    x1, x2 = rng.integers(-128, 128, (5, 32), np.int8), rng.integers(-128, 128, (32, 3), np.int8)
    scale, token = rng.uniform(0.001, 0.01, 3).astype(np.float32), rng.uniform(0.5, 2, 5).astype(np.float32)
    bias = rng.integers(-100, 100, 3).astype(bias_dtype)
    out = np.zeros((5, 3), np.float16)
    quant_matmul_v4(x1, x2, scale, None, token, bias, False, False, out, None)
    args = {"x1": x1, "x2": x2, "scale": scale, "offset": None, "pertokenScaleOptional": token, "bias": bias,
            "transposeX1": False, "transposeX2": False, "out": np.zeros_like(out)}  # fmt: skip
    want = verdict.rounded(verdict.REFERENCES["QuantMatmulV4"](args)["out"], "float16")
    assert verdict.agrees(out, want, "float16")
    dot = float(x1[0].astype(np.int64) @ x2[:, 0])
    first = (dot + bias[0]) * scale[0] * token[0] if bias_dtype is np.int32 else dot * scale[0] * token[0] + bias[0]
    assert np.isclose(want[0, 0], first, rtol=1e-3)  # an int32 bias before the scales, a float one after


@pytest.mark.parametrize("layout", ["BSH", "BNSD_BSND"])
def test_the_attention_reference_agrees_with_the_kernel(layout: str) -> None:
    """FusedInferAttentionScoreV4's conformance reference (float64, references_transformer.py) against vnpu's
    kernel: GQA 4 -> 2 heads, per-batch KV lengths, a boolean mask, the softmax LSE."""
    from server.npu.ops.transformer import fused_infer_attention as fia
    from tests.server.npu.ops.common.refkit import call_with

    verdict = verdict_module()
    rng = np.random.default_rng(36)
    b, n, kvn, sq, skv, d = 2, 4, 2, 3, 7, 16
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float16) for h, s in ((n, sq), (kvn, skv), (kvn, skv)))
    mask = rng.random((b, 1, sq, skv)) < 0.3
    mask[0, 0, 1] = True  # a row with every pair removed: 0, LSE +inf
    inputs = {"BSH": lambda x: x.transpose(0, 2, 1, 3).reshape(b, x.shape[2], -1), "BNSD_BSND": lambda x: x}
    outputs = {
        "BSH": lambda x: x.transpose(0, 2, 1, 3).reshape(b, sq, -1),
        "BNSD_BSND": lambda x: x.transpose(0, 2, 1, 3),
    }
    shape = outputs[layout](np.zeros((b, n, sq, d))).shape
    out, lse = np.zeros(shape, np.float16), np.zeros((b, n, sq, 1), np.float32)
    given = dict(query=inputs[layout](q), key=[inputs[layout](k)], value=[inputs[layout](v)], attenMaskOptional=mask,
                 actualSeqLengthsKvOptional=[7, 5], numHeads=n, scaleValue=0.25, preTokens=2147483647,
                 nextTokens=2147483647, inputLayout=layout, numKeyValueHeads=kvn, sparseMode=0, innerPrecise=1,
                 blockSize=0, antiquantMode=0, softmaxLseFlag=True, keyAntiquantMode=0, valueAntiquantMode=0,
                 queryQuantMode=0)  # fmt: skip
    call_with(fia.fused_infer_attention_score_v4, **given, attentionOut=out, softmaxLse=lse)
    want = verdict.REFERENCES["FusedInferAttentionScoreV4"]({**given, "attentionOut": out, "softmaxLse": lse})
    assert verdict.agrees(out, verdict.rounded(want["attentionOut"], "float16"), "float16")
    np.testing.assert_allclose(lse, want["softmaxLse"], rtol=1e-5)
    assert not out[0, 1].any()  # the row with nothing left, in either output layout (B, S, ...)
    assert np.isinf(lse[0, :, 1]).all()


def test_an_fp16_output_read_into_a_float_vector() -> None:
    """An example that copies its fp16 output into a float vector prints pairs of halves as floats (and, past the
    output, the rest of its buffer): the bits still check the values."""
    verdict = verdict_module()
    x = np.array([0.0, 1.875, 0.5, -3.0])
    half = verdict.Launch("Neg", {"self": x, "out": 0 * x}, {"out": (-x).astype(np.float16)}, {"out": "float16"})
    floats = (-x).astype(np.float16).view(np.float32)
    printed = "".join(f"result[{i}] is: {v:f}\n" for i, v in enumerate([*floats, 1.0, 1.0]))
    assert verdict._values(verdict.printed_series(printed), [half], []) == (
        True,
        "result printed as another type's bits",
    )
    wrong = printed.replace(f"{floats[0]:f}", "7.000000", 1)
    assert not verdict._values(verdict.printed_series(wrong), [half], [])[0]


def test_the_rope_quant_and_scatter_references_agree_with_the_kernels() -> None:
    """RotaryPositionEmbedding (modes 0, 1), DynamicQuant and ScatterNdUpdate: the conformance references against
    vnpu's kernels on random data."""
    from server.npu.ops.nn.index_update import scatter_nd_update
    from server.npu.ops.nn.quant import dynamic_quant
    from server.npu.ops.transformer.rope import rotary_position_embedding

    verdict = verdict_module()
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 4, 8)).astype(np.float32)
    cos, sin = (rng.uniform(-1, 1, (1, 3, 1, 8)).astype(np.float32) for _ in range(2))
    for mode in (0, 1):
        out = np.zeros_like(x)
        rotary_position_embedding(x, cos, sin, mode, out, None)
        want = verdict.REFERENCES["RotaryPositionEmbedding"]({"x": x, "cos": cos, "sin": sin, "mode": mode})["out"]
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    h = rng.standard_normal((5, 16)).astype(np.float16)
    y, scale = np.zeros((5, 16), np.int8), np.zeros(5, np.float32)
    dynamic_quant(h, None, y, scale, None)
    want = verdict.REFERENCES["DynamicQuant"]({"x": h, "smoothScalesOptional": None, "yOut": y})
    np.testing.assert_allclose(scale, want["scaleOut"], rtol=1e-6)
    assert np.abs(y.astype(np.int64) - want["yOut"]).max() <= 1  # float32 division vs float64 at a .5 boundary
    var = rng.standard_normal((4, 3)).astype(np.float32)
    indices, updates = np.array([[2], [0]], np.int64), rng.standard_normal((2, 3)).astype(np.float32)
    want = verdict.REFERENCES["ScatterNdUpdate"]({"varRef": var, "indices": indices, "updates": updates})["varRef"]
    scatter_nd_update(var, indices, updates, None)
    np.testing.assert_array_equal(var, want)


def test_the_rope_and_gating_references_agree_with_the_kernels() -> None:
    """ApplyRotaryPosEmb (BSND, in place) and MoeGatingTopKSoftmax (with finished rows): the conformance references
    against vnpu's kernels on random data."""
    from server.npu.ops.transformer.moe import moe_gating_top_k_softmax
    from server.npu.ops.transformer.rope import apply_rotary_pos_emb

    verdict = verdict_module()
    rng = np.random.default_rng(8)
    q, k = rng.standard_normal((2, 3, 4, 8)).astype(np.float32), rng.standard_normal((2, 3, 2, 8)).astype(np.float32)
    cos, sin = (rng.uniform(-1, 1, (2, 3, 1, 8)).astype(np.float32) for _ in range(2))
    want = verdict.REFERENCES["ApplyRotaryPosEmb"]({"queryRef": q, "keyRef": k, "cos": cos, "sin": sin})
    apply_rotary_pos_emb(q, k, cos, sin, 1, None)
    np.testing.assert_allclose(q, want["queryRef"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(k, want["keyRef"], rtol=1e-5, atol=1e-6)
    x, finished = rng.standard_normal((5, 8)).astype(np.float32), np.array([False, True, False, False, True])
    y, experts, rows = np.zeros((5, 2), np.float32), np.zeros((5, 2), np.int32), np.zeros((5, 2), np.int32)
    moe_gating_top_k_softmax(x, finished, 2, y, experts, rows, None)
    want = verdict.REFERENCES["MoeGatingTopKSoftmax"]({"x": x, "finishedOptional": finished, "k": 2})
    np.testing.assert_allclose(y, want["yOut"], rtol=1e-6)
    np.testing.assert_array_equal(experts, want["expertIdxOut"])
    np.testing.assert_array_equal(rows, want["rowIdxOut"])


@pytest.mark.parametrize("layout", ["SBH", "BNSD"])
def test_the_flash_attention_reference_agrees_with_the_kernel(layout: str) -> None:
    """FlashAttentionScoreV2's conformance reference against vnpu's kernel: GQA 4 -> 2 heads, a causal mask, the
    softmax statistics."""
    from server.npu.ops.transformer.flash_attention_score import flash_attention_score_v2
    from tests.server.npu.ops.common.refkit import call_with

    verdict = verdict_module()
    rng = np.random.default_rng(9)
    b, n, kvn, s, d = 2, 4, 2, 5, 8
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float32) for h in (n, kvn, kvn))
    shape = {"SBH": lambda x: x.transpose(2, 0, 1, 3).reshape(s, b, -1), "BNSD": lambda x: x}[layout]
    given = dict(query=shape(q), key=shape(k), value=shape(v), attenMaskOptional=np.triu(np.ones((s, s), np.uint8), 1),
                 scaleValue=0.3, keepProb=1.0, preTokens=2147483647, nextTokens=2147483647, headNum=n,
                 inputLayout=layout, innerPrecise=0, sparseMode=0, pseType=1)  # fmt: skip
    stats = [np.zeros((b, n, s, 8), np.float32) for _ in range(2)]
    out = np.zeros_like(given["query"])
    call_with(flash_attention_score_v2, **given, softmaxMaxOut=stats[0], softmaxSumOut=stats[1], attentionOutOut=out)
    want = verdict.REFERENCES["FlashAttentionScoreV2"](given)
    np.testing.assert_allclose(out, want["attentionOutOut"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats[0], want["softmaxMaxOut"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats[1], want["softmaxSumOut"], rtol=1e-5)


@pytest.mark.parametrize("group", [0, 32])
def test_the_weight_quant_reference_agrees_with_the_kernel(group: int) -> None:
    """WeightQuantBatchMatmulV2's conformance reference against vnpu's kernel: int8 weights, per-channel or
    per-group fp16 scales and offsets, a bias. The kernel rounds the dequantized weight to fp16 first (the cube's
    operand), so the two agree to a few fp16 ulps, not one."""
    from server.npu.ops.nn.quant_matmul import weight_quant_batch_matmul_v2

    verdict = verdict_module()
    rng = np.random.default_rng(10)
    x, weight = rng.standard_normal((3, 64)).astype(np.float16), rng.integers(-128, 128, (64, 4), np.int8)
    rows = 64 // group if group else 1
    scale = rng.uniform(0.001, 0.01, (rows, 4)).astype(np.float16)
    offset = rng.uniform(-2, 2, (rows, 4)).astype(np.float16)
    bias, y = rng.standard_normal(4).astype(np.float16), np.zeros((3, 4), np.float16)
    weight_quant_batch_matmul_v2(x, weight, scale, offset, None, None, bias, group, y, None)
    args = {"x": x, "weight": weight, "antiquantScale": scale, "antiquantOffsetOptional": offset, "biasOptional": bias,
            "antiquantGroupSize": group, "quantScaleOptional": None}  # fmt: skip
    want = verdict.REFERENCES["WeightQuantBatchMatmulV2"](args)["y"]
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=5e-3, atol=5e-3)


def test_the_top_k_top_p_reference_agrees_with_the_kernel() -> None:
    """ApplyTopKTopP's conformance reference against vnpu's kernel on random logits, per-row k (one row off) and p."""
    from server.npu.ops.nn.sampling import apply_top_k_top_p

    verdict = verdict_module()
    rng = np.random.default_rng(11)
    logits = rng.standard_normal((4, 32)).astype(np.float32)
    p, k = np.array([0.9, 0.5, 1.0, 0.3], np.float32), np.array([5, 0, 10, 32], np.int32)
    out = np.zeros_like(logits)
    apply_top_k_top_p(logits, p, k, out, None)
    want = verdict.REFERENCES["ApplyTopKTopP"]({"logits": logits, "p": p, "k": k})["out"]
    np.testing.assert_array_equal(np.isinf(out), np.isinf(want))
    np.testing.assert_array_equal(out[~np.isinf(out)], want[~np.isinf(want)])
    assert (~np.isinf(out)).sum(1).min() > 0 and (~np.isinf(out)).sum(1)[0] <= 5


def test_the_remainder_reference_keeps_self_for_an_integer_zero() -> None:
    verdict = verdict_module()
    self, other = np.arange(1, 7, dtype=np.int64), np.array([0, 1, 2, -3, 4, 5], np.int64)
    want = verdict.REFERENCES["RemainderTensorTensor"]({"self": self, "other": other})["out"]
    assert want.tolist() == [1, 0, 1, -2, 1, 1]
    halves = verdict.REFERENCES["RemainderTensorScalar"]({"self": self.astype(np.float32), "other": 0.0})["out"]
    assert np.isnan(halves).all()  # floats divide by zero as IEEE does
