"""BIP340 signatures and taproot tweaks as claims of the block's one batch (``sighash.md`` §4).

A Schnorr signature (r, s) by key P over message m holds iff

    s·G − R − e·P = ∞,   R = lift_x(r), P = lift_x(pk), e = int(TaggedHash("BIP0340/challenge",
                                                                  r ‖ pk ‖ m)) mod n,

and a script-path commitment Q = P + t·G holds iff t·G + P − Q = ∞ (Q lifted with the control
block's parity). Each is one ``ctplugin.batch.Claim`` over the batch's fixed base, whose index 0
is G (``bulletproofs`` consensus generators: the blinding generator is G): the G coefficient is a
``fixed_const`` term (summed with every other claim's G term before the multiplication), R and Q
are free points, and P is a *shared* term, so a key used by several signatures of the batch is
one point of the MSM. The batch gives every claim its own random 128-bit weight.

Deterministic failures are not claims: s ≥ n, r or a key that does not lift (``lift_many`` gives
None for those) are reported at once by the caller. Points are lifted in one kernel call per
batch of keys (``lift_many``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence

from ctplugin.batch import Claim
from ctplugin.secp256k1 import KIND_COMPRESSED, KIND_XONLY, FixedBase, kernel
from ctplugin.secp256k1.params import N

_k = kernel.backend
G_INDEX = 0
_NEG_ONE = (N - 1).to_bytes(32, "big")
_ONE = (1).to_bytes(32, "big")
_CHALLENGE_PREFIX = hashlib.sha256(
    hashlib.sha256(b"BIP0340/challenge").digest() * 2)  # state after the tag prefix


def challenge(r: bytes, pubkey: bytes, msg: bytes) -> int:
    """e = int(TaggedHash("BIP0340/challenge", r ‖ pk ‖ m)) mod n."""
    h = _CHALLENGE_PREFIX.copy()
    h.update(r + pubkey + msg)
    return int.from_bytes(h.digest(), "big") % N


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


def schnorr_claim(label: Hashable, base: FixedBase, r_point: bytes, p_point: bytes,
                  pubkey: bytes, msg: bytes, sig: bytes) -> Claim:
    """The claim s·G − R − e·P = ∞ of a signature whose R and P are already lifted and whose
    s is below n (the caller checked both)."""
    e = challenge(sig[:32], pubkey, msg)
    s = int.from_bytes(sig[32:], "big")
    return Claim.trusted(label, base, (), _NEG_ONE, r_point, ((p_point, N - e if e else 0),),
                         ((G_INDEX, 1, s),))


def tweak_claim(label: Hashable, base: FixedBase, q_point: bytes, p_point: bytes,
                tweak: int) -> Claim:
    """The claim t·G + P − Q = ∞ (t < n)."""
    return Claim.trusted(label, base, (), _ONE + _NEG_ONE, p_point + q_point, (),
                         ((G_INDEX, 1, tweak),))


def output_key_encoding(output_key: bytes, parity: int) -> bytes:
    """Q as a compressed encoding (02/03 by parity), for ``lift_many(..., KIND_COMPRESSED)``."""
    return bytes((2 + (parity & 1),)) + output_key


__all__ = ["G_INDEX", "KIND_COMPRESSED", "KIND_XONLY", "challenge", "lift_many",
           "output_key_encoding", "schnorr_claim", "tweak_claim"]
