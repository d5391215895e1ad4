"""secp256k1-zkp, the C reference, as wallycore bundles it, called through ctypes.

wallycore's extension module links secp256k1-zkp statically and exports its symbols
(``secp256k1_surjectionproof_*``, ``secp256k1_rangeproof_*``, ``secp256k1_schnorrsig_verify``,
``secp256k1_ecdsa_verify``, ...), so the reference can be called on any machine where wallycore
installs from PyPI. ``library()`` loads it once (None when wallycore is absent); each verifier
class wraps one module of it. For cross-checks in tests and ``*_ref`` benchmark rows only.
"""

from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Sequence
from functools import cache

CONTEXT_VERIFY_SIGN = 0x0301  # SECP256K1_CONTEXT_VERIFY | SECP256K1_CONTEXT_SIGN
_SURJECTION_PROOF_STRUCT_BYTES = 16384  # secp256k1_surjectionproof: 8264 bytes on x86-64


@cache
def library() -> ctypes.CDLL | None:
    """The shared object carrying secp256k1-zkp (wallycore's extension), or None."""
    try:
        import _wallycore  # the extension module that carries secp256k1-zkp
    except ImportError:
        return None
    path = _wallycore.__file__
    if not path or not os.path.exists(path):  # pragma: no cover - unusual installs
        candidates = glob.glob(os.path.join(os.path.dirname(path or ""), "_wallycore*.so"))
        if not candidates:
            return None
        path = candidates[0]
    lib = ctypes.CDLL(path)
    lib.secp256k1_context_create.restype = ctypes.c_void_p
    lib.secp256k1_context_create.argtypes = [ctypes.c_uint]
    return lib


@cache
def context() -> int | None:
    """One verify+sign context for the whole process (None without the library)."""
    lib = library()
    if lib is None:
        return None
    ctx: int = lib.secp256k1_context_create(CONTEXT_VERIFY_SIGN)
    return ctx


class Surjection:
    """secp256k1-zkp's surjection-proof parser and verifier."""

    def __init__(self, lib: ctypes.CDLL, ctx: int) -> None:
        self._lib = lib
        self._ctx = ctx
        for name in ("secp256k1_generator_parse", "secp256k1_surjectionproof_parse",
                     "secp256k1_surjectionproof_verify"):
            getattr(lib, name).restype = ctypes.c_int
        lib.secp256k1_generator_parse.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                  ctypes.c_char_p]
        lib.secp256k1_surjectionproof_parse.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                        ctypes.c_char_p, ctypes.c_size_t]
        lib.secp256k1_surjectionproof_verify.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]

    def parse_generators(self, serialized: Sequence[bytes]) -> bytes | None:
        """Concatenated 64-byte internal generators, or None if any fails to parse."""
        out = ctypes.create_string_buffer(64 * len(serialized))
        for i, data in enumerate(serialized):
            one = ctypes.create_string_buffer(64)
            if not self._lib.secp256k1_generator_parse(self._ctx, one, bytes(data)):
                return None
            ctypes.memmove(ctypes.addressof(out) + 64 * i, one, 64)
        return out.raw

    def parse_proof(self, proof: bytes) -> ctypes.Array[ctypes.c_char] | None:
        buf = ctypes.create_string_buffer(_SURJECTION_PROOF_STRUCT_BYTES)
        ok = self._lib.secp256k1_surjectionproof_parse(self._ctx, buf, bytes(proof), len(proof))
        return buf if ok else None

    def verify_parsed(self, proof: ctypes.Array[ctypes.c_char], inputs: bytes, n: int,
                      output: bytes) -> bool:
        return bool(self._lib.secp256k1_surjectionproof_verify(self._ctx, proof, inputs, n,
                                                                 output))

    def verify(self, proof: bytes, input_generators: Sequence[bytes],
               output_generator: bytes) -> bool:
        """Parse everything and verify, like Elements does (False on any parse failure)."""
        parsed = self.parse_proof(proof)
        inputs = self.parse_generators(input_generators)
        output = self.parse_generators([output_generator])
        if parsed is None or inputs is None or output is None:
            return False
        return self.verify_parsed(parsed, inputs, len(input_generators), output)


@cache
def surjection() -> Surjection | None:
    """The reference surjection verifier, or None when wallycore is not installed."""
    lib, ctx = library(), context()
    return None if lib is None or ctx is None else Surjection(lib, ctx)


_u64p = ctypes.POINTER(ctypes.c_uint64)


class Rangeproof:
    """secp256k1-zkp's Borromean ``rangeproof`` module: info, verify, rewind, sign.

    Commitments and generators are 33-byte encodings (08/09, 0a/0b); ``parse_commitment`` /
    ``parse_generator`` give the internal 64-byte forms the ``*_parsed`` calls take, so a
    benchmark can time the proof work alone.
    """

    def __init__(self, lib: ctypes.CDLL, ctx: int) -> None:
        self._lib = lib
        self._ctx = ctx
        vp, cp, sz, u64, i = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64,
                              ctypes.c_int)
        signatures = {
            "secp256k1_pedersen_commitment_parse": [vp, cp, cp],
            "secp256k1_generator_parse": [vp, cp, cp],
            "secp256k1_rangeproof_info": [vp, ctypes.POINTER(i), ctypes.POINTER(i), _u64p, _u64p,
                                          cp, sz],
            "secp256k1_rangeproof_verify": [vp, _u64p, _u64p, cp, cp, sz, cp, sz, cp],
            "secp256k1_rangeproof_rewind": [vp, cp, _u64p, cp, ctypes.POINTER(sz), cp, _u64p,
                                            _u64p, cp, cp, sz, cp, sz, cp],
            "secp256k1_rangeproof_sign": [vp, cp, ctypes.POINTER(sz), u64, cp, cp, cp, i, i, u64,
                                          cp, sz, cp, sz, cp],
        }
        for name, argtypes in signatures.items():
            fn = getattr(lib, name)
            fn.restype = ctypes.c_int
            fn.argtypes = argtypes

    def parse_commitment(self, encoding: bytes) -> bytes | None:
        if len(encoding) != 33:  # the C reads exactly 33 bytes
            return None
        out = ctypes.create_string_buffer(64)
        ok = self._lib.secp256k1_pedersen_commitment_parse(self._ctx, out, bytes(encoding))
        return out.raw if ok else None

    def parse_generator(self, encoding: bytes) -> bytes | None:
        if len(encoding) != 33:  # the C reads exactly 33 bytes
            return None
        out = ctypes.create_string_buffer(64)
        ok = self._lib.secp256k1_generator_parse(self._ctx, out, bytes(encoding))
        return out.raw if ok else None

    def info(self, proof: bytes) -> tuple[int, int, int, int] | None:
        """(exp, mantissa, min, max), or None when the header is rejected."""
        exp, mantissa = ctypes.c_int(), ctypes.c_int()
        lo, hi = ctypes.c_uint64(), ctypes.c_uint64()
        ok = self._lib.secp256k1_rangeproof_info(self._ctx, ctypes.byref(exp),
                                                 ctypes.byref(mantissa), ctypes.byref(lo),
                                                 ctypes.byref(hi), bytes(proof), len(proof))
        return (exp.value, mantissa.value, lo.value, hi.value) if ok else None

    def verify_parsed(self, proof: bytes, commitment: bytes, generator: bytes,
                      extra_commit: bytes = b"") -> tuple[int, int] | None:
        lo, hi = ctypes.c_uint64(), ctypes.c_uint64()
        ok = self._lib.secp256k1_rangeproof_verify(
            self._ctx, ctypes.byref(lo), ctypes.byref(hi), commitment, proof, len(proof),
            extra_commit or None, len(extra_commit), generator)
        return (lo.value, hi.value) if ok else None

    def verify(self, proof: bytes, commitment: bytes, generator: bytes,
               extra_commit: bytes = b"") -> tuple[int, int] | None:
        """(min, max) as the C proves them, or None (also when an encoding does not parse)."""
        c, g = self.parse_commitment(commitment), self.parse_generator(generator)
        if c is None or g is None:
            return None
        return self.verify_parsed(bytes(proof), c, g, bytes(extra_commit))

    def rewind_parsed(self, proof: bytes, commitment: bytes, generator: bytes,
                      extra_commit: bytes, nonce: bytes,
                      message_len: int = 4096) -> tuple[int, bytes, bytes, int, int] | None:
        blind = ctypes.create_string_buffer(32)
        value, lo, hi = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
        message = ctypes.create_string_buffer(max(message_len, 1))
        outlen = ctypes.c_size_t(message_len)
        ok = self._lib.secp256k1_rangeproof_rewind(
            self._ctx, blind, ctypes.byref(value), message, ctypes.byref(outlen), bytes(nonce),
            ctypes.byref(lo), ctypes.byref(hi), commitment, proof, len(proof),
            extra_commit or None, len(extra_commit), generator)
        if not ok:
            return None
        return value.value, blind.raw, message.raw[: outlen.value], lo.value, hi.value

    def rewind(self, proof: bytes, commitment: bytes, generator: bytes, extra_commit: bytes,
               nonce: bytes, message_len: int = 4096) -> tuple[int, bytes, bytes, int, int] | None:
        """(value, blind, message, min, max) or None."""
        c, g = self.parse_commitment(commitment), self.parse_generator(generator)
        if c is None or g is None:
            return None
        return self.rewind_parsed(bytes(proof), c, g, bytes(extra_commit), nonce, message_len)

    def sign(self, value: int, blind: bytes, nonce: bytes, commitment: bytes, generator: bytes,
             min_value: int = 0, exp: int = 0, min_bits: int = 0, message: bytes = b"",
             extra_commit: bytes = b"") -> bytes | None:
        """``secp256k1_rangeproof_sign`` (encodings in, proof bytes out, None on failure)."""
        c, g = self.parse_commitment(commitment), self.parse_generator(generator)
        if c is None or g is None:
            return None
        return self.sign_parsed(value, blind, nonce, c, g, min_value, exp, min_bits, message,
                                extra_commit)

    def sign_parsed(self, value: int, blind: bytes, nonce: bytes, commitment: bytes,
                    generator: bytes, min_value: int = 0, exp: int = 0, min_bits: int = 0,
                    message: bytes = b"", extra_commit: bytes = b"") -> bytes | None:
        out = ctypes.create_string_buffer(5134)
        plen = ctypes.c_size_t(5134)
        ok = self._lib.secp256k1_rangeproof_sign(
            self._ctx, out, ctypes.byref(plen), min_value, commitment, bytes(blind),
            bytes(nonce), exp, min_bits, value, message or None, len(message),
            extra_commit or None, len(extra_commit), generator)
        return out.raw[: plen.value] if ok else None


@cache
def rangeproof() -> Rangeproof | None:
    """The reference rangeproof module, or None when wallycore is not installed."""
    lib, ctx = library(), context()
    return None if lib is None or ctx is None else Rangeproof(lib, ctx)


class Signatures:
    """secp256k1-zkp's BIP340 and ECDSA verification, called the way Elements calls them: the
    key is parsed for every check (XOnlyPubKey::VerifySchnorr, CPubKey::Verify)."""

    def __init__(self, lib: ctypes.CDLL, ctx: int) -> None:
        self._lib = lib
        self._ctx = ctx
        for name in ("secp256k1_xonly_pubkey_parse", "secp256k1_schnorrsig_verify",
                     "secp256k1_ec_pubkey_parse", "secp256k1_ecdsa_signature_parse_der",
                     "secp256k1_ecdsa_signature_normalize", "secp256k1_ecdsa_verify"):
            getattr(lib, name).restype = ctypes.c_int
        lib.secp256k1_xonly_pubkey_parse.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                     ctypes.c_char_p]
        lib.secp256k1_schnorrsig_verify.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                    ctypes.c_char_p, ctypes.c_size_t,
                                                    ctypes.c_char_p]
        lib.secp256k1_ec_pubkey_parse.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                  ctypes.c_char_p, ctypes.c_size_t]
        lib.secp256k1_ecdsa_signature_parse_der.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                            ctypes.c_char_p, ctypes.c_size_t]
        lib.secp256k1_ecdsa_signature_normalize.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                            ctypes.c_char_p]
        lib.secp256k1_ecdsa_verify.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                               ctypes.c_char_p, ctypes.c_char_p]
        self._key = ctypes.create_string_buffer(64)
        self._sig = ctypes.create_string_buffer(64)

    def schnorr_verify(self, xonly: bytes, msg: bytes, sig: bytes) -> bool:
        """secp256k1_xonly_pubkey_parse then secp256k1_schnorrsig_verify (False if either
        fails)."""
        lib, ctx, key = self._lib, self._ctx, self._key
        if len(sig) != 64 or not lib.secp256k1_xonly_pubkey_parse(ctx, key, xonly):
            return False
        return bool(lib.secp256k1_schnorrsig_verify(ctx, sig, msg, len(msg), key))

    def ecdsa_verify(self, pubkey: bytes, der: bytes, msg32: bytes) -> bool:
        """ec_pubkey_parse, strict DER parse, normalize (low S), ecdsa_verify."""
        lib, ctx, key, sig = self._lib, self._ctx, self._key, self._sig
        if not lib.secp256k1_ec_pubkey_parse(ctx, key, pubkey, len(pubkey)):
            return False
        if not lib.secp256k1_ecdsa_signature_parse_der(ctx, sig, der, len(der)):
            return False
        lib.secp256k1_ecdsa_signature_normalize(ctx, sig, sig)
        return bool(lib.secp256k1_ecdsa_verify(ctx, sig, msg32, key))


@cache
def signatures() -> Signatures | None:
    """The reference signature verifier, or None when wallycore is not installed."""
    lib, ctx = library(), context()
    return None if lib is None or ctx is None else Signatures(lib, ctx)
