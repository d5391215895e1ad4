"""Multi-scalar multiplication over Points (variable time, public data only).

Scalars may be any integers: they are reduced mod N here (so negative coefficients are fine).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from ctplugin.errors import EncodingError
from ctplugin.secp256k1 import kernel
from ctplugin.secp256k1.params import N
from ctplugin.secp256k1.point import G, Point

_k = kernel.backend


def pack_scalars(scalars: Sequence[int]) -> bytes:
    """Reduce mod N and pack as the kernel's 32-byte big-endian vector."""
    return b"".join((int(s) % N).to_bytes(32, "big") for s in scalars)


def pack_points(points: Sequence[Point]) -> bytes:
    return b"".join(p.packed for p in points)


def msm_var(scalars: Sequence[int], points: Sequence[Point]) -> Point:
    """Σ scalars[i]·points[i] in one native multi-scalar multiplication."""
    if len(scalars) != len(points):
        raise EncodingError("msm_var: scalar and point counts differ", reason="count-mismatch")
    return Point.from_packed(_k.msm_var(pack_scalars(scalars), pack_points(points)))


class FixedBase:
    """Points reused across many MSMs (G, H, Bulletproof generators), precomputed once."""

    __slots__ = ("points", "table")

    def __init__(self, points: Sequence[Point]) -> None:
        self.points: tuple[Point, ...] = tuple(points)
        self.table = _k.FixedBaseTable(pack_points(self.points))

    def __len__(self) -> int:
        return len(self.points)

    def msm_var(self, scalars: Sequence[int], extra_scalars: Sequence[int] = (),
                extra_points: Sequence[Point] = ()) -> Point:
        """Σ scalars[i]·points[i] + Σ extra_scalars[j]·extra_points[j], as one MSM."""
        if len(extra_scalars) != len(extra_points):
            raise EncodingError("msm_var: extra scalar and point counts differ",
                                reason="count-mismatch")
        if len(scalars) > len(self.points):
            raise EncodingError("msm_var: more scalars than fixed points", reason="too-large")
        return Point.from_packed(self.table.msm_var(
            pack_scalars(scalars), pack_scalars(extra_scalars), pack_points(extra_points)))


@cache
def g_table() -> Any:
    """The kernel's ``FixedBaseTable`` of G alone (``g_table().msm_var(s, e, P)`` = s·G + e·P in
    one call: ring signatures, DLEQ checks), built once, on first use (never at import)."""
    return _k.FixedBaseTable(G.packed)
