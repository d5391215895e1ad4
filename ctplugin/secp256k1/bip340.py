"""BIP340 Schnorr signatures: the challenge, single verification, and signing with a nonce the
caller chose (BIP340, "Specification"; libsecp256k1 ``src/modules/schnorrsig``).

Keys and nonces are x-only: a 32-byte x coordinate standing for the point with even y
(``lift_x``). With ``bytes(X)`` the 32-byte x of X and ``hash_tag`` BIP340's tagged hash
SHA256(SHA256(tag) ‖ SHA256(tag) ‖ x):

    e = int(hash_BIP0340/challenge(bytes(R) ‖ bytes(P) ‖ m)) mod n          (the challenge)
    (r, s) is valid for P and m  iff  s < n, r < p, and R' = s·G − e·P is not infinity, has
    even y and x(R') = r                                                       (verification)
    sig = bytes(R) ‖ bytes((k + e·d) mod n), d and k negated where d·G, k·G have odd y (signing)

The challenge's tag prefix is one SHA-256 block whose state is computed once per process
(``ctplugin.hashes.tagged_hasher``) and copied per challenge: the script batch computes one
challenge per signature of a block, and a DLC oracle's ``PartialChallenge`` also absorbs
R ‖ P once, so each outcome's challenge hashes only its 32-byte message.

Verification goes through libsecp256k1 (``ctplugin.secp256k1.libsecp``), the same code path as
the script interpreter's single checks; batch verification is ``ctplugin.script.batch``.
"""

from __future__ import annotations

from ctplugin.hashes import tagged_hasher
from ctplugin.secp256k1 import ct, libsecp
from ctplugin.secp256k1.params import N

CHALLENGE_TAG = "BIP0340/challenge"

# State after the tag prefix SHA256(tag) ‖ SHA256(tag): copied by every challenge.
_PREFIX = tagged_hasher(CHALLENGE_TAG)


def challenge(r_x: bytes, p_x: bytes, msg: bytes) -> int:
    """e = int(hash_BIP0340/challenge(r ‖ P.x ‖ m)) mod n (module docstring)."""
    h = _PREFIX.copy()
    h.update(r_x + p_x + msg)
    return int.from_bytes(h.digest(), "big") % N


class PartialChallenge:
    """The challenge hash having absorbed r ‖ P.x for one fixed nonce and key (with the tag
    prefix, two full SHA-256 blocks): ``challenge(msg)`` then hashes only the message."""

    __slots__ = ("_state",)

    def __init__(self, r_x: bytes, p_x: bytes) -> None:
        self._state = _PREFIX.copy()
        self._state.update(r_x + p_x)

    def challenge(self, msg: bytes) -> int:
        """``challenge(r_x, p_x, msg)`` for this object's r_x and p_x."""
        h = self._state.copy()
        h.update(msg)
        return int.from_bytes(h.digest(), "big") % N


def verify(public_key: bytes, msg: bytes, signature: bytes) -> bool:
    """BIP340 verification of a 64-byte signature by a 32-byte x-only key over a message of any
    length; False for anything malformed (wrong sizes, r ≥ p, s ≥ n, a key that does not lift).
    Public data: variable time."""
    if not (isinstance(public_key, bytes) and isinstance(msg, bytes)
            and isinstance(signature, bytes)) or len(public_key) != 32:
        return False
    return libsecp.schnorr_verify(public_key, msg, signature)


def _even_y(secret: int) -> tuple[int, bytes]:
    """(secret or n − secret, x-only of secret·G): the scalar whose point has even y."""
    point = ct.base_mul(secret)
    return (secret if point.has_even_y() else N - secret), point.xonly()


def sign_with_nonce(secret_key: int, nonce: int, msg: bytes) -> bytes:
    """bytes(R) ‖ bytes((k + e·d) mod n) with the caller's nonce k (a DLC oracle's pre-committed
    nonce; BIP340's own signing derives k from the key, aux randomness and message instead).
    Both secrets use the constant-time base multiplication."""
    d, p_x = _even_y(secret_key)
    k, r_x = _even_y(nonce)
    e = challenge(r_x, p_x, msg)
    return r_x + ((k + e * d) % N).to_bytes(32, "big")


__all__ = ["CHALLENGE_TAG", "PartialChallenge", "challenge", "sign_with_nonce", "verify"]
