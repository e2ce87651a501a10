"""The numbers of aclrtRandomNumAsync: a counter-based generator, reproducible from the seed and the counter alone.

The device's DSA engine runs Philox4_32_10 with a 128-bit counter; its exact bit stream is not public. vnpu uses
numpy's Philox bit generator (Philox4x64-10) in the same counter-based way, so a launch's numbers depend only
on the seed, the 16 counter bytes and the parameters, and a program sees the device's behaviour: the same seed
and counter give the same numbers, and the task advances the counter, so the next launch continues the sequence.

Words. The key is (seed, 0); the counter c is the 16 bytes at randomCounterAddr as two little-endian uint64
(low first), the low half of numpy's 256-bit counter. numpy's Philox adds one to its counter, then encrypts
it into four 64-bit words, so a launch draws block(c + 1), block(c + 2), ... in order, and the task stores back
c + (blocks drawn) mod 2**128. Words of the last block that a launch leaves unused are skipped: the next launch
starts at a fresh block. Variates: u = (w >> 11) * 2**-53 in [0, 1) and v = ((w >> 11) + 1) * 2**-53 in (0, 1].

Values, in chunks of CHUNK values (the last one shorter), one chunk after the other:
- UNIFORM, floating types: min + (max - min) * u in float64, one word each, rounded once to the type (to
  nearest: in fp16 or bf16 a value just below max can round to max itself);
- UNIFORM, integer types: min + (w mod (max - min)), in [min, max), one word each (a bias below
  (max - min) / 2**64); every value is min when max <= min (the words are drawn all the same);
- NORMAL: mean + stddev * z with z = sqrt(-2 ln v) cos(2 pi u) (Box-Muller: v from the value's first word, u
  from its second), two words each, rounded once to the type;
- TRUNCATED_NORMAL: as NORMAL, then every value of the chunk with |z| > 2 -- outside two standard deviations,
  the conventional truncation (TensorFlow's truncated_normal, torch's trunc_normal_ defaults) -- is drawn again
  from the next words, in index order, round after round, until none is left;
- DROPOUT_BITMASK: one bit per element, 1 (kept) when u >= dropoutRation, which the runtime's documentation
  calls the share of elements dropped: an element is kept with probability 1 - dropoutRation. One word per
  element; bit i is bit i % 8 (least significant first) of byte i // 8, in ceil(randomNum / 8) bytes, the unused
  high bits of the last byte 0.
"""

from __future__ import annotations

import numpy as np

from proto.constants import aclrtRandomNumFuncType

F = aclrtRandomNumFuncType
CHUNK = 1 << 20  # values (bits of a mask) per chunk: a multiple of 8, so a mask chunk is whole bytes
TRUNCATION = 2.0  # standard deviations
MASK_128 = (1 << 128) - 1
_SHIFT, _ONE, _SCALE = np.uint64(11), np.uint64(1), 2.0**-53


class Words:
    """The 64-bit words of one launch, in order, and the counter to store back."""

    def __init__(self, seed: int, counter: int) -> None:
        self.bits = np.random.Philox(key=seed, counter=counter)

    def take(self, n: int) -> np.ndarray:
        return self.bits.random_raw(n) if n else np.empty(0, np.uint64)

    @property
    def counter(self) -> int:
        low, high = (int(x) for x in self.bits.state["state"]["counter"][:2])
        return (low | high << 64) & MASK_128


def uniform(w: np.ndarray) -> np.ndarray:
    """[0, 1)"""
    return (w >> _SHIFT).astype(np.float64) * _SCALE


def positive(w: np.ndarray) -> np.ndarray:
    """(0, 1]"""
    return ((w >> _SHIFT) + _ONE).astype(np.float64) * _SCALE


def standard_normal(words: Words, n: int) -> np.ndarray:
    w = words.take(2 * n)
    result: np.ndarray = np.sqrt(-2.0 * np.log(positive(w[0::2]))) * np.cos(2.0 * np.pi * uniform(w[1::2]))
    return result


def truncated_normal(words: Words, n: int) -> np.ndarray:
    z = standard_normal(words, n)
    again = np.flatnonzero(np.abs(z) > TRUNCATION)
    while again.size:
        z[again] = standard_normal(words, again.size)
        again = again[np.abs(z[again]) > TRUNCATION]
    return z


def mask_bytes(count: int) -> int:
    return -(-count // 8)


def result_bytes(func: int, dtype: np.dtype, count: int) -> int:
    """The bytes a launch of `count` values writes."""
    return mask_bytes(count) if func == F.ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK else count * dtype.itemsize


def generate(
    func: int, dtype: np.dtype, first: float | int, second: float | int, count: int, words: Words, out: np.ndarray
) -> None:
    """Write `count` values of `dtype` (a mask, for DROPOUT_BITMASK) into the uint8 view `out`, drawing from
    `words`. `first`, `second`: the distribution's parameters (dropoutRation; min, max; mean, stddev)."""
    with np.errstate(all="ignore"):  # a parameter may be inf or NaN, a value may overflow its type
        if func == F.ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK:
            for start in range(0, count, CHUNK):
                n = min(CHUNK, count - start)
                kept = uniform(words.take(n)) >= float(first)
                out[start // 8 : start // 8 + mask_bytes(n)] = np.packbits(kept, bitorder="little")
            return
        values = out.view(dtype)
        for start in range(0, count, CHUNK):
            n = min(CHUNK, count - start)
            values[start : start + n] = _chunk(func, dtype, first, second, n, words)


def _chunk(func: int, dtype: np.dtype, first: float | int, second: float | int, n: int, words: Words) -> np.ndarray:
    if func == F.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS and dtype.kind in "iu":
        low, span = int(first), int(second) - int(first)
        w = words.take(n)
        if span <= 0:
            return np.full(n, low, dtype)
        offsets = w % np.uint64(span)  # span < 2**64: max and min are values of a 64-bit type at most
        offsets += np.uint64(low % 2**64)  # min + offset, modulo 2**64: the type's bits of a value in range
        return offsets.astype(dtype)
    if func == F.ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS:
        bottom, top = float(first), float(second)
        return (bottom + (top - bottom) * uniform(words.take(n))).astype(dtype)
    z = standard_normal(words, n) if func == F.ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS else truncated_normal(words, n)
    return (float(first) + float(second) * z).astype(dtype)
