"""Batch verification of group equations in ONE multi-scalar multiplication (design.md
"Batch verification").

A ``Claim`` is an equation over secp256k1 that holds iff

    Σ_seg Σ_i fixed_seg[i]·F[start_seg + i]  +  Σ_j free_scalars[j]·free_points[j]
        +  Σ_s shared_scalar[s]·shared_point[s]  =  ∞

where F is a ``FixedBase`` (points reused across claims and precomputed once: G, the Bulletproof
generators G_i/H_i), the free terms are the claim's own points (proof points, commitments), and
the *shared* terms are points that often repeat across claims (value generators of the same
asset) and are merged by identity before the multiplication.

``BatchVerifier.verify()`` draws an independent uniformly random 128-bit weight w_c per claim
(``secrets``) and checks Σ_c w_c·claim_c = ∞ with one ``FixedBase`` MSM: fixed coefficients are
summed into one vector first (``scalar_vec_axpy_into``), so the fixed points cost once per batch.
A true claim contributes exactly ∞ whatever its weight, so a batch of true claims always passes;
if some claim is false the weighted sum is ∞ with probability at most 2^-128 (for a fixed false
claim, w_c ↦ w_c·P_c + Q is injective on the 128-bit range unless P_c = ∞).

``failures()`` names the false claims by bisection: split, re-verify halves, recurse. Because a
failing set holds at least one false claim, when the left half passes the right half is known to
fail and is split without re-verifying it; cost is O(k·log n) MSMs for k false claims.

Labels are caller-chosen (e.g. ``(tx_index, output_index, "rangeproof")``) and returned in the
order the claims were added.
"""

from __future__ import annotations

import secrets
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from ctplugin.secp256k1 import FixedBase, kernel
from ctplugin.secp256k1.params import N

_k = kernel.backend
_ONE = (1).to_bytes(32, "big")

Label = Hashable


@dataclass(frozen=True, slots=True)
class Claim:
    """One equation "… = ∞" (see the module docstring).

    ``base`` is the FixedBase the ``fixed`` segments index into; ``fixed`` holds
    ``(start, packed scalars)`` segments; ``free_scalars`` / ``free_points`` are packed kernel
    vectors of equal count; ``shared`` holds ``(packed point, scalar int)`` pairs. All scalars are
    already reduced (< n) and all points are valid kernel points (decoded or computed by it).
    """

    label: Label
    base: FixedBase | None
    fixed: tuple[tuple[int, bytes], ...]
    free_scalars: bytes
    free_points: bytes
    shared: tuple[tuple[bytes, int], ...] = ()

    def __post_init__(self) -> None:
        if len(self.free_scalars) % 32 or len(self.free_points) != 2 * len(self.free_scalars):
            raise ValueError("claim: free scalar and point vectors do not match")
        size = 0 if self.base is None else len(self.base)
        for start, vec in self.fixed:
            if start < 0 or len(vec) % 32 or start + len(vec) // 32 > size:
                raise ValueError("claim: fixed segment outside the fixed base")
        for point, scalar in self.shared:
            if len(point) != 64 or not 0 <= scalar < N:
                raise ValueError("claim: bad shared term")


def _random_weight() -> int:
    return secrets.randbits(128) or 1


class BatchVerifier:
    """Collects claims over one ``FixedBase`` and checks them all in one MSM.

    Claims over another fixed base (or none) are accepted too: their fixed segments are moved to
    free terms (correct, just slower).
    """

    __slots__ = ("_claims", "_foreign", "fixed")

    def __init__(self, fixed: FixedBase) -> None:
        self.fixed = fixed
        self._claims: list[Claim] = []
        self._foreign: dict[int, bytes] = {}

    def add(self, claim: Claim) -> None:
        self._claims.append(claim)

    def extend(self, claims: Iterable[Claim]) -> None:
        self._claims.extend(claims)

    def __len__(self) -> int:
        return len(self._claims)

    @property
    def claims(self) -> tuple[Claim, ...]:
        return tuple(self._claims)

    def verify(self) -> bool:
        """True iff (with probability ≥ 1 − 2^-128) every claim holds. Empty batch: True."""
        return self._check(self._claims)

    def failures(self) -> list[Label]:
        """Labels of the false claims, in insertion order (empty if the batch verifies)."""
        out: list[Label] = []
        self._bisect(self._claims, known_failing=False, out=out)
        return out

    # --- internals ---------------------------------------------------------------------------

    def _bisect(self, claims: Sequence[Claim], known_failing: bool, out: list[Label]) -> None:
        if not known_failing and self._check(claims):
            return
        if len(claims) == 1:
            out.append(claims[0].label)
            return
        mid = len(claims) // 2
        left, right = claims[:mid], claims[mid:]
        if self._check(left):
            self._bisect(right, known_failing=True, out=out)
        else:
            self._bisect(left, known_failing=True, out=out)
            self._bisect(right, known_failing=False, out=out)

    def _base_points(self, base: FixedBase) -> bytes:
        packed = self._foreign.get(id(base))
        if packed is None:
            packed = b"".join(p.packed for p in base.points)
            self._foreign[id(base)] = packed
        return packed

    def _check(self, claims: Sequence[Claim]) -> bool:
        if not claims:
            return True
        single = len(claims) == 1
        fixed = self.fixed
        scale, axpy = _k.scalar_vec_scale, _k.scalar_vec_axpy_into
        acc: dict[tuple[int, int], bytearray] = {}
        free_s: list[bytes] = []
        free_p: list[bytes] = []
        shared: dict[bytes, int] = {}
        for claim in claims:
            w = 1 if single else _random_weight()
            wb = w.to_bytes(32, "big")
            if claim.base is fixed:
                for start, vec in claim.fixed:
                    key = (start, len(vec) // 32)
                    a = acc.get(key)
                    if a is None:
                        acc[key] = bytearray(vec if single else scale(vec, wb))
                    else:
                        axpy(a, wb, vec)
            elif claim.base is not None:
                points = self._base_points(claim.base)
                for start, vec in claim.fixed:
                    free_s.append(vec if single else scale(vec, wb))
                    free_p.append(points[64 * start: 64 * start + 2 * len(vec)])
            if claim.free_scalars:
                free_s.append(claim.free_scalars if single else scale(claim.free_scalars, wb))
                free_p.append(claim.free_points)
            for point, s in claim.shared:
                shared[point] = (shared.get(point, 0) + w * s) % N
        for point, s in shared.items():
            free_s.append(s.to_bytes(32, "big"))
            free_p.append(point)
        total = _combine_segments(acc)
        result = fixed.table.msm_var(total, b"".join(free_s), b"".join(free_p))
        return result == kernel.INFINITY


def _combine_segments(acc: dict[tuple[int, int], bytearray]) -> bytes:
    """Sum the per-segment accumulators into one scalar vector over the fixed base."""
    if not acc:
        return b""
    if len(acc) == 1:
        ((start, _), vec), = acc.items()
        return bytes(32 * start) + bytes(vec)
    length = max(start + n for start, n in acc)
    # Disjoint segments (the usual case: h‖G_i and H_i) are laid side by side; overlapping
    # ones are added with axpy.
    ordered = sorted(acc.items())
    disjoint = all(ordered[i][0][0] + ordered[i][0][1] <= ordered[i + 1][0][0]
                   for i in range(len(ordered) - 1))
    if disjoint:
        parts: list[bytes] = []
        pos = 0
        for (start, n), vec in ordered:
            parts.append(bytes(32 * (start - pos)))
            parts.append(bytes(vec))
            pos = start + n
        return b"".join(parts)
    total = bytearray(32 * length)
    for (start, n), vec in ordered:
        padded = bytes(32 * start) + bytes(vec) + bytes(32 * (length - start - n))
        _k.scalar_vec_axpy_into(total, _ONE, padded)
    return bytes(total)
