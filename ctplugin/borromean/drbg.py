"""The rangeproof signer's random stream: libsecp256k1's RFC 6979 HMAC-SHA256 DRBG
(``ctplugin.hashes.Rfc6979HmacSha256``, ``secp256k1_rfc6979_hmac_sha256``).

The rangeproof signer and rewinder draw every nonce, digit blinding factor and masking word
from one stream of this generator, seeded with ``nonce ‖ rpser(C) ‖ rpser(gen) ‖ header``
(``docs/borromean.md`` §3)::

    init:      K = 0^32, V = 1^32
               K = HMAC_K(V ‖ 0x00 ‖ seed); V = HMAC_K(V)
               K = HMAC_K(V ‖ 0x01 ‖ seed); V = HMAC_K(V)
    generate:  from the second call on first K = HMAC_K(V ‖ 0x00); V = HMAC_K(V);
               then V = HMAC_K(V) per 32-byte block of output

The stream is derived from secrets (the nonce): ``hashes.rfc6979_hmac_sha256`` draws it in one
constant-time C call (OpenSSL's HMAC without the extension).
"""

from __future__ import annotations

from collections.abc import Iterator

from ctplugin.hashes import rfc6979_hmac_sha256
from ctplugin.secp256k1.params import N


def _outputs(seed: bytes, expected: int) -> Iterator[bytes]:
    """The generator's outputs one by one: the first ``expected`` from one call, more on demand
    (a rejected draw, probability about 2^-128 each, needs one more)."""
    have = 0
    while True:
        stream = rfc6979_hmac_sha256(seed, max(expected, 2 * have, 1))
        for at in range(32 * have, len(stream), 32):
            yield stream[at: at + 32]
        have = len(stream) // 32


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
    rings = len(ring_sizes)
    draws = _outputs(nonce + rpser(commitment) + rpser(generator) + header,
                     sum(ring_sizes) + 2 * (rings - 1))
    secs: list[int] = []
    words: list[bytes] = []
    for i, size in enumerate(ring_sizes):
        if i < rings - 1:
            next(draws)
            while True:
                sec = int.from_bytes(next(draws), "big")
                if 0 < sec < N:
                    break
            secs.append(sec)
        else:
            secs.append(-sum(secs) % N)
        words.extend(next(draws) for _ in range(size))
    return secs, words
