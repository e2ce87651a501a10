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
    assert "| ops-math | 4 | 3 | 2 | 1 |" in verdict.summary(list(found.values()))


def test_printed_series() -> None:
    verdict = verdict_module()
    text = "result[0] is: 1.5\nresult[1] is: -2.000000\nmean result[0] is: 3\nresult[0] is: 7e-01\nx[5] = 1\n"
    series = verdict.printed_series(text)
    assert [(s.label, s.values) for s in series] == [("result", [1.5, -2.0]), ("mean result", [3.0]), ("result", [0.7])]
    assert verdict.printed_tolerance("1.500000") == pytest.approx(5e-7)
    assert verdict.printed_tolerance("7e-01") == pytest.approx(0.05)


def test_what_examples_print_besides_their_outputs() -> None:
    """Inputs shown too, an output printed past its end, an int output read as floats (all 0.000000: nothing is
    checked), an fp16 output printed as its bits."""
    verdict = verdict_module()
    x = np.array([1.0, -2.0, 3.0])
    launch = verdict.Launch("Neg", {"self": x}, {"out": (-x).astype(np.float32)}, {"out": "float32"})
    shown = "".join(f"self[{i}] is: {v:f}\n" for i, v in enumerate(x))
    past = "".join(f"result[{i}] is: {v:f}\n" for i, v in enumerate([-1.0, 2.0, -3.0, 99.0]))
    assert verdict._values(verdict.printed_series(shown + past), [launch], []) == (
        True,
        "result prints 4 values of an output of 3",
    )
    small = np.array([0.0, 2.0, 3.0])  # ints whose bits read as float32 are denormals (a negative one is a NaN)
    ints = verdict.Launch("Abs", {"self": small}, {"out": small.astype(np.int32)}, {"out": "int32"})
    as_floats = "".join(f"result[{i}] is: 0.000000\n" for i in range(3))
    matched, reason = verdict._values(verdict.printed_series(as_floats), [ints], [])
    assert not matched and reason.startswith("unverifiable: result prints its int32 output's bits")
    half = verdict.Launch("Neg", {"self": x}, {"out": (-x).astype(np.float16)}, {"out": "float16"})
    bits = "".join(f"result[{i}] is: {v}\n" for i, v in enumerate((-x).astype(np.float16).view(np.uint16)))
    assert verdict._values(verdict.printed_series(bits), [half], []) == (True, "result printed as another type's bits")
