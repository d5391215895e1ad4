"""Rangeproof signing (``secp256k1_rangeproof_sign``), byte-identical to secp256k1-zkp.

Everything is derived from the caller's 32-byte nonce (``drbg.prover_stream``), so the same
inputs give the same bytes as the C (``docs/borromean.md`` §1.2 "How the signer
chooses the header", §3 "What the signer does with it"):

1. ``prove_params`` picks exp, the mantissa m, the public offset min_value and the base-4 digits
   d_i of v = (value − min)/10^exp;
2. a 4096-byte scratch holds the message, and the value block 0x80 ‖ 0^7 ‖ v ‖ v ‖ v in the last
   ring's last slot (the one before when d_{r−1} sits there); each member's scratch word is
   XORed with its DRBG word: forged s values, or the ring nonce k_i at the true digit;
3. digit commitments C_i = sec_i·G + d_i·4^i·10^exp·gen (sec_{r−1} = blind − Σ sec_i), members
   P_{i,j} = C_i − j·4^i·10^exp·gen, m as in ``verify``;
4. Borromean signing: from R = k_i·G walk each ring's members after the true one, hash the last
   R of every ring into e0, walk again from e0 up to the true member and close it with
   s = k_i − e·sec_i.

Secrets (value, digits, blinding factors, ring nonces) meet points only through ``ct``
(coincurve's libsecp256k1, constant time); forged members s·G + e·P are public and use the
kernel. Scalar arithmetic on secrets is Python integers, as in the Bulletproof prover.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from functools import cache
from typing import cast

from ctplugin.borromean.drbg import prover_stream, rpser
from ctplugin.borromean.format import MAX_MESSAGE_LEN, U64_MAX, proof_error, ring_sizes
from ctplugin.borromean.verify import scalar_bytes
from ctplugin.pedersen import Commitment, Generator, commit
from ctplugin.secp256k1 import KIND_XQR, ct, kernel
from ctplugin.secp256k1.params import N

_k = kernel.backend
_INFINITY = kernel.INFINITY
_TAIL = struct.Struct(">II")  # a ring challenge's BE32 ring ‖ BE32 member
I64_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class ProveParams:
    """What ``secp256k1_range_proveparams`` decides for (value, min_value, exp, min_bits)."""

    v: int
    min_value: int
    exp: int  # −1 for an exact-value proof
    mantissa: int  # 0 for an exact-value proof
    digits: tuple[int, ...]  # the true member of each ring

    @property
    def scale(self) -> int:
        return 10 ** max(self.exp, 0)

    @property
    def ring_sizes(self) -> tuple[int, ...]:
        return ring_sizes(self.mantissa)

    def header(self) -> bytes:
        flags = (0x40 | self.exp) if self.mantissa else 0
        out = bytes((flags | (0x20 if self.min_value else 0),))
        if self.mantissa:
            out += bytes((self.mantissa - 1,))
        if self.min_value:
            out += self.min_value.to_bytes(8, "big")
        return out


def prove_params(value: int, min_value: int, exp: int, min_bits: int) -> ProveParams:
    """The header choice of the C signer (its checks raise ``ProofError("sign-parameters")``)."""
    if not (0 <= min_value <= value <= U64_MAX and -1 <= exp <= 18 and 0 <= min_bits <= 64):
        raise proof_error("sign-parameters")
    if min_value == U64_MAX:
        exp = -1  # no room for a range above the largest value
    if exp < 0:
        return ProveParams(0, value, -1, 0, (0,))
    if (min_value and value > I64_MAX) or (value and min_value >= I64_MAX):
        raise proof_error("sign-parameters", "value and min_value would overflow the range")
    max_bits = 64 - min_value.bit_length() if min_value else 64
    min_bits = min(min_bits, max_bits)
    if min_bits > 61 or value > I64_MAX:
        exp = 0  # 10^exp·2^bits must stay below 2^64
    v = value - min_value
    room = U64_MAX >> (64 - min_bits) if min_bits else 0
    shifts = 0
    while shifts < exp and room <= U64_MAX // 10:
        v //= 10
        room *= 10
        shifts += 1
    scale = 10**shifts
    mantissa = max(v.bit_length() or 1, min_bits)
    rings = (mantissa + 1) >> 1
    return ProveParams(v, value - v * scale, shifts, mantissa,
                       tuple((v >> (2 * i)) & 3 for i in range(rings)))


@cache
def _member_paths(ring_sizes: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Subset-sum paths giving P_{i,j} = C_i + j·B_i over the table [C_0.., B_0..]: consecutive
    paths share prefixes, so the kernel spends one point addition per member."""
    rings = len(ring_sizes)
    return tuple((i, *(rings + i,) * j) for i, size in enumerate(ring_sizes) for j in range(size))


def member_bases(gen_packed: bytes, scale: int, rings: int) -> list[bytes]:
    """B_i = −4^i·scale·gen for each ring (packed): the step between a ring's members."""
    base = _k.point_neg(gen_packed)
    if scale != 1:
        base = _k.msm_var(scalar_bytes(scale), base)
    bases = [base]
    for _ in range(rings - 1):
        base = _k.point_add_var(base, base)
        base = _k.point_add_var(base, base)
        bases.append(base)
    return bases


def expand_members(digits: bytes, bases: list[bytes], sizes: tuple[int, ...]) -> bytes:
    """Ring members P_{i,j} = C_i + j·B_i (``rangeproof_pub_expand``) from all r digit
    commitments as the signer computed them (packed), with one shared inversion. (The verifier
    derives C_{r−1} from the commitment instead: ``borromean_members_var``; a caller's
    commitment that does not match value and blind would change it, not the C signer's bytes.)"""
    return _k.subset_sums_var(digits + b"".join(bases), _member_paths(sizes))


def _ser33(packed: bytes) -> bytes:
    return bytes((2 | (packed[63] & 1),)) + packed[:32]


def _ring_hash(data: bytes, message: bytes, ring: int, member: int) -> int:
    e = int.from_bytes(hashlib.sha256(data + message + _TAIL.pack(ring, member)).digest(), "big")
    if not 0 < e < N:
        raise proof_error("sign-retry")
    return e


def _secret(value: int) -> bytes:
    if not 0 < value < N:
        raise proof_error("sign-retry")
    return value.to_bytes(32, "big")


@dataclass(frozen=True, slots=True)
class SignedRangeProof:
    """A proof with its ring points: every member's R as the signer computed it (packed, in
    member order), which ``verify.verify_many`` can take to check the proof in one
    multi-scalar multiplication instead of the ring kernel's chain (``docs/borromean.md`` §5
    "Verifying with the signer's ring points"). The points are public: R is what the verifier
    recomputes."""

    proof: bytes
    ring_points: bytes


def sign(value: int, blind: bytes, nonce: bytes, generator: Generator, *, min_value: int = 0,
         exp: int = 0, min_bits: int = 0, message: bytes = b"", extra_commit: bytes = b"",
         commitment: Commitment | None = None) -> bytes:
    """``secp256k1_rangeproof_sign(min_value, commit, blind, nonce, exp, min_bits, value,
    message, extra_commit, gen)``: a proof that ``commitment`` (default: value·gen + blind·G)
    holds ``value`` in [min, max] as chosen by ``prove_params``; exp = −1 makes an exact-value
    proof. Deterministic in its inputs. Bad inputs raise ``ProofError`` (``sign-parameters``,
    ``sign-message-too-long``; ``sign-retry`` with probability about 2^-100).
    """
    return sign_with_ring_points(value, blind, nonce, generator, min_value=min_value, exp=exp,
                                 min_bits=min_bits, message=message, extra_commit=extra_commit,
                                 commitment=commitment).proof


def sign_with_ring_points(value: int, blind: bytes, nonce: bytes, generator: Generator, *,
                          min_value: int = 0, exp: int = 0, min_bits: int = 0,
                          message: bytes = b"", extra_commit: bytes = b"",
                          commitment: Commitment | None = None) -> SignedRangeProof:
    """``sign``, keeping the ring points it computed on the way (``SignedRangeProof``)."""
    if len(nonce) != 32 or len(blind) != 32:
        raise proof_error("sign-parameters", "nonce and blind must be 32 bytes")
    blind_int = int.from_bytes(blind, "big")
    if blind_int >= N:
        raise proof_error("sign-parameters", "blind not below the group order")
    if len(message) > MAX_MESSAGE_LEN:
        raise proof_error("sign-message-too-long")
    params = prove_params(value, min_value, exp, min_bits)
    if commitment is None:
        commitment = commit(value, blind_int, generator)
    sizes = params.ring_sizes
    rings = len(sizes)
    if message and len(message) > 128 * (rings - 1):
        raise proof_error("sign-message-too-long")
    header = params.header()
    c_enc, gen_enc = commitment.serialize(), generator.serialize()
    secs, s_values = _draw(params, nonce, c_enc, gen_enc, header, message, blind_int)
    starts = [4 * i for i in range(rings)]  # every ring but the last has 4 members
    nonces = [s_values[starts[i] + d] for i, d in enumerate(params.digits)]
    bases = member_bases(generator.point.packed, params.scale, rings)
    digits, encoded, sign_bits = _digit_commitments(params, secs, generator.point.packed, bases)
    h = hashlib.sha256(rpser(c_enc) + rpser(gen_enc) + header)
    for i in range(rings - 1):
        h.update(encoded[33 * i: 33 * i + 33])
    h.update(extra_commit)
    m = h.digest()
    ring_points = [b""] * len(s_values)
    e0 = _close_rings(params, m, secs, nonces, s_values, starts,
                      expand_members(digits, bases, sizes), ring_points)
    sign_field = sign_bits.to_bytes((rings + 6) >> 3, "little")
    xs = b"".join(encoded[33 * i + 1: 33 * i + 33] for i in range(rings - 1))
    return SignedRangeProof(
        header + sign_field + xs + e0 + b"".join(s.to_bytes(32, "big") for s in s_values),
        b"".join(ring_points))


def _draw(params: ProveParams, nonce: bytes, c_enc: bytes, gen_enc: bytes, header: bytes,
          message: bytes, blind: int) -> tuple[list[int], list[int]]:
    """The C signer's genrand with the scratch: per ring its secret (the last one plus the
    blind), and every member's s value (forged ones final, the real one a ring nonce for now).
    The scratch holds the message, then the value block in the last ring; it masks the draws
    (what ``rewind`` unmasks)."""
    sizes = params.ring_sizes
    rings = len(sizes)
    scratch = bytearray(4096)
    scratch[: len(message)] = message
    if sizes[-1] > 1:
        slot = sizes[-1] - 1
        slot -= params.digits[-1] == slot
        at = ((rings - 1) * 4 + slot) * 32
        scratch[at: at + 32] = b"\x80" + bytes(7) + params.v.to_bytes(8, "big") * 3
    secs, words = prover_stream(nonce, c_enc, gen_enc, header, sizes)
    # every member's word XOR its scratch word at once (flat member k is (ring k // 4,
    # member k % 4)), then one scalar per member
    n = len(words)
    masked = (int.from_bytes(b"".join(words), "big")
              ^ int.from_bytes(scratch[: 32 * n], "big")).to_bytes(32 * n, "big")
    s_values = [int.from_bytes(masked[32 * k: 32 * k + 32], "big") for k in range(n)]
    if not all(0 < s < N for s in s_values):
        raise proof_error("sign-retry")
    secs[-1] = (secs[-1] + blind) % N
    if secs[-1] == 0:
        raise proof_error("sign-retry")
    return secs, s_values


def _digit_commitments(params: ProveParams, secs: list[int], gen_packed: bytes,
                       bases: list[bytes]) -> tuple[bytes, bytes, int]:
    """The digit commitments C_i = sec_i·G + d_i·u_i·gen with u_i = 4^i·scale (packed), the
    first rings − 1 of them QR-encoded, and their sign bits. With −u_i·gen = B_i, (d_i + 1)·u_i
    is never zero, so C_i = sec_i·G + ((d_i + 1)·u_i)·gen + B_i without a branch on the secret
    digit (constant-time multiplications, ``ct.commit_packed``)."""
    rings = len(params.ring_sizes)
    weights = [_secret(((params.digits[i] + 1) * params.scale << (2 * i)) % N)
               for i in range(rings)]
    sums = ct.commit_packed([_secret(sec) for sec in secs[:rings]], weights, gen_packed,
                            bases[:rings])
    if None in sums:  # a sum is infinity
        raise proof_error("sign-retry")
    digit_points = cast(list[bytes], sums)
    digits = b"".join(digit_points)
    encoded = _k.encode_points_var(digits[: 64 * (rings - 1)], KIND_XQR) if rings > 1 else b""
    sign_bits = 0
    for i in range(rings - 1):
        sign_bits |= encoded[33 * i] << i
    return digits, encoded, sign_bits


def _close_rings(params: ProveParams, m: bytes, secs: list[int], nonces: list[int],
                 s_values: list[int], starts: list[int], pubs: bytes,
                 ring_points: list[bytes]) -> bytes:
    """The Borromean ring signature over every ring's members ``pubs``: from each real member,
    forge the members after it up to the shared closing hash e0, then from e0 forge the members
    before it and close the ring (its s value replaces the nonce in ``s_values``). Returns e0;
    every member's R (packed) goes into ``ring_points`` (flat member order).

    The rings are independent chains, so both walks advance every ring by one member per wave
    and forge the wave's members R = s·G + e·P (public) in one ``double_mult_many_var`` call."""
    sizes, digits = params.ring_sizes, params.digits
    rings = len(sizes)

    def forge_wave(work: list[tuple[int, int, int]]) -> list[bytes]:
        """ser33(s_k·G + e·P_k) for each (ring, member k, e) of a wave."""
        out = _k.double_mult_many_var(
            b"".join(s_values[k].to_bytes(32, "big") for _, k, _ in work),
            b"".join(e.to_bytes(32, "big") for _, _, e in work),
            b"".join(pubs[64 * k: 64 * k + 64] for _, k, _ in work), threads=1)
        points = [out[64 * w: 64 * w + 64] for w in range(len(work))]
        if _INFINITY in points:
            raise proof_error("sign-retry")
        for (_, k, _), r in zip(work, points):
            ring_points[k] = r
        return [_ser33(r) for r in points]

    # from R = k_i·G at the true member d_i on to the ring's last member
    r_encs = []
    for i, r in enumerate(ct.base_mul_packed([_secret(k) for k in nonces[:rings]])):
        ring_points[starts[i] + digits[i]] = r
        r_encs.append(_ser33(r))
    for step in range(1, max(sizes)):
        work = [(i, starts[i] + digits[i] + step,
                 _ring_hash(r_encs[i], m, i, digits[i] + step))
                for i in range(rings) if digits[i] + step < sizes[i]]
        if not work:
            break
        for (i, _, _), r_enc in zip(work, forge_wave(work)):
            r_encs[i] = r_enc
    e0 = hashlib.sha256(b"".join(r_encs) + m).digest()

    # from e0 through the members before the true one, then close each ring
    challenges = [_ring_hash(e0, m, i, 0) for i in range(rings)]
    for j in range(max(digits)):
        work = [(i, starts[i] + j, challenges[i]) for i in range(rings) if j < digits[i]]
        for (i, _, _), r_enc in zip(work, forge_wave(work)):
            challenges[i] = _ring_hash(r_enc, m, i, j + 1)
    for i in range(rings):
        closing_s = (nonces[i] - challenges[i] * secs[i]) % N
        if closing_s == 0:
            raise proof_error("sign-retry")
        s_values[starts[i] + digits[i]] = closing_s
    return e0
