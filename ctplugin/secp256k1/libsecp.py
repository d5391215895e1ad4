"""Public-key operations through libsecp256k1 (coincurve's bundled library), for the checks our
kernel does not batch: single ECDSA and BIP340 verification and x-only key tweaks.

All inputs are public (keys, signatures, messages). The functions mirror what Elements calls:

- ``ecdsa_verify``: Elements' ``CPubKey::Verify`` — the key parsed by ``ec_pubkey_parse``
  (compressed, uncompressed or hybrid, as CPubKey sizes them by their first byte), the
  signature parsed with Bitcoin Core's *lax* DER parser (``ecdsa_signature_parse_der_lax``:
  overlong or padded encodings accepted, values ≥ n or over 32 bytes give a signature that
  never verifies), then normalized to low S (consensus accepts high-S signatures; LOW_S is
  policy) and verified.
- ``schnorr_verify``: BIP340 (``secp256k1_schnorrsig_verify``), any message length.
- ``xonly_tweak_add`` / ``xonly_tweak_add_check``: Q = P + t·G for taproot.

The cffi calls release the GIL, so callers may verify ECDSA signatures from several threads.
"""

from __future__ import annotations

import glob
import os
from functools import cache

import bitcointx.core
import coincurve
from coincurve._libsecp256k1 import ffi, lib
from coincurve.context import GLOBAL_CONTEXT

from ctplugin.hashes import hash160
from ctplugin.secp256k1.params import N

_CTX = GLOBAL_CONTEXT.ctx


def _bitcointx_hash160(msg: bytes | bytearray) -> bytes:
    """``bitcointx.core.Hash160``'s signature over ``ctplugin.hashes.hash160``."""
    return hash160(msg)


@cache
def share_with_bitcointx() -> None:
    """python-bitcointx reaches libsecp256k1 through ctypes, loaded on its first use: point it
    at the one coincurve ships (same library, same symbols), so its signatures, script checks
    and BIP32 derivations do not depend on what the system has installed. Called once, right
    before python-bitcointx's first use (never at import: importing the library has no side
    effects); a path the application set itself is kept.

    It also gives python-bitcointx our HASH160 (``ctplugin.hashes``: OpenSSL's RIPEMD-160 where
    hashlib has it). Version 1.1.5 always hashes with its pure-Python RIPEMD-160
    (bitcointx/core/serialize.py, ``Hash160``), and it hashes every key it builds
    (bitcointx/core/key.py, ``CPubKey.__new__``: the key id), which made one BIP32 derivation
    cost 0.5 ms. Same digests; the library looks the function up at each call."""
    bitcointx.core.Hash160 = _bitcointx_hash160
    if bitcointx.get_custom_secp256k1_path():
        return
    bundled = glob.glob(os.path.join(os.path.dirname(coincurve.__file__), "_libsecp256k1*.so"))
    if bundled:
        bitcointx.set_custom_secp256k1_path(bundled[0])
_PUBKEY_SIZES = {2: 33, 3: 33, 4: 65, 6: 65, 7: 65}
_INVALID_COMPACT = bytes(64)


def parse_der_lax(sig: bytes) -> bytes | None:
    """(r ‖ s) as 64 bytes from a DER-ish signature, following Core's lax parser; None where
    it gives up (then the check fails). r or s over 32 bytes (after stripping leading zeros) or
    ≥ n give 64 zero bytes, a parsable signature that never verifies."""
    n, pos = len(sig), 0
    if pos == n or sig[pos] != 0x30:
        return None
    pos += 1
    if pos == n:
        return None
    lenbyte = sig[pos]
    pos += 1
    if lenbyte & 0x80:
        lenbyte -= 0x80
        if lenbyte > n - pos:
            return None
        pos += lenbyte
    values = []
    for _ in range(2):
        if pos == n or sig[pos] != 0x02:
            return None
        pos += 1
        if pos == n:
            return None
        lenbyte = sig[pos]
        pos += 1
        if lenbyte & 0x80:
            lenbyte -= 0x80
            if lenbyte > n - pos:
                return None
            while lenbyte > 0 and sig[pos] == 0:
                pos += 1
                lenbyte -= 1
            if lenbyte >= 4:
                return None
            length = 0
            while lenbyte > 0:
                length = (length << 8) + sig[pos]
                pos += 1
                lenbyte -= 1
        else:
            length = lenbyte
        if length > n - pos:
            return None
        values.append(sig[pos:pos + length])
        pos += length
    # (the lax parser reads S's bytes without requiring anything after them)
    out = []
    for raw in values:
        stripped = raw.lstrip(b"\x00")
        if len(stripped) > 32:
            return _INVALID_COMPACT
        value = int.from_bytes(stripped, "big")
        if value >= N:
            return _INVALID_COMPACT
        out.append(value)
    return out[0].to_bytes(32, "big") + out[1].to_bytes(32, "big")


def _parse_pubkey(pubkey: bytes) -> object | None:
    if not pubkey or _PUBKEY_SIZES.get(pubkey[0]) != len(pubkey):
        return None
    parsed = ffi.new("secp256k1_pubkey *")
    if not lib.secp256k1_ec_pubkey_parse(_CTX, parsed, pubkey, len(pubkey)):
        return None
    return parsed


def ecdsa_verify(pubkey: bytes, der_sig: bytes, msg32: bytes) -> bool:
    """Elements' CPubKey::Verify (see the module docstring); ``der_sig`` without a hash-type
    byte. Never raises on malformed input: it is a False verdict."""
    if len(msg32) != 32:
        return False
    key = _parse_pubkey(pubkey)
    if key is None:
        return False
    compact = parse_der_lax(der_sig)
    if compact is None:
        return False
    sig = ffi.new("secp256k1_ecdsa_signature *")
    if not lib.secp256k1_ecdsa_signature_parse_compact(_CTX, sig, compact):
        return False
    lib.secp256k1_ecdsa_signature_normalize(_CTX, sig, sig)
    return bool(lib.secp256k1_ecdsa_verify(_CTX, sig, msg32, key))


def _parse_xonly(key: bytes) -> object | None:
    if len(key) != 32:
        return None
    parsed = ffi.new("secp256k1_xonly_pubkey *")
    if not lib.secp256k1_xonly_pubkey_parse(_CTX, parsed, key):
        return None
    return parsed


def schnorr_verify(xonly: bytes, msg: bytes, sig64: bytes) -> bool:
    """BIP340 verification; False for a key that does not lift or a signature not 64 bytes."""
    if len(sig64) != 64:
        return False
    key = _parse_xonly(xonly)
    if key is None:
        return False
    return bool(lib.secp256k1_schnorrsig_verify(_CTX, sig64, msg, len(msg), key))


def xonly_tweak_add(xonly: bytes, tweak: bytes) -> tuple[bytes, int] | None:
    """(x, y parity) of lift_x(xonly) + tweak·G; None if the key does not lift, the tweak is
    ≥ n, or the sum is infinity."""
    key = _parse_xonly(xonly)
    if key is None or len(tweak) != 32:
        return None
    full = ffi.new("secp256k1_pubkey *")
    if not lib.secp256k1_xonly_pubkey_tweak_add(_CTX, full, key, tweak):
        return None
    out = ffi.new("secp256k1_xonly_pubkey *")
    parity = ffi.new("int *")
    lib.secp256k1_xonly_pubkey_from_pubkey(_CTX, out, parity, full)
    raw = ffi.new("unsigned char[32]")
    lib.secp256k1_xonly_pubkey_serialize(_CTX, raw, out)
    return bytes(ffi.buffer(raw, 32)), int(parity[0])


def xonly_tweak_add_check(output_xonly: bytes, parity: int, internal_xonly: bytes,
                          tweak: bytes) -> bool:
    """Is (output_xonly, parity) the point lift_x(internal_xonly) + tweak·G?"""
    key = _parse_xonly(internal_xonly)
    if key is None or len(output_xonly) != 32 or len(tweak) != 32:
        return False
    return bool(lib.secp256k1_xonly_pubkey_tweak_add_check(_CTX, output_xonly, parity & 1, key,
                                                           tweak))
