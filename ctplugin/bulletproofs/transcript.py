"""The Fiat–Shamir transcript (docs/bulletproofs-format.md §6): a SHA-256 chain over a 32-byte
state c.

    upd(c, P, Q) = SHA256(c ‖ byte(2·f(P) + f(Q)) ‖ P.x ‖ Q.x)      f = "y is not a QR"

Order: [min_value: SHA256(c ‖ LE32(m) ‖ LE64(min_j)…)] → upd(c, V_j, g) for each commitment →
[extra_commit: SHA256(c ‖ extra), also when empty] → y = upd(c, A, S) → z = upd(c, A, S) →
x = upd(c, T1, T2) → c = SHA256(c ‖ −τx ‖ −μ) → (verifier: w = SHA256(c), state unchanged) →
u = SHA256(c ‖ t) → x_k = upd(c, L_k, R_k). A challenge is the new state read big-endian and
must be in [1, n) (the reference rejects rather than reduces).

This class is THE transcript: the prover, rewind and the verifier's pure-Python kernel twin
(``ctplugin.bulletproofs._reference``) all call it; the native verifier setup
(``bulletproof_prepare_var``) is its C port, cross-tested against it state by state.

The flags hashed are recomputed from the points; for points decoded from the proof, the encoding
flag IS f(point) (the decoder returns the QR root and negates it when the flag is set, and −1 is a
non-residue mod p), so the flag bits are hashed as read.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

from ctplugin.bulletproofs.errors import proof_error
from ctplugin.secp256k1.params import N

_sha256 = hashlib.sha256


def challenge(state: bytes) -> int:
    """The scalar of a transcript state; ProofError if it is 0 or ≥ n (probability ~2^-128)."""
    v = int.from_bytes(state, "big")
    if v == 0 or v >= N:
        raise proof_error("challenge-range", "transcript challenge out of range")
    return v


class Transcript:
    """The running state c; each method absorbs per §6 and returns the new state.

    ``Transcript.for_statement`` absorbs what is proved (steps 2–4: min values, commitments with
    the value generator, extra commit); the proof's own messages follow with ``absorb_points``
    (A‖S twice, T1‖T2, each L_k‖R_k), ``absorb`` (−τx‖−μ, then t) and ``peek`` (the verifier's
    t-equation weight).
    """

    __slots__ = ("state",)

    def __init__(self) -> None:
        self.state = bytes(32)

    @classmethod
    def for_statement(cls, commitments: Sequence[bytes], value_gen: bytes,
                      extra_commit: bytes | None = None,
                      min_values: Sequence[int] | None = None) -> Transcript:
        """The transcript after §6 steps 1–4 for 33-byte commitment encodings (08/09 ‖ x) and
        the 33-byte value generator (0a/0b ‖ x). ``min_values`` None and ``extra_commit`` None
        are absent (a present one is hashed even when all zero / empty)."""
        tr = cls()
        if min_values is not None:
            tr.absorb(struct.pack(f"<I{len(min_values)}Q", len(min_values), *min_values))
        fg, gx = value_gen[0] & 1, value_gen[1:33]
        for c in commitments:
            tr.absorb_points(c[0] & 1, fg, c[1:33] + gx)
        if extra_commit is not None:
            tr.absorb(bytes(extra_commit))
        return tr

    def absorb(self, data: bytes) -> bytes:
        self.state = _sha256(self.state + data).digest()
        return self.state

    def absorb_points(self, flag_p: int, flag_q: int, xs: bytes) -> bytes:
        """upd(c, P, Q) with the two f flags and ``xs`` = P.x ‖ Q.x (64 bytes)."""
        self.state = _sha256(self.state + bytes((2 * flag_p + flag_q,)) + xs).digest()
        return self.state

    def peek(self) -> bytes:
        """SHA256(c) without changing c (the verifier's t-equation weight)."""
        return _sha256(self.state).digest()
