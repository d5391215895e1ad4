"""Bulletproof range-proof prover, reproducing the secp256k1-zkp reference byte for byte
(docs/bulletproofs-format.md §7).

For m values of nbits bits (N = nbits·m), with h the blinding generator and g the value
generator:

- randomness: (α0, ρ) = chacha(nonce, 0), (τ1, τ2) = chacha(private_nonce or nonce, 1),
  (sL_k, sR_k) = chacha(nonce, k + 2) (nonces.py); for m = 1, α = α0 − vs where vs is the 32-byte
  big-endian word 0^4 ‖ message(20) ‖ value(8) (recoverable by ``rewind``); else α = α0;
- aL_k = bit i of (v_j − min_j) for k = j·nbits + i, aR_k = aL_k − 1;
- A = α·h + Σ_k (aL_k ? G_k : −H_k), S = ρ·h + Σ_k (sL_k·G_k + sR_k·H_k);
- y, z; l(X) = aL − z + sL·X, r(X)_k = y^k·(aR_k + z + sR_k·X) + z^{2+j}·2^i;
  t(X) = ⟨l, r⟩ = t0 + t1·X + t2·X²; T1 = t1·g + τ1·h, T2 = t2·g + τ2·h;
- x; τx = τ1·x + τ2·x² + Σ_j z^{2+j}·γ_j, μ = α + ρ·x, stored negated;
- inner product on a = l(x), b = r(x) with generators G_k, H'_k = y^{−k}·H_k and u·h, folding
  even/odd pairs, down to two elements (a1, a2, b1, b2).

Constant time where secrets meet points: A, S, T1, T2 and the commitments are formed with coincurve
(libsecp256k1's constant-time multiplication); in A a secret bit is the multiplier 1 + bit of the
public point Q_k = G_k + H_k (``GeneratorSet.a_offset``), computed arithmetically: no Python branch
or table index depends on a secret (tests/unit/test_bulletproofs_prover_ct.py checks the executed
bytecode is the same for any value and blind). Degenerate cases (a zero secret scalar, an infinite
sum) are checked, which only ever differs with probability ~2^-256. The inner product works on
l(x), r(x), which the basic (non-IPA) protocol would publish in the clear (they are blinded by sL,
sR), so its multi-scalar multiplications use the variable-time kernel over the fixed generator
table. The prover inverts only public challenges (y, x_k), so there is no secret inversion to
blind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import coincurve

from ctplugin.bulletproofs.errors import proof_error
from ctplugin.bulletproofs.generators import GeneratorSet
from ctplugin.bulletproofs.layout import Layout, layout
from ctplugin.bulletproofs.nonces import chacha_pair, chacha_pairs
from ctplugin.bulletproofs.transcript import Transcript, challenge
from ctplugin.bulletproofs.verifier import default_generators
from ctplugin.errors import EncodingError
from ctplugin.pedersen import Generator
from ctplugin.secp256k1 import KIND_PEDERSEN, KIND_XQR, Point, kernel
from ctplugin.secp256k1.ct import from_coincurve, to_coincurve
from ctplugin.secp256k1.params import N

_k = kernel.backend
_ONE = (1).to_bytes(32, "big")


def _b(v: int) -> bytes:
    return (v % N).to_bytes(32, "big")


def _secret_int(value: int | bytes, what: str) -> int:
    v = int.from_bytes(value, "big") if isinstance(value, bytes | bytearray) else int(value)
    if not 0 <= v < N:
        raise proof_error("value-range", f"{what} not below the group order")
    return v


def _ct_sum(terms: list[coincurve.PublicKey]) -> Point:
    try:
        return from_coincurve(coincurve.PublicKey.combine_keys(terms))
    except ValueError:  # the sum is infinity: only with negligible probability for honest input
        raise proof_error("degenerate", "degenerate proof point; use another nonce") from None


def _ct_mul_or_none(key: coincurve.PublicKey, scalar: int) -> coincurve.PublicKey | None:
    return key.multiply(scalar.to_bytes(32, "big")) if scalar % N else None


def _ct_terms(pairs: Sequence[tuple[coincurve.PublicKey, int]]) -> list[coincurve.PublicKey]:
    """scalar·key per pair, constant time each; a zero scalar (a degenerate secret: probability
    ~2^-256 for the random ones, a caller's explicit choice for a blinding factor) is left out."""
    return [t for t in (_ct_mul_or_none(key, s % N) for key, s in pairs) if t is not None]


def _lincomb(pairs: Sequence[tuple[coincurve.PublicKey, int]]) -> Point:
    """Σ scalar·key in constant time per term (zero scalars contribute nothing)."""
    terms = _ct_terms(pairs)
    if not terms:
        raise proof_error("degenerate", "degenerate proof point; use another nonce")
    return _ct_sum(terms)


def _flags_and_x(points: Sequence[Point]) -> tuple[int, list[bytes]]:
    """QR flags (bit i = f(points[i])) and x coordinates, with one kernel encode."""
    enc = _k.encode_points_var(b"".join(p.packed for p in points), KIND_XQR)
    flags = 0
    xs = []
    for i in range(len(points)):
        flags |= enc[33 * i] << i
        xs.append(enc[33 * i + 1: 33 * i + 33])
    return flags, xs


def prove(
    values: Sequence[int],
    blinds: Sequence[int | bytes],
    value_gen: Generator | bytes,
    nonce: bytes,
    *,
    extra_commit: bytes | None = None,
    nbits: int = 64,
    gens: GeneratorSet | None = None,
    message: bytes | None = None,
    min_value: Sequence[int] | None = None,
    private_nonce: bytes | None = None,
) -> bytes:
    """A range proof that each value − min lies in [0, 2^nbits), for the commitments
    values[j]·g + blinds[j]·h (g: a ``Generator`` or its 33-byte encoding). ``message`` (20 bytes,
    m = 1 only) is hidden in μ for ``rewind``.

    Deterministic in its inputs (the nonce must be secret and never reused with other data).
    ProofError on unsupported parameters or out-of-range values.
    """
    if gens is None:
        gens = default_generators()
    st = _statement(values, blinds, value_gen, nonce, nbits, gens, message, min_value,
                    private_nonce)
    m, n, vals, mins, gammas = st.m, st.lay.n, st.values, st.mins, st.gammas
    h_cc, g_cc = to_coincurve(gens.blinding_gen), to_coincurve(st.value_gen.point)
    commit_enc, value_gen_enc = _commitments(st, g_cc, h_cc)
    tr = Transcript.for_statement([commit_enc[33 * j: 33 * j + 33] for j in range(m)],
                                  value_gen_enc, extra_commit,
                                  mins if min_value is not None else None)

    # Randomness and A, S.
    alpha, rho = chacha_pair(nonce, 0)
    tau1, tau2 = chacha_pair(private_nonce if private_nonce is not None else nonce, 1)
    s_pairs = chacha_pairs(nonce, 2, n)
    if m == 1:
        vs = (int.from_bytes(message or bytes(20), "big") << 64) | vals[0]
        alpha = (alpha - vs) % N
    bits = [((vals[j] - mins[j]) >> i) & 1 for j in range(m) for i in range(nbits)]
    point_a = _bit_commitment(gens, bits, alpha, h_cc)
    point_s = _blinding_commitment(gens, s_pairs, rho, h_cc)
    f_as, x_as = _flags_and_x([point_a, point_s])
    f_a, f_s = f_as & 1, f_as >> 1
    y = challenge(tr.absorb_points(f_a, f_s, x_as[0] + x_as[1]))
    z = challenge(tr.absorb_points(f_a, f_s, x_as[0] + x_as[1]))

    # t(X) = t0 + t1·X + t2·X², committed as T1, T2.
    poly = _t_polynomial(bits, s_pairs, nbits, m, y, z)
    point_t1 = _lincomb([(g_cc, poly.t1), (h_cc, tau1)])
    point_t2 = _lincomb([(g_cc, poly.t2), (h_cc, tau2)])
    f_t, x_t = _flags_and_x([point_t1, point_t2])
    x = challenge(tr.absorb_points(f_t & 1, f_t >> 1, x_t[0] + x_t[1]))

    z_weights = poly.z_weights
    tau_x = (tau1 * x + tau2 * x % N * x + sum(zw * gm for zw, gm in zip(z_weights, gammas))) % N
    mu = (alpha + rho * x) % N
    head = _b(-tau_x) + _b(-mu)
    tr.absorb(head)

    a_vec = [(poly.l0[k] + s_pairs[k][0] * x) % N for k in range(n)]
    b_vec = [(poly.r0[k] + poly.r1[k] * x) % N for k in range(n)]
    t = sum(av * bv for av, bv in zip(a_vec, b_vec)) % N
    u = challenge(tr.absorb(_b(t)))
    a_vec, b_vec, lr_points = _inner_product(gens, tr, n, y, u, a_vec, b_vec)

    flags = f_as | (f_t << 2)
    lr_flags, lr_x = _flags_and_x(lr_points) if lr_points else (0, [])
    assert len(lr_points) == 2 * st.lay.lg
    return b"".join([
        head, bytes((flags,)), x_as[0], x_as[1], x_t[0], x_t[1], _b(t),
        _b(a_vec[0]), _b(a_vec[1]), _b(b_vec[0]), _b(b_vec[1]),
        lr_flags.to_bytes(st.lay.lr_flag_bytes, "little"), *lr_x,
    ])


class _Statement(NamedTuple):
    """What is proven, checked: m values (with their minimums) of nbits bits each, their
    blinding factors, the value generator, and the proof layout."""

    m: int
    lay: Layout
    values: list[int]
    mins: list[int]
    gammas: list[int]
    value_gen: Generator


def _statement(values: Sequence[int], blinds: Sequence[int | bytes],
               value_gen: Generator | bytes, nonce: bytes, nbits: int, gens: GeneratorSet,
               message: bytes | None, min_value: Sequence[int] | None,
               private_nonce: bytes | None) -> _Statement:
    """``prove``'s arguments checked (ProofError on anything unsupported or out of range)."""
    m = len(values)
    lay = layout(nbits, m)
    if lay.n > gens.capacity:
        raise proof_error("generators",
                          f"generator set of {gens.n_gens} is too small for N = {lay.n}")
    if len(blinds) != m:
        raise proof_error("parameters", "one blinding factor per value")
    if len(nonce) != 32 or (private_nonce is not None and len(private_nonce) != 32):
        raise proof_error("parameters", "nonces must be 32 bytes")
    if message is not None and (len(message) != 20 or m != 1):
        raise proof_error("parameters", "message must be 20 bytes, and only for m = 1")
    mins = [0] * m if min_value is None else [int(v) for v in min_value]
    if len(mins) != m:
        raise proof_error("parameters", "min_value needs one entry per value")
    vals = [int(v) for v in values]
    for v, lo in zip(vals, mins):
        if not (0 <= lo <= v < 1 << 64 and v - lo < 1 << nbits):
            raise proof_error("value-range", "value out of range")
    gammas = [_secret_int(bl, "blinding factor") for bl in blinds]
    if not isinstance(value_gen, Generator):
        try:
            value_gen = Generator.parse(bytes(value_gen))
        except EncodingError as exc:
            raise proof_error("value-generator", f"value generator: {exc}") from None
    return _Statement(m, lay, vals, mins, gammas, value_gen)


def _commitments(st: _Statement, g_cc: coincurve.PublicKey,
                 h_cc: coincurve.PublicKey) -> tuple[bytes, bytes]:
    """The commitments V_j = v_j·g + γ_j·h, encoded for the transcript (33 bytes each,
    concatenated), and the value generator's encoding. Formed as (v_j + 1)·g + γ_j·h − g, so a
    zero value (common, and secret) is no special case: v_j + 1 is never zero (v_j < 2^64)."""
    minus_g = to_coincurve(-st.value_gen.point)
    commits = [_ct_sum([g_cc.multiply((v + 1).to_bytes(32, "big")), minus_g,
                        *_ct_terms([(h_cc, gm)])])
               for v, gm in zip(st.values, st.gammas)]
    try:
        commit_enc = _k.encode_points_var(b"".join(c.packed for c in commits), KIND_PEDERSEN)
        return commit_enc, st.value_gen.serialize()
    except (ValueError, EncodingError) as exc:
        raise proof_error("degenerate", str(exc)) from None


def _bit_commitment(gens: GeneratorSet, bits: Sequence[int], alpha: int,
                    h_cc: coincurve.PublicKey) -> Point:
    """A = α·h + Σ_k (aL_k ? G_k : −H_k) = α·h + Σ_k (1 + aL_k)·Q_k + a_offset(n), with
    Q_k = G_k + H_k and a_offset(n) = −Σ_k (G_k + 2·H_k): each secret bit gives the multiplier
    1 + aL_k arithmetically (no branch on it), each term a constant-time multiplication."""
    q_keys = gens.coincurve_keys()[2]
    terms = [q_keys[k].multiply((1 + bit).to_bytes(32, "big")) for k, bit in enumerate(bits)]
    terms.append(gens.a_offset(len(bits)))
    if alpha:
        terms.append(h_cc.multiply(alpha.to_bytes(32, "big")))
    return _ct_sum(terms)


def _blinding_commitment(gens: GeneratorSet, s_pairs: Sequence[tuple[int, int]], rho: int,
                         h_cc: coincurve.PublicKey) -> Point:
    """S = ρ·h + Σ_k (sL_k·G_k + sR_k·H_k), constant time per term."""
    g_keys, h_keys, _ = gens.coincurve_keys()
    terms: list[tuple[coincurve.PublicKey, int]] = [(h_cc, rho)]
    for k, (sl, sr) in enumerate(s_pairs):
        terms.append((g_keys[k], sl))
        terms.append((h_keys[k], sr))
    return _lincomb(terms)


class _TPolynomial(NamedTuple):
    """l(X) = l0 + sL·X, r(X) = r0 + r1·X (as vectors), and t(X) = ⟨l(X), r(X)⟩'s t1, t2."""

    l0: list[int]
    r0: list[int]
    r1: list[int]
    t1: int
    t2: int
    z_weights: list[int]  # z^{2+j}, j < m


def _t_polynomial(bits: Sequence[int], s_pairs: Sequence[tuple[int, int]], nbits: int, m: int,
                  y: int, z: int) -> _TPolynomial:
    """l0_k = aL_k − z, r0_k = y^k·(aR_k + z) + z^{2+j}·2^i, r1_k = y^k·sR_k (k = j·nbits + i,
    aR_k = aL_k − 1); t1 = ⟨l0, r1⟩ + ⟨sL, r0⟩, t2 = ⟨sL, r1⟩."""
    zz = z * z % N
    z_weights = [zz]
    for _ in range(m - 1):
        z_weights.append(z_weights[-1] * z % N)
    y_pow = 1
    t1 = t2 = 0
    l0: list[int] = []
    r0: list[int] = []
    r1: list[int] = []
    for k in range(len(bits)):
        j, i = divmod(k, nbits)
        sl, sr = s_pairs[k]
        bit = bits[k]
        l0_k = bit - z
        r0_k = (y_pow * (bit - 1 + z) + (z_weights[j] << i)) % N
        r1_k = y_pow * sr % N
        t1 += l0_k * r1_k + sl * r0_k
        t2 += sl * r1_k
        l0.append(l0_k)
        r0.append(r0_k)
        r1.append(r1_k)
        y_pow = y_pow * y % N
    return _TPolynomial(l0, r0, r1, t1 % N, t2 % N, z_weights)


def _inner_product(gens: GeneratorSet, tr: Transcript, n: int, y: int, u: int,
                   a: list[int], b: list[int]) -> tuple[list[int], list[int], list[Point]]:
    """The inner-product rounds (even/odd folding) down to two elements.

    The folded generators are kept as coefficient vectors over the original ones: after r
    rounds element i stands for the block k ∈ [i·2^r, (i+1)·2^r) with G'_i = Σ gf_k·G_k and
    H'_i = Σ hf_k·H_k (hf starts at y^{−k}). L = Σ_j a_{2j}·G'_{2j+1} + b_{2j+1}·H'_{2j} + u·c_L·h
    and R likewise are then single multi-scalar multiplications over the fixed generator table,
    and the per-round vector work is done by the kernel on packed vectors.
    """
    gf = _ONE * n
    hf = _k.scalar_powers(_b(pow(y, -1, N)), n)
    gap = bytes(32 * (gens.capacity - n))
    table = gens.prover_fixed.table
    lr_points: list[Point] = []
    size = 1  # original indices per current element
    while len(a) > 2:
        half = len(a) // 2
        c_l = sum(a[2 * j] * b[2 * j + 1] for j in range(half)) % N
        c_r = sum(a[2 * j + 1] * b[2 * j] for j in range(half)) % N
        zero = bytes(32 * size)
        # Per-block multipliers: L takes a_{2j} on odd G-blocks and b_{2j+1} on even H-blocks;
        # R takes a_{2j+1} on even G-blocks and b_{2j} on odd H-blocks.
        a_even = [_b(a[2 * j]) * size for j in range(half)]
        a_odd = [_b(a[2 * j + 1]) * size for j in range(half)]
        b_even = [_b(b[2 * j]) * size for j in range(half)]
        b_odd = [_b(b[2 * j + 1]) * size for j in range(half)]
        gl = _k.scalar_vec_mul(gf, b"".join(zero + v for v in a_even))
        gr = _k.scalar_vec_mul(gf, b"".join(v + zero for v in a_odd))
        hl = _k.scalar_vec_mul(hf, b"".join(v + zero for v in b_odd))
        hr = _k.scalar_vec_mul(hf, b"".join(zero + v for v in b_even))
        point_l = table.msm_var(_b(u * c_l) + gl + gap + hl)
        point_r = table.msm_var(_b(u * c_r) + gr + gap + hr)
        pl, pr = Point.from_packed(point_l), Point.from_packed(point_r)
        if pl.is_infinity or pr.is_infinity:
            raise proof_error("degenerate",
                              "degenerate inner-product point; use another nonce")
        lr_points += [pl, pr]
        f_lr, x_lr = _flags_and_x([pl, pr])
        xr = challenge(tr.absorb_points(f_lr & 1, f_lr >> 1, x_lr[0] + x_lr[1]))
        xr_inv = pow(xr, -1, N)
        a = [(a[2 * j] * xr + a[2 * j + 1] * xr_inv) % N for j in range(half)]
        b = [(b[2 * j] * xr_inv + b[2 * j + 1] * xr) % N for j in range(half)]
        xb, xib = _b(xr) * size, _b(xr_inv) * size
        gf = _k.scalar_vec_mul(gf, (xib + xb) * half)  # G'_j = x⁻¹·G'_{2j} + x·G'_{2j+1}
        hf = _k.scalar_vec_mul(hf, (xb + xib) * half)  # H'_j = x·H'_{2j} + x⁻¹·H'_{2j+1}
        size *= 2
    return a, b, lr_points
