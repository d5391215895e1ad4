"""BIP340 signatures and taproot tweaks as claims of the block's one batch (docs/sighash.md §4).

A Schnorr signature (r, s) by key P over message m holds iff

    s·G − R − e·P = ∞,   R = lift_x(r), P = lift_x(pk), e = int(TaggedHash("BIP0340/challenge",
                                                                  r ‖ pk ‖ m)) mod n,

(``ctplugin.secp256k1.bip340.challenge``, the tag prefix's hash state precomputed once)

and a script-path commitment Q = P + t·G holds iff t·G + P − Q = ∞ (Q lifted with the control
block's parity). The signatures of a batch are ONE ``SchnorrClaims`` group (a
``ctplugin.batch.ClaimGroup``: each member its own label and random 128-bit weight, the kernel
weighing them all at once) over the batch's fixed base, whose index 0 is G (``bulletproofs``
consensus generators: the blinding generator is G), so Σ w·s joins every other claim's G
coefficient before the multiplication and each signature adds two points (R, P). A tweak is one
``Claim`` (t on G, P and Q free).

Deterministic failures are not claims: s ≥ n, r or a key that does not lift (``lift_many`` gives
None for those) are reported at once by the caller. Points are lifted in one kernel call per
batch of keys (``lift_many``).
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Sequence
from typing import Any

from ctplugin.batch import Claim, ClaimGroup, GroupTerms
from ctplugin.secp256k1 import KIND_COMPRESSED, KIND_XONLY, FixedBase, kernel
from ctplugin.secp256k1.bip340 import challenge
from ctplugin.secp256k1.params import N

_k = kernel.backend
G_INDEX = 0
_NEG_ONE = (N - 1).to_bytes(32, "big")
_ONE = (1).to_bytes(32, "big")


def lift_many(xs: Sequence[bytes], kind: int = KIND_XONLY) -> list[bytes | None]:
    """Packed kernel points of 32-byte x coordinates (BIP340 lift_x, even y) — or of 33-byte
    compressed encodings with ``KIND_COMPRESSED`` — in one kernel call; None for an entry that
    does not decode (x ≥ p, not on the curve, wrong size)."""
    size = 32 if kind == KIND_XONLY else 33
    if not xs:
        return []
    if all(len(x) == size for x in xs):
        try:
            packed = _k.decode_points_var(b"".join(xs), kind)
            return [packed[64 * i: 64 * i + 64] for i in range(len(xs))]
        except ValueError:
            pass  # some entry is bad: decode one by one to find it
    out: list[bytes | None] = []
    for x in xs:
        try:
            out.append(_k.decode_points_var(x, kind) if len(x) == size else None)
        except ValueError:
            out.append(None)
    return out


def tweak_claim(label: Hashable, base: FixedBase, q_point: bytes, p_point: bytes,
                tweak: int) -> Claim:
    """The claim t·G + P − Q = ∞ (t < n)."""
    return Claim.trusted(label, base, (), _ONE + _NEG_ONE, p_point + q_point, (),
                         ((G_INDEX, 1, tweak),))


class SchnorrClaims(ClaimGroup):
    """Many signatures' claims s·G − R − e·P = ∞ as ONE group: the kernel weighs them all at
    once (member weights w: Σ w·s onto G, −w on each R, −w·e on each P), so a block's
    signatures cost no Python per signature in the batch. ``points`` are R₀ P₀ R₁ P₁ …
    (lifted), ``sigs``/``keys``/``msgs`` the signatures, keys and messages, one per label;
    every s must be below n (the caller checked)."""

    __slots__ = ("_all", "_m", "_rp", "_s")

    def __init__(self, base: FixedBase, labels: Sequence[Hashable], points: bytes,
                 keys: Sequence[bytes], msgs: Sequence[bytes], sigs: Sequence[bytes]) -> None:
        super().__init__(base, labels)
        self._rp = points
        self._s = b"".join(sig[32:64] for sig in sigs)
        # the multipliers of R and P per member, interleaved like the points: −1, −e (mod n)
        self._m = b"".join(_NEG_ONE + (N - challenge(sig[:32], key, msg)).to_bytes(32, "big")
                           for key, msg, sig in zip(keys, msgs, sigs))
        self._all = array("I", range(len(sigs))).tobytes()

    def terms(self, acc: Any, members: bytes, weights: bytes) -> GroupTerms:
        if members == self._all:  # the whole group (a batch's first check): nothing to select
            points, s_sel, m_sel = self._rp, self._s, self._m
        else:
            idx = array("I")
            idx.frombytes(members)
            rp, s, m = self._rp, self._s, self._m
            points = b"".join(rp[128 * i: 128 * i + 128] for i in idx)
            s_sel = b"".join(s[32 * i: 32 * i + 32] for i in idx)
            m_sel = b"".join(m[64 * i: 64 * i + 64] for i in idx)
        acc.add_const(G_INDEX, 1, _k.scalar_vec_inner(weights, s_sel))
        # every weight twice (w₀ w₀ w₁ w₁ …, 8-byte lanes copied) times (−1, −e) per member
        lanes = array("Q")
        lanes.frombytes(weights)
        twice = array("Q", bytes(2 * len(weights)))
        for k in range(4):
            twice[k::8] = twice[4 + k::8] = lanes[k::4]
        return GroupTerms(_k.scalar_vec_mul(twice.tobytes(), m_sel), points, b"", b"")


def output_key_encoding(output_key: bytes, parity: int) -> bytes:
    """Q as a compressed encoding (02/03 by parity), for ``lift_many(..., KIND_COMPRESSED)``."""
    return bytes((2 + (parity & 1),)) + output_key


__all__ = ["G_INDEX", "KIND_COMPRESSED", "KIND_XONLY", "SchnorrClaims", "lift_many",
           "output_key_encoding", "tweak_claim"]
