"""Adaptor point strategies agree, and agree with the definition via oracle attestations."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.dlc import adaptor_points as ap
from ctplugin.dlc.digits import decompose
from ctplugin.dlc.oracle import DigitDecompositionEvent, Oracle, OracleInfo
from ctplugin.hashes import sha256
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N

BASE, DIGITS = 2, 4


def _oracles(count: int, nb_digits: int = DIGITS, base: int = BASE):
    oracles, infos, announcements = [], [], []
    for i in range(count):
        oracle = Oracle(sha256(f"oracle-{i}".encode()))
        event = DigitDecompositionEvent(base, False, "usd", 0, nb_digits)
        nonces = [int.from_bytes(sha256(f"nonce-{i}-{j}".encode()), "big")
                  for j in range(nb_digits)]
        announcement = oracle.announce("e", event, nonce_secrets=nonces)
        oracles.append(oracle)
        announcements.append(announcement)
        infos.append(OracleInfo.from_announcement(announcement))
    return oracles, infos, announcements


ORACLES, INFOS, ANNOUNCEMENTS = _oracles(3)
POINTS = ap.DigitPoints(INFOS, BASE)


def test_all_strategies_agree_on_every_outcome_of_three_oracles() -> None:
    entries = [tuple((i, decompose(v, BASE, DIGITS)) for i in range(3))
               for v in range(BASE**DIGITS)]
    results = {s: ap.compute_packed(POINTS, entries, s) for s in ap.STRATEGIES}
    reference = results["naive"]
    assert len(set(reference)) == len(reference)
    for strategy, packed in results.items():
        assert packed == reference, strategy


entry_strategy = st.lists(
    st.tuples(st.integers(0, 2), st.lists(st.integers(0, BASE - 1), min_size=1,
                                          max_size=DIGITS).map(tuple)),
    min_size=1, max_size=3, unique_by=lambda pair: pair[0]).map(tuple)


@settings(max_examples=15, deadline=None)
@given(st.lists(entry_strategy, min_size=1, max_size=12))
def test_strategies_agree_on_mixed_prefixes(entries: list[ap.Entry]) -> None:
    reference = ap.compute_packed(POINTS, entries, "naive")
    for strategy in ap.STRATEGIES[1:]:
        assert ap.compute_packed(POINTS, entries, strategy) == reference, strategy


def test_adaptor_point_is_the_attested_secret_times_g() -> None:
    outcome = 11
    digits = decompose(outcome, BASE, DIGITS)
    attestations = [o.attest(a, outcome) for o, a in zip(ORACLES, ANNOUNCEMENTS)]
    for combo in itertools.combinations(range(3), 2):
        for length in (1, 3, DIGITS):
            entry = tuple((i, digits[:length]) for i in combo)
            (point,) = ap.compute(POINTS, [entry])
            secret = sum(attestations[i].secret(length) for i in combo) % N
            assert ct.base_mul(secret) == point
    assert all(att.verify([n for n in a.event.nonces]) for att, a in zip(attestations,
                                                                         ANNOUNCEMENTS))


def test_grouped_form_matches_entries() -> None:
    prefixes = [decompose(v, BASE, DIGITS)[: 1 + v % DIGITS] for v in range(BASE**DIGITS)]
    for oracles in ((0, 1, 2), (1, 2), (2,)):
        entries = [tuple((i, p) for i in oracles) for p in prefixes]
        reference = ap.compute_packed(POINTS, entries, "naive")
        for threads in (1, 2):
            assert ap.compute_grouped_packed(ap.DigitPoints(INFOS, BASE), oracles, prefixes,
                                             threads) == b"".join(reference)


def test_bad_entries_are_typed_errors() -> None:
    import pytest

    from ctplugin.dlc.errors import DlcError

    for bad in ([((0, (2,)),)], [((5, (0,)),)], [((0, (0,) * 5),)], [()],
                [((0, (0, 1)), (0, (0, 1)))], [((0, (-1,)), (1, (-1,)))]):
        for strategy in ap.STRATEGIES:
            with pytest.raises(DlcError):
                ap.compute_packed(ap.DigitPoints(INFOS, BASE), bad, strategy)
    with pytest.raises(DlcError):
        ap.compute_grouped_packed(POINTS, (0, 1), [(0, 2)])
