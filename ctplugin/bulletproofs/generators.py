"""Bulletproof generator sets (docs/bulletproofs-format.md §4, "Bulletproof generator set").

``secp256k1_bulletproof_generators_create(ctx, blinding_gen, n_gens)``:

1. a deterministic stream (libsecp256k1's RFC6979 HMAC-SHA256 generator,
   ``hashes.rfc6979_hmac_sha256``) seeded with the 64 bytes
   ``blinding_gen.x ‖ blinding_gen.y`` (big-endian; G in every known deployment);
2. ``P_i = generator_generate(output_i)`` for i = 0..n_gens−1;
3. ``G_i = P_i`` and ``H_i = P_{n_gens/2 + i}``: a proof over N = nbits·m needs n_gens ≥ 2N, and
   the proof depends on n_gens because the H_i start at the midpoint.

A ``GeneratorSet`` also carries the ``FixedBase`` the verifier and the batch verifier use (h,
every G_i and every H_i; see the class), so that every generator a range proof touches except
the value generator is fixed (precomputed) and only ~16 points per proof stay free. Sets are
built once per process (``generator_set`` is cached).
"""

from __future__ import annotations

from functools import lru_cache

import coincurve

from ctplugin.bulletproofs.errors import proof_error
from ctplugin.hashes import rfc6979_hmac_sha256
from ctplugin.pedersen import generator_generate
from ctplugin.secp256k1 import FixedBase, G, Point
from ctplugin.secp256k1.ct import to_coincurve
from ctplugin.secp256k1.params import N

MAX_N_GENS = 1 << 17
"""Largest generator set we build (m = 64 at 64 bits needs 8192; the C bench uses 65536)."""


_generate_uncached = generator_generate.__wrapped__  # keep the asset-generator cache for assets


class GeneratorSet:
    """The generators of one ``(blinding_gen, n_gens)`` pair, with their fixed-base tables.

    Attributes: ``n_gens``; ``capacity`` K = n_gens/2 (the largest N = nbits·m it supports);
    ``blinding_gen`` (h); ``g_packed`` / ``h_packed`` (kernel 64-byte points G_i, H_i in order).

    ``fixed`` is the verifier's (and batch's) base ``[h, G_0 … G_{K−1}, H_{K−1} … H_0]``: index
    ``H_INDEX`` = 0 is h, G_i is at ``G_OFFSET + i`` and H_k at ``2K − k`` — the H_k are stored in
    reverse because the verifier's H coefficients are naturally produced in reversed index order
    (they involve Π_r x_r^{∓1}, the challenge products of the complemented index), so no vector
    has to be reversed per proof. ``h_rev_start(N)`` is where H_{N−1} … H_0 begin.
    ``prover_fixed`` (built on first use) is ``[h, G_0 … G_{K−1}, H_0 … H_{K−1}]`` for the
    prover's inner-product rounds.
    """

    __slots__ = ("_a_offsets", "_cc", "_prover_fixed", "blinding_gen", "capacity", "fixed",
                 "g_packed", "h_packed", "n_gens")
    H_INDEX = 0  # the blinding generator h (G on our chain) in ``fixed``
    G_OFFSET = 1

    def __init__(self, n_gens: int, blinding_gen: Point = G) -> None:
        if n_gens < 2 or n_gens % 2 or n_gens > MAX_N_GENS:
            raise proof_error("parameters",
                              f"n_gens must be even and in [2, {MAX_N_GENS}], got {n_gens}")
        if blinding_gen.is_infinity:
            raise proof_error("parameters", "blinding generator is infinity")
        seed = blinding_gen.x.to_bytes(32, "big") + blinding_gen.y.to_bytes(32, "big")  # type: ignore[union-attr]
        stream = rfc6979_hmac_sha256(seed, n_gens)
        points = [_generate_uncached(stream[32 * i: 32 * i + 32]).point for i in range(n_gens)]
        k = n_gens // 2
        self.n_gens = n_gens
        self.capacity = k
        self.blinding_gen = blinding_gen
        self.g_packed = b"".join(p.packed for p in points[:k])
        self.h_packed = b"".join(p.packed for p in points[k:])
        self.fixed = FixedBase([blinding_gen, *points[:k], *reversed(points[k:])])
        self._prover_fixed: FixedBase | None = None
        self._cc: tuple[list[coincurve.PublicKey], ...] | None = None
        self._a_offsets: dict[int, coincurve.PublicKey] = {}

    def __repr__(self) -> str:
        return f"GeneratorSet(n_gens={self.n_gens})"

    def h_rev_start(self, n: int) -> int:
        """Index in ``fixed`` of H_{n−1}; H_{n−1} … H_0 follow contiguously."""
        return 2 * self.capacity - n + 1

    def generator(self, i: int) -> Point:
        """P_i of the stream (G_i for i < K, H_{i−K} otherwise)."""
        packed = self.g_packed if i < self.capacity else self.h_packed
        j = i if i < self.capacity else i - self.capacity
        return Point.from_packed(packed[64 * j: 64 * j + 64])

    @property
    def prover_fixed(self) -> FixedBase:
        if self._prover_fixed is None:
            k = self.capacity
            self._prover_fixed = FixedBase(
                [self.blinding_gen, *self.fixed.points[1: 1 + k],
                 *reversed(self.fixed.points[1 + k:])])
        return self._prover_fixed

    def coincurve_keys(self) -> tuple[list[coincurve.PublicKey], ...]:
        """(G_i, H_i, Q_i = G_i + H_i) as coincurve keys for the prover's constant-time
        multiplications, built once per set."""
        if self._cc is None:
            k = self.capacity
            g_pts = [self.generator(i) for i in range(k)]
            h_pts = [self.generator(k + i) for i in range(k)]
            self._cc = ([to_coincurve(p) for p in g_pts],
                        [to_coincurve(p) for p in h_pts],
                        [to_coincurve(a + b) for a, b in zip(g_pts, h_pts)])
        return self._cc

    def a_offset(self, n: int) -> coincurve.PublicKey:
        """−Σ_{k<n} (G_k + 2·H_k): with it A = α·h + Σ_k (1 + aL_k)·Q_k + a_offset(n) equals
        α·h + Σ_k (aL_k ? G_k : −H_k), so the secret bits only ever scale public points by the
        non-zero constants 1 or 2 (constant-time multiplications, no secret-dependent choice)."""
        key = self._a_offsets.get(n)
        if key is None:
            scalars = [0] + [N - 1] * n + [0] * (self.capacity - n) + [N - 2] * n
            key = to_coincurve(self.prover_fixed.msm_var(scalars))
            self._a_offsets[n] = key
        return key


@lru_cache(maxsize=8)
def _cached_set(n_gens: int, blinding_gen: Point) -> GeneratorSet:
    return GeneratorSet(n_gens, blinding_gen)


def generator_set(n_gens: int, blinding_gen: Point = G) -> GeneratorSet:
    """The generator set for ``n_gens``, built once per process and then always the same object
    (so claims and a BatchVerifier share one fixed base). Build cost grows linearly in n_gens."""
    return _cached_set(n_gens, blinding_gen)
