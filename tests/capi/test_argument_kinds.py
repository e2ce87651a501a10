"""Every argument kind of CANN's operator prototypes from C (tests/capi/programs/argument_kinds.cpp): a toolkit and a
daemon built with tests.kind_operators, whose aclnnKindsProbe folds a tensor list, an optional tensor (given and
NULL), a scalar list, bool and float arrays, double, float, char *, int8, int32 and uint64 attributes into one result,
checked against float64; the list host objects' sizes and ownership; phase 1's codes and messages for bad input."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from proto.errors import ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR
from tests.capi.conftest import PROGRAMS, compile_program, run_program
from tests.daemons import Daemon, build_toolkit, serving

MODULE = "tests.kind_operators"
pytestmark = pytest.mark.timeout(300)  # the first test builds a toolkit and starts a daemon
PHASE1 = "aclnnKindsProbeGetWorkspaceSize"


@pytest.fixture(scope="module")
def kinds_toolkit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_toolkit(tmp_path_factory.mktemp("toolkit-kinds") / "cann", "--operators", MODULE)


@pytest.fixture(scope="module")
def kinds_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    with serving(tmp_path_factory.mktemp("daemon-kinds"), "--operators", MODULE) as running:
        yield running


@pytest.fixture(scope="module")
def said(kinds_toolkit: Path, kinds_daemon: Daemon, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    binary = compile_program(kinds_toolkit, PROGRAMS / "argument_kinds.cpp", tmp_path_factory.mktemp("kinds"))
    done = run_program(kinds_toolkit, binary, kinds_daemon)
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())


def reference(bias: bool, layout: str, seed: int) -> np.ndarray:
    f32 = np.float32
    self = np.array([1, 2, 3, 4, 5], f32).astype(np.float64)
    others = [
        np.array([10, 20, 30, 40, 50], f32),
        np.array([-1, -2, -3, -4, -5], f32),
        np.array([0.5, 0.25, 0.125, 0.0625, 0.03125], f32),
    ]
    weights, use, gains = [2.0, -3.0, 4.0], [True, False, True], [0.5, 2.0, -1.25]
    total = self + sum(
        w * g * o.astype(np.float64) for o, w, u, g in zip(others, weights, use, gains, strict=True) if u
    )
    if bias:
        total = total + np.array([0.25, -0.5, 0.75, -1.0, 1.25], f32)
    total = total * 1.5 * 2 + 0.125 - 3 + seed % 7
    return total[::-1] if layout == "REV" else total


def test_every_kind_reaches_the_kernel(said: dict[str, str]) -> None:
    assert said["sizes"] == "3 3 3 3"
    for label, bias, layout, seed in (("with-bias", True, "REV", 2**64 - 1), ("without-bias", False, "ND", 10)):
        status, *values = said[label].split()
        assert status == "0", said
        np.testing.assert_allclose(np.array(values, np.float64), reference(bias, layout, seed), rtol=1e-6)


@pytest.mark.parametrize(
    ("label", "code", "message"),
    [
        ("null-layout", ACLNN_ERR_PARAM_NULLPTR, "layout is a null pointer"),
        ("bad-layout", ACLNN_ERR_PARAM_INVALID, "layout is 'BSH'; it must be one of 'ND', 'REV'"),
        ("null-list", ACLNN_ERR_PARAM_NULLPTR, "others is a null pointer"),
        ("null-member", ACLNN_ERR_PARAM_NULLPTR, "others[1] is a null pointer"),
        ("short-array", ACLNN_ERR_PARAM_INVALID, "use has 2 entries; it must have one per tensor of others (3)"),
        ("negative-epsilon", ACLNN_ERR_PARAM_INVALID, "epsilon is -1.0; it must be >= 0.0"),
        ("zero-repeat", ACLNN_ERR_PARAM_INVALID, "repeat is 0; it must be >= 1"),
    ],
)
def test_phase1_refuses_bad_input(said: dict[str, str], label: str, code: int, message: str) -> None:
    assert int(said[label]) == code
    assert said[f"{label}-message"].startswith(f"{PHASE1}: ")
    assert said[f"{label}-message"].endswith(f"aclnnKindsProbe: {message}")


def test_the_list_objects_own_their_members(said: dict[str, str]) -> None:
    assert said["create-null-list"] == said["create-null-array"] == "1"
    assert said["create-null-list-message"].endswith("value is NULL but size is 2")
    assert said["destroy-list"] == said["destroy-scalar-list"] == "0" and said["destroy-arrays"] == "0 0"
    assert int(said["destroyed-list"]) == ACLNN_ERR_PARAM_INVALID
    assert (
        "others" in said["destroyed-list-message"]
        and "destroyed by aclDestroyTensorList" in (said["destroyed-list-message"])
    )
    assert int(said["destroy-member"]) == ACLNN_ERR_PARAM_INVALID
    assert said["destroy-member-message"].endswith("was destroyed with its aclTensorList by aclDestroyTensorList")
