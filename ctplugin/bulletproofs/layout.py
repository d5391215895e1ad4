"""Proof byte layout and parameter limits (docs/bulletproofs-format.md §5).

N = nbits·m (a power of two ≥ 4), lg = log2(N) − 1:

    0     32   −τx mod n (stored negated)
    32    32   −μ mod n (stored negated)
    64    1    flags: bit0 f(A), bit1 f(S), bit2 f(T1), bit3 f(T2); bits 4..7 must be zero (ours)
    65    128  A.x, S.x, T1.x, T2.x
    193   32   t = ⟨l, r⟩
    225   128  a1, a2, b1, b2
    353   ⌈2lg/8⌉  flags of L0, R0, L1, R1, … (point j: byte j/8, bit j%8); unused bits zero (ours)
    …     64·lg    L0.x, R0.x, L1.x, R1.x, …

f(P) = 1 iff P.y is not a quadratic residue. Total 193 + 32·(1 + 2·lg + 4) + ⌈2lg/8⌉ bytes:
675 / 739 / 803 / 867 / 932 / 1060 for m = 1 / 2 / 4 / 8 / 16 / 64 at 64 bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ctplugin.bulletproofs.errors import proof_error

MAX_NBITS = 64
MAX_AGGREGATION = 64
OFF_TAUX, OFF_MU, OFF_FLAGS, OFF_POINTS, OFF_T, OFF_AB, OFF_LR_FLAGS = 0, 32, 64, 65, 193, 225, 353


@dataclass(frozen=True, slots=True)
class Layout:
    """Shape of a proof over ``m`` values of ``nbits`` bits."""

    nbits: int
    m: int
    n: int  # N = nbits·m
    lg: int  # number of L/R pairs
    lr_flag_bytes: int
    length: int


def _is_pow2(v: int) -> bool:
    return v > 0 and v & (v - 1) == 0


@lru_cache(maxsize=512)
def layout(nbits: int, m: int) -> Layout:
    """The layout for (nbits, m); ProofError for unsupported parameters.

    Supported: m a power of two in [1, 64], nbits a power of two in [1, 64], N = nbits·m ≥ 4
    (the reference's explicit small case N ≤ 2 has no use at nbits ≥ 4 and is not supported).
    """
    if not isinstance(nbits, int) or not isinstance(m, int):
        raise proof_error("parameters", "nbits and m must be integers")
    if not (_is_pow2(m) and m <= MAX_AGGREGATION):
        raise proof_error("parameters",
                          f"aggregation m must be a power of two in [1, {MAX_AGGREGATION}]")
    if not (_is_pow2(nbits) and nbits <= MAX_NBITS):
        raise proof_error("parameters", f"nbits must be a power of two in [1, {MAX_NBITS}]")
    n = nbits * m
    if n < 4:
        raise proof_error("parameters", "nbits·m must be at least 4")
    lg = n.bit_length() - 2
    flag_bytes = (2 * lg + 7) // 8
    return Layout(nbits, m, n, lg, flag_bytes, OFF_LR_FLAGS + flag_bytes + 64 * lg)


MAX_PROOF_LENGTH = layout(MAX_NBITS, MAX_AGGREGATION).length


def proof_length(nbits: int, m: int) -> int:
    return layout(nbits, m).length
