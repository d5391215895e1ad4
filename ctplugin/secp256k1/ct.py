"""Constant-time operations on secrets, through coincurve (libsecp256k1).

Everything that multiplies a point by a secret scalar goes through here; the variable-time kernel
never sees a secret. Inputs and outputs are our ``Point``; secrets are 32-byte strings or ints.
The ``*_packed`` functions at the end take and give the kernel's packed points instead, for
provers' loops.
"""

from __future__ import annotations

from typing import Any

import coincurve
from coincurve._libsecp256k1 import ffi, lib

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


# --- packed points (x ‖ y, 64 bytes: the kernel's form) for the provers' loops --------------
#
# The same libsecp256k1 calls as above, straight through coincurve's cffi binding: a Borromean
# signature makes about eighty of these, and coincurve's key objects around each call cost
# about 3 µs of it (a 52-bit proof's signing: 5.11 ms with them, 4.87 ms without).

def _parse_packed(packed: bytes) -> Any:
    if len(packed) != 64:
        raise EncodingError("a packed point is 64 bytes (x ‖ y)", reason="length")
    key = ffi.new("secp256k1_pubkey *")
    if not lib.secp256k1_ec_pubkey_parse(coincurve.context.GLOBAL_CONTEXT.ctx, key,
                                         b"\x04" + packed, 65):
        raise EncodingError("not a point on the curve (x ‖ y below p)", reason="off-curve")
    return key


def _serialize_packed(key: Any) -> bytes:
    out = ffi.new("unsigned char[65]")
    size = ffi.new("size_t *", 65)
    lib.secp256k1_ec_pubkey_serialize(coincurve.context.GLOBAL_CONTEXT.ctx, out, size, key,
                                      lib.SECP256K1_EC_UNCOMPRESSED)
    return bytes(ffi.buffer(out, 65))[1:]


def base_mul_packed(secrets: list[bytes]) -> list[bytes]:
    """secret·G (ecmult_gen, constant time) for each 32-byte secret, as 64 bytes x ‖ y; a
    secret outside [1, N) gives ``EncodingError``."""
    ctx = coincurve.context.GLOBAL_CONTEXT.ctx
    key = ffi.new("secp256k1_pubkey *")
    out = []
    for secret in secrets:
        if len(secret) != 32 or not lib.secp256k1_ec_pubkey_create(ctx, key, secret):
            raise EncodingError("secret scalar must be 32 bytes in [1, N)", reason="scalar-range")
        out.append(_serialize_packed(key))
    return out


def commit_packed(blinds: list[bytes], values: list[bytes], point: bytes,
                  offsets: list[bytes]) -> list[bytes | None]:
    """blind_i·G + value_i·point + offset_i for each i (packed points; ecmult_gen and
    ecmult_const, constant time in the secrets blind_i and value_i, each 32 bytes in [1, N),
    else ``EncodingError``); None where the sum is the point at infinity."""
    if not len(blinds) == len(values) == len(offsets):
        raise EncodingError("one value and one offset per blind", reason="length")
    ctx = coincurve.context.GLOBAL_CONTEXT.ctx
    base = _parse_packed(point)
    terms = ffi.new("secp256k1_pubkey[3]")
    pointers = ffi.new("secp256k1_pubkey *[3]", [terms + 0, terms + 1, terms + 2])
    total = ffi.new("secp256k1_pubkey *")
    out: list[bytes | None] = []
    for blind, value, offset in zip(blinds, values, offsets):
        terms[1] = base[0]
        if (len(blind) != 32 or len(value) != 32
                or not lib.secp256k1_ec_pubkey_create(ctx, terms + 0, blind)
                or not lib.secp256k1_ec_pubkey_tweak_mul(ctx, terms + 1, value)):
            raise EncodingError("secret scalar must be 32 bytes in [1, N)", reason="scalar-range")
        terms[2] = _parse_packed(offset)[0]
        out.append(_serialize_packed(total)
                   if lib.secp256k1_ec_pubkey_combine(ctx, total, pointers, 3) else None)
    return out
