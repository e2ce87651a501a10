"""The conformance suite's references of the operators of `test_elementwise_more_cases` (examples/cann_ops/
references_elem.py, written apart from the kernels) against the kernels, on each row's random inputs: a reference
that agreed with nothing would judge nothing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from aclnn_testkit import FakeMemory

import proto.aclnn as nn
from tests.server.npu.ops.math import test_elementwise_extra_cases, test_elementwise_more_cases
from tests.server.npu.ops.nn import test_activation_more_cases
from tests.server.npu.ops.opcases import Case, build
from tests.server.npu.ops.test_ops_dump import verdict_module

WRAPPING = {"LeftShift", "Square-int"}
"""Rows that overflow their integer output on purpose: a reference gives the exact value (CANN's examples do not
overflow), which the verdict rounds by saturating."""
CASES = [
    c
    for c in (
        *test_elementwise_more_cases.CASES,
        *test_elementwise_extra_cases.CASES,
        *test_activation_more_cases.CASES,
    )
    if c.id not in WRAPPING
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_reference_agrees_with_the_kernel(case: Case, mem: FakeMemory, rng: np.random.Generator) -> None:
    verdict = verdict_module()
    decl = nn.OPS[case.op]
    launch = build(case, mem, rng)
    host = dict(zip(case.args, launch.host, strict=True))
    mem.launch(nn.function(f"aclnn{case.op}GetWorkspaceSize"), *(host[name] for name in decl.arg_names))
    args: dict[str, Any] = {k: (np.zeros(0) if v is None else v) for k, v in launch.given.items()}
    want = verdict.REFERENCES[case.op](args)
    for name, tensor in launch.written.items():
        if name in case.skip:  # a reserved output: neither the kernel nor the reference writes it
            continue
        got = mem.read(tensor)
        expected = np.broadcast_to(np.asarray(want[name]), got.shape)
        parts = [(got.real, expected.real), (got.imag, expected.imag)] if got.dtype.kind == "c" else [(got, expected)]
        for have, reference in parts:
            dtype = str(have.dtype)
            assert verdict.agrees(have, verdict.rounded(reference, dtype), dtype), (name, have, reference)


def test_complex_outputs_agree_by_part() -> None:
    """A complex output (Polar's) agrees with its reference when each part does, as a float of the part's dtype."""
    verdict = verdict_module()
    want = np.array([0.5403023058681398 + 0.8414709848078965j, -0.4161468365471424 + 0.9092974268256817j])
    got = want.astype(np.complex64)
    assert verdict.agrees(got, want, "complex64")
    assert not verdict.agrees(got, want.real + 0j, "complex64")
    assert not verdict.agrees(got.real, want, "complex64")
