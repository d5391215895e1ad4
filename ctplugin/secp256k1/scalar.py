"""Scalars: integers modulo the group order N, as an immutable value type."""

from __future__ import annotations

from typing import SupportsIndex

from ctplugin.errors import EncodingError
from ctplugin.hashes import tagged_hash
from ctplugin.secp256k1.params import N


def scalar_from_hash(tag: str, data: bytes) -> int:
    """A non-zero scalar from a tagged hash: int(TH(tag, data ‖ be32(counter))) for the first
    counter (from 0) whose value is in [1, n) (deterministic keys, nonces and blinds)."""
    counter = 0
    while True:
        value = int.from_bytes(tagged_hash(tag, data + counter.to_bytes(4, "big")), "big")
        if 0 < value < N:
            return value
        counter += 1


class Scalar:
    """An element of Z/NZ. Immutable; arithmetic reduces mod N.

    ``from_bytes`` is strict (32 bytes, value < N: the encoding rule of BIP340 and secp256k1-zkp);
    ``from_bytes_reduced`` reduces instead (hash outputs). ``int(s)`` gives the canonical integer.
    """

    __slots__ = ("_v",)
    _v: int

    def __init__(self, value: SupportsIndex) -> None:
        object.__setattr__(self, "_v", int(value) % N)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Scalar is immutable")

    @classmethod
    def from_bytes(cls, data: bytes) -> Scalar:
        if len(data) != 32:
            raise EncodingError(f"scalar must be 32 bytes, got {len(data)}", reason="length")
        value = int.from_bytes(data, "big")
        if value >= N:
            raise EncodingError("scalar not below the group order", reason="scalar-range")
        return cls(value)

    @classmethod
    def from_bytes_reduced(cls, data: bytes) -> Scalar:
        return cls(int.from_bytes(data, "big"))

    def to_bytes(self) -> bytes:
        return self._v.to_bytes(32, "big")

    def __int__(self) -> int:
        return self._v

    __index__ = __int__

    def __bool__(self) -> bool:
        return self._v != 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Scalar):
            return self._v == other._v
        if isinstance(other, int):
            return self._v == other % N
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._v)

    def __repr__(self) -> str:
        return f"Scalar(0x{self._v:064x})"

    def __add__(self, other: Scalar | int) -> Scalar:
        return Scalar(self._v + int(other))

    __radd__ = __add__

    def __sub__(self, other: Scalar | int) -> Scalar:
        return Scalar(self._v - int(other))

    def __rsub__(self, other: Scalar | int) -> Scalar:
        return Scalar(int(other) - self._v)

    def __mul__(self, other: Scalar | int) -> Scalar:
        return Scalar(self._v * int(other))

    __rmul__ = __mul__

    def __neg__(self) -> Scalar:
        return Scalar(-self._v)

    def __pow__(self, exponent: int) -> Scalar:
        return Scalar(pow(self._v, exponent, N))

    def inverse(self) -> Scalar:
        """Multiplicative inverse (variable time: for public values, or secrets blinded first)."""
        if self._v == 0:
            raise EncodingError("zero has no inverse mod N", reason="zero")
        return Scalar(pow(self._v, -1, N))
