"""Pedersen commitments and asset generators, compatible with secp256k1-zkp / Elements.

Notation (``docs/bulletproofs-format.md`` §4):

- A value generator g (an Elements asset tag) encodes as 33 bytes ``0x0a | f(g)``, x; a
  commitment V = v·g + r·G encodes as ``0x08 | f(V)``, x, where f(P) = 1 iff P.y is NOT a
  quadratic residue mod p.
- ``H`` is Elements' value generator: x = SHA256(uncompressed G), with the y that is NOT a
  quadratic residue (encoding 0b50929b…; the shared note's "QR y" wording is wrong, the vectors
  and wallycore agree on 0b).
- ``generator_generate(key)`` is secp256k1-zkp's NUMS hash-to-curve: SvdW(t1) + SvdW(t2) with
  t1 = SHA256("1st generation: " ‖ key), t2 = SHA256("2nd generation: " ‖ key).
- Balance (Elements' tally): Σ inputs − Σ outputs = ∞, explicit amounts committed with blind 0.

Value and blinding factor are secrets: commitments are formed with constant-time operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, Self

from ctplugin.errors import EncodingError
from ctplugin.hashes import sha256
from ctplugin.secp256k1 import (
    KIND_GENERATOR,
    KIND_PEDERSEN,
    KIND_XQR,
    G,
    Point,
    ct,
    decode_points,
    kernel,
)
from ctplugin.secp256k1.params import N, P

# Shallue–van de Woestijne constants for secp256k1: c = sqrt(-3), d = (c - 1) / 2.
_SVDW_C = 0x0A2D2BA93507F1DF233770C2A797962CC61F6D15DA14ECD47D8D27AE1CD5F852
_SVDW_D = 0x851695D49A83F8EF919BB86153CBCB16630FB68AED0A766A3EC693D68E6AFA40


@dataclass(frozen=True, slots=True)
class _FlaggedPoint:
    """A point serialized secp256k1-zkp style: ``prefix | f(P)`` then x (33 bytes)."""

    point: Point

    PREFIX: ClassVar[int]
    KIND: ClassVar[int]

    @classmethod
    def parse(cls, data: bytes) -> Self:
        if len(data) != 33:
            raise EncodingError(f"{cls.__name__.lower()} must be 33 bytes, got {len(data)}",
                                reason="length")
        return cls(decode_points(data, cls.KIND)[0])

    def serialize(self) -> bytes:
        if self.point.is_infinity:
            raise EncodingError("the point at infinity cannot be serialized", reason="infinity")
        # the kernel's encoder: the same flag (y a square or not) without Python's 256-bit pow
        return kernel.backend.encode_points_var(self.point.packed, self.KIND)


@dataclass(frozen=True, slots=True)
class Generator(_FlaggedPoint):
    """A value generator (asset tag), serialized as 33 bytes 0a/0b ‖ x."""

    PREFIX: ClassVar[int] = 0x0A
    KIND: ClassVar[int] = KIND_GENERATOR


@dataclass(frozen=True, slots=True)
class Commitment(_FlaggedPoint):
    """A Pedersen commitment v·g + r·G, serialized as 33 bytes 08/09 ‖ x."""

    PREFIX: ClassVar[int] = 0x08
    KIND: ClassVar[int] = KIND_PEDERSEN


def _svdw(t: int, inv_den: int, inv_3t2: int) -> Point:
    """The SvdW map F_p -> E used by secp256k1-zkp (y negated when the integer t is odd).

    w = c·t/(1 + 7 + t²); candidates x1 = d − t·w, x2 = −(x1 + 1), x3 = 1 + 1/w², where
    1/w² = (8 + t²)²/(−3·t²) since c² = −3. The caller supplies ``inv_den`` = 1/(8 + t²) and
    ``inv_3t2`` = 1/(−3·t²) (batched: one field inversion per generator). The square-root test
    of each candidate is the kernel's point decoding (KIND_XQR, flag = t odd): a candidate whose
    x³ + 7 is not a square fails to decode and the next one is tried.
    """
    if t == 0:  # the C's inversions map 0 to 0: w = 0 and x1 = d
        x_candidates = [_SVDW_D]
    else:
        den = 8 + t * t
        w = _SVDW_C * t * inv_den % P
        x1 = (_SVDW_D - t * w) % P
        x2 = (-(x1 + 1)) % P
        x3 = (1 + den * den % P * inv_3t2) % P
        x_candidates = [x1, x2, x3]
    flag = bytes([t & 1])
    for x in x_candidates:
        try:
            return decode_points(flag + x.to_bytes(32, "big"), KIND_XQR)[0]
        except EncodingError:
            continue
    raise AssertionError("SvdW: one of three candidates is always on the curve")


@lru_cache(maxsize=4096)
def generator_generate(key32: bytes) -> Generator:
    """secp256k1_generator_generate: a NUMS generator for a 32-byte key (e.g. an asset id)."""
    if len(key32) != 32:
        raise EncodingError("generator key must be 32 bytes", reason="length")
    t1 = int.from_bytes(sha256(b"1st generation: " + key32), "big")
    t2 = int.from_bytes(sha256(b"2nd generation: " + key32), "big")
    if t1 >= P or t2 >= P:
        raise EncodingError("generator hash not below the field size", reason="field-range")
    # Montgomery's trick: the four denominators share one inversion (zeros stay out of it).
    dens = [8 + t1 * t1, -3 * t1 * t1, 8 + t2 * t2, -3 * t2 * t2]
    dens = [d % P or 1 for d in dens]
    prefix = [1]
    for d in dens:
        prefix.append(prefix[-1] * d % P)
    inv = pow(prefix[-1], -1, P)
    invs = [0] * 4
    for i in range(3, -1, -1):
        invs[i] = inv * prefix[i] % P
        inv = inv * dens[i] % P
    return Generator(_svdw(t1, invs[0], invs[1]) + _svdw(t2, invs[2], invs[3]))


def generator_generate_blinded(key32: bytes, blind32: bytes) -> Generator:
    """secp256k1_generator_generate_blinded: generator_generate(key) + blind·G (blind secret)."""
    base = generator_generate(key32).point
    blind = int.from_bytes(blind32, "big")
    if blind >= N:
        raise EncodingError("asset blinding factor not below the group order",
                            reason="scalar-range")
    return Generator(base if blind == 0 else base + ct.base_mul(blind))


H = Point(0x50929B74C1A04954B78B4B6035E97A5E078A5A0F28EC96D547BFEE9ACE803AC0,
          0x31D3C6863973926E049E637CB1B5F40A36DAC28AF1766968C30C2313F3A38904)
"""Elements' value generator H (0b50929b…3ac0): x = SHA256(G uncompressed), the y whose square
root is not a quadratic residue (a constant: nothing is derived at import; the derivation is
checked in tests/unit/test_pedersen.py)."""

H_GENERATOR = Generator(H)


def commit(value: int, blind: int | bytes, generator: Generator) -> Commitment:
    """secp256k1_pedersen_commit: value·generator + blind·G (constant time in value and blind).

    Raises EncodingError if the result is infinity (e.g. value = blind = 0), as the C does.
    """
    if not 0 <= value < 2**64:
        raise EncodingError("value must fit in 64 bits", reason="value-range")
    blind_int = int.from_bytes(blind, "big") if isinstance(blind, bytes) else int(blind)
    if not 0 <= blind_int < N:
        raise EncodingError("blinding factor not below the group order", reason="scalar-range")
    point = ct.mul_or_zero(value, generator.point) + ct.mul_or_zero(blind_int, G)
    if point.is_infinity:
        raise EncodingError("commitment is the point at infinity", reason="infinity")
    return Commitment(point)


def verify_tally(inputs: Sequence[Commitment], outputs: Sequence[Commitment]) -> bool:
    """secp256k1_pedersen_verify_tally: Σ inputs − Σ outputs = ∞ (one MSM)."""
    from ctplugin.secp256k1 import msm_var

    points = [c.point for c in inputs] + [c.point for c in outputs]
    scalars = [1] * len(inputs) + [N - 1] * len(outputs)
    return msm_var(scalars, points).is_infinity


def blind_sum(blinds: Sequence[int], n_positive: int) -> int:
    """Σ_{i<n_positive} blinds_i − Σ_{i≥n_positive} blinds_i mod N (pedersen_blind_sum)."""
    total = sum(blinds[:n_positive]) - sum(blinds[n_positive:])
    return total % N


__all__ = [
    "H_GENERATOR",
    "Commitment",
    "Generator",
    "H",
    "blind_sum",
    "commit",
    "generator_generate",
    "generator_generate_blinded",
    "kernel",
    "verify_tally",
]  # fmt: skip
