"""Pure-Python twin of the native Bulletproof verification setup (the executable specification of
``bulletproof_prepare_var`` and ``bulletproof_accumulate_var``; API in
``ctplugin.bulletproofs.kernel``). Textbook arithmetic with Python integers, written to be read;
the C entries in ``ctplugin.secp256k1._native`` agree with it bit for bit (tests cross-check
them, hostile inputs included). Variable time: public data only.

The verification equation (docs/bulletproofs-format.md §8, as ``verifier.py`` states it) of a proof
over N = nbits·m bits, lg = log2(N) − 1 L/R rounds, with challenges y, z, x, w, u, x_r and
P_k = Π_r x_r^{+1 if bit r of k is set, else −1} for k < N/2, reads over the fixed base
[h, G_0 … G_{K−1}, H_{K−1} … H_0] (H stored reversed; H_{N−1} … H_0 start at ``h_start``):

    G_k, k < N/2:        −z − a1·P_k          G_{N/2+k}:      −z − a2·P_k
    H at h_start + q:    z − b2·y^{1−N}·P_q·y^q          (q < N/2)
                         z − b1·y^{1−N/2}·P_q'·y^q'       (q = N/2 + q')
                         + z^{2+j}·(2/y)^{nbits−1}·y^{−j·nbits}·(y/2)^i   (q = (m−1−j)·nbits + i)
    h:                   u·(t − a1·b1 − a2·b2) + (−μ) + w·(−τx)
    V_j: w·z^{2+j}   A: 1   S: x   T1: w·x   T2: w·x²   L_r: x_r²   R_r: x_r^{−2}
    g (value generator): w·(δ − t),
    δ = (z − z²)·Σ_{k<N} y^k − Σ_j z^{3+j}·(2^nbits − 1) − z²·min

``prepare`` parses and checks each proof, decodes its points and runs the transcript, and keeps
per proof a compact *record* of weight-independent scalars (32 bytes each, big-endian):

    0 pg = −a1·p0 (p0 = Π_r x_r^{−1})   1 rg = a2/a1
    2 ph = −b2·y^{1−N}·p0                 3 rh = (b1/b2)·y^{N/2}
    4 y/2   5 z   6 h scalar   7 g scalar w·(δ − t)
    8 β0 = z²·(2/y)^{nbits−1}             9 γ = z·y^{−nbits}
    10 …       vm_r = x_r²·y^{2^r}                  (lg)
    10 + lg …  the free scalars, in point order (m + 4 + 2·lg)

so that, with U_k = Π_r x_r^{2·bit r of k} and Y_k = Π_r vm_r^{bit r of k} (k < N/2), the
coefficients above are G_k: pg·U_k, G_{N/2+k}: rg·pg·U_k, H at q < N/2: ph·Y_q, at N/2 + q:
rh·ph·Y_q, and the z-run block j: β0·γ^j·(y/2)^i (−z, +z and h are constant runs).

``accumulate`` expands the records of some members with weights ρ into an accumulator over the
fixed base — the doubling trees ρ·pg·U (U_{k+2^r} = U_k·x_r²) and ρ·ph·Y (Y_{k+2^r} =
Y_k·vm_r) and the ρ·β0·(y/2)^i run are added as they are, their rg / rh / γ^j multiples
multiplied in — and returns the weighted free scalars, the members' points and, per distinct
value generator, the weighted sum of its scalars.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from ctplugin.bulletproofs.transcript import Transcript
from ctplugin.errors import EncodingError
from ctplugin.secp256k1._reference import ScalarAccumulator, sqrt_mod_p
from ctplugin.secp256k1.params import B, N, P

# Failure codes of ``bulletproof_prepare_var`` (per proof; the detail says where).
ERR_LENGTH = 1  # detail: the proof's length
ERR_COMMITMENT_LENGTH = 2  # detail: the commitment entry's length
ERR_COMMITMENT_PREFIX = 3  # detail: commitment index j
ERR_FLAG_BITS = 4  # detail: offset of the flag byte with a non-zero unused bit
ERR_SCALAR = 5  # detail: offset of the scalar that is 0 or >= n
ERR_COMMITMENT_POINT = 6  # detail: j (given point: wrong length, infinity, off curve, other x)
ERR_POINT_RANGE = 7  # detail: point index (V_0 … V_{m−1}, A, S, T1, T2, L_0, R_0, …): x >= p
ERR_POINT_CURVE = 8  # detail: point index: x³ + 7 is not a square
ERR_CHALLENGE = 9  # detail: 0 y, 1 z, 2 x, 3 w, 4 u, 5 + r for x_r
ERR_VALUE_GENERATOR = 10  # detail: GEN_PREFIX, GEN_RANGE or GEN_CURVE (its generator's defect)
GEN_PREFIX, GEN_RANGE, GEN_CURVE = 1, 2, 3  # not 0a/0b; x >= p; x³ + 7 not a square

SCALAR_OFFSETS = (0, 32, 193, 225, 257, 289, 321)  # −τx, −μ, t, a1, a2, b1, b2
OFF_FLAGS, OFF_POINTS, OFF_T, OFF_LR_FLAGS = 64, 65, 193, 353
HEAD = 10  # record scalars before vm
_INV2 = pow(2, -1, N)


def shape(nbits: int, m: int) -> tuple[int, int, int, int]:
    """(N, lg, L/R flag bytes, proof length); EncodingError (reason ``shape``) unless nbits and
    m are powers of two in [1, 64] with N ≥ 4."""
    def pow2(v: object) -> bool:
        return isinstance(v, int) and 0 < v <= 64 and v & (v - 1) == 0

    if not (pow2(nbits) and pow2(m)) or nbits * m < 4:
        raise EncodingError("nbits and m must be powers of two in [1, 64] with nbits*m >= 4",
                            reason="shape")
    n = nbits * m
    lg = n.bit_length() - 2
    flag_bytes = (2 * lg + 7) // 8
    return n, lg, flag_bytes, OFF_LR_FLAGS + flag_bytes + 64 * lg


def record_scalars(nbits: int, m: int) -> int:
    """Scalars per record."""
    _, lg, _, _ = shape(nbits, m)
    return HEAD + lg + m + 4 + 2 * lg


def _b(v: int) -> bytes:
    return (v % N).to_bytes(32, "big")


def _sequence(obj: object, n: int | None, what: str) -> list[object]:
    """A sequence argument (any iterable, as the native PySequence_Fast), of n entries."""
    try:
        seq = list(obj)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError("expected a sequence") from None
    if n is not None and len(seq) != n:
        raise EncodingError(f"{what}: one entry per proof", reason="count-mismatch")
    return seq


def _bytes(obj: object, what: str, i: int) -> bytes:
    """A bytes-like element (the native buffer protocol); TypeError otherwise."""
    if isinstance(obj, bytes):
        return obj
    try:
        return memoryview(obj).tobytes()  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{what}[{i}] must be bytes-like, not {type(obj).__name__}") from None


MAX_THREADS = 64


def _check_threads(threads: int) -> None:
    if not 0 <= threads <= MAX_THREADS:
        raise EncodingError(f"threads must be in [0, {MAX_THREADS}]", reason="index-range")


def _scalars(data: bytes) -> list[int]:
    out = [int.from_bytes(data[i: i + 32], "big") for i in range(0, len(data), 32)]
    for i, v in enumerate(out):
        if v >= N:
            raise EncodingError(f"scalar {i}: not below the group order", reason="scalar-range")
    return out


def _u32s(data: bytes) -> tuple[int, ...]:
    return struct.unpack(f"<{len(data) // 4}I", data)


def _min_value(item: object, m: int) -> int | None:
    if item is None:
        return None
    if not isinstance(item, int):
        raise TypeError(f"a min value must be an int or None, not {type(item).__name__}")
    if not 0 <= item < 1 << 64:
        raise EncodingError("min values must be in [0, 2^64)", reason="too-large")
    if m != 1:
        raise EncodingError("min values are supported for m = 1 only", reason="shape")
    return item


def _decode(x_bytes: bytes, flag: int) -> tuple[int, int] | int:
    """The point (x, y) with y the QR root, negated if flag; else an error code."""
    x = int.from_bytes(x_bytes, "big")
    if x >= P:
        return ERR_POINT_RANGE
    y = sqrt_mod_p(x * x * x + B)
    if y is None:
        return ERR_POINT_CURVE
    return x, (P - y) % P if flag else y


class _Failure(Exception):
    def __init__(self, code: int, detail: int) -> None:
        super().__init__(code, detail)
        self.code = code
        self.detail = detail


def _prepare_one(nbits: int, m: int, proof: bytes, commitments: bytes, value_gen: bytes,
                 gen_defect: int, extra: bytes | None, min_value: int | None,
                 points_given: bytes | None) -> tuple[bytes, bytes]:
    """One proof's verification record (the MSM multipliers) and its points, or ``_Failure``
    for the first defect: the encoding, then the points, then the challenges."""
    n, lg, flag_bytes, length = shape(nbits, m)
    if len(proof) != length:
        raise _Failure(ERR_LENGTH, len(proof))
    if len(commitments) != 33 * m:
        raise _Failure(ERR_COMMITMENT_LENGTH, len(commitments))
    if gen_defect:
        raise _Failure(ERR_VALUE_GENERATOR, gen_defect)
    cs = [commitments[33 * j: 33 * j + 33] for j in range(m)]
    for j, c in enumerate(cs):
        if c[0] not in (8, 9):
            raise _Failure(ERR_COMMITMENT_PREFIX, j)
    flags = proof[OFF_FLAGS]
    if flags & 0xF0:
        raise _Failure(ERR_FLAG_BITS, OFF_FLAGS)
    lr_end = OFF_LR_FLAGS + flag_bytes
    lr_flags = int.from_bytes(proof[OFF_LR_FLAGS:lr_end], "little")
    if lr_flags >> (2 * lg):
        raise _Failure(ERR_FLAG_BITS, lr_end - 1)
    scalars = [int.from_bytes(proof[o: o + 32], "big") for o in SCALAR_OFFSETS]
    for v, o in zip(scalars, SCALAR_OFFSETS):
        if not 0 < v < N:
            raise _Failure(ERR_SCALAR, o)
    decoded = _decode_points(proof, cs, flags, lr_end, lr_flags, lg, points_given)
    tr = Transcript.for_statement(cs, value_gen, extra, None if min_value is None else [min_value])
    challenges = _challenges(tr, proof, flags, lr_end, lr_flags, lg)
    record = _multipliers(nbits, m, n, lg, scalars, challenges, min_value)
    points = b"".join(px.to_bytes(32, "big") + py.to_bytes(32, "big") for px, py in decoded)
    return record, points


def _decode_points(proof: bytes, cs: list[bytes], flags: int, lr_end: int, lr_flags: int,
                   lg: int, points_given: bytes | None) -> list[tuple[int, int]]:
    """V_j (given as affine points matching the commitments, or decoded from them), A, S, T1,
    T2, L_0, R_0, L_1, …; ``_Failure`` naming the first bad one."""
    decoded: list[tuple[int, int]] = []
    if points_given is not None:
        if len(points_given) != 64 * len(cs):
            raise _Failure(ERR_COMMITMENT_POINT, 0)
        for j, c in enumerate(cs):
            x = int.from_bytes(points_given[64 * j: 64 * j + 32], "big")
            y = int.from_bytes(points_given[64 * j + 32: 64 * j + 64], "big")
            if (x.to_bytes(32, "big") != c[1:] or x >= P or y >= P
                    or (y * y - x * x * x - B) % P):
                raise _Failure(ERR_COMMITMENT_POINT, j)
            decoded.append((x, y))
    to_decode = [] if points_given is not None else [(c[1:], c[0] & 1) for c in cs]
    to_decode += [(proof[OFF_POINTS + 32 * i: OFF_POINTS + 32 * i + 32], (flags >> i) & 1)
                  for i in range(4)]
    to_decode += [(proof[lr_end + 32 * i: lr_end + 32 * i + 32], (lr_flags >> i) & 1)
                  for i in range(2 * lg)]
    first = len(decoded)
    for i, (xb, f) in enumerate(to_decode):
        got = _decode(xb, f)
        if isinstance(got, int):
            raise _Failure(got, first + i)
        decoded.append(got)
    return decoded


def _challenges(tr: Transcript, proof: bytes, flags: int, lr_end: int, lr_flags: int,
                lg: int) -> list[int]:
    """The transcript's challenges (§6): y, z, x, w, u, then one x_r per inner-product round;
    ``_Failure(ERR_CHALLENGE)`` for one outside (0, n)."""
    states = [tr.absorb_points(flags & 1, (flags >> 1) & 1, proof[65:129]),
              tr.absorb_points(flags & 1, (flags >> 1) & 1, proof[65:129]),
              tr.absorb_points((flags >> 2) & 1, (flags >> 3) & 1, proof[129:193])]
    tr.absorb(proof[0:64])
    states.append(tr.peek())
    states.append(tr.absorb(proof[OFF_T: OFF_T + 32]))
    for r in range(lg):
        pair, at = (lr_flags >> (2 * r)) & 3, lr_end + 64 * r
        states.append(tr.absorb_points(pair & 1, pair >> 1, proof[at: at + 64]))
    challenges = [int.from_bytes(s, "big") for s in states]
    for i, v in enumerate(challenges):
        if not 0 < v < N:
            raise _Failure(ERR_CHALLENGE, i)
    return challenges


def _multipliers(nbits: int, m: int, n: int, lg: int, scalars: list[int], challenges: list[int],
                 min_value: int | None) -> bytes:
    """The record the kernel expands: head scalars, the per-round y-power multipliers and the
    free points' multipliers (commitments, A, S, T1, T2, L_r, R_r), 32 bytes each."""
    taux_s, mu_s, t, a1, a2, b1, b2 = scalars
    y, z, x, w, u = challenges[:5]
    xr = challenges[5:]
    y_inv = pow(y, -1, N)
    xr_inv = [pow(v, -1, N) for v in xr]
    p0 = 1
    for v in xr_inv:
        p0 = p0 * v % N
    half = n // 2
    vm = [xr[r] * xr[r] * pow(y, 1 << r, N) % N for r in range(lg)]
    z_pows = [pow(z, 2 + j, N) for j in range(m)]  # z^{2+j}
    two_over_y_top = pow(2 * y_inv, nbits - 1, N)
    beta0 = z_pows[0] * two_over_y_top % N
    sum_y = sum(pow(y, k, N) for k in range(n)) % N
    delta = ((z - z * z) * sum_y - z * sum(z_pows) * ((1 << nbits) - 1)
             - z * z * (min_value or 0))
    head = [-a1 * p0, a2 * pow(a1, -1, N), -b2 * pow(y_inv, n - 1, N) * p0,
            b1 * pow(b2, -1, N) * pow(y, half, N), y * _INV2, z,
            u * (t - a1 * b1 - a2 * b2) + mu_s + w * taux_s, w * (delta - t),
            beta0, z * pow(y_inv, nbits, N)]
    free = [w * zj for zj in z_pows] + [1, x, w * x, w * x * x]
    for r in range(lg):
        free += [xr[r] * xr[r], xr_inv[r] * xr_inv[r]]
    return b"".join(_b(v) for v in head + vm + free)


def _decode_generator(encoding: bytes) -> tuple[bytes, int]:
    """(packed point, 0) of a 0a/0b ‖ x generator encoding, or (64 zero bytes, GEN_*)."""
    if encoding[0] & ~1 != 0x0A:
        return bytes(64), GEN_PREFIX
    got = _decode(encoding[1:], encoding[0] & 1)
    if isinstance(got, int):
        return bytes(64), GEN_RANGE if got == ERR_POINT_RANGE else GEN_CURVE
    return got[0].to_bytes(32, "big") + got[1].to_bytes(32, "big"), 0


def bulletproof_prepare_var(
    nbits: int, m: int, proofs: Sequence[bytes], commitments: Sequence[bytes],
    value_gens: bytes, gen_index: bytes, extra_commits: Sequence[bytes | None],
    min_values: Sequence[int | None] | None = None,
    commitment_points: Sequence[bytes | None] | None = None,
    threads: int = 0,
) -> tuple[bytes, bytes, bytes, list[tuple[int, int, int]]]:
    """(records, points, generator points, failures) for the proofs of one shape; see the
    module docstring.

    ``commitments[i]``: proof i's m commitment encodings joined (33·m bytes); ``value_gens``:
    distinct 33-byte generator encodings (0a/0b ‖ x, decoded here: 64 bytes each come back, zero
    for one that does not decode, whose proofs fail with ERR_VALUE_GENERATOR), ``gen_index``: a
    little-endian u32 per proof selecting its generator; ``extra_commits[i]`` None (absent) or
    bytes (hashed even when empty); ``min_values``: None, or per proof None or an int in
    [0, 2^64) (m = 1 only); ``commitment_points``: None, or per proof None or its m commitments
    already decoded (64·m bytes; the y must be the root the encoding's flag selects: a
    precondition, not checked). Records and points of the proofs that pass come out in order;
    ``failures`` lists (proof index, code, detail) for the others (codes ERR_*). Bad arguments
    (not a per-proof matter): EncodingError with the native entry's reason and message; element
    types that are not bytes-like: TypeError. ``threads`` (0: the kernel setting) only checked:
    the results do not depend on it.
    """
    _check_threads(threads)
    shape(nbits, m)
    proof_list = _sequence(proofs, None, "proofs")
    count = len(proof_list)
    commitment_list = _sequence(commitments, count, "commitments")
    extra_list = _sequence(extra_commits, count, "extra_commits")
    min_list = None if min_values is None else _sequence(min_values, count, "min_values")
    point_list = (None if commitment_points is None
                  else _sequence(commitment_points, count, "commitment_points"))
    value_gens = bytes(value_gens)
    if len(value_gens) % 33:
        raise EncodingError("value generators: 33 bytes each", reason="length")
    gens = [value_gens[33 * i: 33 * i + 33] for i in range(len(value_gens) // 33)]
    if len(gen_index) != 4 * count:
        raise EncodingError("gen_index: one u32 per proof", reason="count-mismatch")
    index = _u32s(bytes(gen_index))
    for i, k in enumerate(index):
        if k >= len(gens):
            raise EncodingError(f"gen_index {i} out of range", reason="index-range")
    inputs = []
    for i in range(count):  # argument errors first, in the native order
        mv = None if min_list is None else _min_value(min_list[i], m)
        proof = _bytes(proof_list[i], "proofs", i)
        commitment = _bytes(commitment_list[i], "commitments", i)
        point = (None if point_list is None or point_list[i] is None
                 else _bytes(point_list[i], "commitment_points", i))
        extra = None if extra_list[i] is None else _bytes(extra_list[i], "extra_commits", i)
        inputs.append((proof, commitment, index[i], extra, mv, point))
    decoded = [_decode_generator(g) for g in gens]
    records, points, failures = [], [], []
    for i, (proof, commitment, g, extra, mv, point) in enumerate(inputs):
        try:
            rec, pts = _prepare_one(nbits, m, proof, commitment, gens[g], decoded[g][1], extra,
                                    mv, point)
        except _Failure as failure:
            failures.append((i, failure.code, failure.detail))
            continue
        records.append(rec)
        points.append(pts)
    return (b"".join(records), b"".join(points), b"".join(p for p, _ in decoded), failures)


def bulletproof_accumulate_var(
    acc: ScalarAccumulator, nbits: int, m: int, h_index: int, g_start: int, h_start: int,
    records: bytes, points: bytes, gen_index: bytes, n_gens: int, members: bytes, weights: bytes,
    threads: int = 0,
) -> tuple[bytes, bytes, bytes]:
    """Add Σ_c ρ_c·(fixed coefficients of record c) to ``acc`` and return (the weighted free
    scalars, the members' points, the per-generator weighted sums of the g scalars).

    ``members``: little-endian u32 record indices (in this order; repeats allowed), ``weights``:
    one 32-byte scalar ρ per member. The fixed base offsets: h at ``h_index``, G_0 … G_{N−1} from
    ``g_start``, the reversed H_{N−1} … H_0 from ``h_start``. Every argument is validated
    before ``acc`` changes (EncodingError otherwise).
    """
    _check_threads(threads)
    n, lg, _, _ = shape(nbits, m)
    size = record_scalars(nbits, m)
    nfree = m + 4 + 2 * lg
    if len(records) % (32 * size):
        raise EncodingError("records: not a whole number of records", reason="length")
    count = len(records) // (32 * size)
    if len(points) != 64 * nfree * count or len(gen_index) != 4 * count:
        raise EncodingError("points / gen_index do not match the records",
                            reason="count-mismatch")
    if len(members) % 4 or len(weights) != 8 * len(members):
        raise EncodingError("members: u32 each, weights: one 32-byte scalar per member",
                            reason="count-mismatch")
    gidx = _u32s(bytes(gen_index))
    if n_gens < 0 or any(i >= n_gens for i in gidx):
        raise EncodingError("gen_index out of range", reason="index-range")
    for start, run in ((h_index, 1), (g_start, n), (h_start, n)):
        if start < 0 or start + run > len(acc):
            raise EncodingError("fixed base offsets outside the accumulator",
                                reason="index-range")
    idx = _u32s(bytes(members))
    if any(i >= count for i in idx):
        raise EncodingError("member index out of range", reason="index-range")
    rho = _scalars(bytes(weights))
    rec = _scalars(bytes(records))
    half = n // 2
    free_out, points_out = [], []
    gen_sums = [0] * n_gens
    fixed = [0] * len(acc)
    for c, r in zip(idx, rho):
        s = rec[size * c: size * (c + 1)]
        pg, rg, ph, rh, yh, z, hsc, sg, beta0, gamma = s[:HEAD]
        vm, free = s[HEAD: HEAD + lg], s[HEAD + lg:]
        sq = [free[m + 4 + 2 * k] for k in range(lg)]
        for k in range(half):
            uk, yk = 1, 1
            for b in range(lg):
                if k >> b & 1:
                    uk = uk * sq[b] % N
                    yk = yk * vm[b] % N
            fixed[g_start + k] += r * pg * uk
            fixed[g_start + half + k] += r * rg * pg * uk
            fixed[h_start + k] += r * ph * yk
            fixed[h_start + half + k] += r * rh * ph * yk
        for j in range(m):
            for i in range(nbits):
                fixed[h_start + (m - 1 - j) * nbits + i] += (r * beta0 * pow(gamma, j, N)
                                                             * pow(yh, i, N))
        fixed[h_index] += r * hsc
        for k in range(n):
            fixed[g_start + k] -= r * z
            fixed[h_start + k] += r * z
        free_out += [r * v for v in free]
        points_out.append(points[64 * nfree * c: 64 * nfree * (c + 1)])
        gen_sums[gidx[c]] += r * sg
    acc.axpy(_b(1), b"".join(_b(v) for v in fixed))
    return (b"".join(_b(v) for v in free_out), b"".join(points_out),
            b"".join(_b(v) for v in gen_sums))
