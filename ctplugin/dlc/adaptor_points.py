"""CET adaptor points: Y = Σ_i Σ_{j < len(prefix_i)} S_ij(prefix_i[j]) over the covering oracles.

An *entry* says which oracles cover a CET and with which digit prefix each: a tuple of
(oracle index, prefix) pairs. ``S_ij(d) = R_ij + e_ij(d)·P_i`` is the signature point of oracle i,
nonce j, digit value d (``oracle.OracleInfo.signature_point``). Everything here is public data and
uses the variable-time kernel.

Strategies (all give identical points; see tests/test_dlc_adaptor_points.py):

- ``naive``: one signature point (a scalar multiplication) per digit, then add them up;
- ``factorized``: per oracle Σ_j R_ij + (Σ_j e_ij)·P_i, so one multi-scalar multiplication per
  entry with one P_i term per oracle;
- ``precompute``: the base·nb_digits points S_ij(d) of every oracle once, then each entry is a sum
  of table points (one kernel call per entry, like rust-dlc's batched ``combine_keys``);
- ``memo``: one ``kernel.subset_sums_var`` call over all entries sorted depth-first, so each node
  of the digit trie costs one point addition. When every oracle of an entry uses the same prefix
  (exact t-of-n), the t oracles' tables are first summed digit by digit (T_j(d) = Σ_i S_ij(d)),
  which divides the trie work by t;
- ``memo_parallel``: ``memo`` with the sorted paths split into contiguous chunks computed on
  threads: the native kernel releases the GIL, so the chunks run on separate cores.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.oracle import MessageHash, OracleInfo, bip340_challenge, outcome_message
from ctplugin.secp256k1 import Point, kernel
from ctplugin.secp256k1.params import N

_k = kernel.backend

Entry = tuple[tuple[int, tuple[int, ...]], ...]
Strategy = Literal["naive", "factorized", "precompute", "memo", "memo_parallel"]
STRATEGIES: tuple[Strategy, ...] = ("naive", "factorized", "precompute", "memo", "memo_parallel")
_ONE = (1).to_bytes(32, "big")


class DigitPoints:
    """The signature points S_ij(d) of a set of oracles, for digit events in one base."""

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
        self._table: bytes | None = None
        self._combined: dict[tuple[int, ...], int] = {}
        self._combined_table = b""

    def challenge(self, oracle: int, nonce: int, digit: int) -> int:
        info = self.oracles[oracle]
        return bip340_challenge(info.nonces[nonce], info.public_key, self.messages[digit])

    def index(self, oracle: int, nonce: int, digit: int) -> int:
        return self.offsets[oracle] + nonce * self.base + digit

    @property
    def table(self) -> bytes:
        """All S_ij(d), packed, computed once: one two-point MSM R_ij + e·P_i each."""
        if self._table is None:
            parts = []
            for info in self.oracles:
                key = info.key_point.packed
                for j, nonce_point in enumerate(info.nonce_points):
                    pair = nonce_point.packed + key
                    for msg in self.messages:
                        e = bip340_challenge(info.nonces[j], info.public_key, msg)
                        parts.append(_k.msm_var(_ONE + e.to_bytes(32, "big"), pair))
            self._table = b"".join(parts)
        return self._table

    def combined_offset(self, oracles: tuple[int, ...]) -> int:
        """Index of T_0(0) for Σ over ``oracles`` of their digit tables (built on first use)."""
        offset = self._combined.get(oracles)
        if offset is None:
            depth = min(len(self.oracles[i].nonces) for i in oracles)
            paths = [[self.index(i, j, d) for i in oracles]
                     for j in range(depth) for d in range(self.base)]
            offset = self.size + len(self._combined_table) // 64
            self._combined_table += _k.subset_sums_var(self.table, paths)
            self._combined[oracles] = offset
        return offset

    def full_table(self) -> bytes:
        return self.table + self._combined_table

    # --- path construction -------------------------------------------------------------------

    def path(self, entry: Entry) -> list[int]:
        """Table indices whose sum is the entry's adaptor point, in trie (depth-first) order."""
        prefixes = [prefix for _, prefix in entry]
        if len(entry) > 1 and all(p == prefixes[0] for p in prefixes):
            oracles = tuple(i for i, _ in entry)
            offset = self.combined_offset(oracles)
            return [offset + j * self.base + d for j, d in enumerate(prefixes[0])]
        longest = max(len(p) for p in prefixes)
        return [self.index(i, j, prefix[j])
                for j in range(longest) for i, prefix in entry if j < len(prefix)]

    def check(self, entries: Sequence[Entry]) -> None:
        for entry in entries:
            if not entry:
                raise DlcError("bad-entry", "an adaptor point needs at least one oracle")
            for i, prefix in entry:
                if not 0 <= i < len(self.oracles):
                    raise DlcError("bad-entry", f"oracle index {i} out of range")
                if len(prefix) > len(self.oracles[i].nonces):
                    raise DlcError("bad-entry", "prefix longer than the oracle's nonces")
                if any(not 0 <= d < self.base for d in prefix):
                    raise DlcError("bad-entry", f"digit out of base {self.base}")


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
    out = []
    for entry in entries:
        scalars, pts = [], []
        for i, prefix in entry:
            info = points.oracles[i]
            e_sum = 0
            for j, d in enumerate(prefix):
                e_sum += points.challenge(i, j, d)
                scalars.append(_ONE)
                pts.append(info.nonce_points[j].packed)
            scalars.append((e_sum % N).to_bytes(32, "big"))
            pts.append(info.key_point.packed)
        out.append(_k.msm_var(b"".join(scalars), b"".join(pts)))
    return out


def _precompute(points: DigitPoints, entries: Sequence[Entry]) -> list[bytes]:
    table = points.table
    return [_k.subset_sums_var(table, [[points.index(i, j, d) for i, prefix in entry
                                        for j, d in enumerate(prefix)]])
            for entry in entries]


def _memo(points: DigitPoints, entries: Sequence[Entry], chunks: int = 1) -> list[bytes]:
    paths = [points.path(entry) for entry in entries]
    order = sorted(range(len(paths)), key=paths.__getitem__)
    sorted_paths = [paths[i] for i in order]
    table = points.full_table()
    if chunks <= 1 or len(sorted_paths) < 2 * chunks:
        packed = _k.subset_sums_var(table, sorted_paths)
    else:
        size = -(-len(sorted_paths) // chunks)
        parts = [sorted_paths[c: c + size] for c in range(0, len(sorted_paths), size)]
        with ThreadPoolExecutor(max_workers=len(parts)) as pool:
            packed = b"".join(pool.map(lambda part: _k.subset_sums_var(table, part), parts))
    out: list[bytes] = [b""] * len(paths)
    for position, index in enumerate(order):
        out[index] = packed[64 * position: 64 * position + 64]
    return out


def compute_packed(points: DigitPoints, entries: Sequence[Entry], strategy: Strategy = "memo",
                   threads: int = 2) -> list[bytes]:
    """Adaptor points of ``entries`` as kernel-packed 64-byte points, in entry order."""
    points.check(entries)
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


def compute(points: DigitPoints, entries: Sequence[Entry], strategy: Strategy = "memo",
            threads: int = 2) -> list[Point]:
    """Adaptor points of ``entries`` as ``Point`` values (infinity is rejected: it has no
    encoding and would make the adaptor signature meaningless)."""
    packed = compute_packed(points, entries, strategy, threads)
    if any(p == kernel.INFINITY for p in packed):
        raise DlcError("adaptor-point-infinity", "an adaptor point is the point at infinity")
    return [Point.from_packed(p) for p in packed]
