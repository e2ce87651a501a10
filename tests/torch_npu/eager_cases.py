"""~30 common torch ops on random data, each run on the CPU and on vnpu's NPU and compared (run as a script in a
torch process by test_eager.py; prints one JSON line per case: ok, mismatch, or refused with the error)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import torch
import torch_npu  # noqa: F401  (registers the npu device)

torch.manual_seed(0)
A = torch.randn(4, 8)
B = torch.randn(4, 8)
M = torch.randn(8, 5)
V = torch.randn(8)
W = torch.randn(6, 8)
I = torch.tensor([3, 0, 2])  # noqa: E741
T = torch.randn(2, 3, 8)


def cases(d: str) -> dict[str, Callable[[], torch.Tensor]]:
    a, b, m, v, w, t = (x.to(d) for x in (A, B, M, V, W, T))
    i = I.to(d)
    return {
        "zeros": lambda: torch.zeros(3, 4, device=d),
        "ones": lambda: torch.ones(3, 4, device=d),
        "full": lambda: torch.full((2, 3), 2.5, device=d),
        "arange": lambda: torch.arange(0, 10, 2, device=d, dtype=torch.float32),
        "fill_": lambda: a.clone().fill_(7.0),
        "zero_": lambda: a.clone().zero_(),
        "add": lambda: a + b,
        "add_broadcast": lambda: a + v,
        "add_scalar": lambda: a + 1,
        "sub": lambda: a - b,
        "mul": lambda: a * b,
        "mul_scalar": lambda: a * 3.0,
        "div": lambda: a / (b.abs() + 1),
        "neg": lambda: -a,
        "exp": lambda: a.exp(),
        "relu": lambda: torch.relu(a),
        "silu": lambda: torch.nn.functional.silu(a),
        "gelu": lambda: torch.nn.functional.gelu(a),
        "matmul": lambda: a @ m,
        "linear": lambda: torch.nn.functional.linear(a, w),
        "softmax": lambda: torch.softmax(a, dim=-1),
        "sum": lambda: a.sum(dim=1),
        "mean": lambda: a.mean(dim=-1),
        "max": lambda: a.max(dim=1).values,
        "argmax": lambda: a.argmax(dim=1),
        "index_select": lambda: a.index_select(0, i),
        "slice": lambda: a[1:3, 2:6].contiguous(),
        "cat": lambda: torch.cat([a, b], dim=0),
        "stack": lambda: torch.stack([a, b], dim=0),
        "layer_norm": lambda: torch.nn.functional.layer_norm(t, (8,)),
        "rsqrt": lambda: (a.abs() + 1).rsqrt(),
        "pow": lambda: a.pow(2),
        "to_float16": lambda: a.to(torch.float16),
        "to_bfloat16": lambda: a.to(torch.bfloat16),
        "transpose_contiguous": lambda: a.t().contiguous(),
        "permute_contiguous": lambda: t.permute(2, 0, 1).contiguous(),
    }


def main() -> None:
    names = sys.argv[1:] or list(cases("cpu"))
    on_cpu, on_npu = cases("cpu"), cases("npu")
    for name in names:
        expected = on_cpu[name]()
        try:
            got = on_npu[name]().cpu()
        except Exception as error:  # a refused operator: the message says which
            print(json.dumps({"case": name, "result": "refused", "error": str(error)[:2000]}), flush=True)
            continue
        same = got.dtype == expected.dtype and got.shape == expected.shape
        if same:
            tolerance = {"rtol": 1e-2, "atol": 1e-2} if got.dtype in (torch.float16, torch.bfloat16) else {}
            same = (
                torch.allclose(got.double(), expected.double(), **tolerance)
                if got.is_floating_point()
                else bool(torch.equal(got, expected))
            )
        print(json.dumps({"case": name, "result": "ok" if same else "mismatch", "got": str(got)[:300],
                          "expected": str(expected)[:300]}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
