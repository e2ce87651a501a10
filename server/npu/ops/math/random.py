"""Random fills (hicann/ops-math random/): InplaceUniform (what torch_npu's uniform_ and exponential_ run on
A2/A3) and SimThreadExponential (the exponential fill).

Randomness source: numpy's Philox-4x32-10 counter-based generator, keyed by `seed`, its counter starting at
`offset` (counted in Philox blocks of four 32-bit words). The same (seed, offset) gives the same numbers on every
vnpu run and platform, as the NPU's Philox does for itself; the streams are not bit-identical to the NPU's.
Values are drawn in float64 and rounded once into the tensor's dtype.

CANN has no aclnnInplaceExponential: torch_npu's exponential_ is uniform_ (InplaceUniform) followed by
elementwise ops (1 - u, clamped below 1 - eps/2, log, · -1/lambda), or SimThreadExponential on Ascend950.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from server.npu.ops.common.errors import invalid
from server.npu.ops.common.numeric import store

Array = np.ndarray


def generator(seed: int, offset: int) -> np.random.Generator:
    """The Philox stream of (seed, offset)."""
    return np.random.Generator(np.random.Philox(key=int(seed) % (1 << 64), counter=int(offset) % (1 << 64)))


def inplace_uniform(selfRef: Array, from_: float, to: float, seed: int, offset: int, workspace: Array | None) -> None:
    """selfRef = uniform samples in [from, to). (The C argument `from` is a Python keyword; the kernel takes it as
    `from_`, and the plumbing maps the name.)

    Constraints (random/dsa_random_uniform/docs/aclnnInplaceUniform.md): selfRef FLOAT/FLOAT16/BFLOAT16/DOUBLE
    (and integer types); from ≤ to.
    """
    if from_ > to:
        raise invalid("InplaceUniform", "from", f"{from_} exceeds to = {to}")
    samples = generator(seed, offset).random(selfRef.shape)
    store(selfRef, from_ + samples * (to - from_))


def sim_thread_exponential(
    selfRef: Array, count: int, lambd: float, seed: int, offset: int, workspace: Array | None
) -> None:
    """selfRef = -ln(1 - u) / lambd with u uniform in [0, 1) (exponential samples with rate lambd).

    Constraints (random/sim_thread_exponential/docs/aclnnSimThreadExponential.md): selfRef FLOAT16/BFLOAT16/FLOAT,
    ≤ 8-D; lambd > 0; count the number of values to generate (vnpu fills the first min(count, size) elements in
    flat order, the rest untouched).
    """
    if not lambd > 0:
        raise invalid("SimThreadExponential", "lambd", f"is {lambd}; it must be positive")
    n = min(max(int(count), 0), selfRef.size)
    samples = -np.log1p(-generator(seed, offset).random(n)) / lambd
    flat = selfRef.reshape(-1) if selfRef.flags.c_contiguous else None
    if flat is not None:
        store(flat[:n], samples)
    else:
        values = selfRef.astype(np.float64).reshape(-1)
        values[:n] = samples
        store(selfRef, values.reshape(selfRef.shape))


FUNCTIONS: dict[str, Callable[..., None]] = {
    "InplaceUniform": inplace_uniform,
    "SimThreadExponential": sim_thread_exponential,
}
