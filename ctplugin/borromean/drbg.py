"""RFC 6979 HMAC-SHA256 DRBG as libsecp256k1 implements it (``secp256k1_rfc6979_hmac_sha256``).

The rangeproof signer and rewinder draw every nonce, digit blinding factor and masking word
from one stream of this generator, seeded with ``nonce ‖ rpser(C) ‖ rpser(gen) ‖ header``
(``../shared/notes/borromean.md`` §3)::

    init:      K = 0^32, V = 1^32
               K = HMAC_K(V ‖ 0x00 ‖ seed); V = HMAC_K(V)
               K = HMAC_K(V ‖ 0x01 ‖ seed); V = HMAC_K(V)
    generate:  from the second call on first K = HMAC_K(V ‖ 0x00); V = HMAC_K(V);
               then V = HMAC_K(V) per 32-byte block of output

The stream is derived from secrets (the nonce); hmac runs in OpenSSL.
"""

from __future__ import annotations

import hmac

from ctplugin.secp256k1.params import N


def _hmac(key: bytes, data: bytes) -> bytes:
    return hmac.digest(key, data, "sha256")


class Rfc6979HmacSha256:
    """The deterministic generator; ``generate()`` returns the next 32 bytes."""

    __slots__ = ("_k", "_retry", "_v")

    def __init__(self, seed: bytes) -> None:
        k = bytes(32)
        v = b"\x01" * 32
        k = _hmac(k, v + b"\x00" + seed)
        v = _hmac(k, v)
        k = _hmac(k, v + b"\x01" + seed)
        v = _hmac(k, v)
        self._k, self._v, self._retry = k, v, False

    def generate(self) -> bytes:
        k, v = self._k, self._v
        if self._retry:
            k = _hmac(k, v + b"\x00")
            v = _hmac(k, v)
        v = _hmac(k, v)
        self._k, self._v, self._retry = k, v, True
        return v


def rpser(encoding: bytes) -> bytes:
    """secp256k1-zkp's ``rangeproof_serialize_point`` from a 33-byte commitment (08/09) or
    generator (0a/0b) encoding: the low prefix bit (1 = y is not a square) as one byte, then x."""
    return bytes((encoding[0] & 1,)) + encoding[1:]


def prover_stream(nonce: bytes, commitment: bytes, generator: bytes, header: bytes,
                  ring_sizes: tuple[int, ...]) -> tuple[list[int], list[bytes]]:
    """The signer's random values (``secp256k1_rangeproof_genrand`` without a message).

    Seed = nonce ‖ rpser(C) ‖ rpser(gen) ‖ header. For each ring i < r−1: one discarded output,
    then outputs until one is a scalar in [1, n): the digit blinding factor sec_i; the last
    ring's is −Σ sec_i. After each ring's sec come its members' 32-byte words w_{i,j}.
    Returns (sec per ring, w per member in flat order).
    """
    rng = Rfc6979HmacSha256(nonce + rpser(commitment) + rpser(generator) + header)
    secs: list[int] = []
    words: list[bytes] = []
    rings = len(ring_sizes)
    for i, size in enumerate(ring_sizes):
        if i < rings - 1:
            rng.generate()
            while True:
                sec = int.from_bytes(rng.generate(), "big")
                if 0 < sec < N:
                    break
            secs.append(sec)
        else:
            secs.append(-sum(secs) % N)
        words.extend(rng.generate() for _ in range(size))
    return secs, words
