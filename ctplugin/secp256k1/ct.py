"""Constant-time operations on secrets, through coincurve (libsecp256k1).

Everything that multiplies a point by a secret scalar goes through here; the variable-time kernel
never sees a secret. Inputs and outputs are our ``Point``; secrets are 32-byte strings or ints.
"""

from __future__ import annotations

import coincurve

from ctplugin.errors import EncodingError
from ctplugin.secp256k1.params import N
from ctplugin.secp256k1.point import INFINITY, Point


def secret_bytes(secret: int | bytes) -> bytes:
    """Canonical 32-byte form of a secret scalar in [1, N)."""
    value = int.from_bytes(secret, "big") if isinstance(secret, bytes) else int(secret)
    if not 0 < value < N:
        raise EncodingError("secret scalar must be in [1, N)", reason="scalar-range")
    return value.to_bytes(32, "big")


def to_coincurve(point: Point) -> coincurve.PublicKey:
    return coincurve.PublicKey(point.to_bytes(compressed=False))


def from_coincurve(key: coincurve.PublicKey) -> Point:
    raw = key.format(compressed=False)
    return Point(int.from_bytes(raw[1:33], "big"), int.from_bytes(raw[33:], "big"), _trusted=True)


def base_mul(secret: int | bytes) -> Point:
    """secret·G (libsecp256k1 ecmult_gen, constant time)."""
    return from_coincurve(coincurve.PublicKey.from_secret(secret_bytes(secret)))


def mul(secret: int | bytes, point: Point) -> Point:
    """secret·point (libsecp256k1 ecmult_const, constant time)."""
    if point.is_infinity:
        return INFINITY
    return from_coincurve(to_coincurve(point).multiply(secret_bytes(secret)))


def mul_or_zero(secret: int, point: Point) -> Point:
    """Like ``mul`` but a zero scalar gives infinity (e.g. a zero value in a commitment)."""
    return INFINITY if int(secret) % N == 0 else mul(int(secret) % N, point)
