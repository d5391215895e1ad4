"""The prover's deterministic randomness (docs/bulletproofs-format.md §7, "Randomness").

``chacha(seed, idx)`` is one ChaCha20 block (20 rounds, DJB layout) with key = seed, word 12 =
idx low 32 bits, word 13 = idx high 32 bits, word 14 = 0, word 15 = ``over``; it yields
``r1 = int_be(block[0:32])`` and ``r2 = int_be(block[32:64])``, retried with ``over + 1`` while
either is ≥ n. The prover draws ``(α0, ρ) = chacha(nonce, 0)``, ``(τ1, τ2) = chacha(nonce, 1)``
and ``(sL_k, sR_k) = chacha(nonce, k + 2)``.

The block function is OpenSSL's (through ``cryptography``): its 16-byte "nonce" is exactly words
12..15 little-endian, and its counter is word 12, so one call yields a run of consecutive blocks.
"""

from __future__ import annotations

import struct

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

from ctplugin.errors import EncodingError
from ctplugin.secp256k1.params import N

_ZERO_BLOCK = bytes(64)


def _keystream(seed: bytes, idx: int, over: int, blocks: int) -> bytes:
    counter = struct.pack("<IIII", idx & 0xFFFFFFFF, idx >> 32, 0, over)
    encryptor = Cipher(algorithms.ChaCha20(seed, counter), mode=None).encryptor()
    return encryptor.update(bytes(64 * blocks))


def chacha_pair(seed: bytes, idx: int) -> tuple[int, int]:
    """The reference's ``scalar_chacha20(seed, idx)``: two scalars below n."""
    if len(seed) != 32:
        raise EncodingError("chacha seed must be 32 bytes", reason="length")
    over = 0
    while True:
        block = _keystream(seed, idx, over, 1)
        r1 = int.from_bytes(block[:32], "big")
        r2 = int.from_bytes(block[32:], "big")
        if r1 < N and r2 < N:
            return r1, r2
        over += 1


def chacha_pairs(seed: bytes, start: int, count: int) -> list[tuple[int, int]]:
    """``[chacha_pair(seed, start + i) for i < count]`` with one keystream call.

    Blocks are consecutive in word 12 while it does not wrap; a block with a value ≥ n (chance
    about 2^-127) is redone on its own with the ``over`` retry.
    """
    if len(seed) != 32:
        raise EncodingError("chacha seed must be 32 bytes", reason="length")
    if count <= 0:
        return []
    if (start & 0xFFFFFFFF) + count > 1 << 32:
        return [chacha_pair(seed, start + i) for i in range(count)]
    stream = _keystream(seed, start, 0, count)
    out = []
    for i in range(count):
        r1 = int.from_bytes(stream[64 * i: 64 * i + 32], "big")
        r2 = int.from_bytes(stream[64 * i + 32: 64 * i + 64], "big")
        out.append((r1, r2) if r1 < N and r2 < N else chacha_pair(seed, start + i))
    return out
