"""The allow/deny rule of spec 1.3 over every combination of (ctx, thr, x)."""

from __future__ import annotations

import itertools

from server.npu.model.capture_modes import GLOBAL, NONE, RELAXED, THREAD_LOCAL, unsafe_call_allowed

G, T, R, M = GLOBAL, THREAD_LOCAL, RELAXED, NONE


def spec_rule(ctx: int, thr: int, x: int) -> bool:
    """Spec 1.3 as written: allowed if ctx==MAX or x==RELAXED; denied if x==GLOBAL and (ctx==GLOBAL or
    thr==THREAD_LOCAL), or x==THREAD_LOCAL and thr in {GLOBAL, THREAD_LOCAL}; otherwise allowed."""
    if ctx == M or x == R:
        return True
    if x == G and (ctx == G or thr == T):
        return False
    return not (x == T and thr in (G, T))


def test_rule_matches_the_spec_everywhere() -> None:
    for ctx, thr, x in itertools.product((G, T, R, M), (G, T, R, M), (G, T, R)):
        if thr < ctx:
            continue  # thr is a subset of the context's captures: never lower than ctx
        assert unsafe_call_allowed(ctx, thr, x) == spec_rule(ctx, thr, x), (ctx, thr, x)


def test_the_documented_meaning_of_the_modes() -> None:
    # a GLOBAL capture blocks every thread in the default exchange mode
    assert not unsafe_call_allowed(G, G, G) and not unsafe_call_allowed(G, M, G)
    # a THREAD_LOCAL capture blocks the capturing thread only
    assert not unsafe_call_allowed(T, T, G) and unsafe_call_allowed(T, M, G)
    # a RELAXED capture blocks nobody
    assert unsafe_call_allowed(R, R, G) and unsafe_call_allowed(R, M, G)
    # a thread that exchanged to RELAXED is never blocked; THREAD_LOCAL is blocked by its own captures
    assert unsafe_call_allowed(G, G, R)
    assert not unsafe_call_allowed(G, G, T) and unsafe_call_allowed(G, M, T)
