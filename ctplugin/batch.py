"""Batch verification of group equations in ONE multi-scalar multiplication (docs/design.md
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

A ``ClaimGroup`` is many claims over one fixed base whose terms a kernel entry produces
together (every range proof of a block: ``ctplugin.bulletproofs.RangeProofClaims``): it is added
like claims — each member is one claim with its own label and its own random weight — but its
members' terms come from one native call per check instead of one Python object per claim.

Culprits by bisection (split, re-verify halves): ``first_failure()`` names the FIRST false claim
(in insertion order, or in the order of a ``key`` on labels) with O(log n) MSMs of halving size,
about two batch verifications in all however many claims are false, so a batch full of bad
claims costs no more to reject than one with a single bad claim; ``failures()`` names every
false claim (recurse into both halves), in O(k·log n) MSMs for k false claims. Because a failing
set holds at least one false claim, when the left half passes the right half is known to fail
and is split without re-verifying it.

Labels are caller-chosen (e.g. ``(tx_index, output_index, "rangeproof")``) and returned in the
order the claims were added.
"""

from __future__ import annotations

import copy
import secrets
from array import array
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ctplugin.errors import EncodingError
from ctplugin.secp256k1 import FixedBase, kernel
from ctplugin.secp256k1.params import N

_k = kernel.backend

Label = Hashable
_ONE = (1).to_bytes(32, "big")
_ONE16 = (1).to_bytes(16, "big")


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
            raise EncodingError("claim: free scalar and point vectors do not match",
                                reason="count-mismatch")
        size = 0 if self.base is None else len(self.base)
        for start, mult, vec in self.fixed:
            if start < 0 or len(vec) % 32 or start + len(vec) // 32 > size or not 0 <= mult < N:
                raise EncodingError("claim: bad fixed segment", reason="index-range")
        for start, count, scalar in self.fixed_const:
            if start < 0 or count < 0 or start + count > size or not 0 <= scalar < N:
                raise EncodingError("claim: bad fixed constant segment", reason="index-range")
        for point, scalar in self.shared:
            if len(point) != 64 or not 0 <= scalar < N:
                raise EncodingError("claim: bad shared term", reason="structure")

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


class GroupTerms(NamedTuple):
    """What a ``ClaimGroup`` contributes to one check besides its fixed coefficients: weighted
    free scalars with their points, and shared points (packed, 64 bytes each) with the weighted
    sums of their scalars (packed, 32 bytes each, one per shared point)."""

    free_scalars: bytes
    free_points: bytes
    shared_points: bytes
    shared_scalars: bytes


class ClaimGroup:
    """Claims over ``base`` prepared together by a kernel entry, one per label.

    Subclasses implement ``terms``: for the members (indices into ``labels``, a packed array of
    little-endian u32, in check order, repeats allowed) with their weights (one 32-byte scalar
    each), add Σ w·(fixed coefficients) to the native ``ScalarAccumulator`` ``acc`` (indices of
    ``base``) and return the members' other terms, weighted. Member i's claim must be exactly the
    equation it would be as a ``Claim``: the batch treats both alike.
    """

    __slots__ = ("base", "labels")

    def __init__(self, base: FixedBase, labels: Sequence[Label]) -> None:
        self.base = base
        self.labels = tuple(labels)

    def __len__(self) -> int:
        return len(self.labels)

    def terms(self, acc: Any, members: bytes, weights: bytes) -> GroupTerms:
        raise NotImplementedError

    def relabelled(self, labels: Sequence[Label]) -> ClaimGroup:
        """The same claims under other labels (one per member; the prepared data is shared)."""
        if len(labels) != len(self.labels):
            raise EncodingError("one label per member", reason="count-mismatch")
        group = copy.copy(self)
        group.labels = tuple(labels)
        return group

    def subset(self, indices: Sequence[int]) -> ClaimGroup:
        """The members at ``indices`` (in that order) as a group of their own, over the same
        prepared data (a verifier that prepared more claims than it ended up needing)."""
        if len(indices) == len(self.labels) and list(indices) == list(range(len(indices))):
            return self
        return _Members(self, indices)


class _Members(ClaimGroup):
    """``ClaimGroup.subset``: member k is member ``index[k]`` of ``group``."""

    __slots__ = ("_index", "group")

    def __init__(self, group: ClaimGroup, indices: Sequence[int]) -> None:
        if any(not 0 <= i < len(group.labels) for i in indices):
            raise EncodingError("subset: member index out of range", reason="index-range")
        super().__init__(group.base, [group.labels[i] for i in indices])
        self.group = group
        self._index = array("I", indices)

    def terms(self, acc: Any, members: bytes, weights: bytes) -> GroupTerms:
        mine = array("I")
        mine.frombytes(members)  # little-endian u32 (the kernel's order; x86-64 and arm64)
        index = self._index
        return self.group.terms(acc, array("I", [index[k] for k in mine]).tobytes(), weights)


_Item = Claim | tuple[ClaimGroup, int]
"""A batch entry: a claim, or member i of a group."""


def _label(item: _Item) -> Label:
    if isinstance(item, tuple):
        return item[0].labels[item[1]]
    return item.label


_ZERO16 = bytes(16)


def _random_weights(count: int) -> bytes:
    """Independent uniform 128-bit weights (16 bytes each, big-endian), none zero, from one call
    to the OS generator."""
    while True:
        pool = secrets.token_bytes(16 * count)
        if all(pool[i: i + 16] != _ZERO16 for i in range(0, len(pool), 16)):
            return pool


class BatchVerifier:
    """Collects claims (and claim groups) over one ``FixedBase`` and checks them all in one MSM.

    Claims over another fixed base (or none) are accepted too: their fixed segments are moved to
    free terms (correct, just slower).
    """

    __slots__ = ("_foreign", "_items", "fixed")

    def __init__(self, fixed: FixedBase) -> None:
        self.fixed = fixed
        self._items: list[_Item] = []
        self._foreign: dict[int, bytes] = {}

    def add(self, claim: Claim | ClaimGroup) -> None:
        """Add a claim, or every member of a group (in its order)."""
        if isinstance(claim, ClaimGroup):
            self._items.extend((claim, i) for i in range(len(claim)))
        else:
            self._items.append(claim)

    def extend(self, claims: Iterable[Claim | ClaimGroup]) -> None:
        for claim in claims:
            self.add(claim)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def labels(self) -> tuple[Label, ...]:
        """Every claim's label, in insertion order."""
        return tuple(_label(item) for item in self._items)

    def verify(self) -> bool:
        """True iff (with probability ≥ 1 − 2^-128) every claim holds. Empty batch: True."""
        return self._check(self._items)

    def failures(self) -> list[Label]:
        """Labels of the false claims, in insertion order (empty if the batch verifies)."""
        out: list[Label] = []
        self._bisect(self._items, known_failing=False, out=out)
        return out

    def first_failure(self, known_failing: bool = False,
                      key: Callable[[Label], Any] | None = None) -> Label | None:
        """The label of the first false claim in insertion order (or in ``key(label)`` order,
        insertion order among equal keys), or None if the batch verifies. ``known_failing``: the
        caller just saw ``verify()`` fail (it is not re-run).

        Halving: if the left half verifies, the first false claim is in the right half, else in
        the left. A left half holding a false claim passes with probability 2^-128; the search
        then ends on a true claim, which is detected (a claim alone is checked with weight 1)
        and answered by checking the claims one by one."""
        items = list(self._items)
        if key is not None:
            items.sort(key=lambda item: key(_label(item)))
        if not known_failing and self._check(items):
            return None
        lo: Sequence[_Item] = items
        while len(lo) > 1:
            mid = len(lo) // 2
            lo = lo[mid:] if self._check(lo[:mid]) else lo[:mid]
        if lo and not self._check(lo):
            return _label(lo[0])
        for item in items:  # only after a 2^-128 false pass above
            if not self._check((item,)):
                return _label(item)
        return None

    # --- internals ---------------------------------------------------------------------------

    def _bisect(self, items: Sequence[_Item], known_failing: bool, out: list[Label]) -> None:
        if not known_failing and self._check(items):
            return
        if len(items) == 1:
            out.append(_label(items[0]))
            return
        mid = len(items) // 2
        left, right = items[:mid], items[mid:]
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

    def _check(self, items: Sequence[_Item]) -> bool:
        """Σ_c w_c·claim_c = ∞ for fresh random weights (weight 1 for a single claim)."""
        if not items:
            return True
        total = _WeightedSum(self.fixed, self._base_points)
        pool = _ONE16 if len(items) == 1 else _random_weights(len(items))
        for pos, item in enumerate(items):
            chunk = pool[16 * pos: 16 * pos + 16]
            if isinstance(item, tuple):
                total.add_member(item[0], item[1], chunk)
            else:
                total.add_claim(item, chunk)
        return total.is_infinity()


class _WeightedSum:
    """Σ_c w_c·claim_c gathered for ONE multi-scalar multiplication over the ``fixed`` base:

    - fixed-base coefficients go into one native ``ScalarAccumulator`` (made when first needed),
      runs of a constant (``fixed_const``) are summed per run first;
    - free terms of plain claims are kept as raw scalar vectors with one 32-byte weight per
      scalar and multiplied in ONE kernel call at the end, not one scaling per claim;
    - shared points are merged by identity; group members are collected per group and expanded
      by the group's kernel entry in one call;
    - claims over another fixed base turn its points into free terms.
    """

    __slots__ = ("_acc", "_base_points", "_consts", "_fixed", "_free_p", "_free_s", "_members",
                 "_raw_s", "_raw_w", "_shared")

    def __init__(self, fixed: FixedBase, base_points: Callable[[FixedBase], bytes]) -> None:
        self._fixed = fixed
        self._base_points = base_points
        self._acc: Any = None
        self._consts: dict[tuple[int, int], int] = {}
        self._raw_s: list[bytes] = []
        self._raw_w: list[bytes] = []
        self._free_s: list[bytes] = []
        self._free_p: list[bytes] = []
        self._shared: dict[bytes, int] = {}
        self._members: dict[ClaimGroup, tuple[list[int], list[bytes]]] = {}

    def _accumulator(self) -> Any:
        if self._acc is None:
            self._acc = _k.ScalarAccumulator(len(self._fixed))
        return self._acc

    def add_member(self, group: ClaimGroup, index: int, chunk: bytes) -> None:
        """Member ``index`` of ``group`` with the 16-byte weight ``chunk``."""
        entry = self._members.get(group)
        if entry is None:
            entry = self._members[group] = ([], [])
        entry[0].append(index)
        entry[1].append(chunk)

    def add_claim(self, claim: Claim, chunk: bytes) -> None:
        """``claim`` weighted by the 16-byte weight ``chunk``."""
        w = int.from_bytes(chunk, "big")
        if claim.base is self._fixed:
            if claim.fixed:
                self._accumulator().axpy_terms(chunk.rjust(32, b"\0"),
                                               [(start, mult.to_bytes(32, "big"), vec)
                                                for start, mult, vec in claim.fixed])
            consts = self._consts
            for start, count, value in claim.fixed_const:
                key = (start, count)
                consts[key] = consts.get(key, 0) + w * value
        elif claim.base is not None:  # another base: its points become free terms
            points = self._base_points(claim.base)
            for start, mult, vec in claim.fixed:
                self._raw_s.append(vec)
                self._raw_w.append((w * mult % N).to_bytes(32, "big") * (len(vec) >> 5))
                self._free_p.append(points[64 * start: 64 * start + 2 * len(vec)])
            for start, count, value in claim.fixed_const:
                self._raw_s.append((w * value % N).to_bytes(32, "big") * count)
                self._raw_w.append(_ONE * count)
                self._free_p.append(points[64 * start: 64 * (start + count)])
        if claim.free_scalars:
            self._raw_s.append(claim.free_scalars)
            self._raw_w.append(w.to_bytes(32, "big") * (len(claim.free_scalars) >> 5))
            self._free_p.append(claim.free_points)
        shared = self._shared
        for point, sv in claim.shared:
            shared[point] = shared.get(point, 0) + w * sv

    def _add_groups(self) -> None:
        for group, (indices, chunks) in self._members.items():
            weights = _ZERO16 + _ZERO16.join(chunks)
            if group.base is self._fixed:
                terms = group.terms(self._accumulator(), array("I", indices).tobytes(), weights)
            else:  # another base: its coefficients become free terms over its points
                own = _k.ScalarAccumulator(len(group.base))
                terms = group.terms(own, array("I", indices).tobytes(), weights)
                self._free_s.append(own.to_bytes())
                self._free_p.append(self._base_points(group.base))
            self._free_s.append(terms.free_scalars)
            self._free_p.append(terms.free_points)
            sp, ss = terms.shared_points, terms.shared_scalars
            for j in range(len(ss) >> 5):
                point, packed = sp[64 * j: 64 * j + 64], ss[32 * j: 32 * j + 32]
                self._shared[point] = self._shared.get(point, 0) + int.from_bytes(packed, "big")

    def is_infinity(self) -> bool:
        """Run the one multi-scalar multiplication: is the weighted sum the point at infinity?"""
        free_s, free_p = self._free_s, self._free_p
        if self._raw_s:
            free_s.append(_k.scalar_vec_mul(b"".join(self._raw_s), b"".join(self._raw_w)))
        self._add_groups()
        for point, sv in self._shared.items():
            free_s.append((sv % N).to_bytes(32, "big"))
            free_p.append(point)
        if self._consts:
            acc = self._accumulator()
            for (start, count), value in self._consts.items():
                acc.add_const(start, count, (value % N).to_bytes(32, "big"))
        total = b"" if self._acc is None else self._acc.to_bytes()
        result = self._fixed.table.msm_var(total, b"".join(free_s), b"".join(free_p))
        return result == kernel.INFINITY
