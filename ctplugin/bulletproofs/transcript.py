"""The Fiat–Shamir transcript (bulletproofs-format.md §6): a SHA-256 chain over a 32-byte state c.

    upd(c, P, Q) = SHA256(c ‖ byte(2·f(P) + f(Q)) ‖ P.x ‖ Q.x)      f = "y is not a QR"

Order: [min_value: SHA256(c ‖ LE32(m) ‖ LE64(min_j)…)] → upd(c, V_j, g) for each commitment →
[extra_commit: SHA256(c ‖ extra), also when empty] → y = upd(c, A, S) → z = upd(c, A, S) →
x = upd(c, T1, T2) → c = SHA256(c ‖ −τx ‖ −μ) → (verifier: w = SHA256(c), state unchanged) →
u = SHA256(c ‖ t) → x_k = upd(c, L_k, R_k). A challenge is the new state read big-endian and
must be in [1, n) (the reference rejects rather than reduces).

The flags hashed are recomputed from the points; for points decoded from the proof, the encoding
flag IS f(point) (the decoder returns the QR root and negates it when the flag is set, and −1 is a
non-residue mod p), so the flag bits are hashed as read.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

from ctplugin.errors import ProofError
from ctplugin.secp256k1.params import N

_sha256 = hashlib.sha256


def challenge(state: bytes) -> int:
    """The scalar of a transcript state; ProofError if it is 0 or ≥ n (probability ~2^-128)."""
    v = int.from_bytes(state, "big")
    if v == 0 or v >= N:
        raise ProofError("transcript challenge out of range")
    return v


class Transcript:
    """The running state c; each method absorbs per §6 and returns the new state."""

    __slots__ = ("state",)

    def __init__(self) -> None:
        self.state = bytes(32)

    def absorb(self, data: bytes) -> bytes:
        self.state = _sha256(self.state + data).digest()
        return self.state

    def absorb_pair(self, flag_p: int, x_p: bytes, flag_q: int, x_q: bytes) -> bytes:
        """upd(c, P, Q) with the two f flags and the 32-byte x coordinates."""
        self.state = _sha256(self.state + bytes((2 * flag_p + flag_q,)) + x_p + x_q).digest()
        return self.state

    def absorb_min_values(self, min_values: Sequence[int]) -> bytes:
        return self.absorb(struct.pack(f"<I{len(min_values)}Q", len(min_values), *min_values))

    def absorb_commitments(self, commitments: Sequence[bytes], value_gen: bytes) -> bytes:
        """upd(c, V_j, g) for 33-byte encodings (08/09 ‖ x and 0a/0b ‖ x: low bit = f)."""
        fg, gx = value_gen[0] & 1, value_gen[1:]
        for c in commitments:
            self.absorb_pair(c[0] & 1, c[1:], fg, gx)
        return self.state

    def peek(self) -> bytes:
        """SHA256(c) without changing c (the verifier's t-equation weight)."""
        return _sha256(self.state).digest()
