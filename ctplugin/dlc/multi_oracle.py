"""Several oracles: exact t-of-n and the bounded-difference variant (dlcspecs MultiOracle.md).

Orderings follow rust-dlc so adaptor signatures line up with its messages:

- oracle combinations are the t-subsets of the announcement order in lexicographic order;
- for each CET, for each of its digit prefixes (``compression``), for each combination, one
  adaptor point (exact) or one per prefix combination of ``outcome_combinations`` (bounded
  difference), in that nesting.

Bounded difference (maxErrorExp, minSupportExp, maximize_coverage; base 2 only): the first oracle
of a combination is primary and uses the CET's prefix; the others get prefixes that accept any
outcome within the support of the primary's interval [start, end]: always within 2^minSupportExp,
never beyond 2^maxErrorExp. ``outcome_combinations`` returns, for one primary prefix, the list of
per-oracle prefix tuples (primary first):

- interval shorter than maxError, inside its maxError-aligned block [L, L + maxError − 1]:
  * far from both block edges (start − L ≥ minSupport and end ≤ L + maxError − 1 − minSupport):
    one combination; secondaries use the block's prefix (maximize) or the longest prefix common to
    start − minSupport and end + minSupport;
  * near the left edge: the block (or the first n − maxErrorExp digits of end + minSupport then its
    leading 0s) and, unless L = 0, the half block left of L (or the digits of start − minSupport
    then its leading 1s): every assignment of these two prefixes to the secondaries
    (2^(t−1) combinations, the lesser prefix first per the binary counter, most significant
    secondary last);
  * near the right edge: symmetric, unless the block ends at the maximum outcome;
- interval at least maxError long: combinations across the left boundary (unless start = 0), the
  primary interval itself for everyone, then across the right boundary (unless end is the maximum),
  where boundary prefixes ignore maxErrorExp − 1 digits (maximize) or minSupportExp digits, and the
  combination with all secondaries equal to the primary is left out (it is the middle one).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations, takewhile

from ctplugin.dlc.compression import group_by_ignoring_digits
from ctplugin.dlc.digits import decompose, prefix_interval
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.payout import RangePayout

Prefix = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class DifferenceParams:
    max_error_exp: int
    min_support_exp: int
    maximize_coverage: bool

    def validate(self, nb_digits: int) -> None:
        if not 0 <= self.min_support_exp < self.max_error_exp <= nb_digits:
            raise DlcError("bad-oracle-params",
                           "need 0 <= minSupportExp < maxErrorExp <= number of digits")


def oracle_combinations(nb_oracles: int, threshold: int) -> list[tuple[int, ...]]:
    """The t-subsets of range(n) in lexicographic order (rust-dlc ``CombinationIterator``)."""
    if not 1 <= threshold <= nb_oracles:
        raise DlcError("bad-threshold", f"threshold {threshold} with {nb_oracles} oracles")
    return list(combinations(range(nb_oracles), threshold))


def _digits_of(value: int, nb_digits: int, ignored: int) -> Prefix:
    return decompose(value, 2, nb_digits)[: nb_digits - ignored]


def _single(main: Prefix, secondary: Prefix, nb_oracles: int) -> list[Prefix]:
    return [main] + [secondary] * (nb_oracles - 1)


def _double(main: Prefix, one: Prefix, other: Prefix, nb_oracles: int) -> list[list[Prefix]]:
    lesser, greater = (one, other) if one <= other else (other, one)
    out = []
    for counter in range(1 << (nb_oracles - 1)):
        secondaries = [greater if counter >> bit & 1 else lesser for bit in range(nb_oracles - 1)]
        out.append([main, *reversed(secondaries)])
    return out


def _double_restricted(main: Prefix, other: Prefix, nb_oracles: int) -> list[list[Prefix]]:
    """Like ``_double`` with the primary's own prefix as one choice, minus all-primary."""
    combos = _double(main, main, other, nb_oracles)
    return combos[:-1] if main > other else combos[1:]


def outcome_combinations(nb_digits: int, nb_oracles: int, main: Prefix,
                         params: DifferenceParams) -> list[list[Prefix]]:
    """Per-oracle prefix tuples covering primary prefix ``main`` (module docstring)."""
    if nb_oracles < 2:
        return [[main]]
    max_error_exp, min_support_exp = params.max_error_exp, params.min_support_exp
    maximize = params.maximize_coverage
    max_num = (1 << nb_digits) - 1
    max_error, min_support = 1 << max_error_exp, 1 << min_support_exp
    half_max_error = max_error >> 1
    start, end = prefix_interval(main, 2, nb_digits)

    def left_covering() -> Prefix:
        digits = decompose(start - min_support, 2, nb_digits)
        cut = nb_digits - max_error_exp
        return digits[:cut] + tuple(takewhile(lambda d: d == 1, digits[cut:]))

    def right_covering() -> Prefix:
        digits = decompose(end + min_support, 2, nb_digits)
        cut = nb_digits - max_error_exp
        return digits[:cut] + tuple(takewhile(lambda d: d == 0, digits[cut:]))

    if nb_digits - len(main) < max_error_exp:  # interval shorter than maxError
        left_bound = start & ~(max_error - 1)
        right_bound = left_bound | (max_error - 1)
        block = _digits_of(left_bound, nb_digits, max_error_exp)
        if start - left_bound >= min_support and end <= right_bound - min_support:
            if maximize:
                support = block
            else:
                low = decompose(start - min_support, 2, nb_digits)
                high = decompose(end + min_support, 2, nb_digits)
                support = tuple(a for a, _ in takewhile(lambda p: p[0] == p[1], zip(low, high)))
            return [_single(main, support, nb_oracles)]
        if start - left_bound < min_support:
            right = block if maximize else right_covering()
            if left_bound == 0:
                return [_single(main, right, nb_oracles)]
            left = (_digits_of(left_bound - half_max_error, nb_digits, max_error_exp - 1)
                    if maximize else left_covering())
            return _double(main, right, left, nb_oracles)
        left = block if maximize else left_covering()
        if right_bound == max_num:
            return [_single(main, left, nb_oracles)]
        right = (_digits_of(right_bound + 1, nb_digits, max_error_exp - 1)
                 if maximize else right_covering())
        return _double(main, left, right, nb_oracles)

    ignored = max_error_exp - 1 if maximize else min_support_exp
    step = half_max_error if maximize else min_support
    result: list[list[Prefix]] = []
    if start != 0:
        inner = _digits_of(start, nb_digits, ignored)
        outer = _digits_of(start - step, nb_digits, ignored)
        result += _double_restricted(inner, outer, nb_oracles)
    result.append(_single(main, main, nb_oracles))
    if end != max_num:
        inner = _digits_of(end - step + 1, nb_digits, ignored)
        outer = _digits_of(end + 1, nb_digits, ignored)
        result += _double_restricted(inner, outer, nb_oracles)
    return result


@dataclass(frozen=True, slots=True)
class AdaptorEntry:
    """One adaptor signature: which CET, and which (oracle, prefix) pairs make its point."""

    cet_index: int
    paths: tuple[tuple[int, Prefix], ...]


def numeric_entries(ranges: Sequence[RangePayout], base: int, nb_digits: int, nb_oracles: int,
                    threshold: int, params: DifferenceParams | None = None
                    ) -> Iterator[AdaptorEntry]:
    """Every adaptor signature of a numeric contract, in rust-dlc's order."""
    combos = oracle_combinations(nb_oracles, threshold)
    if params is not None:
        if base != 2:
            raise DlcError("bad-oracle-params", "bounded difference needs base 2")
        params.validate(nb_digits)
    for cet_index, payout_range in enumerate(ranges):
        if payout_range.count <= 0:
            raise DlcError("bad-range", "empty payout range")
        for prefix in group_by_ignoring_digits(payout_range.start, payout_range.end, base,
                                               nb_digits):
            for combo in combos:
                if params is None or threshold == 1:
                    yield AdaptorEntry(cet_index, tuple((i, prefix) for i in combo))
                    continue
                for prefixes in outcome_combinations(nb_digits, threshold, prefix, params):
                    yield AdaptorEntry(cet_index, tuple(zip(combo, prefixes)))
