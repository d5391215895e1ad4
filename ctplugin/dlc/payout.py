"""Payout curves, rounding and the CET set (dlcspecs PayoutCurve.md, NumericOutcome.md).

All payouts are the offerer's; the accepter gets total_collateral − offer payout. Evaluation uses
IEEE-754 doubles exactly like rust-dlc (Python floats are doubles, and every operation below is the
same operation in the same order), so both sides derive the same CETs:

- polynomial piece through points (x_k, y_k), y_k = payout + extra_precision/2^16: Lagrange
  interpolation; with exactly two points a line (slope form, constant if both payouts are equal);
- hyperbola piece: with t = x − translate_outcome and r = ±sqrt(t² − 4ab) (sign by
  ``use_positive_piece``): y = c·(t + r)/(2a) + 2ad/(t + r) + translate_payout;
- rounding with modulus R at outcome x (R from the last interval starting at or before x):
  m = y mod R; y rounds to y − m + R if m ≥ R/2, else y − m (then to the nearest integer, halves
  away from zero), and never above total_collateral;
- the CET set: walking the outcomes in order, consecutive outcomes with the same rounded payout
  form one range (maximal constant-payout intervals); a piece whose two points have equal payouts
  is one range without evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ctplugin.dlc.errors import DlcError

MAX_OUTCOMES_EVALUATED = 1 << 24
"""Refuse payout functions that would need more evaluations than this (bounded work)."""


def _round_half_away(value: float) -> int:
    """Rust's ``f64::round`` for non-negative finite values."""
    floor = math.floor(value)
    return int(floor) + (1 if value - floor >= 0.5 else 0)


def _ieee_div(numerator: float, denominator: float) -> float:
    """IEEE-754 division (Rust's f64 ``/``): x/0 is ±inf, 0/0 and nan/0 are nan."""
    if denominator != 0.0:
        return numerator / denominator
    if numerator == 0.0 or math.isnan(numerator):
        return math.nan
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


@dataclass(frozen=True, slots=True)
class PayoutPoint:
    event_outcome: int
    outcome_payout: int
    extra_precision: int = 0

    @property
    def value(self) -> float:
        return float(self.outcome_payout) + float(self.extra_precision) / float(1 << 16)


@dataclass(frozen=True, slots=True)
class PolynomialPiece:
    points: tuple[PayoutPoint, ...]
    """Left end point, interior points, right end point (ascending outcomes)."""

    def __post_init__(self) -> None:
        if len(self.points) < 2 or any(
                a.event_outcome >= b.event_outcome for a, b in zip(self.points, self.points[1:])):
            raise DlcError("bad-payout-curve",
                           "polynomial points must have strictly ascending outcomes")

    @property
    def first(self) -> PayoutPoint:
        return self.points[0]

    @property
    def last(self) -> PayoutPoint:
        return self.points[-1]

    @property
    def is_constant_line(self) -> bool:
        first, last = self.points[0], self.points[-1]
        return len(self.points) == 2 and first.outcome_payout == last.outcome_payout

    def evaluate(self, outcome: int) -> float:
        if len(self.points) == 2:
            left, right = self.points
            left_sats, right_sats = float(left.outcome_payout), float(right.outcome_payout)
            if left.outcome_payout == right.outcome_payout:
                return right_sats
            slope = (right_sats - left_sats) / float(right.event_outcome - left.event_outcome)
            return float(outcome - left.event_outcome) * slope + left_sats
        x = float(outcome)
        result = 0.0
        for i, pi in enumerate(self.points):
            term = pi.value
            xi = float(pi.event_outcome)
            for j, pj in enumerate(self.points):
                if i != j:
                    xj = float(pj.event_outcome)
                    term *= (x - xj) / (xi - xj)
            result += term
        return result


@dataclass(frozen=True, slots=True)
class HyperbolaPiece:
    left: PayoutPoint
    right: PayoutPoint
    use_positive_piece: bool
    translate_outcome: float
    translate_payout: float
    a: float
    b: float
    c: float
    d: float

    def __post_init__(self) -> None:
        if self.a * self.d == self.b * self.c:
            raise DlcError("bad-payout-curve", "hyperbola needs a·d != b·c")
        if self.left.event_outcome >= self.right.event_outcome:
            raise DlcError("bad-payout-curve", "hyperbola end points must ascend")
        if not all(math.isfinite(v) for v in (self.translate_outcome, self.translate_payout,
                                               self.a, self.b, self.c, self.d)):
            raise DlcError("bad-payout-curve", "hyperbola parameters must be finite")

    @property
    def first(self) -> PayoutPoint:
        return self.left

    @property
    def last(self) -> PayoutPoint:
        return self.right

    is_constant_line = False

    def evaluate(self, outcome: int) -> float:
        t = float(outcome) - self.translate_outcome
        radicand = t * t - 4.0 * self.a * self.b
        root = math.sqrt(radicand) if radicand >= 0 else math.nan
        if not self.use_positive_piece:
            root = -root
        with_root = t + root
        first = _ieee_div(self.c * with_root, 2.0 * self.a)
        second = _ieee_div(2.0 * self.a * self.d, with_root)
        return first + second + self.translate_payout


PayoutPiece = PolynomialPiece | HyperbolaPiece


@dataclass(frozen=True, slots=True)
class RoundingInterval:
    begin_interval: int
    rounding_mod: int


@dataclass(frozen=True, slots=True)
class RoundingIntervals:
    intervals: tuple[RoundingInterval, ...]

    def validate(self) -> None:
        if not self.intervals:
            raise DlcError("bad-rounding", "empty rounding intervals")
        if self.intervals[0].begin_interval != 0:
            raise DlcError("bad-rounding", "rounding intervals must start at 0")
        if any(a.begin_interval >= b.begin_interval
               for a, b in zip(self.intervals, self.intervals[1:])):
            raise DlcError("bad-rounding", "rounding interval starts must strictly increase")
        if any(i.rounding_mod < 1 for i in self.intervals):
            raise DlcError("bad-rounding", "rounding modulus must be at least 1")

    def modulus(self, outcome: int) -> int:
        current = self.intervals[0].rounding_mod
        for interval in self.intervals:
            if interval.begin_interval > outcome:
                break
            current = interval.rounding_mod
        return current

    def round(self, outcome: int, payout: float) -> int:
        modulus = float(self.modulus(outcome))
        m = math.fmod(payout, modulus)
        if payout < 0:
            m += modulus
        if m >= modulus / 2.0:
            return _round_half_away(payout + modulus - m)
        return _round_half_away(payout - m)


@dataclass(frozen=True, slots=True)
class RangePayout:
    """One CET: outcomes [start, start + count − 1] all pay ``offer`` to the offerer."""

    start: int
    count: int
    offer: int
    accept: int

    @property
    def end(self) -> int:
        return self.start + self.count - 1


@dataclass(frozen=True, slots=True)
class PayoutFunction:
    pieces: tuple[PayoutPiece, ...]

    def validate(self, max_outcome: int) -> None:
        if not self.pieces:
            raise DlcError("bad-payout-curve", "payout function has no pieces")
        for left, right in zip(self.pieces, self.pieces[1:]):
            if left.last != right.first:
                raise DlcError("payout-not-continuous",
                               f"piece ending at outcome {left.last.event_outcome} does not meet "
                               f"the next piece starting at {right.first.event_outcome}")
        if self.pieces[0].first.event_outcome != 0:
            raise DlcError("payout-not-covering", "payout function must start at outcome 0")
        if self.pieces[-1].last.event_outcome != max_outcome:
            raise DlcError("payout-not-covering",
                           f"payout function must end at the maximum outcome {max_outcome}")

    def range_payouts(self, total_collateral: int,
                      rounding: RoundingIntervals) -> list[RangePayout]:
        """The CET set: maximal constant-payout outcome ranges, ascending."""
        span = self.pieces[-1].last.event_outcome - self.pieces[0].first.event_outcome
        if span > MAX_OUTCOMES_EVALUATED:
            raise DlcError("too-many-outcomes", f"{span} outcomes to evaluate")
        ranges: list[list[int]] = []  # [start, count, offer payout]

        def rounded(piece: PayoutPiece, outcome: int) -> int:
            value = piece.evaluate(outcome)
            if math.copysign(1.0, value) < 0 or (value != 0.0 and not math.isfinite(value)) or (
                    value != 0.0 and abs(value) < 2.2250738585072014e-308):
                raise DlcError("bad-payout-curve",
                               f"payout at outcome {outcome} evaluates to {value}")
            if _round_half_away(value) > total_collateral:
                raise DlcError("payout-above-collateral",
                               f"payout at outcome {outcome} exceeds the total collateral")
            return min(rounding.round(outcome, value), total_collateral)

        for piece in self.pieces:
            first = piece.first.event_outcome
            if not ranges:
                ranges.append([first, 1, rounded(piece, first)])
            current = ranges.pop()
            if piece.is_constant_line:
                current[1] += piece.last.event_outcome - first
                ranges.append(current)
                continue
            for outcome in range(first + 1, piece.last.event_outcome + 1):
                payout = rounded(piece, outcome)
                if payout == current[2]:
                    current[1] += 1
                else:
                    ranges.append(current)
                    current = [outcome, 1, payout]
            ranges.append(current)
        return [RangePayout(s, c, p, total_collateral - p) for s, c, p in ranges]


def validate_numeric(function: PayoutFunction, rounding: RoundingIntervals, base: int,
                     nb_digits: int, total_collateral: int) -> list[RangePayout]:
    """Check a numeric contract descriptor against its event and return its CET set."""
    rounding.validate()
    function.validate(base**nb_digits - 1)
    return function.range_payouts(total_collateral, rounding)


def enum_payouts(outcomes: Sequence[tuple[str, int]], event_outcomes: Sequence[str],
                 total_collateral: int, accept_payouts: Sequence[int] | None = None
                 ) -> list[tuple[str, int, int]]:
    """(outcome, offer payout, accept payout) per enum outcome, checked against the event."""
    if sorted(o for o, _ in outcomes) != sorted(event_outcomes):
        raise DlcError("enum-outcomes-mismatch",
                       "every oracle outcome must have exactly one payout")
    result = []
    for index, (outcome, payout) in enumerate(outcomes):
        if accept_payouts is not None and payout + accept_payouts[index] != total_collateral:
            raise DlcError("payout-sum-mismatch",
                           f"payouts of {outcome!r} do not add up to the total collateral")
        if not 0 <= payout <= total_collateral:
            raise DlcError("payout-above-collateral", f"payout of {outcome!r} exceeds collateral")
        result.append((outcome, payout, total_collateral - payout))
    return result
