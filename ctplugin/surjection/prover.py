"""Surjection proof generation for wallets, deterministic and byte-compatible with secp256k1-zkp.

``generate`` = ``secp256k1_surjectionproof_initialize`` (pick the ring: ``n_used`` distinct
inputs drawn with a seeded CSPRNG until one carries the output's asset, at most
``max_iterations`` tries) followed by ``secp256k1_surjectionproof_generate`` (Borromean ring
signature with the secret x = r_out − r_in, the asset blinding factor difference). With the
same 32-byte seed it produces exactly the bytes libwally's ``wally_asset_surjectionproof`` does.

Secrets are x, the nonce k and the blinding factors. They are only touched by libsecp256k1's
constant-time code through coincurve (k·G via ``ct.base_mul``; x = r_out − r_in and
s = k − e·x via ``secp256k1_ec_seckey_{negate,tweak_add,tweak_mul}``). The forged ring members
use public values only (their s_j are published), so they run on the variable-time kernel, as
in the C.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from coincurve._libsecp256k1 import ffi, lib
from coincurve.context import GLOBAL_CONTEXT

from ctplugin.errors import ProofError
from ctplugin.pedersen import Generator, generator_generate_blinded
from ctplugin.secp256k1 import ct, g_table
from ctplugin.secp256k1.params import N
from ctplugin.surjection.proof import (
    MAX_INPUTS,
    MAX_USED_INPUTS,
    WALLET_USED_INPUTS,
    SurjectionProof,
)
from ctplugin.surjection.verifier import (
    _INFINITY,
    borromean_hash,
    compressed,
    ring_public_keys,
    surjection_message,
)


class SeededIndexStream:
    """secp256k1-zkp's surjection CSPRNG: uniform indices in [0, rand_max) from a 32-byte seed.

    The state starts as the seed; bytes are consumed one at a time (two, big-endian, when
    rand_max > 256); when fewer than ``increment + 1`` unread bytes remain the state becomes
    SHA256(state). Samples at or above the largest multiple of rand_max are discarded.
    """

    __slots__ = ("_pos", "_state")

    def __init__(self, seed: bytes) -> None:
        if len(seed) != 32:
            raise ProofError("surjection proof seed must be 32 bytes", reason="parameters")
        self._state = bytes(seed)
        self._pos = 0

    def next(self, rand_max: int) -> int:
        wide = rand_max > 256
        increment = 2 if wide else 1
        limit = ((0x10000 if wide else 0x100) // rand_max) * rand_max
        while True:
            if self._pos + increment >= 32:
                self._state = hashlib.sha256(self._state).digest()
                self._pos = 0
            value = self._state[self._pos]
            if wide:
                value = value << 8 | self._state[self._pos + 1]
            self._pos += increment
            if value < limit:
                return value % rand_max


def select_inputs(input_assets: Sequence[bytes], output_asset: bytes, n_used: int, seed: bytes,
                  max_iterations: int = 100) -> tuple[tuple[int, ...], int]:
    """``secp256k1_surjectionproof_initialize``: (sorted used indices, index of the real input).

    Each try draws ``n_used`` distinct indices; the try succeeds when a drawn index (including a
    repeated draw) carries ``output_asset``; the real input is the last such draw. ``ProofError``
    when no try in ``max_iterations`` succeeds (the caller retries with another seed).
    """
    n = len(input_assets)
    if not 1 <= n <= MAX_INPUTS:
        raise ProofError(f"a surjection proof covers 1..{MAX_INPUTS} inputs, got {n}",
                         reason="parameters")
    if not 1 <= n_used <= min(n, MAX_USED_INPUTS):
        raise ProofError(f"cannot use {n_used} of {n} inputs", reason="parameters")
    if any(len(a) != 32 for a in input_assets) or len(output_asset) != 32:
        raise ProofError("asset tags must be 32 bytes", reason="parameters")
    stream = SeededIndexStream(seed)
    for _ in range(max_iterations):
        used: set[int] = set()
        real: int | None = None
        for _ in range(n_used):
            while True:
                index = stream.next(n)
                if input_assets[index] == output_asset:
                    real = index
                if index not in used:
                    used.add(index)
                    break
        if real is not None:
            return tuple(sorted(used)), real
    raise ProofError(f"no input carries the output asset after {max_iterations} tries",
                     reason="no-matching-input")


def nonce_scalars(count: int, secret: bytes) -> list[bytes]:
    """``surjection_genrand``: count pseudo-random scalars from the secret key.

    A 36-byte buffer le32(j) ‖ secret is hashed, and the 32-byte digest overwrites the buffer's
    first 32 bytes before the next index is written (so later inputs mix earlier digests).
    """
    buf = bytearray(4) + bytearray(secret)
    out = []
    for j in range(count):
        buf[0:4] = j.to_bytes(4, "little")
        digest = hashlib.sha256(buf).digest()
        buf[0:32] = digest
        if int.from_bytes(digest, "big") >= N:
            raise ProofError("nonce derivation overflowed the group order; use another seed",
                             reason="retry")
        out.append(digest)
    buf[:] = bytes(len(buf))
    return out


# --- constant-time scalar arithmetic on secrets (libsecp256k1 through coincurve's cffi) -------

def _seckey(value: bytes) -> object:
    return ffi.new("unsigned char[32]", value)


def _ct_sub(a: bytes, b: bytes) -> bytes:
    """a − b mod n for secrets a, b in [0, n) (b = 0 and a = 0 allowed); zero result → error."""
    if b == bytes(32):
        result = a
    else:
        key = _seckey(b)
        lib.secp256k1_ec_seckey_negate(GLOBAL_CONTEXT.ctx, key)
        if a != bytes(32) and not lib.secp256k1_ec_seckey_tweak_add(GLOBAL_CONTEXT.ctx, key, a):
            raise ProofError("asset blinding factors are equal", reason="degenerate")
        result = bytes(ffi.buffer(key, 32))
    if result == bytes(32):
        raise ProofError("asset blinding factors are equal", reason="degenerate")
    return result


def _ct_nonce_minus(k: bytes, e: bytes, x: bytes) -> bytes:
    """s = k − e·x mod n; x and k secret, e public non-zero. Zero s → error (as the C)."""
    key = _seckey(x)
    minus_e = (N - int.from_bytes(e, "big")).to_bytes(32, "big")
    if not lib.secp256k1_ec_seckey_tweak_mul(GLOBAL_CONTEXT.ctx, key, minus_e):
        raise ProofError("invalid secret key in surjection proof", reason="degenerate")
    if not lib.secp256k1_ec_seckey_tweak_add(GLOBAL_CONTEXT.ctx, key, k):
        raise ProofError("surjection proof s is zero; use another seed", reason="retry")
    return bytes(ffi.buffer(key, 32))


def _check_scalar(value: bytes, what: str) -> bytes:
    if len(value) != 32 or int.from_bytes(value, "big") >= N:
        raise ProofError(f"{what} must be a 32-byte scalar below the group order",
                         reason="parameters")
    return bytes(value)


def generate(*, input_assets: Sequence[bytes], input_blinds: Sequence[bytes],
             input_generators: Sequence[Generator], output_asset: bytes, output_blind: bytes,
             seed: bytes, output_generator: Generator | None = None,
             n_used: int | None = None, max_iterations: int = 100) -> SurjectionProof:
    """Prove that the output's asset generator is a re-blinding of one input's.

    ``input_assets`` / ``input_blinds`` / ``input_generators``: per input, the asset id, its
    asset blinding factor and its generator (all 32/32/Generator; the generator is the public
    one in the UTXO). ``output_generator`` defaults to generator_generate_blinded(output_asset,
    output_blind). ``n_used`` defaults to Elements' min(3, n_inputs). Raises ``ProofError`` when
    no proof can be made with this seed or these inputs (retry with another seed).
    """
    n = len(input_assets)
    if not len(input_blinds) == len(input_generators) == n:
        raise ProofError("input assets, blinds and generators must have the same length",
                         reason="parameters")
    output_blind = _check_scalar(output_blind, "output asset blinding factor")
    blinds = [_check_scalar(b, f"input {i} asset blinding factor")
              for i, b in enumerate(input_blinds)]
    if output_generator is None:
        output_generator = generator_generate_blinded(output_asset, output_blind)
    used, real = select_inputs(input_assets, output_asset,
                               min(WALLET_USED_INPUTS, n) if n_used is None else n_used,
                               seed, max_iterations)
    output = output_generator.point.packed
    if any(g.point.packed == output for g in input_generators):
        # secp256k1-zkp refuses: an identical tag would put infinity into the ring.
        raise ProofError("an input asset generator equals the output generator",
                         reason="degenerate")
    secret = _ct_sub(output_blind, blinds[real])
    pubs = ring_public_keys(output, [input_generators[i].point.packed for i in used])
    ring_index = used.index(real)
    message = surjection_message(input_generators, output_generator)

    s = nonce_scalars(len(used), secret)
    k = s[ring_index]
    # Forward from the real member: R = k·G, then forge the members after it.
    r_ser = compressed(ct.base_mul(k).packed)
    for j in range(ring_index + 1, len(used)):
        e = borromean_hash(message, r_ser, j)
        if not 0 < int.from_bytes(e, "big") < N:
            raise ProofError("challenge out of range; use another seed", reason="retry")
        r = g_table().msm_var(s[j], e, pubs[j])
        if r == _INFINITY:
            raise ProofError("ring member is infinity; use another seed", reason="retry")
        r_ser = compressed(r)
    e0 = hashlib.sha256(r_ser + message).digest()
    # Around the ring from e0 to the real member, then close it: s_real = k − e·x.
    e = borromean_hash(message, e0, 0)
    if not 0 < int.from_bytes(e, "big") < N:
        raise ProofError("challenge out of range; use another seed", reason="retry")
    for j in range(ring_index):
        r = g_table().msm_var(s[j], e, pubs[j])
        if r == _INFINITY:
            raise ProofError("ring member is infinity; use another seed", reason="retry")
        e = borromean_hash(message, compressed(r), j + 1)
        if not 0 < int.from_bytes(e, "big") < N:
            raise ProofError("challenge out of range; use another seed", reason="retry")
    s[ring_index] = _ct_nonce_minus(k, e, secret)
    return SurjectionProof(n, used, e0, tuple(s))
