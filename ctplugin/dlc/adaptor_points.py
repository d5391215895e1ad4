"""CET adaptor points: Y = Σ_i Σ_{j < len(prefix_i)} S_ij(prefix_i[j]) over the covering oracles.

An *entry* says which oracles cover a CET and with which digit prefix each: a tuple of
(oracle index, prefix) pairs. ``S_ij(d) = R_ij + e_ij(d)·P_i`` is the signature point of oracle i,
nonce j, digit value d (``oracle.OracleInfo.signature_point``). Everything here is public data and
uses the variable-time kernel.

Strategies (all give identical points; see tests/unit/test_dlc_adaptor_points.py):

- ``naive``: one signature point (a scalar multiplication) per digit, then add them up;
- ``factorized``: per oracle Σ_j R_ij + (Σ_j e_ij)·P_i: the nonce sums from each oracle's
  cached prefix sums, then one small multi-scalar multiplication per entry with one P_i term per
  oracle (the best choice for a single point);
- ``precompute``: the base·nb_digits points S_ij(d) of every oracle once, then each entry is a sum
  of table points (one kernel call per entry, like rust-dlc's batched ``combine_keys``);
- ``memo``: one ``kernel.subset_sums_var`` call over all entries sorted depth-first, so each node
  of the digit trie costs one point addition. When every oracle of an entry uses the same prefix
  (exact t-of-n), the t oracles' tables are first summed digit by digit (T_j(d) = Σ_i S_ij(d)),
  which divides the trie work by t;
- ``memo_parallel``: ``memo`` with the sorted paths split into two contiguous chunks summed on
  two threads: ``subset_sums_var`` releases the GIL, so the chunks run on separate cores. The
  table MSMs are too small for the kernel to release the GIL (it does from 32 points), and the
  Python-level work (hashing, path lists) is serial, so only the summing part is parallel.
  Processes were measured as the alternative (bench row ``dlc_points_memo_processes``):
  shipping the table and paths costs more than the work saved at this size.

``compute_grouped_packed`` is the memo path for the exact t-of-n form (one oracle set, a list of
prefixes) without building per-entry tuples; ``Contract`` uses ``compute``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from itertools import chain
from typing import Literal

from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.oracle import MessageHash, OracleInfo, outcome_message
from ctplugin.parallel import side_by_side
from ctplugin.secp256k1 import Point, kernel
from ctplugin.secp256k1.params import N

_k = kernel.backend

Entry = tuple[tuple[int, tuple[int, ...]], ...]
Strategy = Literal["naive", "factorized", "precompute", "memo", "memo_parallel"]
STRATEGIES: tuple[Strategy, ...] = ("naive", "factorized", "precompute", "memo", "memo_parallel")
_ONE = (1).to_bytes(32, "big")

class DigitPoints:
    """The signature points S_ij(d) of a set of oracles (digit events in one base), packed for
    the kernel in one growing table of sections:

    - the *individual* section: S_ij(d) for every oracle, nonce and digit value (one two-point
      MSM R_ij + e·P_i each), built on first use;
    - *combined* sections, one per oracle set used with a common prefix (exact t-of-n):
      T_j(d) = Σ_i S_ij(d). Built from the individual section by point additions when that
      exists (several oracle sets share it), else directly as one (t+1)-point MSM per (j, d):
      (Σ_i R_ij) + Σ_i e_ij(d)·P_i, which is cheaper than t separate products.
    """

    def __init__(self, oracles: Sequence[OracleInfo], base: int,
                 scheme: MessageHash = MessageHash.UNTAGGED) -> None:
        if base < 2:
            raise DlcError("bad-base", f"base {base}")
        self.oracles = tuple(oracles)
        self.base = base
        self.scheme = scheme
        self.messages = tuple(outcome_message(str(d), scheme) for d in range(base))
        self.offsets: list[int] = []
        offset = 0
        for info in self.oracles:
            self.offsets.append(offset)
            offset += len(info.nonces) * base
        self.size = offset
        self._sections: list[bytes] = []
        self._length = 0
        self._individual: int | None = None
        self._combined: dict[tuple[int, ...], int] = {}
        self._rows: dict[tuple[int, ...], list[int]] = {}
        self._individual_rows: list[list[int]] | None = None

    def challenge(self, oracle: int, nonce: int, digit: int) -> int:
        return self.oracles[oracle].challenge(nonce, self.messages[digit])

    def _append(self, section: bytes) -> int:
        offset = self._length
        self._sections.append(section)
        self._length += len(section) // 64
        return offset

    def individual_offset(self) -> int:
        if self._individual is None:
            parts = []
            for info in self.oracles:
                key = info.key_point.packed
                for j, nonce_point in enumerate(info.nonce_points):
                    pair = nonce_point.packed + key
                    for msg in self.messages:
                        e = info.challenge(j, msg)
                        parts.append(_k.msm_var(_ONE + e.to_bytes(32, "big"), pair))
            self._individual = self._append(b"".join(parts))
        return self._individual

    @property
    def table(self) -> bytes:
        """Every section built so far, concatenated (what ``subset_sums_var`` indexes)."""
        if len(self._sections) > 1:
            self._sections = [b"".join(self._sections)]
        return self._sections[0] if self._sections else b""

    def index(self, oracle: int, nonce: int, digit: int) -> int:
        return self.individual_offset() + self.offsets[oracle] + nonce * self.base + digit

    def combined_offset(self, oracles: tuple[int, ...]) -> int:
        """Index of T_0(0) for Σ over ``oracles`` of their digit tables (built on first use)."""
        offset = self._combined.get(oracles)
        if offset is not None:
            return offset
        depth = min(len(self.oracles[i].nonces) for i in oracles)
        if self._individual is not None:
            paths = [[self.index(i, j, d) for i in oracles]
                     for j in range(depth) for d in range(self.base)]
            section = _k.subset_sums_var(self.table, paths)
        else:
            nonce_table = b"".join(self.oracles[i].nonce_points[j].packed
                                   for i in oracles for j in range(depth))
            nonce_sums = _k.subset_sums_var(
                nonce_table, [[n * depth + j for n in range(len(oracles))] for j in range(depth)])
            # A FixedBaseTable of the keys does not pay for itself over a few dozen MSMs (its
            # precomputation costs more than the MSMs it would speed up): plain MSMs.
            keys = b"".join(self.oracles[i].key_point.packed for i in oracles)
            jobs = [(_ONE + b"".join(self.challenge(i, j, d).to_bytes(32, "big") for i in oracles),
                     nonce_sums[64 * j: 64 * j + 64] + keys)
                    for j in range(depth) for d in range(self.base)]

            section = b"".join(_k.msm_var(scalars, pts) for scalars, pts in jobs)
        offset = self._append(section)
        self._combined[oracles] = offset
        self._rows[oracles] = [offset + j * self.base for j in range(depth)]
        return offset

    # --- path construction -------------------------------------------------------------------

    def path(self, entry: Entry) -> list[int]:
        """Table indices whose sum is the entry's adaptor point: the combined rows for a common
        prefix, else oracle after oracle (entries sharing their leading oracles' prefixes then
        share path prefixes, which the depth-first subset sums reuse).

        Validates the entry on the way (oracle indices, prefix lengths, digit range), so bad
        input is a ``DlcError`` rather than a silently wrong point.
        """
        if not entry:
            raise DlcError("bad-entry", "an adaptor point needs at least one oracle")
        first = entry[0][1]
        if len(entry) > 1 and all(prefix == first for _, prefix in entry):
            oracles = tuple(i for i, _ in entry)
            rows = self._rows.get(oracles)
            if rows is None:
                self._check_oracles(oracles)
                self.combined_offset(oracles)
                rows = self._rows[oracles]
            if len(first) > len(rows) or (first and (min(first) < 0
                                                     or max(first) >= self.base)):
                raise DlcError("bad-entry", f"prefix {first} does not fit the oracles' digits")
            return list(map(operator.add, rows, first))
        self._check_oracles(tuple(i for i, _ in entry))
        oracle_rows = self._oracle_rows()
        path: list[int] = []
        for i, prefix in entry:
            if len(prefix) > len(oracle_rows[i]) or (
                    prefix and (min(prefix) < 0 or max(prefix) >= self.base)):
                raise DlcError("bad-entry", f"prefix {prefix} does not fit oracle {i}'s digits")
            path += map(operator.add, oracle_rows[i], prefix)
        return path

    def _oracle_rows(self) -> list[list[int]]:
        """Per oracle, the table index of S_ij(0) for each nonce j (individual section)."""
        if self._individual_rows is None:
            start = self.individual_offset()
            self._individual_rows = [
                [start + self.offsets[i] + j * self.base for j in range(len(info.nonces))]
                for i, info in enumerate(self.oracles)]
        return self._individual_rows

    def validate(self, entry: Entry) -> None:
        """Raise ``DlcError`` unless every (oracle, prefix) of ``entry`` fits the oracles."""
        if not entry:
            raise DlcError("bad-entry", "an adaptor point needs at least one oracle")
        self._check_oracles(tuple(i for i, _ in entry))
        for i, prefix in entry:
            if len(prefix) > len(self.oracles[i].nonces) or (
                    prefix and (min(prefix) < 0 or max(prefix) >= self.base)):
                raise DlcError("bad-entry", f"prefix {prefix} does not fit oracle {i}'s digits")

    def _check_oracles(self, oracles: tuple[int, ...]) -> None:
        if any(not 0 <= i < len(self.oracles) for i in oracles) or len(set(oracles)) != len(
                oracles):
            raise DlcError("bad-entry", f"bad oracle indices {oracles}")


# --- strategies ------------------------------------------------------------------------------

def _naive(points: DigitPoints, entries: Sequence[Entry]) -> list[bytes]:
    out = []
    for entry in entries:
        acc = kernel.INFINITY
        for i, prefix in entry:
            info = points.oracles[i]
            for j, d in enumerate(prefix):
                sig_point = info.signature_point(j, points.messages[d])
                acc = _k.point_add_var(acc, sig_point.packed)
        out.append(acc)
    return out


def _factorized(points: DigitPoints, entries: Sequence[Entry]) -> list[bytes]:
    """Σ_i [(Σ_{j<L_i} R_ij) + (Σ_j e_ij)·P_i]. The nonce part comes from the oracles' cached
    prefix sums (``OracleInfo.nonce_prefix_sums``), added up for all entries in one subset-sum
    call; then one (1 + #oracles)-point MSM per entry."""
    offsets, offset = [], 0
    for info in points.oracles:
        offsets.append(offset)
        offset += len(info.nonces)
    cumulative = b"".join(info.nonce_prefix_sums() for info in points.oracles)
    nonce_sums = _k.subset_sums_var(cumulative, [
        [offsets[i] + len(prefix) - 1 for i, prefix in entry if prefix] for entry in entries])
    out = []
    for n, entry in enumerate(entries):
        scalars, pts = [_ONE], [nonce_sums[64 * n: 64 * n + 64]]
        for i, prefix in entry:
            info = points.oracles[i]
            e_sum = sum(info.challenge(j, points.messages[d]) for j, d in enumerate(prefix))
            scalars.append((e_sum % N).to_bytes(32, "big"))
            pts.append(info.key_point.packed)
        out.append(_k.msm_var(b"".join(scalars), b"".join(pts)))
    return out


def _precompute(points: DigitPoints, entries: Sequence[Entry]) -> list[bytes]:
    points.individual_offset()
    table = points.table
    return [_k.subset_sums_var(table, [[points.index(i, j, d) for i, prefix in entry
                                        for j, d in enumerate(prefix)]])
            for entry in entries]


def _paths(points: DigitPoints, entries: Sequence[Entry]) -> list[list[int]]:
    """``points.path`` for many entries, with the common case (every oracle of an entry on the
    same prefix, exact t-of-n) kept to a few C-level calls per entry: this loop is the Python
    part of the memo strategies' cost."""
    rows_by_oracles = points._rows
    base = points.base
    add = operator.add
    checked: set[tuple[int, ...]] = set()
    out = []
    for entry in entries:
        count = len(entry)
        first = entry[0][1] if count else ()
        key: tuple[int, ...]
        if count == 3:
            uniform = entry[1][1] == first and entry[2][1] == first
            key = (entry[0][0], entry[1][0], entry[2][0]) if uniform else ()
        elif count > 1:
            uniform = all(p == first for _, p in entry)
            key = tuple(i for i, _ in entry) if uniform else ()
        else:
            uniform = False
        rows = rows_by_oracles.get(key) if uniform else None
        if rows is None or len(first) > len(rows):
            out.append(points.path(entry))  # builds tables, validates, or raises
            continue
        if first not in checked:
            if first and (min(first) < 0 or max(first) >= base):
                raise DlcError("bad-entry", f"digit out of base {base} in {first}")
            checked.add(first)
        out.append(list(map(add, rows, first)))
    return out


def _memo(points: DigitPoints, entries: Sequence[Entry], chunks: int = 1) -> list[bytes]:
    return _memo_paths(points, _paths(points, entries), chunks)


def _memo_blob(points: DigitPoints, paths: list[list[int]], chunks: int) -> bytes:
    """The points of ``paths`` as one packed vector, in the given order."""
    ordered = paths == sorted(paths)  # C-level: n − 1 comparisons when already sorted
    order = range(len(paths)) if ordered else sorted(range(len(paths)), key=paths.__getitem__)
    sorted_paths = paths if ordered else [paths[i] for i in order]
    table = points.table
    if chunks <= 1 or len(sorted_paths) < 2 * chunks:
        packed = _k.subset_sums_var(table, sorted_paths)
    else:
        size = -(-len(sorted_paths) // chunks)
        parts = [sorted_paths[c: c + size] for c in range(0, len(sorted_paths), size)]
        packed = b"".join(side_by_side(lambda part: _k.subset_sums_var(table, part), parts,
                                       len(parts)))
    if ordered:
        return packed
    unsorted = bytearray(len(packed))
    for position, index in enumerate(order):
        unsorted[64 * index: 64 * index + 64] = packed[64 * position: 64 * position + 64]
    return bytes(unsorted)


def _memo_paths(points: DigitPoints, paths: list[list[int]], chunks: int) -> list[bytes]:
    packed = _memo_blob(points, paths, chunks)
    return [packed[64 * i: 64 * i + 64] for i in range(len(paths))]


def compute_packed(points: DigitPoints, entries: Sequence[Entry], strategy: Strategy = "memo",
                   threads: int = 2) -> list[bytes]:
    """Adaptor points of ``entries`` as kernel-packed 64-byte points, in entry order."""
    if strategy in ("naive", "factorized", "precompute"):
        for entry in entries:  # the memo strategies validate while building their paths
            points.validate(entry)
    if strategy == "naive":
        return _naive(points, entries)
    if strategy == "factorized":
        return _factorized(points, entries)
    if strategy == "precompute":
        return _precompute(points, entries)
    if strategy == "memo":
        return _memo(points, entries)
    if strategy == "memo_parallel":
        return _memo(points, entries, chunks=threads)
    raise DlcError("bad-strategy", f"unknown adaptor point strategy {strategy!r}")


def compute_grouped_packed(points: DigitPoints, oracles: Sequence[int],
                           prefixes: Sequence[tuple[int, ...]], threads: int = 1) -> bytes:
    """Adaptor points of the entries ((i, prefix) for i in ``oracles``), one per prefix, as one
    packed vector (64 bytes per point, the kernel's format): the form exact t-of-n contracts
    produce (every oracle of a combination on the same prefix). Memoized like ``memo``
    (``threads`` > 1: ``memo_parallel``) without per-entry grouping work."""
    key = tuple(oracles)
    if not key:
        raise DlcError("bad-entry", "an adaptor point needs at least one oracle")
    points._check_oracles(key)
    offset = points.combined_offset(key) if len(key) > 1 else points.index(key[0], 0, 0)
    depth = min(len(points.oracles[i].nonces) for i in key)
    rows = [offset + j * points.base for j in range(depth)]
    if prefixes:
        if max(map(len, prefixes)) > depth:
            raise DlcError("bad-entry", "prefix longer than the oracles' digits")
        if not set(range(points.base)).issuperset(chain.from_iterable(prefixes)):
            raise DlcError("bad-entry", f"digit out of base {points.base}")
    add = operator.add
    return _memo_blob(points, [list(map(add, rows, p)) for p in prefixes], threads)


def compute(points: DigitPoints, entries: Sequence[Entry], strategy: Strategy = "memo",
            threads: int = 2) -> list[Point]:
    """Adaptor points of ``entries`` as ``Point`` values (infinity is rejected: it has no
    encoding and would make the adaptor signature meaningless)."""
    packed = compute_packed(points, entries, strategy, threads)
    if any(p == kernel.INFINITY for p in packed):
        raise DlcError("adaptor-point-infinity", "an adaptor point is the point at infinity")
    return [Point.from_packed(p) for p in packed]
