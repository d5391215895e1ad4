"""Hash functions used across Bitcoin, Elements, BIP340 and secp256k1-zkp.

``sha256_midstate`` is the bare SHA-256 compression function of one 64-byte block (no padding,
no finalization), as used by Elements' "fast Merkle root" (FMR) for withash and issuance ids.
hashlib cannot expose it: ``ctplugin._hashes`` (C, the SHA-256 of ``ctplugin/native/sha256.h``
shared with the parser and the secp256k1 kernel) serves it and ``fast_merkle_root`` when built;
the pure-Python definitions below are the specification it is tested against and the fallback.
The same goes for ``length_prefixed_sha256`` (the proof cache's keys) and
``rfc6979_hmac_sha256``, libsecp256k1's deterministic nonce generator (the
rangeproof signer's stream; secret data: the C is constant time, the fallback is OpenSSL's HMAC).
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from types import ModuleType

from ctplugin.errors import EncodingError

_native: ModuleType | None
try:  # the hashing layer's C functions (no import-time work: SHA-NI is probed on first use)
    from ctplugin import _hashes

    _native = _hashes
except ImportError:  # pragma: no cover - only without the compiled extension
    _native = None


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def sha256d(data: bytes) -> bytes:
    """Bitcoin's double SHA-256."""
    return hashlib.sha256(hashlib.sha256(data).digest()).digest()


@cache
def _ripemd160_impl() -> Callable[[bytes], bytes]:
    """OpenSSL's RIPEMD-160 when hashlib offers it; OpenSSL 3 builds without the legacy
    provider do not (``hashlib.new("ripemd160")`` raises ValueError), and python-bitcointx's
    pure-Python RIPEMD-160 (Bitcoin Core's test-framework implementation) serves instead. Same
    digests either way (public data only: neither is constant time). Chosen once, on first use."""
    try:
        hashlib.new("ripemd160", b"")
    except ValueError:
        from bitcointx.core._ripemd160 import ripemd160 as portable

        return portable
    return lambda data: hashlib.new("ripemd160", data).digest()


def ripemd160(data: bytes) -> bytes:
    """RIPEMD-160 of ``data`` (portable: see ``_ripemd160_impl``)."""
    return _ripemd160_impl()(bytes(data))


def hash160(data: bytes | bytearray) -> bytes:
    """Bitcoin's HASH160 = RIPEMD-160(SHA-256(data)) (P2WPKH / P2PKH key hashes)."""
    return _ripemd160_impl()(hashlib.sha256(data).digest())


@cache
def _tag_state(tag: str) -> hashlib._Hash:
    digest = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(digest + digest)


def tagged_hasher(tag: str) -> hashlib._Hash:
    """A SHA-256 object that has absorbed BIP340's tag prefix SHA256(tag) || SHA256(tag) (the
    prefix's state is computed once per tag and copied): ``update`` it with the data, in parts
    if convenient; ``digest()`` is then the tagged hash."""
    return _tag_state(tag).copy()


def tagged_hash(tag: str, data: bytes) -> bytes:
    """BIP340 tagged hash: SHA256(SHA256(tag) || SHA256(tag) || data)."""
    h = _tag_state(tag).copy()
    h.update(data)
    return h.digest()


_K = (
    0x428A2F98, 0x71374491, 0xB5C0FBCF, 0xE9B5DBA5, 0x3956C25B, 0x59F111F1, 0x923F82A4, 0xAB1C5ED5,
    0xD807AA98, 0x12835B01, 0x243185BE, 0x550C7DC3, 0x72BE5D74, 0x80DEB1FE, 0x9BDC06A7, 0xC19BF174,
    0xE49B69C1, 0xEFBE4786, 0x0FC19DC6, 0x240CA1CC, 0x2DE92C6F, 0x4A7484AA, 0x5CB0A9DC, 0x76F988DA,
    0x983E5152, 0xA831C66D, 0xB00327C8, 0xBF597FC7, 0xC6E00BF3, 0xD5A79147, 0x06CA6351, 0x14292967,
    0x27B70A85, 0x2E1B2138, 0x4D2C6DFC, 0x53380D13, 0x650A7354, 0x766A0ABB, 0x81C2C92E, 0x92722C85,
    0xA2BFE8A1, 0xA81A664B, 0xC24B8B70, 0xC76C51A3, 0xD192E819, 0xD6990624, 0xF40E3585, 0x106AA070,
    0x19A4C116, 0x1E376C08, 0x2748774C, 0x34B0BCB5, 0x391C0CB3, 0x4ED8AA4A, 0x5B9CCA4F, 0x682E6FF3,
    0x748F82EE, 0x78A5636F, 0x84C87814, 0x8CC70208, 0x90BEFFFA, 0xA4506CEB, 0xBEF9A3F7, 0xC67178F2,
)  # fmt: skip
_IV = (
    0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19,
)
_M32 = 0xFFFFFFFF


def _rotr(x: int, n: int) -> int:
    return ((x >> n) | (x << (32 - n))) & _M32


def sha256_compress(state: Sequence[int], block: bytes) -> tuple[int, ...]:
    """One SHA-256 compression (FIPS 180-4 §6.2.2) of a 64-byte ``block`` into the eight state
    words ``state``: what resuming a saved hash needs (hashlib cannot start from a midstate)."""
    if len(block) != 64:
        raise EncodingError("sha256_compress takes exactly one 64-byte block", reason="length")
    w = list(struct.unpack(">16I", block))
    for i in range(16, 64):
        s0 = _rotr(w[i - 15], 7) ^ _rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
        s1 = _rotr(w[i - 2], 17) ^ _rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
        w.append((w[i - 16] + s0 + w[i - 7] + s1) & _M32)
    a, b, c, d, e, f, g, h = state
    for i in range(64):
        t1 = h + (_rotr(e, 6) ^ _rotr(e, 11) ^ _rotr(e, 25)) + ((e & f) ^ (~e & g)) + _K[i] + w[i]
        t2 = (_rotr(a, 2) ^ _rotr(a, 13) ^ _rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))
        h, g, f, e, d, c, b, a = g, f, e, (d + t1) & _M32, c, b, a, (t1 + t2) & _M32
    return tuple((s + v) & _M32 for s, v in zip(state, (a, b, c, d, e, f, g, h)))


SHA256_IV = _IV
"""The SHA-256 initial state words (FIPS 180-4 §5.3.3)."""


def _sha256_midstate_py(block: bytes) -> bytes:
    """FIPS 180-4 compression of one block from the standard IV; returns the 8 state words BE."""
    return struct.pack(">8I", *sha256_compress(_IV, block))


sha256_midstate = _native.sha256_midstate if _native is not None else _sha256_midstate_py


def _fast_merkle_root_py(leaves: Sequence[bytes]) -> bytes:
    """Elements ComputeFastMerkleRoot, written as level-by-level reduction.

    An odd node at the end of a level is carried up unchanged: unlike Bitcoin's Merkle tree it
    is NOT paired with itself (Elements dropped that step; the withash vectors with 3 outputs
    confirm it, docs/elements-format.md §1.3).
    """
    if not leaves:
        return bytes(32)
    level = list(leaves)
    while len(level) > 1:
        paired = [sha256_midstate(level[i] + level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) & 1:
            paired.append(level[-1])
        level = paired
    return level[0]


def fast_merkle_root(leaves: Sequence[bytes]) -> bytes:
    """Elements' fast Merkle root: inner node = sha256_midstate(left || right).

    An odd node at the end of a level is promoted unchanged (not paired with itself as in
    Bitcoin); an empty list gives 32 zero bytes; a single leaf is its own root.
    """
    if _native is not None and all(len(leaf) == 32 for leaf in leaves):
        return _native.fast_merkle_root(b"".join(leaves))
    return _fast_merkle_root_py(leaves)


_U32BE = struct.Struct(">I")


def _length_prefixed_sha256_py(prefix: bytes, fields: Iterable[bytes]) -> bytes:
    h = hashlib.sha256(prefix)
    for data in fields:
        if len(data) > 0xFFFF_FFFF:
            raise EncodingError("length_prefixed_sha256: a field exceeds 2^32 - 1 bytes",
                                reason="too-large")
        h.update(_U32BE.pack(len(data)) + data)
    return h.digest()


def length_prefixed_sha256(prefix: bytes, fields: Iterable[bytes]) -> bytes:
    """SHA256(prefix ‖ u32be(len f₀) ‖ f₀ ‖ u32be(len f₁) ‖ f₁ ‖ …): an unambiguous hash of a
    list of byte strings after a fixed prefix (the proof cache's keys). One C call when built;
    ``_length_prefixed_sha256_py`` is its definition."""
    if _native is not None:
        return _native.length_prefixed_sha256(prefix, fields)
    return _length_prefixed_sha256_py(prefix, fields)


_RFC6979_MAX_BLOCKS = 1 << 20


def _hmac(key: bytes, data: bytes) -> bytes:
    return hmac.digest(key, data, "sha256")


class Rfc6979HmacSha256:
    """RFC 6979 HMAC-SHA256 as libsecp256k1 implements it (``secp256k1_rfc6979_hmac_sha256``);
    ``generate()`` returns the next 32 bytes::

        init:      K = 0^32, V = 1^32
                   K = HMAC_K(V ‖ 0x00 ‖ seed); V = HMAC_K(V)
                   K = HMAC_K(V ‖ 0x01 ‖ seed); V = HMAC_K(V)
        generate:  from the second call on first K = HMAC_K(V ‖ 0x00); V = HMAC_K(V);
                   then V = HMAC_K(V) per 32-byte block of output
    """

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


def _rfc6979_hmac_sha256_py(seed: bytes, blocks: int) -> bytes:
    if blocks < 0:
        raise EncodingError("rfc6979_hmac_sha256: blocks must be in [0, 2^20]", reason="length")
    if blocks > _RFC6979_MAX_BLOCKS:
        raise EncodingError("rfc6979_hmac_sha256: blocks must be in [0, 2^20]",
                            reason="too-large")
    rng = Rfc6979HmacSha256(bytes(seed))
    return b"".join(rng.generate() for _ in range(blocks))


def rfc6979_hmac_sha256(seed: bytes, blocks: int) -> bytes:
    """The first ``blocks`` (0..2^20) 32-byte outputs of ``Rfc6979HmacSha256(seed)``, joined:
    one C call when built (about 10 SHA-256 compressions per block, no Python per block)."""
    if _native is not None:
        return bytes(_native.rfc6979_hmac_sha256(seed, blocks))
    return _rfc6979_hmac_sha256_py(seed, blocks)
