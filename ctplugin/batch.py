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
summed into one native ``ScalarAccumulator`` first, so the fixed points cost once per batch.
A true claim contributes exactly ∞ whatever its weight, so a batch of true claims always passes;
if some claim is false the weighted sum is ∞ with probability at most 2^-128 (for a fixed false
claim, w_c ↦ w_c·P_c + Q is injective on the 128-bit range unless P_c = ∞).

Culprits by bisection (split, re-verify halves): ``first_failure()`` names the FIRST false claim
(in insertion order) with O(log n) MSMs of halving size, about two batch verifications in all
however many claims are false, so a batch full of bad claims costs no more to reject than one
with a single bad claim; ``failures()`` names every false claim (recurse into both halves), in
O(k·log n) MSMs for k false claims. Because a failing set holds at least one false claim, when
the left half passes the right half is known to fail and is split without re-verifying it.

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

Label = Hashable
_ONE = (1).to_bytes(32, "big")


@dataclass(frozen=True, slots=True)
class Claim:
    """One equation "… = ∞" over a fixed base F (see the module docstring):

        Σ_(start, c, v) in fixed  c·Σ_i v[i]·F[start + i]
      + Σ_(start, count, s) in fixed_const  s·Σ_{i<count} F[start + i]
      + Σ_j free_scalars[j]·free_points[j]  +  Σ_(P, s) in shared  s·P   =  ∞

    ``fixed`` segments are (start index, multiplier int, packed scalar vector) — the multiplier
    lets a claim reuse one kernel vector for several generator ranges without scaling it
    first; ``fixed_const`` adds one scalar to a run of fixed coefficients (e.g. the −z on every
    G_i of a range proof). ``free_scalars`` / ``free_points`` are packed kernel vectors of equal
    count; ``shared`` holds (packed point, scalar int) pairs merged across claims by identity.
    ``base`` is the FixedBase the indices refer to. Scalars must be reduced (< n), points valid
    kernel points (decoded or computed by the kernel).
    """

    label: Label
    base: FixedBase | None
    fixed: tuple[tuple[int, int, bytes], ...] = ()
    free_scalars: bytes = b""
    free_points: bytes = b""
    shared: tuple[tuple[bytes, int], ...] = ()
    fixed_const: tuple[tuple[int, int, int], ...] = ()

    def __post_init__(self) -> None:
        if len(self.free_scalars) % 32 or len(self.free_points) != 2 * len(self.free_scalars):
            raise ValueError("claim: free scalar and point vectors do not match")
        size = 0 if self.base is None else len(self.base)
        for start, mult, vec in self.fixed:
            if start < 0 or len(vec) % 32 or start + len(vec) // 32 > size or not 0 <= mult < N:
                raise ValueError("claim: bad fixed segment")
        for start, count, scalar in self.fixed_const:
            if start < 0 or count < 0 or start + count > size or not 0 <= scalar < N:
                raise ValueError("claim: bad fixed constant segment")
        for point, scalar in self.shared:
            if len(point) != 64 or not 0 <= scalar < N:
                raise ValueError("claim: bad shared term")

    @classmethod
    def trusted(cls, label: Label, base: FixedBase | None,
                fixed: tuple[tuple[int, int, bytes], ...], free_scalars: bytes,
                free_points: bytes, shared: tuple[tuple[bytes, int], ...],
                fixed_const: tuple[tuple[int, int, int], ...]) -> Claim:
        """Construct without re-checking the invariants, for builders that guarantee them by
        construction (the range-proof verifier); a per-proof saving on the batch hot path."""
        claim = object.__new__(cls)
        _set_label(claim, label)
        _set_base(claim, base)
        _set_fixed(claim, fixed)
        _set_free_scalars(claim, free_scalars)
        _set_free_points(claim, free_points)
        _set_shared(claim, shared)
        _set_fixed_const(claim, fixed_const)
        return claim


# Slot setters bypass the frozen dataclass's __setattr__ (for ``Claim.trusted`` only).
_set_label = Claim.__dict__["label"].__set__
_set_base = Claim.__dict__["base"].__set__
_set_fixed = Claim.__dict__["fixed"].__set__
_set_free_scalars = Claim.__dict__["free_scalars"].__set__
_set_free_points = Claim.__dict__["free_points"].__set__
_set_shared = Claim.__dict__["shared"].__set__
_set_fixed_const = Claim.__dict__["fixed_const"].__set__


def _random_weights(count: int) -> list[int]:
    """Independent uniform non-zero 128-bit weights, from one call to the OS generator."""
    pool = secrets.token_bytes(16 * count)
    return [int.from_bytes(pool[16 * i: 16 * i + 16], "big") or 1 for i in range(count)]


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

    def first_failure(self, known_failing: bool = False) -> Label | None:
        """The label of the first false claim in insertion order, or None if the batch
        verifies. ``known_failing``: the caller just saw ``verify()`` fail (it is not re-run).

        Halving: if the left half verifies, the first false claim is in the right half, else in
        the left. A left half holding a false claim passes with probability 2^-128; the search
        then ends on a true claim, which is detected (a claim alone is checked with weight 1)
        and answered by checking the claims one by one."""
        claims = self._claims
        if not known_failing and self._check(claims):
            return None
        lo: Sequence[Claim] = claims
        while len(lo) > 1:
            mid = len(lo) // 2
            lo = lo[mid:] if self._check(lo[:mid]) else lo[:mid]
        if lo and not self._check(lo):
            return lo[0].label
        for claim in claims:  # only after a 2^-128 false pass above
            if not self._check((claim,)):
                return claim.label
        return None

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
        fixed = self.fixed
        acc = None  # the fixed-base coefficients Σ_c w_c·(…), kept native between claims
        consts: dict[tuple[int, int], int] = {}
        # Free terms: raw scalar vectors and their weights (one 32-byte weight per scalar),
        # multiplied in ONE kernel call at the end instead of one scaling per claim.
        raw_s: list[bytes] = []
        raw_w: list[bytes] = []
        free_p: list[bytes] = []
        shared: dict[bytes, int] = {}
        weights = [1] if len(claims) == 1 else _random_weights(len(claims))
        for claim, w in zip(claims, weights):
            if claim.base is fixed:
                if claim.fixed:
                    if acc is None:
                        acc = _k.ScalarAccumulator(len(fixed))
                    acc.axpy_terms(w.to_bytes(32, "big"),
                                   [(start, mult.to_bytes(32, "big"), vec)
                                    for start, mult, vec in claim.fixed])
                for start, count, value in claim.fixed_const:
                    key = (start, count)
                    consts[key] = consts.get(key, 0) + w * value
            elif claim.base is not None:  # another base: its points become free terms
                points = self._base_points(claim.base)
                for start, mult, vec in claim.fixed:
                    raw_s.append(vec)
                    raw_w.append((w * mult % N).to_bytes(32, "big") * (len(vec) >> 5))
                    free_p.append(points[64 * start: 64 * start + 2 * len(vec)])
                for start, count, value in claim.fixed_const:
                    raw_s.append((w * value % N).to_bytes(32, "big") * count)
                    raw_w.append(_ONE * count)
                    free_p.append(points[64 * start: 64 * (start + count)])
            if claim.free_scalars:
                raw_s.append(claim.free_scalars)
                raw_w.append(w.to_bytes(32, "big") * (len(claim.free_scalars) >> 5))
                free_p.append(claim.free_points)
        for claim, w in zip(claims, weights):
            for point, s in claim.shared:
                shared[point] = shared.get(point, 0) + w * s
        free_s = [_k.scalar_vec_mul(b"".join(raw_s), b"".join(raw_w))] if raw_s else []
        for point, s in shared.items():
            free_s.append((s % N).to_bytes(32, "big"))
            free_p.append(point)
        if consts:
            if acc is None:
                acc = _k.ScalarAccumulator(len(fixed))
            for (start, count), value in consts.items():
                acc.add_const(start, count, (value % N).to_bytes(32, "big"))
        total = b"" if acc is None else acc.to_bytes()
        result = fixed.table.msm_var(total, b"".join(free_s), b"".join(free_p))
        return result == kernel.INFINITY
