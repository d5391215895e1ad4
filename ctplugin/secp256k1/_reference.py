"""Pure-Python kernel backend: the executable specification of ``ctplugin.secp256k1.kernel``.

Straightforward textbook arithmetic (affine points, Python integers), written for clarity; the
native kernel must agree with it bit for bit -- results, and on bad input the same
``EncodingError`` with the same ``reason``. Variable time: public data only.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence

from ctplugin.errors import EncodingError
from ctplugin.secp256k1.field import is_square_mod_p, sqrt_mod_p
from ctplugin.secp256k1.params import B, N, P

KIND_COMPRESSED, KIND_PEDERSEN, KIND_GENERATOR, KIND_XONLY, KIND_XQR = range(5)
_PREFIX_BASE = {KIND_COMPRESSED: 0x02, KIND_PEDERSEN: 0x08, KIND_GENERATOR: 0x0A}

Affine = tuple[int, int] | None  # None is the point at infinity


# --- group law -------------------------------------------------------------------------------

def add(a: Affine, b: Affine) -> Affine:
    if a is None:
        return b
    if b is None:
        return a
    (x1, y1), (x2, y2) = a, b
    if x1 == x2:
        if (y1 + y2) % P == 0:
            return None
        lam = 3 * x1 * x1 * pow(2 * y1, -1, P) % P
    else:
        lam = (y2 - y1) * pow(x2 - x1, -1, P) % P
    x3 = (lam * lam - x1 - x2) % P
    return x3, (lam * (x1 - x3) - y1) % P


def neg(a: Affine) -> Affine:
    return None if a is None else (a[0], (-a[1]) % P)


def mul(k: int, a: Affine) -> Affine:
    """Double-and-add, k reduced mod N."""
    k %= N
    result: Affine = None
    addend = a
    while k:
        if k & 1:
            result = add(result, addend)
        addend = add(addend, addend)
        k >>= 1
    return result


# --- packing ---------------------------------------------------------------------------------

def _unpack_point(data: bytes | memoryview, i: int) -> Affine:
    """Point i of a packed vector: 64 zero bytes = infinity, else x || y with x, y < p on the
    curve (the native kernel checks the same)."""
    chunk = bytes(data[64 * i: 64 * i + 64])
    if chunk == bytes(64):
        return None
    x, y = int.from_bytes(chunk[:32], "big"), int.from_bytes(chunk[32:], "big")
    if x >= P or y >= P:
        raise EncodingError(f"point {i}: coordinate not below the field size",
                            reason="field-range")
    if (y * y - x * x * x - B) % P:
        raise EncodingError(f"point {i}: not on the curve", reason="off-curve")
    return x, y


def _one_point(data: bytes) -> Affine:
    if len(data) != 64:
        raise EncodingError("a point is exactly 64 bytes", reason="length")
    return _unpack_point(data, 0)


def _one_scalar(data: bytes, what: str = "scalar 0") -> int:
    if len(data) != 32:
        raise EncodingError(f"{what}: a scalar is exactly 32 bytes", reason="length")
    value = int.from_bytes(data, "big")
    if value >= N:
        raise EncodingError(f"{what}: not below the group order", reason="scalar-range")
    return value


def _pack_point(a: Affine) -> bytes:
    if a is None:
        return bytes(64)
    return a[0].to_bytes(32, "big") + a[1].to_bytes(32, "big")


def _unpack_scalars(data: bytes | memoryview) -> list[int]:
    if len(data) % 32:
        raise EncodingError("scalar vector length is not a multiple of 32", reason="length")
    out = [int.from_bytes(data[i: i + 32], "big") for i in range(0, len(data), 32)]
    for i, s in enumerate(out):
        if s >= N:
            raise EncodingError(f"scalar {i}: not below the group order", reason="scalar-range")
    return out


def _pack_scalars(values: Sequence[int]) -> bytes:
    return b"".join((v % N).to_bytes(32, "big") for v in values)


def _points(data: bytes | memoryview) -> list[Affine]:
    if len(data) % 64:
        raise EncodingError("point vector length is not a multiple of 64", reason="length")
    return [_unpack_point(data, i) for i in range(len(data) // 64)]


# --- kernel API ------------------------------------------------------------------------------

MAX_THREADS = 64
_threads_setting = 0


def _check_threads(threads: int) -> None:
    if not 0 <= threads <= MAX_THREADS:
        raise EncodingError(f"threads must be in [0, {MAX_THREADS}]", reason="index-range")


def set_threads(n: int) -> int:
    """The threads kernel calls may use (0 = the machine's cores); returns the previous setting.
    The reference computes on the caller's thread whatever the setting (results never depend on
    it)."""
    global _threads_setting
    _check_threads(n)
    previous, _threads_setting = _threads_setting, n
    return previous


def threads() -> int:
    return _threads_setting or (os.cpu_count() or 1)


def msm_var(scalars: bytes, points: bytes, threads: int = 0) -> bytes:
    _check_threads(threads)
    ks, ps = _unpack_scalars(scalars), _points(points)
    if len(ks) != len(ps):
        raise EncodingError("msm_var: scalar and point counts differ", reason="count-mismatch")
    acc: Affine = None
    for k, p in zip(ks, ps):
        acc = add(acc, mul(k, p))
    return _pack_point(acc)


class FixedBaseTable:
    """Reference 'table': just remembers the points."""

    def __init__(self, points: bytes) -> None:
        self._points = bytes(points)
        _points(self._points)  # validated as the native table does

    def __len__(self) -> int:
        return len(self._points) // 64

    def msm_var(self, scalars: bytes, extra_scalars: bytes = b"", extra_points: bytes = b"",
                threads: int = 0) -> bytes:
        _check_threads(threads)
        if len(scalars) > 32 * len(self):
            raise EncodingError("more scalars than table points", reason="too-large")
        fixed = msm_var(scalars, self._points[: 2 * len(scalars)])
        extra = msm_var(extra_scalars, extra_points)
        return point_add_var(fixed, extra)


def decode_points_var(data: bytes, kind: int) -> bytes:
    width = 32 if kind == KIND_XONLY else 33
    if kind not in range(5):
        raise EncodingError(f"unknown point kind {kind}", reason="kind")
    if len(data) % width:
        raise EncodingError(f"encoded point vector length is not a multiple of {width}",
                            reason="length")
    out = []
    for i in range(len(data) // width):
        chunk = data[width * i: width * (i + 1)]
        if kind == KIND_XONLY:
            flag, x_bytes = 0, chunk
        else:
            head, x_bytes = chunk[0], chunk[1:]
            base = 0 if kind == KIND_XQR else _PREFIX_BASE[kind]
            if head & ~1 != base:
                raise EncodingError(f"point {i}: bad prefix byte {head:#04x}", reason="prefix")
            flag = head & 1
        x = int.from_bytes(x_bytes, "big")
        if x >= P:
            raise EncodingError(f"point {i}: x coordinate not below the field size",
                                reason="field-range")
        y = sqrt_mod_p(x * x * x + B)
        if y is None:
            raise EncodingError(f"point {i}: not on the curve", reason="off-curve")
        if kind in (KIND_COMPRESSED, KIND_XONLY):
            if y & 1 != flag:
                y = P - y
        elif flag:  # the root returned is the residue one; flag 1 asks for the non-residue
            y = P - y
        out.append(_pack_point((x, y)))
    return b"".join(out)


def decode_xqr_flags_var(xs: bytes, flags: bytes) -> bytes:
    """KIND_XQR decoding with the flags packed apart: bit i of ``flags`` (byte i // 8, bit i % 8)
    is point i's flag."""
    if len(xs) % 32:
        raise EncodingError("x coordinate vector length is not a multiple of 32", reason="length")
    n = len(xs) // 32
    if len(flags) != (n + 7) // 8:
        raise EncodingError(f"flags must be {(n + 7) // 8} bytes for {n} points", reason="length")
    bits = int.from_bytes(flags, "little")
    if bits >> n:
        raise EncodingError("unused flag bits are not zero", reason="flags")
    records = b"".join(bytes(((bits >> i) & 1,)) + xs[32 * i: 32 * i + 32] for i in range(n))
    return decode_points_var(records, KIND_XQR)


def encode_points_var(points: bytes, kind: int) -> bytes:
    if kind not in range(5):
        raise EncodingError(f"unknown point kind {kind}", reason="kind")
    affine = _points(points)
    for i, a in enumerate(affine):
        if a is None:
            raise EncodingError(f"point {i}: infinity has no encoding", reason="infinity")
    out = []
    for a in affine:
        assert a is not None
        x, y = a
        xb = x.to_bytes(32, "big")
        if kind == KIND_XONLY:
            out.append(xb)
            continue
        flag = y & 1 if kind == KIND_COMPRESSED else 0 if is_square_mod_p(y) else 1
        out.append(bytes([_PREFIX_BASE.get(kind, 0) | flag]) + xb)
    return b"".join(out)


def point_add_var(a: bytes, b: bytes) -> bytes:
    return _pack_point(add(_one_point(a), _one_point(b)))


def point_neg(a: bytes) -> bytes:
    return _pack_point(neg(_one_point(a)))


def scalar_powers(x: bytes, n: int) -> bytes:
    xv = _one_scalar(x)
    if n < 0:
        raise EncodingError("negative length", reason="index-range")
    out, acc = [], 1
    for _ in range(n):
        out.append(acc)
        acc = acc * xv % N
    return _pack_scalars(out)


def scalar_batch_inverse(v: bytes) -> bytes:
    values = _unpack_scalars(v)
    if any(x == 0 for x in values):
        raise EncodingError("cannot invert zero", reason="zero")
    return _pack_scalars([pow(x, -1, N) for x in values])


MAX_CHALLENGES = 20
"""scalar_challenge_products returns 2^k scalars: k is capped so the output stays bounded."""


def scalar_challenge_products(xs: bytes) -> bytes:
    challenges = _unpack_scalars(xs)
    if len(challenges) > MAX_CHALLENGES:
        raise EncodingError(f"too many challenges ({len(challenges)} > {MAX_CHALLENGES})",
                            reason="too-large")
    if any(x == 0 for x in challenges):
        raise EncodingError("challenge is zero", reason="zero")
    inverses = [pow(x, -1, N) for x in challenges]
    out = []
    for i in range(1 << len(challenges)):
        acc = 1
        for r, (x, xi) in enumerate(zip(challenges, inverses)):
            acc = acc * (x if (i >> r) & 1 else xi) % N
        out.append(acc)
    return _pack_scalars(out)


def _pairwise(a: bytes, b: bytes) -> tuple[list[int], list[int]]:
    av, bv = _unpack_scalars(a), _unpack_scalars(b)
    if len(av) != len(bv):
        raise EncodingError("vector lengths differ", reason="count-mismatch")
    return av, bv


def scalar_vec_mul(a: bytes, b: bytes) -> bytes:
    av, bv = _pairwise(a, b)
    return _pack_scalars([x * y for x, y in zip(av, bv)])


def scalar_vec_add(a: bytes, b: bytes) -> bytes:
    av, bv = _pairwise(a, b)
    return _pack_scalars([x + y for x, y in zip(av, bv)])


def scalar_vec_scale(a: bytes, k: bytes) -> bytes:
    av = _unpack_scalars(a)
    kv = _one_scalar(k)
    return _pack_scalars([x * kv for x in av])


def scalar_vec_sum(a: bytes) -> bytes:
    return _pack_scalars([sum(_unpack_scalars(a))])


def scalar_vec_inner(a: bytes, b: bytes) -> bytes:
    av, bv = _pairwise(a, b)
    return _pack_scalars([sum(x * y for x, y in zip(av, bv))])


SCALAR_ACC_MAX = 1 << 24


class ScalarAccumulator:
    """n scalars mod N, all 0 at first, updated in place (batch coefficient sums)."""

    def __init__(self, n: int) -> None:
        if not 0 <= n <= SCALAR_ACC_MAX:
            raise EncodingError(f"accumulator size must be in [0, {SCALAR_ACC_MAX}]",
                                reason="too-large")
        self._v = [0] * n

    def __len__(self) -> int:
        return len(self._v)

    def _run(self, offset: int, count: int) -> None:
        if offset < 0 or count < 0 or offset + count > len(self._v):
            raise EncodingError("run outside the accumulator", reason="index-range")

    def axpy(self, k: bytes, x: bytes, offset: int = 0) -> None:
        """acc[offset + i] += k·x_i (all of x validated before any update)."""
        kv = _one_scalar(k)
        xv = _unpack_scalars(x)
        self._run(offset, len(xv))
        for i, xi in enumerate(xv):
            self._v[offset + i] = (self._v[offset + i] + kv * xi) % N

    def axpy_terms(self, weight: bytes, terms: Sequence[tuple[int, bytes, bytes]]) -> None:
        """acc[offset + i] += (weight·mult)·x_i for each (offset, mult, x); weight and the
        multipliers are 32-byte scalars; every term validated before any update."""
        w = _one_scalar(weight, "weight")
        checked = []
        for j, term in enumerate(terms):
            if not isinstance(term, tuple) or len(term) != 3:
                raise EncodingError(f"term {j}: a term is a tuple (offset, multiplier, x)",
                                    reason="type")
            offset, mult, x = term
            if not isinstance(offset, int):
                raise EncodingError(f"term {j}: the offset is an int", reason="type")
            if not isinstance(mult, bytes) or len(mult) != 32:
                raise EncodingError(f"term {j}: the multiplier is 32 bytes", reason="length")
            m = int.from_bytes(mult, "big")
            if m >= N:
                raise EncodingError(f"term {j}: multiplier not below the group order",
                                    reason="scalar-range")
            if len(x) % 32:
                raise EncodingError("scalar vector length is not a multiple of 32",
                                    reason="length")
            xv = [int.from_bytes(x[i: i + 32], "big") for i in range(0, len(x), 32)]
            for i, xi in enumerate(xv):
                if xi >= N:
                    raise EncodingError(f"term {j}: scalar {i} not below the group order",
                                        reason="scalar-range")
            self._run(offset, len(xv))
            checked.append((offset, m, xv))
        for offset, m, xv in checked:
            k = w * m % N
            for i, xi in enumerate(xv):
                self._v[offset + i] = (self._v[offset + i] + k * xi) % N

    def add_const(self, offset: int, count: int, value: bytes) -> None:
        """acc[offset + i] += value for i < count."""
        v = _one_scalar(value)
        self._run(offset, count)
        for i in range(offset, offset + count):
            self._v[i] = (self._v[i] + v) % N

    def to_bytes(self) -> bytes:
        return _pack_scalars(self._v)


def subset_sums_var(table: bytes, paths: Sequence[Sequence[int]]) -> bytes:
    points = _points(table)
    out = []
    for i, path in enumerate(paths):
        if not isinstance(path, Sequence):
            raise EncodingError(f"path {i}: each path must be a sequence of indices",
                                reason="type")
        acc: Affine = None
        for index in path:
            if not isinstance(index, int):
                raise EncodingError(
                    f"path index must be an int, not {type(index).__name__}", reason="type")
            if not 0 <= index < len(points):
                raise EncodingError(f"path index {index!r} out of range", reason="index-range")
            acc = add(acc, points[index])
        out.append(_pack_point(acc))
    return b"".join(out)


# --- Borromean ring signatures (secp256k1-zkp borromean_verify) -------------------------------

_GX = 0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798
_GY = 0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8

Jacobian = tuple[int, int, int]  # Z = 0 is the point at infinity


def _jdouble(a: Jacobian) -> Jacobian:
    x, y, z = a
    if z == 0 or y == 0:
        return (1, 1, 0)
    yy = y * y % P
    s = 4 * x * yy % P
    m = 3 * x * x % P
    x3 = (m * m - 2 * s) % P
    return x3, (m * (s - x3) - 8 * yy * yy) % P, 2 * y * z % P


def _jadd_affine(a: Jacobian, b: tuple[int, int]) -> Jacobian:
    """a + b for Jacobian a and affine b (the textbook mixed addition, all cases handled)."""
    x1, y1, z1 = a
    if z1 == 0:
        return b[0], b[1], 1
    zz = z1 * z1 % P
    u2 = b[0] * zz % P
    s2 = b[1] * zz * z1 % P
    h = (u2 - x1) % P
    r = (s2 - y1) % P
    if h == 0:
        return _jdouble(a) if r == 0 else (1, 1, 0)
    hh = h * h % P
    hhh = h * hh % P
    v = x1 * hh % P
    x3 = (r * r - hhh - 2 * v) % P
    return x3, (r * (v - x3) - y1 * hhh) % P, z1 * h % P


def _jaffine(a: Jacobian) -> Affine:
    x, y, z = a
    if z == 0:
        return None
    zi = pow(z, -1, P)
    zi2 = zi * zi % P
    return x * zi2 % P, y * zi2 * zi % P


def _double_mult(s: int, e: int, point: tuple[int, int]) -> Affine:
    """s·G + e·point by one shared doubling chain (Shamir's trick), Jacobian coordinates."""
    g = (_GX, _GY)
    both = add(g, point)
    acc: Jacobian = (1, 1, 0)
    for bit in range(255, -1, -1):
        acc = _jdouble(acc)
        pick = ((s >> bit) & 1) | (((e >> bit) & 1) << 1)
        if pick == 1:
            acc = _jadd_affine(acc, g)
        elif pick == 2:
            acc = _jadd_affine(acc, point)
        elif pick == 3:
            if both is None:
                continue
            acc = _jadd_affine(acc, both)
    return _jaffine(acc)


def _ser33(a: tuple[int, int]) -> bytes:
    return bytes((2 | (a[1] & 1),)) + a[0].to_bytes(32, "big")


def _borromean_layouts(sizes: bytes, n_proofs: int) -> list[list[int]]:
    """Decode ``sizes`` (per proof: u16 LE ring count >= 1, then each ring's size >= 1)."""
    layouts: list[list[int]] = []
    offset = 0
    bad = EncodingError("borromean: ring sizes do not describe the proofs", reason="length")
    for _ in range(n_proofs):
        if offset + 2 > len(sizes):
            raise bad
        rings = int.from_bytes(sizes[offset: offset + 2], "little")
        offset += 2
        if rings == 0 or offset + 2 * rings > len(sizes):
            raise bad
        ring = [int.from_bytes(sizes[offset + 2 * i: offset + 2 * i + 2], "little")
                for i in range(rings)]
        offset += 2 * rings
        if 0 in ring:
            raise bad
        layouts.append(ring)
    if offset != len(sizes):
        raise bad
    if sum(sum(ring) for ring in layouts) > 1 << 31:
        raise EncodingError("borromean: more than 2^31 members", reason="too-large")
    return layouts


def _borromean_rings(sizes: bytes, pubs: bytes, scalars: bytes,
                     e0m: bytes) -> tuple[list[list[int]], list[Affine], list[int]]:
    """What both verification entries take, checked: (layouts, members, s values)."""
    if len(e0m) % 64:
        raise EncodingError("borromean: e0m length is not a multiple of 64", reason="length")
    layouts = _borromean_layouts(sizes, len(e0m) // 64)
    members = _points(pubs)
    s_values = _unpack_scalars(scalars)
    total = sum(sum(ring) for ring in layouts)
    if len(members) != total or len(s_values) != total:
        raise EncodingError("borromean: member counts differ from the ring sizes",
                            reason="count-mismatch")
    return layouts, members, s_values


def _borromean_ring(ring: int, size: int, first: int, e0: bytes, m: bytes,
                    points: list[Affine], s_values: list[int],
                    evalues: bytearray | None) -> bytes | None:
    """One ring of members first .. first + size - 1: ser33 of its last R, or None if it fails
    (recording each member's challenge in ``evalues`` as it is reached)."""
    tag = ring.to_bytes(4, "big")
    e_bytes = hashlib.sha256(e0 + m + tag + bytes(4)).digest()
    for j in range(size):
        k = first + j
        e = int.from_bytes(e_bytes, "big")
        if not 0 < e < N:
            return None
        if evalues is not None:
            evalues[32 * k: 32 * k + 32] = e_bytes
        s, point = s_values[k], points[k]
        if s == 0 or point is None:
            return None
        r = _double_mult(s, e, point)
        if r is None:
            return None
        if j == size - 1:
            return _ser33(r)
        e_bytes = hashlib.sha256(_ser33(r) + m + tag + (j + 1).to_bytes(4, "big")).digest()
    return None


def borromean_verify_var(sizes: bytes, pubs: bytes, scalars: bytes, e0m: bytes,
                         threads: int = 1, challenges: bool = False) -> tuple[bytes, bytes]:
    """Verify many Borromean ring signatures (secp256k1-zkp ``borromean_verify``).

    Per proof: ``e0m`` holds e0 ‖ m (64 bytes); ``sizes`` its ring sizes; ``pubs`` / ``scalars``
    one packed point (infinity fails the proof) / scalar (< N) per member, all proofs
    concatenated. For ring i, e = H(e0 ‖ m ‖ be32(i) ‖ be32(0)), and for each member j:
    R = s·G + e·P, e = H(ser33(R) ‖ m ‖ be32(i) ‖ be32(j+1)); valid iff
    H(ser33(R_last of each ring) ‖ m) = e0, with every e and s in [1, n) and no P or R at
    infinity. Returns (one byte 1/0 per proof, every member's challenge e (32 bytes, zeros
    where a failed ring stopped) if asked, else b""). ``threads`` does not change results.
    """
    layouts, points, s_values = _borromean_rings(sizes, pubs, scalars, e0m)
    total = len(points)
    verdicts = bytearray()
    evalues = bytearray(32 * total if challenges else 0)
    member = 0
    for index, layout in enumerate(layouts):
        e0, m = e0m[64 * index: 64 * index + 32], e0m[64 * index + 32: 64 * index + 64]
        closing = hashlib.sha256()
        ok = True
        for ring_index, size in enumerate(layout):  # every ring runs, as the native lanes do
            last = _borromean_ring(ring_index, size, member, e0, m, points, s_values,
                                   evalues if challenges else None)
            member += size
            if last is None:
                ok = False
            else:
                closing.update(last)
        closing.update(m)
        verdicts.append(1 if ok and closing.digest() == e0 else 0)
    return bytes(verdicts), bytes(evalues)


def borromean_verify_points_var(sizes: bytes, pubs: bytes, scalars: bytes, e0m: bytes,
                                points: bytes, weights: bytes, threads: int = 1) -> bool:
    """True iff the signer's ring points ``points`` (one R per member) show every proof valid:
    each challenge hashed from the points as ``borromean_verify_var`` hashes its own R (every e
    and s in [1, n), no P or R at infinity, the rings closing on e0), and R = s·G + e·P for
    every member. Checked here member by member; the native kernel checks the last part for all
    members at once with the random 128-bit ``weights`` (16 bytes per member), which it may get
    wrong with probability at most 2^-128. Errors as ``borromean_verify_var``, plus
    ``count-mismatch`` for points and ``length`` for weights."""
    layouts, members, s_values = _borromean_rings(sizes, pubs, scalars, e0m)
    total = len(members)
    signer = _points(points)
    if len(signer) != total:
        raise EncodingError("borromean: ring points differ from the ring sizes",
                            reason="count-mismatch")
    if len(weights) != 16 * total:
        raise EncodingError("borromean: weights are not 16 bytes per member", reason="length")
    member = 0
    for index, layout in enumerate(layouts):
        e0, m = e0m[64 * index: 64 * index + 32], e0m[64 * index + 32: 64 * index + 64]
        closing = hashlib.sha256()
        for ring_index, size in enumerate(layout):
            tag = ring_index.to_bytes(4, "big")
            data = e0
            for j in range(size):
                e = int.from_bytes(hashlib.sha256(data + m + tag + j.to_bytes(4, "big")).digest(),
                                   "big")
                r, point, s = signer[member], members[member], s_values[member]
                member += 1
                if not 0 < e < N or s == 0 or point is None or r is None:
                    return False
                if _double_mult(s, e, point) != r:
                    return False
                data = _ser33(r)
            closing.update(data)
        closing.update(m)
        if closing.digest() != e0:
            return False
    return True


def borromean_members_var(sizes: bytes, commitments: bytes, generators: bytes, digits: bytes,
                          min_values: bytes, scales: bytes) -> tuple[bytes, bytes]:
    """Range proofs' ring members (``rangeproof_pub_expand``): per proof, the last digit
    commitment D_{r-1} = C − (min·gen + Σ D_i) from the r − 1 stored ones, then every member
    P_{i,j} = D_i + j·B_i with B_i = −4^i·scale·gen, in order. Returns (the members packed,
    one byte per proof: 0 when D_{r-1} is infinity, its members then infinity, else 1)."""
    cs, gens, ds = _points(commitments), _points(generators), _points(digits)
    mins, scale_values = _unpack_scalars(min_values), _unpack_scalars(scales)
    layouts = _borromean_layouts(sizes, len(cs))
    if not (len(gens) == len(mins) == len(scale_values) == len(cs)
            and len(ds) == sum(len(ring) for ring in layouts) - len(cs)):
        raise EncodingError("borromean_members_var: point or scalar counts differ from the "
                            "layouts", reason="count-mismatch")
    if any(size > 4 for ring in layouts for size in ring):
        raise EncodingError("borromean_members_var: a ring of more than 4 members",
                            reason="too-large")
    out, ok = [], bytearray()
    used = 0
    for c, gen, min_value, scale, ring in zip(cs, gens, mins, scale_values, layouts):
        stored = ds[used: used + len(ring) - 1]
        used += len(ring) - 1
        offset = mul(min_value, gen)
        for d in stored:
            offset = add(offset, d)
        last = add(c, neg(offset))
        ok.append(last is not None)
        base = neg(mul(scale, gen))
        for d, size in zip([*stored, last], ring):
            member = d
            for _ in range(size):
                out.append(None if last is None else member)
                member = add(member, base)
            base = add(add(base, base), add(base, base))
    return b"".join(_pack_point(p) for p in out), bytes(ok)


def double_mult_many_var(s: bytes, e: bytes, points: bytes, threads: int = 0) -> bytes:
    """R_i = s_i·G + e_i·P_i for every i (packed points; P_i may be infinity: R_i = s_i·G).
    ``threads`` does not change results."""
    _check_threads(threads)
    ss, es, ps = _unpack_scalars(s), _unpack_scalars(e), _points(points)
    if not len(ss) == len(es) == len(ps):
        raise EncodingError("double_mult_many_var: scalar and point counts differ",
                            reason="count-mismatch")
    g = (_GX, _GY)
    return b"".join(_pack_point(mul(si, g) if p is None else _double_mult(si, ei, p))
                    for si, ei, p in zip(ss, es, ps))
