"""Constant-time operations on secrets, through coincurve (libsecp256k1).

Everything that multiplies a point by a secret scalar goes through here; the variable-time kernel
never sees a secret. Inputs and outputs are our ``Point``; secrets are 32-byte strings or ints.
"""

from __future__ import annotations

import coincurve

from ctplugin.errors import EncodingError
from ctplugin.secp256k1.params import N
from ctplugin.secp256k1.point import INFINITY, Point


def secret_bytes(secret: int | bytes) -> bytes:
    """Canonical 32-byte form of a secret scalar in [1, N)."""
    value = int.from_bytes(secret, "big") if isinstance(secret, bytes) else int(secret)
    if not 0 < value < N:
        raise EncodingError("secret scalar must be in [1, N)", reason="scalar-range")
    return value.to_bytes(32, "big")


def to_coincurve(point: Point) -> coincurve.PublicKey:
    return coincurve.PublicKey(point.to_bytes(compressed=False))


def from_coincurve(key: coincurve.PublicKey) -> Point:
    raw = key.format(compressed=False)
    return Point(int.from_bytes(raw[1:33], "big"), int.from_bytes(raw[33:], "big"), _trusted=True)


def base_mul(secret: int | bytes) -> Point:
    """secret·G (libsecp256k1 ecmult_gen, constant time)."""
    return from_coincurve(coincurve.PublicKey.from_secret(secret_bytes(secret)))


def mul(secret: int | bytes, point: Point) -> Point:
    """secret·point (libsecp256k1 ecmult_const, constant time)."""
    if point.is_infinity:
        return INFINITY
    return from_coincurve(to_coincurve(point).multiply(secret_bytes(secret)))


def mul_or_zero(secret: int, point: Point) -> Point:
    """Like ``mul`` but a zero scalar gives infinity (e.g. a zero value in a commitment)."""
    return INFINITY if int(secret) % N == 0 else mul(int(secret) % N, point)


# --- signing (the wallet signs P2WPKH with ECDSA and taproot with BIP340) ---------------------

def ecdsa_sign(secret: int | bytes, digest: bytes) -> bytes:
    """DER ECDSA signature of a 32-byte digest: RFC6979 nonce, low S (libsecp256k1)."""
    if len(digest) != 32:
        raise EncodingError("ECDSA signs a 32-byte digest", reason="length")
    return coincurve.PrivateKey(secret_bytes(secret)).sign(digest, hasher=None)


def xonly_public_key(secret: int | bytes) -> bytes:
    """The BIP340 x-only public key of a secret (x of secret·G)."""
    return coincurve.PrivateKey(secret_bytes(secret)).public_key_xonly.format()


def schnorr_sign(secret: int | bytes, digest: bytes, aux_rand: bytes) -> bytes:
    """BIP340 signature of a 32-byte digest with 32 bytes of auxiliary randomness (the nonce
    is derived from the key, the digest and ``aux_rand``; libsecp256k1 checks the result)."""
    if len(digest) != 32 or len(aux_rand) != 32:
        raise EncodingError("BIP340 signs a 32-byte digest with 32 bytes of aux randomness",
                            reason="length")
    return coincurve.PrivateKey(secret_bytes(secret)).sign_schnorr(digest, aux_rand)


def taproot_tweak_secret(secret: int | bytes, tweak: bytes) -> bytes:
    """BIP341's tweaked secret: d negated if d·G has odd y, plus t, negated again if the sum's
    point has odd y (libsecp256k1 ``keypair_xonly_tweak_add``), as 32 bytes."""
    from coincurve._libsecp256k1 import ffi, lib

    ctx = coincurve.context.GLOBAL_CONTEXT.ctx
    keypair = ffi.new("secp256k1_keypair *")
    if not lib.secp256k1_keypair_create(ctx, keypair, secret_bytes(secret)):
        raise EncodingError("invalid secret", reason="scalar-range")
    if len(tweak) != 32:
        raise EncodingError("a taproot tweak is 32 bytes", reason="length")
    if not lib.secp256k1_keypair_xonly_tweak_add(ctx, keypair, tweak):
        raise EncodingError("taproot tweak out of range or gives the point at infinity",
                            reason="scalar-range")
    out = ffi.new("unsigned char[32]")
    lib.secp256k1_keypair_sec(ctx, out, keypair)
    return bytes(ffi.buffer(out, 32))
