"""Bulletproof range-proof verification: one multi-scalar multiplication per proof, and claims for
batch verification (bulletproofs-format.md §8, strict parsing per design.md).

A proof is valid iff, for the transcript weight w (= SHA256 of the state after −τx‖−μ):

    A + x·S + Σ_k (−z − sG_k)·G_k + Σ_k (z + (z^{2+j(k)}·2^{i(k)} − sH_k)·y^{−k})·H_k
      + Σ_r (x_r²·L_r + x_r^{−2}·R_r) + (u·(t − a1·b1 − a2·b2) + (−μ) + w·(−τx))·h
      + w·((δ − t)·g + x·T1 + x²·T2 + Σ_j z^{2+j}·V_j)  =  ∞

with sG_k = a_sel(k)·Π_r x_r^{±1} (+1 where bit r of k is set; a_sel = a1 for k < N/2, else a2),
sH_k = b_sel(k)·Π_r x_r^{∓1}, δ = (z − z²)·Σ_{k<N} y^k − Σ_j z^{3+j}·(2^nbits − 1) − z²·min.

``range_proof_claim`` parses strictly (exact length; zero unused flag bits; x < p and on the
curve; every scalar and challenge in [1, n)) and returns that equation as a ``batch.Claim`` over
the generator set's fixed base ``[h, G_i…, H_i…]`` — the value generator g is a shared term so
a batch of one asset multiplies it once. Malformed input raises ``ProofError``; a well-formed
wrong proof gives a claim that fails (``verify`` → False).

min_value: supported for m = 1 and min < 2^32 only, which is where the reference verifier is
correct (§9.2); anything else is a ``ProofError`` (unsupported), matching the reference's
rejections. Our chain forbids min_value altogether (consensus.py).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ctplugin.batch import BatchVerifier, Claim, Label
from ctplugin.bulletproofs.generators import GeneratorSet, generator_set
from ctplugin.bulletproofs.layout import OFF_AB, OFF_FLAGS, OFF_LR_FLAGS, OFF_POINTS, OFF_T, layout
from ctplugin.bulletproofs.params import CONSENSUS_N_GENS
from ctplugin.bulletproofs.transcript import challenge
from ctplugin.errors import EncodingError, ProofError
from ctplugin.pedersen import Commitment, Generator
from ctplugin.secp256k1 import KIND_GENERATOR, kernel
from ctplugin.secp256k1.params import N

_k = kernel.backend

CommitmentLike = bytes | bytearray | memoryview | Commitment
GeneratorLike = bytes | bytearray | memoryview | Generator


_ONE = (1).to_bytes(32, "big")
_INV2 = pow(2, -1, N)
# upd(c, P, Q) hashes byte 2·f(P) + f(Q); indexed by the two flag bits as stored (P low bit).
_PAIR_FLAG = tuple(bytes((2 * (f & 1) + (f >> 1),)) for f in range(4))
_SCALAR_OFFSETS = (0, 32, OFF_T, OFF_AB, OFF_AB + 32, OFF_AB + 64, OFF_AB + 96)
_sha256 = hashlib.sha256


def _b(v: int) -> bytes:
    return v.to_bytes(32, "big")


@lru_cache(maxsize=1024)
def _decode_value_gen(encoded: bytes) -> bytes:
    try:
        return _k.decode_points_var(encoded, KIND_GENERATOR)
    except ValueError as exc:
        raise ProofError(f"value generator: {exc}") from None


@lru_cache(maxsize=1024)
def _serialize_generator(gen: Generator) -> bytes:
    return gen.serialize()


def _value_gen_bytes(value_gen: GeneratorLike) -> bytes:
    if isinstance(value_gen, Generator):
        try:
            return _serialize_generator(value_gen)
        except EncodingError as exc:
            raise ProofError(f"value generator: {exc}") from None
    if len(value_gen) != 33:
        raise ProofError("value generator must be 33 bytes")
    return bytes(value_gen)


def _commitment_bytes(c: CommitmentLike) -> bytes:
    if isinstance(c, Commitment):
        try:
            encoded = c.serialize()
        except EncodingError as exc:
            raise ProofError(f"commitment: {exc}") from None
    else:
        if len(c) != 33:
            raise ProofError("commitment must be 33 bytes")
        encoded = bytes(c)
    if encoded[0] not in (8, 9):
        raise ProofError("commitment must start with 08 or 09")
    return encoded


def _scalar(proof: bytes, offset: int, name: str) -> int:
    v = int.from_bytes(proof[offset: offset + 32], "big")
    if v == 0 or v >= N:
        raise ProofError(f"{name} (offset {offset}) is zero or not below n")
    return v


def default_generators() -> GeneratorSet:
    return generator_set(CONSENSUS_N_GENS)


def range_proof_claim(
    proof: bytes,
    commitments: Sequence[CommitmentLike],
    value_gen: GeneratorLike,
    extra_commit: bytes | None = None,
    nbits: int = 64,
    gens: GeneratorSet | None = None,
    *,
    min_value: Sequence[int] | None = None,
    label: Label = None,
    commitment_points: bytes | None = None,
) -> Claim:
    """The verification equation of one (possibly aggregated) proof as a batch claim.

    ``commitment_points`` optionally passes the commitments already decoded by the kernel
    (``decode_points_var(…, KIND_PEDERSEN)`` of the same encodings, 64 bytes each), saving their
    square roots when the caller decoded them anyway (the validator's balance equations);
    their x coordinates are checked against the encodings.

    ``commitments`` are 33-byte encodings (or ``Commitment``), one per aggregated value;
    ``extra_commit`` None and b"" differ (§6 step 4). Raises ProofError on malformed input.
    """
    if gens is None:
        gens = default_generators()
    m = len(commitments)
    if m == 0:
        raise ProofError("no commitments")
    lay = layout(nbits, m)
    n, lg = lay.n, lay.lg
    if n > gens.capacity:
        raise ProofError(f"generator set of {gens.n_gens} is too small for N = {n}")
    if len(proof) != lay.length:  # before any copy or allocation
        raise ProofError(f"proof is {len(proof)} bytes, expected {lay.length}")
    proof = bytes(proof)
    if min_value is not None:
        if len(min_value) != m:
            raise ProofError("min_value needs one entry per commitment")
        if m != 1 or not 0 <= min_value[0] < 1 << 32:
            raise ProofError("min_value is supported for m = 1 and min < 2^32 only")
    vg = _value_gen_bytes(value_gen)
    vg_point = _decode_value_gen(vg)
    cbytes = [_commitment_bytes(c) for c in commitments]

    flags = proof[OFF_FLAGS]
    if flags & 0xF0:
        raise ProofError("unused flag bits of byte 64 are not zero")
    lr_end = OFF_LR_FLAGS + lay.lr_flag_bytes
    lr_flags = int.from_bytes(proof[OFF_LR_FLAGS:lr_end], "little")
    if lr_flags >> (2 * lg):
        raise ProofError("unused L/R flag bits are not zero")

    # One batch decode, in the proof's own layout: V_j, then A, S, T1, T2 (x at 65..193, flags
    # bits 0..3 of byte 64), then L_0, R_0, L_1, R_1, … (x from lr_end on, flags bit j of the
    # little-endian L/R flag bytes): the flag bit strings just concatenate.
    own = proof[OFF_POINTS: OFF_POINTS + 128] + proof[lr_end:]
    own_flags = flags | lr_flags << 4
    if commitment_points is None:
        known = b""
        xs_all = b"".join(cb[1:] for cb in cbytes) + own
        vbits = 0
        for j, cb in enumerate(cbytes):
            vbits |= (cb[0] & 1) << j
        flag_bits, count = vbits | own_flags << m, m + 4 + 2 * lg
    else:
        known = bytes(commitment_points)
        if len(known) != 64 * m or any(known[64 * j: 64 * j + 32] != cb[1:]
                                       for j, cb in enumerate(cbytes)):
            raise ProofError("commitment points do not match the commitments")
        xs_all, flag_bits, count = own, own_flags, 4 + 2 * lg
    try:
        points = known + _k.decode_xqr_flags_var(
            xs_all, flag_bits.to_bytes((count + 7) >> 3, "little"))
    except ValueError as exc:
        raise ProofError(f"proof point: {exc}") from None

    scalars = [int.from_bytes(proof[o: o + 32], "big") for o in _SCALAR_OFFSETS]
    for v, o in zip(scalars, _SCALAR_OFFSETS):
        if v == 0 or v >= N:
            raise ProofError(f"scalar at offset {o} is zero or not below n")
    taux_s, mu_s, t, a1, a2, b1, b2 = scalars

    # Transcript (§6), inlined: c = SHA256(c ‖ …); A‖S, T1‖T2 and L_r‖R_r are contiguous in
    # the proof, so upd(c, P, Q) hashes c ‖ flag byte ‖ a 64-byte slice.
    c = bytes(32)
    if min_value is not None:
        c = _sha256(c + struct.pack("<IQ", 1, min_value[0])).digest()
    gflag, gx = vg[0] & 1, vg[1:]
    for cb in cbytes:
        c = _sha256(c + bytes((2 * (cb[0] & 1) + gflag,)) + cb[1:] + gx).digest()
    if extra_commit is not None:
        c = _sha256(c + bytes(extra_commit)).digest()
    as_data = bytes((2 * (flags & 1) + ((flags >> 1) & 1),)) + proof[65:129]
    c = _sha256(c + as_data).digest()
    y = challenge(c)
    c = _sha256(c + as_data).digest()
    z = challenge(c)
    c = _sha256(c + bytes((2 * ((flags >> 2) & 1) + (flags >> 3),)) + proof[129:193]).digest()
    x = challenge(c)
    c = _sha256(c + proof[0:64]).digest()
    w = challenge(_sha256(c).digest())
    c = _sha256(c + proof[OFF_T: OFF_T + 32]).digest()
    u = challenge(c)
    xs_states = []
    for j in range(lg):
        c = _sha256(c + _PAIR_FLAG[(lr_flags >> (2 * j)) & 3]
                    + proof[lr_end + 64 * j: lr_end + 64 * j + 64]).digest()
        if not 0 < int.from_bytes(c, "big") < N:
            raise ProofError("transcript challenge out of range")
        xs_states.append(c)
    xs = b"".join(xs_states)

    # One kernel call gives every challenge product (and one inversion for all): with the
    # challenges (x_0 … x_{lg−1}, y), E[k] = Π_r x_r^{±1} · y^{±1} (+1 where bit r of k is set;
    # bit lg is y). Writing P_k = Π_r x_r^{±1} (k < N/2), E_lo = y^{−1}·P and E_hi = y·P, so
    #   y^{−2} = E_lo[0]·E_lo[mask], x_r² = E_hi[2^r]·E_lo[mask], x_r^{−2} = E_lo[mask⊕2^r]·E_hi[0]
    # (mask = N/2 − 1), and P_{¬k} = y·E_lo[mask − k] is E_lo reversed. (x_r² is just xs∘xs.)
    half = n >> 1
    mask = half - 1
    prods = _k.scalar_challenge_products(xs + _b(y))
    e_lo, e_hi = prods[: 32 * half], prods[32 * half:]
    e_lo_0 = int.from_bytes(e_lo[:32], "big")
    e_lo_mask = e_lo[32 * mask: 32 * half]
    y_inv = y * e_lo_0 * int.from_bytes(e_lo_mask, "big") % N
    # L_r, R_r interleaved as decoded: x_r² = x_r·x_r, x_r^{−2} = E_lo[mask⊕2^r]·E_hi[0].
    e_hi_0 = e_hi[:32]
    lr_scalars = _k.scalar_vec_mul(
        b"".join(xs_states[r] + e_lo[32 * (mask ^ (1 << r)): 32 * (mask ^ (1 << r)) + 32]
                 for r in range(lg)),
        b"".join(xs_states[r] + e_hi_0 for r in range(lg)))

    # G_k coefficient −z − sG_k with sG_k = a_sel·P_k = a_sel·y^{−1}·E_hi[k mod N/2].
    # H_k coefficient z + (z^{2+j}·2^i − sH_k)·y^{−k}, sH_k = b_sel·P_{¬(k mod N/2)}. The fixed
    # base holds H in reverse, H_k at position q = N−1−k of the segment from h_rev_start(N), and
    # in q the H coefficients need no reversal (j = q mod N/2 below):
    #   q <  N/2 (k ≥ N/2):  sH_k·y^{−k} = b2·y^{2−N}·W_j,      W_j = E_lo[j]·y^j,
    #   q ≥ N/2 (k < N/2):   sH_k·y^{−k} = b1·y^{2−N/2}·W_j,
    #   block jj = m−1−j of nbits entries: z^{2+j}·y^{−j·nbits}·(2/y)^{nbits−1}·(y/2)^{ii}.
    y_pows = _k.scalar_powers(_b(y), half)
    w_vec = _k.scalar_vec_mul(e_lo, y_pows)
    y_half = int.from_bytes(y_pows[-32:], "big") * y % N  # y^{N/2}
    y_inv_half = pow(y_inv, half, N)
    y2 = y * y % N
    gi, hs = gens.G_OFFSET, gens.h_rev_start(n)
    zz = z * z % N
    z_weights = [zz]
    for _ in range(m - 1):
        z_weights.append(z_weights[-1] * z % N)
    fixed = [
        (gi, (-a1 * y_inv) % N, e_hi),
        (gi + half, (-a2 * y_inv) % N, e_hi),
        (hs + half, (-b1 * y2) % N * y_inv_half % N, w_vec),
        (hs, (-b2 * y2) % N * y_inv_half % N * y_inv_half % N, w_vec),
    ]
    y_over_2 = _k.scalar_powers(_b(y * _INV2 % N), nbits)
    y_inv_nbits = y_inv_half * y_inv_half % N if m == 1 else pow(y_inv, nbits, N)
    two_over_y_top = pow(2, nbits - 1, N) * y_inv_nbits % N * y % N  # (2/y)^{nbits−1}
    if m == 1:
        fixed.append((hs, zz * two_over_y_top % N, y_over_2))
    else:  # one segment per block over the same vector (the batch adds them in one call)
        coeff = two_over_y_top
        for j in range(m):
            fixed.append((hs + (m - 1 - j) * nbits, z_weights[j] * coeff % N, y_over_2))
            coeff = coeff * y_inv_nbits % N

    # δ = (z − z²)·Σ_{k<N} y^k − Σ_j z^{3+j}·(2^nbits − 1) − z²·min,
    # Σ_{k<N} y^k = (1 + y^{N/2})·Σ_{k<N/2} y^k.
    sum_y = (1 + y_half) * int.from_bytes(_k.scalar_vec_sum(y_pows), "big") % N
    delta = (z - zz) * sum_y - z * sum(z_weights) * ((1 << nbits) - 1)
    if min_value is not None:
        delta -= zz * min_value[0]
    h_scalar = (u * (t - a1 * b1 - a2 * b2) + mu_s + w * taux_s) % N
    wx = w * x % N
    free_scalars = (b"".join(_b(w * zj % N) for zj in z_weights)
                    + _ONE + _b(x) + _b(wx) + _b(wx * x % N) + lr_scalars)
    return Claim.trusted(
        label, gens.fixed, tuple(fixed), free_scalars, points,
        ((vg_point, (w * (delta - t)) % N),), ((0, 1, h_scalar), (gi, n, N - z), (hs, n, z)))


def verify(
    proof: bytes,
    commitments: Sequence[CommitmentLike],
    value_gen: GeneratorLike,
    extra_commit: bytes | None = None,
    nbits: int = 64,
    gens: GeneratorSet | None = None,
    *,
    min_value: Sequence[int] | None = None,
) -> bool:
    """Verify one proof (a batch of one: a single MSM). ProofError if malformed."""
    if gens is None:
        gens = default_generators()
    claim = range_proof_claim(proof, commitments, value_gen, extra_commit, nbits, gens,
                              min_value=min_value)
    batch = BatchVerifier(gens.fixed)
    batch.add(claim)
    return batch.verify()


def verify_batch(claims: Iterable[Claim], gens: GeneratorSet | None = None) -> bool:
    """Check many claims (from ``range_proof_claim``) in one MSM."""
    batch = BatchVerifier((gens or default_generators()).fixed)
    batch.extend(claims)
    return batch.verify()
