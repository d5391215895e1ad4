"""Digit decomposition, CET compression, payout curves and the bounded-difference algorithm."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.dlc.compression import group_by_ignoring_digits
from ctplugin.dlc.digits import attested_digits, compose, decompose, prefix_interval
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.multi_oracle import (
    DifferenceParams,
    numeric_entries,
    oracle_combinations,
    outcome_combinations,
)
from ctplugin.dlc.payout import (
    HyperbolaPiece,
    PayoutFunction,
    PayoutPoint,
    PolynomialPiece,
    RangePayout,
    RoundingInterval,
    RoundingIntervals,
)

# --- digits and compression ------------------------------------------------------------------


@given(st.integers(2, 16), st.integers(1, 12), st.data())
def test_decompose_compose_round_trip(base: int, nb_digits: int, data: st.DataObject) -> None:
    value = data.draw(st.integers(0, base**nb_digits - 1))
    digits = decompose(value, base, nb_digits)
    assert len(digits) == nb_digits and compose(digits, base) == value


def test_attested_digits_clamp_and_sign() -> None:
    assert attested_digits(5, 2, 4, False) == ["0", "1", "0", "1"]
    assert attested_digits(99, 2, 4, False) == ["1", "1", "1", "1"]
    assert attested_digits(-3, 2, 4, False) == ["0", "0", "0", "0"]
    assert attested_digits(-3, 10, 2, True) == ["-", "0", "3"]
    assert attested_digits(12, 16, 2, False) == ["0", "12"]


def _spec_groupings(start: int, end: int, base: int, nb_digits: int) -> list[tuple[int, ...]]:
    """NumericOutcomeCompression.md written out literally: prefix, front, middle, back."""
    s, e = decompose(start, base, nb_digits), decompose(end, base, nb_digits)
    common = 0
    while common < nb_digits and s[common] == e[common]:
        common += 1
    prefix, s, e = s[:common], s[common:], e[common:]
    if start == end or (all(d == 0 for d in s) and all(d == base - 1 for d in e)):
        return [prefix]
    if len(prefix) == nb_digits - 1:
        return [(*prefix, d) for d in range(s[-1], e[-1] + 1)]
    front, trimmed = [], list(s)
    while len(trimmed) > 1 and trimmed[-1] == 0:
        trimmed.pop()
    if trimmed == [0]:
        front = [(0,)]
    else:
        front.append(tuple(trimmed))
        for pos in range(len(trimmed) - 1, 0, -1):
            front += [(*tuple(trimmed[:pos]), v) for v in range(trimmed[pos] + 1, base)]
    middle = [(v,) for v in range(s[0] + 1, e[0])]
    back, trimmed = [], list(e)
    while len(trimmed) > 1 and trimmed[-1] == base - 1:
        trimmed.pop()
    if trimmed == [base - 1]:
        back = [(base - 1,)]
    else:
        for pos in range(1, len(trimmed)):
            back += [(*tuple(trimmed[:pos]), v) for v in range(0, trimmed[pos])]
        back.append(tuple(trimmed))
    return [prefix + p for p in front + middle + back]


def test_spec_examples() -> None:
    assert len(group_by_ignoring_digits(135677, 138621, 10, 6)) == 20
    assert group_by_ignoring_digits(5, 1023, 2, 10) == [
        (0, 0, 0, 0, 0, 0, 0, 1, 0, 1), (0, 0, 0, 0, 0, 0, 0, 1, 1), (0, 0, 0, 0, 0, 0, 1),
        (0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 1), (0, 0, 0, 1), (0, 0, 1), (0, 1), (1,)]
    with pytest.raises(DlcError):
        group_by_ignoring_digits(0, 1023, 2, 10)


@settings(max_examples=300)
@given(st.integers(2, 10), st.integers(2, 6), st.data())
def test_compression_covers_exactly_and_matches_the_spec(base: int, nb_digits: int,
                                                          data: st.DataObject) -> None:
    top = base**nb_digits - 1
    start = data.draw(st.integers(0, top))
    end = data.draw(st.integers(start, top))
    if start == 0 and end == top:
        return
    prefixes = group_by_ignoring_digits(start, end, base, nb_digits)
    covered = [prefix_interval(p, base, nb_digits) for p in prefixes]
    assert covered[0][0] == start and covered[-1][1] == end
    assert all(a[1] + 1 == b[0] for a, b in itertools.pairwise(covered))
    assert prefixes == _spec_groupings(start, end, base, nb_digits)


# --- payout curves -----------------------------------------------------------------------------

def test_lagrange_interpolation() -> None:
    piece = PolynomialPiece((PayoutPoint(0, 1), PayoutPoint(2, 5), PayoutPoint(4, 17)))
    assert piece.evaluate(10) == 101.0 and piece.evaluate(100) == 10001.0


ONE = RoundingIntervals((RoundingInterval(0, 1),))


@pytest.mark.parametrize("points, total, expected_len, first, last", [
    ([(0, 0), (20, 20)], 20, 21, (0, 0), (20, 20)),
    ([(10, 10), (20, 10)], 10, 1, (10, 10), (10, 10)),
    ([(50000, 0), (1048575, 0)], 200000000, 1, (50000, 0), (50000, 0)),
])
def test_range_payouts_of_lines(points, total, expected_len, first, last) -> None:
    piece = PolynomialPiece(tuple(PayoutPoint(x, y) for x, y in points))
    ranges = PayoutFunction((piece,)).range_payouts(total, ONE)
    assert len(ranges) == expected_len
    assert (ranges[0].start, ranges[0].offer) == first
    assert (ranges[-1].start, ranges[-1].offer) == last


def test_rounding_rules() -> None:
    rounding = RoundingIntervals((RoundingInterval(0, 10), RoundingInterval(100, 1000)))
    assert rounding.round(5, 14.9) == 10 and rounding.round(5, 15.0) == 20
    assert rounding.round(100, 1499.0) == 1000 and rounding.round(250, 1500.0) == 2000
    for bad in ((), (RoundingInterval(1, 1),), (RoundingInterval(0, 1), RoundingInterval(0, 2)),
                (RoundingInterval(0, 0),)):
        with pytest.raises(DlcError):
            RoundingIntervals(bad).validate()


def test_cet_set_is_maximal_and_continuous() -> None:
    function = PayoutFunction((
        PolynomialPiece((PayoutPoint(0, 0), PayoutPoint(3, 100))),
        PolynomialPiece((PayoutPoint(3, 100), PayoutPoint(5, 200))),
        PolynomialPiece((PayoutPoint(5, 200), PayoutPoint(1023, 200)))))
    ranges = function.range_payouts(200, ONE)
    assert [(r.start, r.count, r.offer) for r in ranges] == [
        (0, 1, 0), (1, 1, 33), (2, 1, 67), (3, 1, 100), (4, 1, 150), (5, 1019, 200)]
    assert all(r.offer + r.accept == 200 for r in ranges)
    assert all(a.offer != b.offer for a, b in itertools.pairwise(ranges))


def test_hyperbola_and_bad_curves() -> None:
    piece = HyperbolaPiece(PayoutPoint(0, 0), PayoutPoint(1023, 0), True, 50.0, 50.0, 5.0, -1.0,
                           0.0, 1.0)
    assert piece.evaluate(50) == pytest.approx(50 + 2 * 5 / (0 + (20.0**0.5)))
    with pytest.raises(DlcError):
        HyperbolaPiece(PayoutPoint(0, 0), PayoutPoint(10, 0), True, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0)
    negative = PolynomialPiece((PayoutPoint(0, 10), PayoutPoint(2, 0), PayoutPoint(1023, 10)))
    with pytest.raises(DlcError):
        PayoutFunction((negative,)).range_payouts(10, ONE)
    with pytest.raises(DlcError):
        PolynomialPiece((PayoutPoint(3, 0), PayoutPoint(3, 1)))


# --- multi-oracle --------------------------------------------------------------------------------

def test_combinations_are_lexicographic() -> None:
    assert oracle_combinations(4, 2) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    with pytest.raises(DlcError):
        oracle_combinations(2, 3)


P = [(0, 0, 1, 0, 1, 1, 0, 0, 1), (0, 1, 0, 0, 0, 0, 0, 1, 1), (0, 1, 1, 1, 1, 1, 0, 1, 0), (0, 1),
     (0, 0, 1), (1, 1, 1, 1, 1, 1, 1, 1), (0, 0), (1, 1)]
# rust-dlc dlc-trie multi_oracle.rs test data: (main prefix, nb digits, expected pairs maximize /
# minimize), maxErrorExp 11, minSupportExp 7, two oracles.
CASES = [
    (P[0], 14, [(P[0], (0, 0, 1))], [(P[0], (0, 0, 1, 0, 1))]),
    (P[1], 13, [(P[1], (0, 0, 1)), (P[1], (0, 1))],
     [(P[1], (0, 0, 1, 1, 1, 1)), (P[1], (0, 1, 0, 0, 0))]),
    (P[2], 13, [(P[2], (0, 1)), (P[2], (1, 0, 0))],
     [(P[2], (0, 1, 1, 1, 1)), (P[2], (1, 0, 0, 0, 0, 0, 0))]),
    (P[3], 13, [((0, 1, 0), (0, 0, 1)), (P[3], P[3]), ((0, 1, 1), (1, 0, 0))],
     [((0, 1, 0, 0, 0, 0), (0, 0, 1, 1, 1, 1)), (P[3], P[3]),
      ((0, 1, 1, 1, 1, 1), (1, 0, 0, 0, 0, 0))]),
    (P[4], 15, [((0, 0, 1, 0, 0), (0, 0, 0, 1, 1)), (P[4], P[4]),
                ((0, 0, 1, 1, 1), (0, 1, 0, 0, 0))],
     [((0, 0, 1, 0, 0, 0, 0, 0), (0, 0, 0, 1, 1, 1, 1, 1)), (P[4], P[4]),
      ((0, 0, 1, 1, 1, 1, 1, 1), (0, 1, 0, 0, 0, 0, 0, 0))]),
    (P[5], 13, [(P[5], (1, 1))], [(P[5], (1, 1, 1, 1, 1))]),
    (P[6], 13, [(P[6], P[6]), ((0, 0, 1), (0, 1, 0))],
     [(P[6], P[6]), ((0, 0, 1, 1, 1, 1), (0, 1, 0, 0, 0, 0))]),
    (P[7], 14, [((1, 1, 0, 0), (1, 0, 1, 1)), (P[7], P[7])],
     [((1, 1, 0, 0, 0, 0, 0), (1, 0, 1, 1, 1, 1, 1)), (P[7], P[7])]),
]


@pytest.mark.parametrize("main, nb_digits, expected_max, expected_min", CASES)
def test_bounded_difference_two_oracles(main, nb_digits, expected_max, expected_min) -> None:
    for maximize, expected in ((True, expected_max), (False, expected_min)):
        got = outcome_combinations(nb_digits, 2, main, DifferenceParams(11, 7, maximize))
        assert [tuple(c) for c in got] == expected


def test_bounded_difference_three_oracles() -> None:
    got = outcome_combinations(3, 3, (0, 1, 0), DifferenceParams(2, 1, True))
    assert got == [[(0, 1, 0), (0,), (0,)], [(0, 1, 0), (0,), (1, 0)],
                   [(0, 1, 0), (1, 0), (0,)], [(0, 1, 0), (1, 0), (1, 0)]]


@settings(max_examples=60, deadline=None)
@given(st.integers(4, 12), st.data())
def test_bounded_difference_support_guarantees(nb_digits: int, data: st.DataObject) -> None:
    """Any secondary outcome within minSupport of the primary's is covered."""
    max_error_exp = data.draw(st.integers(1, nb_digits - 1))
    min_support_exp = data.draw(st.integers(0, max_error_exp - 1))
    maximize = data.draw(st.booleans())
    params = DifferenceParams(max_error_exp, min_support_exp, maximize)
    length = data.draw(st.integers(1, nb_digits))
    main = tuple(data.draw(st.lists(st.integers(0, 1), min_size=length, max_size=length)))
    combos = outcome_combinations(nb_digits, 2, main, params)
    top = (1 << nb_digits) - 1
    for primary in range(*((lambda a, b: (a, b + 1))(*prefix_interval(main, 2, nb_digits)))):
        for delta in (-(1 << min_support_exp), 0, 1 << min_support_exp):
            secondary = min(max(primary + delta, 0), top)
            hits = [c for c in combos
                    if prefix_interval(c[0], 2, nb_digits)[0] <= primary
                    <= prefix_interval(c[0], 2, nb_digits)[1]
                    and prefix_interval(c[1], 2, nb_digits)[0] <= secondary
                    <= prefix_interval(c[1], 2, nb_digits)[1]]
            assert hits, (primary, secondary)


def test_numeric_entries_order() -> None:
    ranges = [RangePayout(0, 5, 0, 10), RangePayout(5, 1019, 10, 0)]
    entries = list(numeric_entries(ranges, 2, 10, 3, 2))
    per_cet = [len(group_by_ignoring_digits(r.start, r.end, 2, 10)) for r in ranges]
    assert per_cet == [2, 9]
    assert [e.cet_index for e in entries] == [0] * 3 * 2 + [1] * 3 * 9
    assert [tuple(i for i, _ in e.paths) for e in entries[:3]] == [(0, 1), (0, 2), (1, 2)]
    assert all(e.paths[0][1] == e.paths[1][1] for e in entries)
