"""ctplugin.batch: one-MSM batch verification of claims, bisection naming the false ones."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.batch import BatchVerifier, Claim
from ctplugin.errors import EncodingError
from ctplugin.secp256k1 import FixedBase, G, N, Point, pack_points, pack_scalars

BASE = FixedBase([G, G.mul_var(2), G.mul_var(3), G.mul_var(5)])  # F_i = f_i·G, f = 1, 2, 3, 5
F = [1, 2, 3, 5]


def _b(v: int) -> bytes:
    return (v % N).to_bytes(32, "big")


def claim_dlog(label: object, a: int, b: int, good: bool = True) -> Claim:
    """a·F_1 + b·F_2 − P = ∞ with P = (2a + 3b)·G (false if not good)."""
    target = G.mul_var(2 * a + 3 * b + (0 if good else 1))
    return Claim(label=label, base=BASE, fixed=((1, 1, _b(a) + _b(b)),),
                 free_scalars=_b(-1), free_points=target.packed)


def test_empty_batch_verifies() -> None:
    assert BatchVerifier(BASE).verify()
    assert BatchVerifier(BASE).failures() == []


def test_true_and_false_claims() -> None:
    batch = BatchVerifier(BASE)
    batch.extend([claim_dlog(i, i + 1, 7 * i + 2) for i in range(5)])
    assert batch.verify()
    batch.add(claim_dlog("bad", 3, 4, good=False))
    assert not batch.verify()
    assert batch.failures() == ["bad"]


def test_multiplier_constant_and_shared_terms() -> None:
    # c·(v_0·F_0 + v_1·F_1) + s·(F_2 + F_3) + shared q·G = ∞ with matching q.
    c, v0, v1, s = 11, 4, 9, 6
    q = -(c * (v0 * 1 + v1 * 2) + s * (3 + 5))
    claim = Claim(label="x", base=BASE, fixed=((0, c, _b(v0) + _b(v1)),),
                  fixed_const=((2, 2, s),), shared=((G.packed, q % N),))
    batch = BatchVerifier(BASE)
    batch.extend([claim, claim, claim])  # shared G merged across claims
    assert batch.verify()
    wrong = Claim(label="y", base=BASE, fixed=((0, c, _b(v0) + _b(v1)),),
                  fixed_const=((2, 2, s),), shared=((G.packed, (q + 1) % N),))
    batch.add(wrong)
    assert batch.failures() == ["y"]


def test_foreign_base_and_free_only_claims() -> None:
    other = FixedBase([G.mul_var(7)])
    batch = BatchVerifier(BASE)
    batch.add(Claim(label="foreign", base=other, fixed=((0, 1, _b(2)),),
                    fixed_const=((0, 1, 1),), free_scalars=_b(-21), free_points=G.packed))
    batch.add(Claim(label="free", base=None, free_scalars=pack_scalars([3, -1]),
                    free_points=pack_points([G, G.mul_var(3)])))
    assert batch.verify()
    batch.add(Claim(label="free-bad", base=None, free_scalars=pack_scalars([3, -1]),
                    free_points=pack_points([G, G.mul_var(4)])))
    assert batch.failures() == ["free-bad"]


def test_claim_validation() -> None:
    """A malformed claim is an EncodingError naming why (it was a bare ValueError)."""
    with pytest.raises(EncodingError, match="fixed segment"):
        Claim(label=0, base=BASE, fixed=((3, 1, _b(1) + _b(1)),))  # runs past the base
    with pytest.raises(EncodingError, match="do not match"):
        Claim(label=0, base=BASE, free_scalars=_b(1), free_points=b"")
    with pytest.raises(EncodingError, match="constant segment"):
        Claim(label=0, base=BASE, fixed_const=((0, 5, 1),))
    with pytest.raises(EncodingError, match="shared term"):
        Claim(label=0, base=BASE, shared=((G.packed, N),))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40))
def test_bisection_names_exactly_the_false_claims(goods: list[bool]) -> None:
    batch = BatchVerifier(BASE)
    batch.extend([claim_dlog(i, 5 * i + 1, i + 2, good) for i, good in enumerate(goods)])
    assert batch.verify() == all(goods)
    assert batch.failures() == [i for i, good in enumerate(goods) if not good]


def test_points_sanity() -> None:
    assert Point.from_packed(BASE.table.msm_var(_b(1) + _b(1))) == G.mul_var(3)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40))
def test_first_failure_is_the_first_false_claim(goods: list[bool]) -> None:
    batch = BatchVerifier(BASE)
    batch.extend([claim_dlog(i, 3 * i + 1, i + 5, good) for i, good in enumerate(goods)])
    first = next((i for i, good in enumerate(goods) if not good), None)
    assert batch.first_failure() == first
    if first is not None:
        assert batch.first_failure(known_failing=True) == first


def test_first_failure_survives_a_false_pass_of_a_half(monkeypatch: pytest.MonkeyPatch) -> None:
    """A half holding the false claim that passes (probability 2^-128 with random weights) must
    not make the search name a true claim: the claims are then checked one by one."""
    batch = BatchVerifier(BASE)
    batch.extend([claim_dlog(i, i + 1, 2 * i + 3, good=i != 1) for i in range(8)])
    honest = BatchVerifier._check
    lies = iter([True])  # the first half [0..3] "passes": the search goes right
    singles: list[int] = []

    def check(self: BatchVerifier, claims) -> bool:
        if len(claims) == 1:
            singles.append(claims[0].label)
        if len(claims) == 4 and next(lies, False):
            return True
        return honest(self, claims)

    monkeypatch.setattr(BatchVerifier, "_check", check)
    assert batch.first_failure() == 1
    assert singles == [6, 7, 0, 1]  # the search ended on true claim 7, then one by one
