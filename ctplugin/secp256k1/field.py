"""Arithmetic in the secp256k1 base field F_p that the value types need in Python (variable time,
public data only): Euler's criterion and the square root (p ≡ 3 mod 4, so √a = a^((p+1)/4)).

Shared by ``point`` (decoding x-only and QR-flagged points) and the kernel's pure-Python
reference backend; neither imports the other.
"""

from __future__ import annotations

from ctplugin.secp256k1.params import P


def is_square_mod_p(a: int) -> bool:
    """Euler's criterion: a is a quadratic residue (0 counts as one)."""
    return a % P == 0 or pow(a, (P - 1) // 2, P) == 1


def sqrt_mod_p(a: int) -> int | None:
    """The square root of a that is itself a quadratic residue (p ≡ 3 mod 4), or None."""
    y = pow(a, (P + 1) // 4, P)
    return y if y * y % P == a % P else None
