"""Points of secp256k1 as an immutable value type, with every encoding the project meets.

Arithmetic here is variable time and meant for PUBLIC data (commitments, generators, proof points,
public keys). Multiplying by a secret goes through ``ctplugin.secp256k1.ct`` instead.
"""

from __future__ import annotations

from ctplugin.errors import EncodingError
from ctplugin.secp256k1 import kernel
from ctplugin.secp256k1.field import is_square_mod_p, sqrt_mod_p
from ctplugin.secp256k1.params import GX, GY, N, P

_k = kernel.backend


def _on_curve(x: int, y: int) -> bool:
    return 0 <= x < P and 0 <= y < P and (y * y - x * x * x - 7) % P == 0


class Point:
    """An affine point (x, y) on y² = x³ + 7, or the point at infinity (x = y = None).

    The kernel's packed form (64 bytes x‖y, zeros for infinity) is kept alongside, so vectors of
    points go to the native kernel without per-point conversion.
    """

    __slots__ = ("_packed", "x", "y")
    x: int | None
    y: int | None
    _packed: bytes

    def __init__(self, x: int | None, y: int | None, *, _trusted: bool = False) -> None:
        if x is None or y is None:
            if x is not None or y is not None:
                raise EncodingError("infinity has neither coordinate", reason="infinity")
            packed = kernel.INFINITY
        else:
            if not _trusted and not _on_curve(x, y):
                raise EncodingError("point is not on the curve", reason="off-curve")
            packed = x.to_bytes(32, "big") + y.to_bytes(32, "big")
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "_packed", packed)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Point is immutable")

    # --- construction ----------------------------------------------------------------------

    @classmethod
    def from_packed(cls, packed: bytes) -> Point:
        """From the kernel's 64-byte form (trusted: it came out of the kernel)."""
        if len(packed) != 64:
            raise EncodingError("packed point must be 64 bytes", reason="length")
        if packed == kernel.INFINITY:
            return INFINITY
        return cls(int.from_bytes(packed[:32], "big"), int.from_bytes(packed[32:], "big"),
                   _trusted=True)

    @classmethod
    def decode(cls, data: bytes, kind: int) -> Point:
        """Decode one point of a kernel kind (KIND_COMPRESSED, KIND_PEDERSEN, ...)."""
        return decode_points(data, kind)[0]

    @classmethod
    def from_bytes(cls, data: bytes) -> Point:
        """SEC1: 33-byte compressed (02/03) or 65-byte uncompressed (04)."""
        if len(data) == 65 and data[0] == 4:
            return cls(int.from_bytes(data[1:33], "big"), int.from_bytes(data[33:], "big"))
        if len(data) != 33:
            raise EncodingError(f"public key must be 33 or 65 bytes, got {len(data)}",
                                reason="length")
        return cls.decode(data, kernel.KIND_COMPRESSED)

    @classmethod
    def from_xonly(cls, data: bytes) -> Point:
        """BIP340 lift_x: the point with this x and an even y."""
        if len(data) != 32:
            raise EncodingError(f"x-only key must be 32 bytes, got {len(data)}", reason="length")
        return cls.decode(data, kernel.KIND_XONLY)

    @classmethod
    def from_x_qr(cls, x: int, non_residue: bool) -> Point:
        """secp256k1-zkp's convention: the y that is a quadratic residue, negated if flagged."""
        if not 0 <= x < P:
            raise EncodingError("x coordinate not below the field size", reason="field-range")
        y = sqrt_mod_p(x * x * x + 7)
        if y is None:
            raise EncodingError("x is not on the curve", reason="off-curve")
        return cls(x, P - y if non_residue else y, _trusted=True)

    # --- encodings -------------------------------------------------------------------------

    @property
    def packed(self) -> bytes:
        return self._packed

    @property
    def is_infinity(self) -> bool:
        return self.x is None

    def _coords(self) -> tuple[int, int]:
        if self.x is None or self.y is None:
            raise EncodingError("the point at infinity has no encoding", reason="infinity")
        return self.x, self.y

    def to_bytes(self, compressed: bool = True) -> bytes:
        x, y = self._coords()
        if compressed:
            return bytes([2 | (y & 1)]) + x.to_bytes(32, "big")
        return b"\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big")

    def xonly(self) -> bytes:
        return self._coords()[0].to_bytes(32, "big")

    def has_even_y(self) -> bool:
        return self._coords()[1] & 1 == 0

    def has_square_y(self) -> bool:
        """True if y is a quadratic residue mod p (secp256k1-zkp's flag bit is the negation)."""
        return is_square_mod_p(self._coords()[1])

    # --- group operations (variable time) --------------------------------------------------

    def __add__(self, other: Point) -> Point:
        return Point.from_packed(_k.point_add_var(self._packed, other._packed))

    def __neg__(self) -> Point:
        return Point.from_packed(_k.point_neg(self._packed))

    def __sub__(self, other: Point) -> Point:
        return self + (-other)

    def mul_var(self, scalar: int) -> Point:
        """scalar·self, variable time: public scalars only."""
        return Point.from_packed(_k.msm_var((int(scalar) % N).to_bytes(32, "big"), self._packed))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Point) and self._packed == other._packed

    def __hash__(self) -> int:
        return hash(self._packed)

    def __repr__(self) -> str:
        if self.x is None:
            return "Point(infinity)"
        return f"Point({self.to_bytes().hex()})"


INFINITY = Point(None, None)
G = Point(GX, GY)


def decode_points(data: bytes, kind: int) -> list[Point]:
    """Batch-decode and validate encoded points (one native call); EncodingError on any bad one."""
    packed = _k.decode_points_var(bytes(data), kind)  # EncodingError with the kernel's reason
    return [Point.from_packed(packed[i: i + 64]) for i in range(0, len(packed), 64)]


def encode_points(points: list[Point], kind: int) -> bytes:
    """Batch-encode points of a kernel kind (one native call, one shared inversion)."""
    return _k.encode_points_var(b"".join(p.packed for p in points), kind)
