"""Pure-Python kernel backend: the executable specification of ``ctplugin.secp256k1.kernel``.

Straightforward textbook arithmetic (affine points, Python integers), written for clarity; the
native kernel must agree with it bit for bit. Variable time: public data only.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctplugin.secp256k1.params import B, N, P

KIND_COMPRESSED, KIND_PEDERSEN, KIND_GENERATOR, KIND_XONLY, KIND_XQR = range(5)
_PREFIX_BASE = {KIND_COMPRESSED: 0x02, KIND_PEDERSEN: 0x08, KIND_GENERATOR: 0x0A}

Affine = tuple[int, int] | None  # None is the point at infinity


# --- field helpers -------------------------------------------------------------------------------

def is_square_mod_p(a: int) -> bool:
    """Euler's criterion: a is a quadratic residue (0 counts as one)."""
    return a % P == 0 or pow(a, (P - 1) // 2, P) == 1


def sqrt_mod_p(a: int) -> int | None:
    """The square root of a that is itself a quadratic residue (p ≡ 3 mod 4), or None."""
    y = pow(a, (P + 1) // 4, P)
    return y if y * y % P == a % P else None


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
    chunk = bytes(data[64 * i: 64 * i + 64])
    if chunk == bytes(64):
        return None
    return int.from_bytes(chunk[:32], "big"), int.from_bytes(chunk[32:], "big")


def _pack_point(a: Affine) -> bytes:
    if a is None:
        return bytes(64)
    return a[0].to_bytes(32, "big") + a[1].to_bytes(32, "big")


def _unpack_scalars(data: bytes | memoryview) -> list[int]:
    if len(data) % 32:
        raise ValueError("scalar vector length is not a multiple of 32")
    out = [int.from_bytes(data[i: i + 32], "big") for i in range(0, len(data), 32)]
    for i, s in enumerate(out):
        if s >= N:
            raise ValueError(f"scalar {i}: not below the group order")
    return out


def _pack_scalars(values: Sequence[int]) -> bytes:
    return b"".join((v % N).to_bytes(32, "big") for v in values)


def _points(data: bytes | memoryview) -> list[Affine]:
    if len(data) % 64:
        raise ValueError("point vector length is not a multiple of 64")
    return [_unpack_point(data, i) for i in range(len(data) // 64)]


# --- kernel API ------------------------------------------------------------------------------

def msm_var(scalars: bytes, points: bytes) -> bytes:
    ks, ps = _unpack_scalars(scalars), _points(points)
    if len(ks) != len(ps):
        raise ValueError("msm_var: scalar and point counts differ")
    acc: Affine = None
    for k, p in zip(ks, ps):
        acc = add(acc, mul(k, p))
    return _pack_point(acc)


class FixedBaseTable:
    """Reference 'table': just remembers the points."""

    def __init__(self, points: bytes) -> None:
        self._points = bytes(points)
        if len(self._points) % 64:
            raise ValueError("point vector length is not a multiple of 64")

    def __len__(self) -> int:
        return len(self._points) // 64

    def msm_var(
        self, scalars: bytes, extra_scalars: bytes = b"", extra_points: bytes = b""
    ) -> bytes:
        if len(scalars) > 32 * len(self):
            raise ValueError("more scalars than table points")
        fixed = msm_var(scalars, self._points[: 2 * len(scalars)])
        extra = msm_var(extra_scalars, extra_points)
        return point_add_var(fixed, extra)


def decode_points_var(data: bytes, kind: int) -> bytes:
    width = 32 if kind == KIND_XONLY else 33
    if kind not in range(5):
        raise ValueError(f"unknown point kind {kind}")
    if len(data) % width:
        raise ValueError(f"encoded point vector length is not a multiple of {width}")
    out = []
    for i in range(len(data) // width):
        chunk = data[width * i: width * (i + 1)]
        if kind == KIND_XONLY:
            flag, x_bytes = 0, chunk
        else:
            head, x_bytes = chunk[0], chunk[1:]
            base = 0 if kind == KIND_XQR else _PREFIX_BASE[kind]
            if head & ~1 != base:
                raise ValueError(f"point {i}: bad prefix byte {head:#04x}")
            flag = head & 1
        x = int.from_bytes(x_bytes, "big")
        if x >= P:
            raise ValueError(f"point {i}: x coordinate not below the field size")
        y = sqrt_mod_p(x * x * x + B)
        if y is None:
            raise ValueError(f"point {i}: not on the curve")
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
        raise ValueError("x coordinate vector length is not a multiple of 32")
    n = len(xs) // 32
    if len(flags) != (n + 7) // 8:
        raise ValueError(f"flags must be {(n + 7) // 8} bytes for {n} points")
    bits = int.from_bytes(flags, "little")
    if bits >> n:
        raise ValueError("unused flag bits are not zero")
    records = b"".join(bytes(((bits >> i) & 1,)) + xs[32 * i: 32 * i + 32] for i in range(n))
    return decode_points_var(records, KIND_XQR)


def encode_points_var(points: bytes, kind: int) -> bytes:
    out = []
    for i, a in enumerate(_points(points)):
        if a is None:
            raise ValueError(f"point {i}: infinity has no encoding")
        x, y = a
        xb = x.to_bytes(32, "big")
        if kind == KIND_XONLY:
            out.append(xb)
            continue
        if kind == KIND_COMPRESSED:
            flag = y & 1
        elif kind in (KIND_PEDERSEN, KIND_GENERATOR, KIND_XQR):
            flag = 0 if is_square_mod_p(y) else 1
        else:
            raise ValueError(f"unknown point kind {kind}")
        out.append(bytes([_PREFIX_BASE.get(kind, 0) | flag]) + xb)
    return b"".join(out)


def point_add_var(a: bytes, b: bytes) -> bytes:
    return _pack_point(add(_unpack_point(a, 0), _unpack_point(b, 0)))


def point_neg(a: bytes) -> bytes:
    return _pack_point(neg(_unpack_point(a, 0)))


def scalar_powers(x: bytes, n: int) -> bytes:
    (xv,) = _unpack_scalars(x)
    if n < 0:
        raise ValueError("negative length")
    out, acc = [], 1
    for _ in range(n):
        out.append(acc)
        acc = acc * xv % N
    return _pack_scalars(out)


def scalar_batch_inverse(v: bytes) -> bytes:
    values = _unpack_scalars(v)
    if any(x == 0 for x in values):
        raise ValueError("cannot invert zero")
    return _pack_scalars([pow(x, -1, N) for x in values])


def scalar_challenge_products(xs: bytes) -> bytes:
    challenges = _unpack_scalars(xs)
    if any(x == 0 for x in challenges):
        raise ValueError("challenge is zero")
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
        raise ValueError("vector lengths differ")
    return av, bv


def scalar_vec_mul(a: bytes, b: bytes) -> bytes:
    av, bv = _pairwise(a, b)
    return _pack_scalars([x * y for x, y in zip(av, bv)])


def scalar_vec_add(a: bytes, b: bytes) -> bytes:
    av, bv = _pairwise(a, b)
    return _pack_scalars([x + y for x, y in zip(av, bv)])


def scalar_vec_scale(a: bytes, k: bytes) -> bytes:
    (kv,) = _unpack_scalars(k)
    return _pack_scalars([x * kv for x in _unpack_scalars(a)])


def scalar_vec_sum(a: bytes) -> bytes:
    return _pack_scalars([sum(_unpack_scalars(a))])


def scalar_vec_inner(a: bytes, b: bytes) -> bytes:
    av, bv = _pairwise(a, b)
    return _pack_scalars([sum(x * y for x, y in zip(av, bv))])


SCALAR_ACC_MAX = 1 << 24


def _int_scalar(v: object) -> int:
    if not isinstance(v, int):
        raise TypeError("a scalar multiplier must be an int")
    if not 0 <= v < N:
        raise ValueError("multiplier not in [0, N)")
    return v


class ScalarAccumulator:
    """n scalars mod N, all 0 at first, updated in place (batch coefficient sums)."""

    def __init__(self, n: int) -> None:
        if not 0 <= n <= SCALAR_ACC_MAX:
            raise ValueError(f"accumulator size must be in [0, {SCALAR_ACC_MAX}]")
        self._v = [0] * n

    def __len__(self) -> int:
        return len(self._v)

    def _run(self, offset: int, count: int) -> None:
        if offset < 0 or count < 0 or offset + count > len(self._v):
            raise ValueError("run outside the accumulator")

    def axpy(self, k: bytes, x: bytes, offset: int = 0) -> None:
        """acc[offset + i] += k·x_i (all of x validated before any update)."""
        (kv,) = _unpack_scalars(k)
        xv = _unpack_scalars(x)
        self._run(offset, len(xv))
        for i, xi in enumerate(xv):
            self._v[offset + i] = (self._v[offset + i] + kv * xi) % N

    def axpy_terms(self, weight: int, terms: Sequence[tuple[int, int, bytes]]) -> None:
        """acc[offset + i] += (weight·mult)·x_i for each (offset, mult, x); weight and the
        multipliers are ints in [0, N); every term validated before any update."""
        ks = [_int_scalar(weight)]
        checked = []
        for term in terms:
            if not isinstance(term, tuple) or len(term) != 3:
                raise TypeError("a term is a tuple (offset, multiplier, x)")
            offset, mult, x = term
            xv = _unpack_scalars(x)
            self._run(offset, len(xv))
            checked.append((offset, _int_scalar(mult), xv))
        for offset, mult, xv in checked:
            k = ks[0] * mult % N
            for i, xi in enumerate(xv):
                self._v[offset + i] = (self._v[offset + i] + k * xi) % N

    def add_const(self, offset: int, count: int, value: bytes) -> None:
        """acc[offset + i] += value for i < count."""
        (v,) = _unpack_scalars(value)
        self._run(offset, count)
        for i in range(offset, offset + count):
            self._v[i] = (self._v[i] + v) % N

    def to_bytes(self) -> bytes:
        return _pack_scalars(self._v)


def subset_sums_var(table: bytes, paths: Sequence[Sequence[int]]) -> bytes:
    points = _points(table)
    out = []
    for path in paths:
        acc: Affine = None
        for index in path:
            if not 0 <= index < len(points):
                raise ValueError(f"path index {index} out of range")
            acc = add(acc, points[index])
        out.append(_pack_point(acc))
    return b"".join(out)
