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
