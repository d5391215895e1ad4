"""Many double multiplications ``double_mult_many_var`` (s_i·G + e_i·P_i): both native builds and
both paths (sixteen at a time in AVX-512 IFMA lanes, and the scalar code, two at a time in
lockstep) against the pure-Python reference, on random inputs, on inputs crafted to meet the
lanes' exceptional additions (doublings, cancellations, infinity), on hostile bytes and across
thread counts."""

from __future__ import annotations

import random
from typing import Any

import coincurve
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin.errors import EncodingError
from ctplugin.secp256k1 import _reference as ref
from ctplugin.secp256k1.params import LAMBDA, N, P
from tests.conftest import native_kernels

nat = pytest.importorskip("ctplugin.secp256k1._native")


NATIVES = native_kernels()
INF = bytes(64)


def sc(v: int) -> bytes:
    return (v % N).to_bytes(32, "big")


def pt(d: int) -> bytes:
    d %= N
    if d == 0:
        return INF
    return coincurve.PublicKey.from_secret(sc(d)).format(compressed=False)[1:]


def _cases(cases: list[tuple[int, int, int]]) -> tuple[bytes, bytes, bytes]:
    """(s, e, d) triples with P = d·G (d = 0: infinity) packed for the kernel."""
    return (b"".join(sc(s) for s, _, _ in cases), b"".join(sc(e) for _, e, _ in cases),
            b"".join(pt(d) for _, _, d in cases))


def _expected(cases: list[tuple[int, int, int]]) -> bytes:
    """Known discrete logs: s·G + e·d·G = (s + e·d)·G."""
    return b"".join(pt(s + e * d) for s, e, d in cases)


def _crafted() -> list[tuple[int, int, int]]:
    """Inputs whose lanes meet an exceptional addition (or an infinite result): a lane's
    e-digit point equal to the G-digit point added next (doublings), one the negation of the
    other (cancellations), results at infinity, zero scalars and tiny ones, λ multiples."""
    return [
        (1, 1, 1),              # G + G: the first G digit doubles the point of the first e digit
        (2, 1, 2),              # 2G + 2G
        (32, 32, 1),            # 32G (e, after five doublings) + 32G (the G digit)
        (N - 1, 1, 1),          # -G + G: infinity
        (N - 5, 1, 5),          # infinity, from the last addition
        (0, 0, 7),              # 0: the lane never adds anything
        (0, 5, 3),              # e only
        (9, 0, 3),              # s only
        (1, 1, N - 1),          # G - G
        (3, LAMBDA, 1),         # e = λ: the λ term alone
        (N - 7 * LAMBDA % N, LAMBDA, 7),  # s·G = -λ·7G: infinity through the λ table
        (2**128, 1, 2**128),    # the 2^128·G table against e·P with P = 2^128·G
        (5, 2**128, 1),
    ]


def _random(rng: random.Random, count: int) -> list[tuple[int, int, int]]:
    return [(rng.randrange(N), rng.randrange(1, N), rng.randrange(N)) for _ in range(count)]


def test_crafted_and_random_inputs_on_every_build_and_path(dmult_path: str) -> None:
    rng = random.Random(20260901)
    # batches of every remainder mod 16 around the lanes' cut-offs, crafted lanes scattered
    for count in (1, 4, 5, 15, 16, 17, 21, 37):
        cases = _random(rng, count)
        for k, case in enumerate(_crafted()):
            cases[(5 * k + count) % count] = case
        args = _cases(cases)
        want = _expected(cases)
        for module in NATIVES:
            assert module.double_mult_many_var(*args, threads=1) == want


def test_every_pair_of_lanes_gets_each_lane_its_own_result(dmult_path: str) -> None:
    """The scalar code runs a batch two at a time in lockstep (dmult_pair_var), the last of an
    odd batch alone: every crafted lane beside every other one (an exceptional addition in one
    lane, none or another in the other; one lane at infinity for its first bits or for good)
    comes out as it does alone and as the discrete logs say."""
    rng = random.Random(25)
    lanes = _crafted() + _random(rng, 3)
    for a in lanes:
        for b in lanes:
            args = _cases([a, b])
            want = _expected([a, b])
            for module in NATIVES:
                assert module.double_mult_many_var(*args, threads=1) == want
                assert module.double_mult_many_var(*_cases([a]), threads=1) == want[:64]


def test_a_whole_batch_of_exceptional_lanes(dmult_path: str) -> None:
    cases = (_crafted() * 3)[:32]
    args = _cases(cases)
    for module in NATIVES:
        assert module.double_mult_many_var(*args) == _expected(cases)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                               HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from([0, 1, 2, 3, N - 1, N - 2, 2**128, LAMBDA]) |
                          st.integers(0, N - 1),
                          st.sampled_from([0, 1, 2, N - 1, LAMBDA]) | st.integers(0, N - 1),
                          st.sampled_from([0, 1, 2, 3, N - 1]) | st.integers(0, N - 1)),
                min_size=0, max_size=24))
def test_native_matches_the_reference(dmult_path: str, cases: list[tuple[int, int, int]]) -> None:
    args = _cases(cases)
    want = ref.double_mult_many_var(*args)
    assert want == _expected(cases)
    for module in NATIVES:
        assert module.double_mult_many_var(*args, threads=2) == want


def test_results_do_not_depend_on_the_thread_count(dmult_path: str) -> None:
    cases = _random(random.Random(7), 100) + _crafted()
    args = _cases(cases)
    want = _expected(cases)
    for module in NATIVES:
        for threads in (0, 1, 2, 3, 5, 64):
            assert module.double_mult_many_var(*args, threads=threads) == want


def _error(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, str]:
    with pytest.raises(EncodingError) as exc:
        fn(*args, **kwargs)
    return exc.value.reason, str(exc.value)


@pytest.mark.parametrize("args, kwargs", [
    ((sc(1), sc(1), INF[:63]), {}),                                   # point length
    ((sc(1)[:31], sc(1), INF), {}),                                   # scalar length
    ((N.to_bytes(32, "big"), sc(1), INF), {}),                        # s >= n
    ((sc(1), N.to_bytes(32, "big"), INF), {}),                        # e >= n
    ((sc(1), sc(1), P.to_bytes(32, "big") * 2), {}),                  # x >= p
    ((sc(1), sc(1), (5).to_bytes(32, "big") * 2), {}),                # off the curve
    ((sc(1) * 2, sc(1), pt(1)), {}),                                  # counts differ
    ((sc(1), sc(1) * 2, pt(1) * 2), {}),
    ((sc(1), sc(1), pt(1)), {"threads": 65}),                         # threads out of range
    ((sc(1), sc(1), pt(1)), {"threads": -1}),
])
def test_hostile_inputs_raise_the_same_errors(args: tuple[bytes, ...], kwargs: dict[str, int]
                                              ) -> None:
    want = _error(ref.double_mult_many_var, *args, **kwargs)
    for module in NATIVES:
        assert _error(module.double_mult_many_var, *args, **kwargs)[0] == want[0]


def test_empty() -> None:
    for module in (ref, *NATIVES):
        assert module.double_mult_many_var(b"", b"", b"") == b""


def test_backend_switch() -> None:
    with pytest.raises(ValueError):
        nat._dmult_backend("avx9000")
    assert nat._dmult_backend() in ("ifma", "scalar")
