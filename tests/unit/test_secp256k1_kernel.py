"""The native secp256k1 kernel against its executable specification (``_reference``) and coincurve.

The pure-Python reference is slow, so it is cross-checked on small sizes; large sizes are checked
against coincurve through known discrete logarithms: with P_i = d_i·G, Σ k_i·P_i = (Σ k_i·d_i)·G.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import coincurve
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin.errors import EncodingError
from ctplugin.secp256k1 import _reference as ref
from ctplugin.secp256k1 import kernel
from ctplugin.secp256k1.params import BETA, GX, GY, LAMBDA, N, P

nat = pytest.importorskip("ctplugin.secp256k1._native")


def _adx_module() -> object | None:
    try:
        from ctplugin.secp256k1 import _native_adx
    except ImportError:
        return None
    return _native_adx if _native_adx.cpu_supported() else None


adx = _adx_module()
NATIVES = [nat] if adx is None else [nat, adx]  # the portable build, and the ADX one if it runs

INF = bytes(64)
KINDS = [kernel.KIND_COMPRESSED, kernel.KIND_PEDERSEN, kernel.KIND_GENERATOR, kernel.KIND_XONLY,
         kernel.KIND_XQR]
scalars_st = st.integers(min_value=0, max_value=N - 1)
secrets_st = st.integers(min_value=1, max_value=N - 1)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def sc(v: int) -> bytes:
    return v.to_bytes(32, "big")


def scs(values: list[int]) -> bytes:
    return b"".join(sc(v) for v in values)


def pt(d: int) -> bytes:
    """d·G packed as x||y (infinity for d ≡ 0), through libsecp256k1."""
    d %= N
    if d == 0:
        return INF
    return coincurve.PublicKey.from_secret(sc(d)).format(compressed=False)[1:]


def pts(ds: list[int]) -> bytes:
    return b"".join(pt(d) for d in ds)


def neg_pt(p: bytes) -> bytes:
    if p == INF:
        return INF
    return p[:32] + sc((P - int.from_bytes(p[32:], "big")) % P)


def off_curve_point() -> bytes:
    g = pt(1)
    return g[:32] + sc((int.from_bytes(g[32:], "big") + 1) % P)


# --- backend selection ----------------------------------------------------------------------------

def test_kernel_uses_the_native_backend_when_built(monkeypatch: pytest.MonkeyPatch) -> None:
    assert kernel._load() is NATIVES[-1]  # the fastest build that runs on this CPU
    real_import = kernel.importlib.import_module

    def unbuilt(name: str) -> object:
        if name in kernel.NATIVE_MODULES:
            raise ImportError(name)
        return real_import(name)

    monkeypatch.setattr(kernel.importlib, "import_module", unbuilt)
    assert kernel._load() is ref  # the reference serves when no extension is built


# --- multi-scalar multiplication -----------------------------------------------------------------

@SLOW
@given(st.lists(st.tuples(scalars_st, secrets_st), max_size=3))
def test_msm_matches_reference_small(terms: list[tuple[int, int]]) -> None:
    ks = scs([k for k, _ in terms])
    ps = pts([d for _, d in terms])
    assert nat.msm_var(ks, ps) == ref.msm_var(ks, ps)


@FAST
@given(st.lists(st.tuples(scalars_st, secrets_st), max_size=80))
def test_msm_matches_known_discrete_logs(terms: list[tuple[int, int]]) -> None:
    ks = [k for k, _ in terms]
    ds = [d for _, d in terms]
    assert nat.msm_var(scs(ks), pts(ds)) == pt(sum(k * d for k, d in terms))


@pytest.mark.parametrize("n", [1, 2, 3, 8, 28, 29, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129, 200,
                               300, 511, 600, 1500, 1800])
def test_msm_sizes_across_algorithm_switches(n: int) -> None:
    rng = random.Random(n)
    ks = [rng.randrange(N) for _ in range(n)]
    ds = [rng.randrange(1, N) for _ in range(n)]
    assert nat.msm_var(scs(ks), pts(ds)) == pt(sum(k * d for k, d in zip(ks, ds, strict=True)))


def test_msm_large_n_against_coincurve() -> None:
    rng = random.Random(4096)
    n = 4096
    ks = [rng.randrange(N) for _ in range(n)]
    ds = [rng.randrange(1, N) for _ in range(n)]
    assert nat.msm_var(scs(ks), pts(ds)) == pt(sum(k * d for k, d in zip(ks, ds, strict=True)))


@pytest.mark.parametrize("module", NATIVES, ids=lambda m: m.FIELD_BACKEND)
def test_msm_above_the_chunk_size_is_the_sum_of_its_chunks(module: object) -> None:
    """Past MSM_CHUNK_POINTS (2^15) points an MSM is summed from chunks (msm.h): 2^16 + 3 points
    (three chunks, uneven tail) against the known discrete log, with threads too."""
    rng = random.Random(65539)
    n = (1 << 16) + 3
    base = [rng.randrange(1, N) for _ in range(257)]  # few distinct points: coincurve is slow
    ds = [base[i % len(base)] for i in range(n)]
    ks = [rng.randrange(N) for _ in range(n)]
    points = b"".join(pt(d) for d in base)
    packed = b"".join(points[64 * (i % len(base)):64 * (i % len(base) + 1)] for i in range(n))
    expected = pt(sum(k * d for k, d in zip(ks, ds, strict=True)) % N)
    for threads in (1, 2):
        assert module.msm_var(scs(ks), packed, threads=threads) == expected  # type: ignore[attr-defined]


def test_max_threads_is_what_every_backend_accepts() -> None:
    assert kernel.MAX_THREADS == ref.MAX_THREADS
    for module in NATIVES:
        previous = module.set_threads(kernel.MAX_THREADS)  # type: ignore[attr-defined]
        try:
            with pytest.raises(EncodingError):
                module.set_threads(kernel.MAX_THREADS + 1)  # type: ignore[attr-defined]
        finally:
            module.set_threads(previous)  # type: ignore[attr-defined]


def _check_every_window_and_straus(ks: list[int], ds: list[int]) -> None:
    """Σ k·(d·G) through each forced Pippenger window (2..14, then the automatic one) and
    through Straus, against libsecp256k1."""
    expected = pt(sum(k * d for k, d in zip(ks, ds, strict=True)))
    previous = nat._tune(0, 28)
    try:
        for window in [*range(2, 15), 0]:
            nat._tune(window, 0)
            assert nat.msm_var(scs(ks), pts(ds)) == expected, window
        nat._tune(0, 10**6)
        assert nat.msm_var(scs(ks), pts(ds)) == expected
    finally:
        nat._tune(*previous)


def test_msm_every_window_width_and_straus() -> None:
    # force each Pippenger window (2..14) and Straus on the same inputs, including a repeated
    # point, a cancelling pair and zero scalars, so every code path of the bucket machinery runs
    rng = random.Random(99)
    ds = [rng.randrange(1, N) for _ in range(150)]
    ks = [rng.randrange(N) for _ in range(150)]
    ds[7] = ds[3]
    ks[7] = ks[3]
    ds[9], ks[9] = N - ds[8], ks[8]
    ks[10] = 0
    _check_every_window_and_straus(ks, ds)


@pytest.mark.parametrize("module", NATIVES, ids=lambda m: m.FIELD_BACKEND)
def test_native_internal_cross_checks(module: object) -> None:
    # safegcd inversions vs Fermat, square roots, GLV recomposition and bounds, wNAF, weakly
    # reduced field inputs (halvings too), batch inversion, and the assembly field multiplication
    # (ADX build) and the carry-intrinsic sums, differences and halvings (x86-64) against the
    # portable C: all checked inside C on pseudo-random and edge values
    report = module._selftest(20000, 20240611)  # type: ignore[attr-defined]
    assert report.pop("glv_max_bits") <= 129
    assert report == {"fe_inv": 0, "sc_inv": 0, "sqrt": 0, "field": 0, "glv": 0, "wnaf": 0,
                      "batch_inv": 0, "backend": 0}


@pytest.mark.skipif(adx is None, reason="the ADX build does not run on this CPU")
def test_adx_build_agrees_with_portable_on_every_entry() -> None:
    rng = random.Random(1407)
    for n in (1, 2, 7, 29, 64, 300, 2000):
        ks = scs([rng.randrange(N) for _ in range(n)])
        ps = pts([rng.randrange(1, N) for _ in range(n)])
        assert adx.msm_var(ks, ps) == nat.msm_var(ks, ps), n  # type: ignore[union-attr]
        table_n, table_a = nat.FixedBaseTable(ps), adx.FixedBaseTable(ps)  # type: ignore[union-attr]
        for cut in (1, 5, n):
            assert table_a.msm_var(ks[: 32 * cut], ks[:64], ps[:128]) == table_n.msm_var(
                ks[: 32 * cut], ks[:64], ps[:128])
        for kind in KINDS:
            enc = nat.encode_points_var(ps, kind)
            assert adx.encode_points_var(ps, kind) == enc  # type: ignore[union-attr]
            assert adx.decode_points_var(enc, kind) == nat.decode_points_var(enc, kind)  # type: ignore[union-attr]
        assert adx.scalar_batch_inverse(ks) == nat.scalar_batch_inverse(ks)  # type: ignore[union-attr]
        assert adx.scalar_vec_inner(ks, ks) == nat.scalar_vec_inner(ks, ks)  # type: ignore[union-attr]
        paths = [[rng.randrange(n) for _ in range(rng.randrange(6))] for _ in range(20)]
        assert adx.subset_sums_var(ps, paths) == nat.subset_sums_var(ps, paths)  # type: ignore[union-attr]


def test_concurrent_calls_release_the_gil_safely() -> None:
    # long computations run without the GIL on private copies: concurrent callers get the
    # same answers as sequential ones
    from concurrent.futures import ThreadPoolExecutor

    rng = random.Random(3)
    jobs = []
    for n in (1, 40, 700, 3000):
        ks = [rng.randrange(N) for _ in range(n)]
        ds = [rng.randrange(1, N) for _ in range(n)]
        jobs.append((scs(ks), pts(ds), pt(sum(k * d for k, d in zip(ks, ds, strict=True)))))
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda job: nat.msm_var(job[0], job[1]), jobs * 3))
    assert results == [job[2] for job in jobs * 3]


def test_msm_matches_coincurve_combine_and_multiply() -> None:
    rng = random.Random(7)
    for n in (1, 2, 5, 17):
        ks = [rng.randrange(1, N) for _ in range(n)]
        keys = [coincurve.PublicKey.from_secret(sc(rng.randrange(1, N))) for _ in range(n)]
        packed = b"".join(k.format(compressed=False)[1:] for k in keys)
        expected = coincurve.PublicKey.combine_keys(
            [key.multiply(sc(k)) for key, k in zip(keys, ks, strict=True)])
        assert nat.msm_var(scs(ks), packed) == expected.format(compressed=False)[1:]


SPECIAL_SCALARS = [0, 1, 2, 3, N - 1, N - 2, (N - 1) // 2, (N + 1) // 2, LAMBDA, N - LAMBDA,
                   LAMBDA * LAMBDA % N, 2**128 - 1, 2**128, 2**129 + 1, 2**255, N - 2**128,
                   0x5555 << 200, 7 << 250, N - 2**128 + 1, N - 2**127, 2**127 + 5]


@pytest.mark.parametrize("k", SPECIAL_SCALARS)
def test_msm_special_scalars(k: int) -> None:
    # GLV edge values (λ, -λ, n/2, powers of two), alone and inside a Pippenger-sized batch
    assert nat.msm_var(sc(k), pt(5)) == pt(5 * k)
    rng = random.Random(k)
    ds = [rng.randrange(1, N) for _ in range(100)]
    ks = [k] * 100
    assert nat.msm_var(scs(ks), pts(ds)) == pt(k * sum(ds))


def test_msm_short_scalars_mixed_with_full_ones() -> None:
    # scalars below 2^128 in absolute value (batch weights w and their negations n - w) are one
    # GLV term instead of two: mixed with full scalars and zeros, through every Pippenger window,
    # Straus, and the fixed-base table's extra points
    rng = random.Random(128)
    n = 150
    ds = [rng.randrange(1, N) for _ in range(n)]
    ks = []
    for i in range(n):
        w = rng.randrange(1, 2**128)
        ks.append([w, N - w, rng.randrange(N), 0, 2**128 - 1, N - 2**128 + 1][i % 6])
    _check_every_window_and_straus(ks, ds)
    table = nat.FixedBaseTable(pts(ds[:4]))
    extra_ks, extra_ds = ks[:40], ds[50:90]
    assert table.msm_var(scs(ks[:4]), scs(extra_ks), pts(extra_ds)) == pt(
        sum(k * d for k, d in zip(ks[:4] + extra_ks, ds[:4] + extra_ds, strict=True)))
    for one in range(6):  # a single extra point (the isomorphic-curve table)
        assert table.msm_var(scs(ks[:4]), scs(ks[one:one + 1]), pts(ds[9:10])) == pt(
            sum(k * d for k, d in zip(ks[:4], ds[:4], strict=True)) + ks[one] * ds[9])


def test_msm_lambda_is_the_endomorphism() -> None:
    # multiplying by λ must equal (β·x, y): checks the GLV constants against params.py
    g = pt(1)
    assert nat.msm_var(sc(LAMBDA), g) == sc(BETA * GX % P) + sc(GY)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 20, 40, 300])
def test_msm_zero_scalars_and_infinity_points(n: int) -> None:
    rng = random.Random(n)
    ds = [rng.randrange(1, N) for _ in range(n)]
    assert nat.msm_var(bytes(32 * n), pts(ds)) == INF
    ks = [rng.randrange(N) for _ in range(n)]
    assert nat.msm_var(scs(ks), INF * n) == INF
    # mix: every third term zero, every fifth point infinity
    ks2 = [0 if i % 3 == 0 else k for i, k in enumerate(ks)]
    ds2 = [0 if i % 5 == 0 else d for i, d in enumerate(ds)]
    expected = pt(sum(k * d for k, d in zip(ks2, ds2, strict=True)))
    assert nat.msm_var(scs(ks2), pts(ds2)) == expected


@pytest.mark.parametrize("n", [2, 10, 64, 400])
def test_msm_cancelling_terms_reach_infinity(n: int) -> None:
    # P and -P with equal scalars: buckets receive P + (-P) = infinity, and the total is infinity
    rng = random.Random(n)
    half = n // 2
    ds = [rng.randrange(1, N) for _ in range(half)]
    ks = [rng.randrange(1, N) for _ in range(half)]
    points = b"".join(pt(d) + neg_pt(pt(d)) for d in ds)
    scalars = b"".join(sc(k) * 2 for k in ks)
    assert nat.msm_var(scalars, points) == INF
    # same through negated scalars on the same point
    points2 = b"".join(pt(d) * 2 for d in ds)
    scalars2 = b"".join(sc(k) + sc(N - k) for k in ks)
    assert nat.msm_var(scalars2, points2) == INF


@pytest.mark.parametrize("n", [2, 16, 100, 1000])
def test_msm_repeated_points_double_inside_buckets(n: int) -> None:
    rng = random.Random(n)
    d = rng.randrange(1, N)
    ks = [rng.randrange(N) for _ in range(n)]
    assert nat.msm_var(scs(ks), pt(d) * n) == pt(d * sum(ks))
    # identical (scalar, point) pairs: same digits land in the same bucket
    k = rng.randrange(N)
    assert nat.msm_var(sc(k) * n, pt(d) * n) == pt(d * k * n)
    # a few points repeated many times
    ds = [rng.randrange(1, N) for _ in range(3)]
    idx = [rng.randrange(3) for _ in range(n)]
    assert nat.msm_var(scs(ks), pts([ds[i] for i in idx])) == pt(
        sum(k * ds[i] for k, i in zip(ks, idx, strict=True)))


def test_msm_rejects_bad_input() -> None:
    g = pt(1)
    with pytest.raises(ValueError, match="group order"):
        nat.msm_var(sc(N), g)
    with pytest.raises(ValueError, match="scalar 1: not below the group order"):
        nat.msm_var(sc(1) + sc(2**256 - 1), g * 2)
    with pytest.raises(ValueError, match="counts differ"):
        nat.msm_var(sc(1) * 2, g)
    with pytest.raises(ValueError, match="multiple of 32"):
        nat.msm_var(b"\x01" * 31, g)
    with pytest.raises(ValueError, match="multiple of 64"):
        nat.msm_var(sc(1), g[:63])
    with pytest.raises(ValueError, match="point 0: not on the curve"):
        nat.msm_var(sc(1), off_curve_point())
    with pytest.raises(ValueError, match="field size"):
        nat.msm_var(sc(1), b"\xff" * 64)
    with pytest.raises(TypeError):
        nat.msm_var("00" * 32, g)  # type: ignore[arg-type]
    assert nat.msm_var(b"", b"") == INF
    assert nat.msm_var(bytearray(sc(3)), memoryview(g)) == pt(3)


# --- FixedBaseTable ------------------------------------------------------------------------------

def test_fixed_base_table() -> None:
    rng = random.Random(11)
    ds = [rng.randrange(1, N) for _ in range(257)]
    table = nat.FixedBaseTable(pts(ds))
    assert len(table) == 257
    for m in (0, 1, 2, 23, 24, 25, 100, 256, 257):
        ks = [rng.randrange(N) for _ in range(m)]
        eds = [rng.randrange(1, N) for _ in range(rng.randrange(0, 40))]
        eks = [rng.randrange(N) for _ in eds]
        expected = pt(sum(k * d for k, d in zip(ks, ds, strict=False))
                      + sum(k * d for k, d in zip(eks, eds, strict=True)))
        assert table.msm_var(scs(ks), scs(eks), pts(eds)) == expected
        assert table.msm_var(scs(ks)) == pt(sum(k * d for k, d in zip(ks, ds, strict=False)))
    with pytest.raises(ValueError, match="more scalars"):
        table.msm_var(bytes(32 * 258))
    with pytest.raises(ValueError, match="counts differ"):
        table.msm_var(b"", sc(1), b"")
    with pytest.raises(ValueError, match="group order"):
        table.msm_var(sc(N))
    with pytest.raises(ValueError, match="not on the curve"):
        nat.FixedBaseTable(off_curve_point())
    assert len(nat.FixedBaseTable(b"")) == 0
    assert nat.FixedBaseTable(b"").msm_var(b"") == INF


def test_fixed_base_table_matches_reference_small() -> None:
    rng = random.Random(12)
    ps = pts([rng.randrange(1, N) for _ in range(3)])
    ks = scs([rng.randrange(N) for _ in range(2)])
    eks, eps = scs([rng.randrange(N)]), pt(rng.randrange(1, N))
    assert nat.FixedBaseTable(ps).msm_var(ks, eks, eps) == ref.FixedBaseTable(ps).msm_var(
        ks, eks, eps)


# --- few table scalars: Straus over the precomputed odd multiples (fixed.h) ----------------------

G_TABLE = nat.FixedBaseTable(pt(1))
# scalars at the edges of the GLV halves, of the 2^64 split and of the wNAF windows (5 for the extra
# point, 15 for a one-point table)
EDGE_SCALARS = [0, 1, 2, 3, N - 1, N - 2, (N - 1) // 2, (N + 1) // 2, LAMBDA, N - LAMBDA,
                2**14 - 1, 2**14, 2**15 - 1, 2**15, 2**16 + 1, 2**64 - 1, 2**64, 2**64 + 1,
                2**65 - 1, 2**128 - 1, 2**128, 2**129 + 2**64 - 1, 2**255 % N, 0x5555 << 120]


@FAST
@given(scalars_st, scalars_st, secrets_st)
def test_g_table_plus_one_point_matches_known_logs(s: int, e: int, d: int) -> None:
    """FixedBaseTable([G]).msm_var(s, e, P) = s·G + e·P = (s + e·d)·G for P = d·G."""
    assert G_TABLE.msm_var(sc(s), sc(e), pt(d)) == pt(s + e * d)
    assert G_TABLE.msm_var(sc(s)) == pt(s)


def test_g_table_edge_scalars_and_points() -> None:
    rng = random.Random(21)
    logs = [1, N - 1, 2, LAMBDA, rng.randrange(1, N)]  # P = G, -G, 2G, λG (same y as G), random
    for s in EDGE_SCALARS:
        assert G_TABLE.msm_var(sc(s)) == pt(s)
        for d in logs:
            for e in (0, 1, N - 1, rng.randrange(N), rng.choice(EDGE_SCALARS)):
                assert G_TABLE.msm_var(sc(s), sc(e), pt(d)) == pt(s + e * d), (s, d, e)
            # results at infinity: e·P = -s·G
            if s:
                e = (-s * pow(d, -1, N)) % N
                assert G_TABLE.msm_var(sc(s), sc(e), pt(d)) == INF
        assert G_TABLE.msm_var(sc(s), sc(rng.randrange(N)), INF) == pt(s)
    assert G_TABLE.msm_var(b"") == INF
    assert G_TABLE.msm_var(b"", sc(5), pt(7)) == pt(35)
    # many extra points go through the generic MSM (Pippenger) instead
    eds = [rng.randrange(1, N) for _ in range(40)]
    eks = [rng.randrange(N) for _ in eds]
    want = 12345 + sum(k * d for k, d in zip(eks, eds, strict=True))
    assert G_TABLE.msm_var(sc(12345), scs(eks), pts(eds)) == pt(want)


def test_g_table_matches_reference_backend() -> None:
    rng = random.Random(22)
    g = pt(1)
    table = ref.FixedBaseTable(g)
    for _ in range(3):
        s, e, p = sc(rng.randrange(N)), sc(rng.randrange(N)), pt(rng.randrange(1, N))
        assert G_TABLE.msm_var(s, e, p) == table.msm_var(s, e, p)


def _check_few_scalars(table: nat.FixedBaseTable, ds: list[int], rng: random.Random) -> None:
    for nk in sorted({m for m in (0, 1, 2, 3, 7, 8, 23) if m <= len(ds)}):
        for ne in (0, 1, 3):
            ks = [rng.choice(EDGE_SCALARS) if rng.random() < 0.3 else rng.randrange(N)
                  for _ in range(nk)]
            eds = [rng.choice([1, N - 1, 0, rng.randrange(1, N)]) for _ in range(ne)]
            eks = [rng.choice([0, rng.randrange(N)]) for _ in range(ne)]
            want = sum(k * d for k, d in zip(ks, ds, strict=False)) + sum(
                k * d for k, d in zip(eks, eds, strict=True))
            got = table.msm_var(scs(ks), scs(eks), pts(eds))
            assert got == pt(want), (len(ds), nk, ne)


@pytest.mark.parametrize("size", [2, 5, 300, 1100])
def test_fixed_table_few_scalars_with_extra_points(size: int) -> None:
    """Table sizes choose different windows (and > 1024 points the generic fallback); counts of
    table scalars around the bucket threshold (8), with 0-3 extra points (3 uses the batch-inverted
    tables, 1 the isomorphic-curve one), including zero scalars, infinity and repeated points.
    Tables of more than two points build their Straus tables only after up to 1024 few-scalar
    calls: checked before and after."""
    rng = random.Random(23 + size)
    ds = [rng.randrange(1, N) for _ in range(size)]
    ds[min(1, size - 1)] = N - ds[0]  # P_1 = -P_0
    table_points = bytearray(pts(ds))
    if size > 2:
        table_points[64 * 2: 64 * 3] = INF  # an infinity table point
        ds[2] = 0
    table = nat.FixedBaseTable(bytes(table_points))
    _check_few_scalars(table, ds, rng)
    one = sc(rng.randrange(N))
    for _ in range(1024):
        table.msm_var(one)
    assert table.msm_var(one) == pt(int.from_bytes(one, "big") * ds[0])
    _check_few_scalars(table, ds, rng)


def test_msm_one_point_edges() -> None:
    """n = 1 runs the inversion-free single-point table."""
    rng = random.Random(24)
    for k in EDGE_SCALARS:
        for d in (1, N - 1, LAMBDA, rng.randrange(1, N)):
            assert nat.msm_var(sc(k), pt(d)) == pt(k * d)
        assert nat.msm_var(sc(k), INF) == INF


# --- encodings -----------------------------------------------------------------------------------

@FAST
@given(st.lists(secrets_st, max_size=6), st.sampled_from(KINDS))
def test_encode_decode_match_reference(ds: list[int], kind: int) -> None:
    points = pts(ds)
    enc = nat.encode_points_var(points, kind)
    assert enc == ref.encode_points_var(points, kind)
    dec = nat.decode_points_var(enc, kind)
    assert dec == ref.decode_points_var(enc, kind)
    if kind == kernel.KIND_XONLY:
        # x-only decoding picks the even y
        assert all(int.from_bytes(dec[64 * i + 32: 64 * i + 64], "big") % 2 == 0
                   for i in range(len(ds)))
    else:
        assert dec == points


@pytest.mark.parametrize("n", [1, 255, 256, 257])
def test_batch_calls_agree_either_side_of_the_gil_bound(n: int) -> None:
    """Point decodings, encodings and scalar products keep the GIL below a size and release it
    from there (glue/common.h, GIL_RELEASE_CHEAP / GIL_RELEASE_SCALARS): the answers are the
    same on both sides, and the same as one element at a time."""
    rng = random.Random(n)
    points = pts([rng.randrange(1, N) for _ in range(n)])
    for kind in KINDS:
        enc = nat.encode_points_var(points, kind)
        width = len(enc) // n
        assert enc == b"".join(nat.encode_points_var(points[64 * i: 64 * i + 64], kind)
                               for i in range(n))
        assert nat.decode_points_var(enc, kind) == b"".join(
            nat.decode_points_var(enc[width * i: width * (i + 1)], kind) for i in range(n))
    a, b = ([rng.randrange(N) for _ in range(8192 + n)] for _ in range(2))
    want = scs([x * y % N for x, y in zip(a, b)])
    assert nat.scalar_vec_mul(scs(a), scs(b)) == want
    assert nat.scalar_vec_mul(scs(a[:n]), scs(b[:n])) == want[:32 * n]


def test_compressed_matches_coincurve() -> None:
    rng = random.Random(5)
    ds = [rng.randrange(1, N) for _ in range(200)]
    comp = b"".join(coincurve.PublicKey.from_secret(sc(d)).format() for d in ds)
    assert nat.encode_points_var(pts(ds), kernel.KIND_COMPRESSED) == comp
    assert nat.decode_points_var(comp, kernel.KIND_COMPRESSED) == pts(ds)


def test_elements_h_generator_encoding() -> None:
    # docs/bulletproofs-format.md §4: Elements' H is 0b50929b…3ac0 with y = 31d3c686…8904
    enc = bytes.fromhex("0b50929b74c1a04954b78b4b6035e97a5e078a5a0f28ec96d547bfee9ace803ac0")
    dec = nat.decode_points_var(enc, kernel.KIND_GENERATOR)
    assert dec[32:].hex() == "31d3c6863973926e049e637cb1b5f40a36dac28af1766968c30c2313f3a38904"
    assert nat.encode_points_var(dec, kernel.KIND_GENERATOR) == enc


def _x_not_on_curve() -> int:
    x = 5
    while ref.sqrt_mod_p(x**3 + 7) is not None:
        x += 1
    return x


@pytest.mark.parametrize("kind", KINDS)
def test_decode_rejects_malformed(kind: int) -> None:
    width = 32 if kind == kernel.KIND_XONLY else 33
    good = nat.encode_points_var(pt(9), kind)
    prefix = good[:width - 32]
    with pytest.raises(ValueError, match="multiple of"):
        nat.decode_points_var(good[:-1], kind)
    with pytest.raises(ValueError, match="multiple of"):
        nat.decode_points_var(good + b"\x00", kind)
    with pytest.raises(ValueError, match="point 1: x coordinate not below the field size"):
        nat.decode_points_var(good + prefix + sc(P), kind)
    with pytest.raises(ValueError, match="point 0: x coordinate not below the field size"):
        nat.decode_points_var(prefix + b"\xff" * 32, kind)
    with pytest.raises(ValueError, match="point 0: not on the curve"):
        nat.decode_points_var(prefix + sc(_x_not_on_curve()), kind)
    if kind != kernel.KIND_XONLY:
        for head in (0x00, 0x01, 0x02, 0x03, 0x04, 0x06, 0x08, 0x09, 0x0A, 0x0B, 0xFF):
            if head & ~1 == good[0] & ~1:
                continue
            with pytest.raises(ValueError, match="point 0: bad prefix byte"):
                nat.decode_points_var(bytes([head]) + good[1:], kind)
    assert nat.decode_points_var(b"", kind) == b""


def test_decode_encode_errors() -> None:
    with pytest.raises(ValueError, match="unknown point kind"):
        nat.decode_points_var(b"", 5)
    with pytest.raises(ValueError, match="unknown point kind"):
        nat.encode_points_var(pt(1), 7)
    with pytest.raises(ValueError, match="infinity has no encoding"):
        nat.encode_points_var(pt(1) + INF, kernel.KIND_COMPRESSED)
    with pytest.raises(ValueError, match="not on the curve"):
        nat.encode_points_var(off_curve_point(), kernel.KIND_XQR)


# --- point helpers -------------------------------------------------------------------------------

@FAST
@given(secrets_st, secrets_st)
def test_point_add_and_neg_match_reference(a: int, b: int) -> None:
    pa, pb = pt(a), pt(b)
    for x, y in ((pa, pb), (pa, pa), (pa, neg_pt(pa)), (pa, INF), (INF, pb), (INF, INF)):
        assert nat.point_add_var(x, y) == ref.point_add_var(x, y)
    assert nat.point_add_var(pa, pb) == pt(a + b)
    assert nat.point_neg(pa) == ref.point_neg(pa) == pt(-a)
    assert nat.point_neg(INF) == INF


def test_point_helpers_reject_bad_lengths() -> None:
    with pytest.raises(ValueError):
        nat.point_add_var(pt(1)[:63], pt(1))
    with pytest.raises(ValueError):
        nat.point_neg(pt(1) * 2)
    with pytest.raises(ValueError, match="not on the curve"):
        nat.point_neg(off_curve_point())


# --- scalar vectors ------------------------------------------------------------------------------

vectors_st = st.lists(scalars_st, max_size=40)


@FAST
@given(vectors_st, scalars_st)
def test_scalar_vector_ops_match_reference(a: list[int], k: int) -> None:
    b = [(x * 0x1234567 + k) % N for x in a]
    va, vb, vk = scs(a), scs(b), sc(k)
    assert nat.scalar_vec_mul(va, vb) == ref.scalar_vec_mul(va, vb)
    assert nat.scalar_vec_add(va, vb) == ref.scalar_vec_add(va, vb)
    assert nat.scalar_vec_scale(va, vk) == ref.scalar_vec_scale(va, vk)
    assert nat.scalar_vec_sum(va) == ref.scalar_vec_sum(va)
    assert nat.scalar_vec_inner(va, vb) == ref.scalar_vec_inner(va, vb)


@FAST
@given(scalars_st, st.integers(min_value=0, max_value=70))
def test_scalar_powers_match_reference(x: int, n: int) -> None:
    assert nat.scalar_powers(sc(x), n) == ref.scalar_powers(sc(x), n)


@FAST
@given(st.lists(secrets_st, max_size=30))
def test_scalar_batch_inverse_matches_reference(v: list[int]) -> None:
    out = nat.scalar_batch_inverse(scs(v))
    assert out == ref.scalar_batch_inverse(scs(v))
    assert out == scs([pow(x, -1, N) for x in v])


@FAST
@given(st.lists(secrets_st, max_size=7))
def test_scalar_challenge_products_match_reference(xs: list[int]) -> None:
    assert nat.scalar_challenge_products(scs(xs)) == ref.scalar_challenge_products(scs(xs))


def test_scalar_edge_values() -> None:
    extremes = [0, 1, 2, N - 1, N - 2, 2**255, 2**128, (N - 1) // 2]
    v = scs(extremes)
    w = scs(list(reversed(extremes)))
    for fn in ("scalar_vec_mul", "scalar_vec_add", "scalar_vec_inner"):
        assert getattr(nat, fn)(v, w) == getattr(ref, fn)(v, w), fn
    assert nat.scalar_vec_sum(v) == ref.scalar_vec_sum(v)
    assert nat.scalar_vec_sum(sc(N - 1) * 1000) == sc((N - 1) * 1000 % N)
    assert nat.scalar_challenge_products(b"") == sc(1)
    assert nat.scalar_powers(sc(0), 3) == sc(1) + sc(0) + sc(0)
    assert nat.scalar_vec_sum(b"") == sc(0)
    assert nat.scalar_vec_inner(b"", b"") == sc(0)


def test_scalar_vector_errors() -> None:
    with pytest.raises(ValueError, match="lengths differ"):
        nat.scalar_vec_mul(sc(1), sc(1) * 2)
    with pytest.raises(ValueError, match="group order"):
        nat.scalar_vec_add(sc(N), sc(1))
    with pytest.raises(ValueError, match="multiple of 32"):
        nat.scalar_vec_sum(b"\x00" * 33)
    with pytest.raises(ValueError, match="cannot invert zero"):
        nat.scalar_batch_inverse(sc(1) + sc(0))
    with pytest.raises(ValueError, match="challenge is zero"):
        nat.scalar_challenge_products(sc(3) + sc(0))
    with pytest.raises(ValueError, match="too many challenges"):
        nat.scalar_challenge_products(sc(3) * 40)
    with pytest.raises(ValueError, match="negative"):
        nat.scalar_powers(sc(2), -1)
    with pytest.raises(ValueError):
        nat.scalar_vec_scale(sc(1), sc(1) * 2)



# --- scalar accumulator --------------------------------------------------------------------------

ops_st = st.lists(st.tuples(st.booleans(), st.integers(min_value=0, max_value=12),
                            st.lists(scalars_st, max_size=8), scalars_st), max_size=12)


def _accumulate(acc: object, is_axpy: bool, offset: int, xs: list[int], k: int) -> None:
    if is_axpy:
        acc.axpy(sc(k), scs(xs), offset)  # type: ignore[attr-defined]
    else:
        acc.add_const(offset, len(xs), sc(k))  # type: ignore[attr-defined]


@FAST
@given(st.integers(min_value=0, max_value=12), ops_st)
def test_scalar_accumulator_matches_reference_and_ints(size: int,
                                                       ops: list[tuple[bool, int, list[int], int]],
                                                       ) -> None:
    acc_n, acc_r = nat.ScalarAccumulator(size), ref.ScalarAccumulator(size)
    model = [0] * size
    assert len(acc_n) == len(acc_r) == size
    for is_axpy, offset, xs, k in ops:
        count = len(xs)
        fits = offset + count <= size
        for acc in (acc_n, acc_r):
            if fits:
                _accumulate(acc, is_axpy, offset, xs, k)
            else:
                with pytest.raises(ValueError, match="outside the accumulator"):
                    _accumulate(acc, is_axpy, offset, xs, k)
        if fits:
            for i, x in enumerate(xs):
                model[offset + i] = (model[offset + i] + (k * x if is_axpy else k)) % N
        assert acc_n.to_bytes() == acc_r.to_bytes() == scs(model)


@FAST
@given(scalars_st, st.lists(st.tuples(st.integers(min_value=0, max_value=10), scalars_st,
                                      st.lists(scalars_st, max_size=4)), max_size=6),
       st.booleans())
def test_scalar_accumulator_terms(weight: int, raw: list[tuple[int, int, list[int]]],
                                  share: bool) -> None:
    size = 12
    shared_x = scs([7, N - 1])
    # consecutive terms over one object
    terms = [(o, sc(k), shared_x if share else scs(xs)) for o, k, xs in raw]
    fits = all(o + len(x) // 32 <= size for o, _, x in terms)
    want = [0] * size
    if fits:
        for o, k, x in terms:
            for i in range(len(x) // 32):
                want[o + i] = (want[o + i] + weight * int.from_bytes(k, "big")
                               * int.from_bytes(x[32 * i: 32 * i + 32], "big")) % N
    for mod in (nat, ref):
        acc = mod.ScalarAccumulator(size)
        if fits:
            acc.axpy_terms(sc(weight), terms)
        else:
            with pytest.raises(EncodingError, match="outside the accumulator"):
                acc.axpy_terms(sc(weight), terms)
        assert acc.to_bytes() == scs(want)


def test_scalar_accumulator_terms_errors() -> None:
    good = (0, sc(3), sc(1) + sc(2))
    for mod in (nat, ref):
        acc = mod.ScalarAccumulator(3)
        for weight, terms, reason in (
            (sc(N), [good], "scalar-range"), (b"\x01" * 31, [good], "length"),
            (sc(1), [good, (0, sc(N), sc(1))], "scalar-range"),
            (sc(1), [good, (0, b"\x02", sc(1))], "length"),
            (sc(1), [good, (0, 3, sc(1))], "length"),
            (sc(1), [good, ("0", sc(1), sc(1))], "type"),
            (sc(1), [good, (0, sc(1))], "type"), (sc(1), [good, [0, sc(1), sc(1)]], "type"),
            (sc(1), [good, (2, sc(1), sc(1) * 2)], "index-range"),
            (sc(1), [good, (-1, sc(1), sc(1))], "index-range"),
            (sc(1), [good, (2**70, sc(1), sc(1))], "index-range"),
            (sc(1), [good, (0, sc(1), sc(N))], "scalar-range"),
            (sc(1), [good, (0, sc(1), b"\x01" * 31)], "length"),
        ):
            with pytest.raises(EncodingError) as info:
                acc.axpy_terms(weight, terms)
            assert info.value.reason == reason, (mod, terms)
        assert acc.to_bytes() == bytes(96)  # no failed call wrote anything
        acc.axpy_terms(sc(5), [good, (1, sc(1), good[2]), (0, sc(N - 1), sc(1))])
        assert acc.to_bytes() == scs([15 - 5, 30 + 5, 10])


def test_scalar_accumulator_errors_change_nothing() -> None:
    for mod in (nat, ref):
        acc = mod.ScalarAccumulator(3)
        acc.axpy(sc(2), scs([5, 6, 7]))
        before = acc.to_bytes()
        with pytest.raises(ValueError, match="scalar 1: not below the group order"):
            acc.axpy(sc(1), sc(1) + sc(N), 1)
        with pytest.raises(ValueError, match="group order"):
            acc.axpy(sc(N), sc(1))
        with pytest.raises(ValueError, match="group order"):
            acc.add_const(0, 1, sc(N))
        with pytest.raises(ValueError, match="multiple of 32"):
            acc.axpy(sc(1), b"\x00" * 33)
        with pytest.raises(ValueError, match="outside"):
            acc.axpy(sc(1), sc(1), -1)
        with pytest.raises(ValueError, match="outside"):
            acc.add_const(2, 2, sc(1))
        with pytest.raises(ValueError, match="outside"):
            acc.add_const(0, -1, sc(1))
        assert acc.to_bytes() == before == scs([10, 12, 14])
        with pytest.raises(ValueError, match="accumulator size"):
            mod.ScalarAccumulator(-1)
        with pytest.raises(ValueError, match="accumulator size"):
            mod.ScalarAccumulator((1 << 24) + 1)
        assert mod.ScalarAccumulator(0).to_bytes() == b""
    # Sums of many maximal products: the native accumulator reduces lazily (576-bit sums).
    extremes = [N - 1, N - 2, 2**255, (N - 1) // 2, 1]
    acc_n, acc_r, model = nat.ScalarAccumulator(5), ref.ScalarAccumulator(5), [0] * 5
    for round_ in range(300):
        k = extremes[round_ % 5]
        for acc in (acc_n, acc_r):
            acc.axpy(sc(k), scs(extremes))
            acc.axpy_terms(sc(k), [(0, sc(N - 1), scs(extremes[:2])),
                                   (3, sc(1), scs(extremes[:2]))])
            acc.add_const(1, 4, sc(N - 1))
        model = [(v + k * x) % N for v, x in zip(model, extremes)]
        for o, kk in ((0, (N - 1) * k), (3, k)):
            for i in range(2):
                model[o + i] = (model[o + i] + kk * extremes[i]) % N
        model = model[:1] + [(v + N - 1) % N for v in model[1:]]
        if round_ % 60 == 0 or round_ == 299:
            assert acc_n.to_bytes() == acc_r.to_bytes() == scs(model)
    acc = nat.ScalarAccumulator(2)
    acc.add_const(0, 2, sc(N - 1))
    acc.axpy(sc(N - 1), sc(N - 1) + sc(1), 0)  # (N-1) + (N-1)^2 = 0 and (N-1) + (N-1) = N-2
    assert acc.to_bytes() == sc(0) + sc(N - 2)


# --- x coordinates with packed flags -------------------------------------------------------------

@FAST
@given(st.lists(secrets_st, max_size=19))
def test_decode_xqr_flags_matches_reference(ds: list[int]) -> None:
    points = pts(ds)
    records = nat.encode_points_var(points, kernel.KIND_XQR)
    xs = b"".join(records[33 * i + 1: 33 * i + 33] for i in range(len(ds)))
    bits = sum(records[33 * i] << i for i in range(len(ds)))
    flags = bits.to_bytes((len(ds) + 7) // 8, "little")
    assert nat.decode_xqr_flags_var(xs, flags) == ref.decode_xqr_flags_var(xs, flags) == points
    assert nat.decode_xqr_flags_var(xs, flags) == nat.decode_points_var(records, kernel.KIND_XQR)


def test_decode_xqr_flags_rejects_malformed() -> None:
    xs = b"".join(nat.encode_points_var(pt(d), kernel.KIND_XQR)[1:] for d in (3, 4, 5))
    for mod in (nat, ref):
        assert len(mod.decode_xqr_flags_var(xs, b"\x05")) == 192
        with pytest.raises(ValueError, match="unused flag bits"):
            mod.decode_xqr_flags_var(xs, b"\x08")
        with pytest.raises(ValueError, match="flags must be 1 bytes"):
            mod.decode_xqr_flags_var(xs, b"")
        with pytest.raises(ValueError, match="flags must be 1 bytes"):
            mod.decode_xqr_flags_var(xs, b"\x00\x00")
        with pytest.raises(ValueError, match="multiple of 32"):
            mod.decode_xqr_flags_var(xs[:-1], b"\x00")
        with pytest.raises(ValueError, match="point 1: not on the curve"):
            mod.decode_xqr_flags_var(xs[:32] + sc(_x_not_on_curve()), b"\x00")
        with pytest.raises(ValueError, match="point 0: x coordinate not below the field size"):
            mod.decode_xqr_flags_var(sc(P), b"\x00")
        assert mod.decode_xqr_flags_var(b"", b"") == b""
    x8 = xs * 3  # 9 points: exactly 2 flag bytes, bits 9..15 unused
    assert nat.decode_xqr_flags_var(x8[:32 * 8], b"\xff") == ref.decode_xqr_flags_var(
        x8[:32 * 8], b"\xff")
    with pytest.raises(ValueError, match="unused flag bits"):
        nat.decode_xqr_flags_var(x8, b"\x00\x02")

# --- subset sums ---------------------------------------------------------------------------------

@SLOW
@given(st.lists(st.lists(st.integers(min_value=0, max_value=5), max_size=4), max_size=6))
def test_subset_sums_match_reference(paths: list[list[int]]) -> None:
    rng = random.Random(len(paths))
    table = pts([rng.randrange(1, N) for _ in range(6)])
    assert nat.subset_sums_var(table, paths) == ref.subset_sums_var(table, paths)


def test_subset_sums_dlc_shape_against_known_logs() -> None:
    # 1024 paths of 30 digits over a 60-point table (30 digit positions x 2 outcomes), sorted so
    # that consecutive paths share prefixes; plus repeats, cancellations and an empty path
    rng = random.Random(60)
    ds = [rng.randrange(1, N) for _ in range(60)]
    ds[1] = N - ds[0]  # table[0] + table[1] = infinity
    table = pts(ds)
    paths = sorted([[2 * j + rng.randrange(2) for j in range(30)] for _ in range(1024)])
    paths += [[], [0, 1], [0, 1, 0], [5, 5, 5], [59]]
    out = nat.subset_sums_var(table, paths)
    assert len(out) == 64 * len(paths)
    for i, path in enumerate(paths):
        assert out[64 * i: 64 * i + 64] == pt(sum(ds[j] for j in path)), path


def test_subset_sums_errors() -> None:
    table = pts([1, 2, 3])
    with pytest.raises(ValueError, match="out of range"):
        nat.subset_sums_var(table, [[0, 3]])
    with pytest.raises(ValueError, match="out of range"):
        nat.subset_sums_var(table, [[-1]])
    with pytest.raises(ValueError, match="out of range"):
        nat.subset_sums_var(table, [[2**70]])
    for mod in (nat, ref):
        for paths in ([[0.5]], [["1"]], [1], [[0], None]):
            with pytest.raises(EncodingError) as info:
                mod.subset_sums_var(table, paths)
            assert info.value.reason == "type"
    with pytest.raises(TypeError):
        nat.subset_sums_var(table, None)
    assert nat.subset_sums_var(table, []) == b""
    assert nat.subset_sums_var(b"", [[]]) == INF
    assert nat.subset_sums_var(table, ((0, 1), range(3))) == pt(3) + pt(6)


# --- review bugs: each test fails on the code before its fix -------------------------------------

def test_subset_sums_type_error_does_not_read_a_freed_item() -> None:
    # A path given as an iterator is copied into a fresh list that alone owns its items; the
    # old error path released that list, then read the freed item's type for the message.
    # Under the debug allocator (freed memory overwritten) that read crashed the process.
    import subprocess
    import sys

    code = (
        "from ctplugin.secp256k1 import _native as k\n"
        "from ctplugin.errors import EncodingError\n"
        "class Odd: pass\n"
        "table = bytes.fromhex('" + pt(1).hex() + "')\n"
        "for _ in range(50):\n"
        "    try:\n"
        "        k.subset_sums_var(table, [iter([0, Odd()])])\n"
        "    except EncodingError as e:\n"
        "        assert e.reason == 'type' and 'Odd' in str(e), e\n"
        "print('ok')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "PYTHONMALLOC": "debug"}, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stderr[-500:])


def test_every_accepted_window_gives_correct_msm_results() -> None:
    # Pippenger digits are int16_t: a window of 16 bits makes the digit 2^15 (scalar 2^15 itself:
    # its GLV halves are (2^15, 0)) wrap to -2^15.  The tuning entry must refuse such a window.
    ks = [2**15, 3 * 2**15 + 5, 2**14, 2**16 - 1, N - 2**15]
    ds = [5, 7, 11, 13, 17]
    expected = pt(sum(k * d for k, d in zip(ks, ds, strict=True)))
    previous = nat._tune(0, 28)
    try:
        for window in range(2, 18):
            try:
                nat._tune(window, 0)
            except EncodingError:
                assert window > 15, window
                continue
            assert nat.msm_var(scs(ks), pts(ds)) == expected, window
    finally:
        nat._tune(*previous)
    with pytest.raises(EncodingError):
        nat._tune(16, 0)


def test_tuning_changes_never_disturb_running_computations() -> None:
    # The settings are snapshot under the GIL when a call starts; one thread retunes while others
    # compute MSMs without the GIL.  (Reading the globals without the GIL was a data race: C
    # undefined behaviour, not a deterministic failure, so this test guards the contract.)
    import threading
    from concurrent.futures import ThreadPoolExecutor

    rng = random.Random(14)
    jobs = []
    for n in (40, 300, 900):
        ks = [rng.randrange(N) for _ in range(n)]
        ds = [rng.randrange(1, N) for _ in range(n)]
        jobs.append((scs(ks), pts(ds), pt(sum(k * d for k, d in zip(ks, ds, strict=True)))))
    stop = threading.Event()
    previous = nat._tune(0, 28)

    def retune() -> None:
        i = 0
        while not stop.is_set():
            nat._tune(2 + i % 14, (0, 28, 10**6)[i % 3])
            i += 1

    tuner = threading.Thread(target=retune)
    tuner.start()
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda job: nat.msm_var(job[0], job[1]), jobs * 4))
    finally:
        stop.set()
        tuner.join()
        nat._tune(*previous)
    assert results == [job[2] for job in jobs * 4]


def test_native_module_uses_no_private_long_conversion() -> None:
    # _PyLong_AsByteArray is private CPython API (its signature changed in 3.13); the
    # accumulator now takes its weight and multipliers as fixed-width 32-byte scalars.
    from pathlib import Path

    assert b"_PyLong_AsByteArray" not in Path(nat.__file__).read_bytes()
    acc = nat.ScalarAccumulator(2)
    acc.axpy_terms(sc(3), [(0, sc(5), scs([1, 2]))])
    assert acc.to_bytes() == scs([15, 30])


# --- the error contract: hostile input, native vs reference -------------------------------------

_G = pt(1)
_POINT_CHUNKS = [_G, pt(2), pt(N - 1), INF, off_curve_point(), sc(P) + _G[32:], _G[:32] + sc(P),
                 sc(2**256 - 1) * 2, bytes(63) + b"\x01"]
_SCALAR_CHUNKS = [sc(0), sc(1), sc(2), sc(N - 1), sc(N), sc(N + 1), sc(2**256 - 1), sc(2**128)]


def _x_not_on_curve_bytes() -> bytes:
    return sc(_x_not_on_curve())


_ENCODED_CHUNKS = [nat.encode_points_var(_G, kernel.KIND_COMPRESSED),
                   nat.encode_points_var(pt(3), kernel.KIND_PEDERSEN),
                   nat.encode_points_var(pt(4), kernel.KIND_GENERATOR),
                   nat.encode_points_var(pt(5), kernel.KIND_XQR),
                   b"\x02" + sc(P), b"\x07" + _G[:32], b"\x02" + sc(0), b"\x0b" + sc(5)]


def _vector(draw: st.DrawFn, chunks: list[bytes], max_items: int = 4, valid: int = 0) -> bytes:
    """A packed vector of chunks (the first `valid` of them drawn most of the time), sometimes
    with a byte too many or too few."""
    pool = st.sampled_from(chunks)
    if valid:
        pool = st.one_of(st.sampled_from(chunks[:valid]), st.sampled_from(chunks[:valid]), pool)
    data = b"".join(draw(st.lists(pool, max_size=max_items)))
    cut = draw(st.sampled_from([0] * 8 + [1, -1, 31]))
    if 0 < cut <= len(data):
        return data[:-cut]
    return data + bytes(-cut) if cut < 0 else data


@st.composite
def hostile_calls(draw: st.DrawFn) -> tuple[str, tuple[object, ...]]:
    scalars = _vector(draw, _SCALAR_CHUNKS, valid=4)
    points = _vector(draw, _POINT_CHUNKS, valid=4)
    one_scalar = draw(st.one_of(st.sampled_from(_SCALAR_CHUNKS[:4]),
                                st.sampled_from([*_SCALAR_CHUNKS, b"", bytes(31), bytes(33)])))
    one_point = draw(st.sampled_from([*_POINT_CHUNKS, b"", bytes(65)]))
    kind = draw(st.sampled_from([*KINDS, -1, 5]))
    encoded = b"".join(draw(st.lists(st.sampled_from(
        [*_ENCODED_CHUNKS, _G[:32], _x_not_on_curve_bytes(), sc(P)]), max_size=3)))
    name = draw(st.sampled_from([
        "msm_var", "decode_points_var", "decode_xqr_flags_var", "encode_points_var",
        "point_add_var", "point_neg", "scalar_powers", "scalar_batch_inverse",
        "scalar_challenge_products", "scalar_vec_mul", "scalar_vec_add", "scalar_vec_scale",
        "scalar_vec_sum", "scalar_vec_inner", "subset_sums_var", "fixed_msm_var",
        "accumulator"]))
    args: tuple[object, ...]
    if name == "msm_var":
        args = (scalars, points)
    elif name == "decode_points_var":
        args = (encoded, kind)
    elif name == "decode_xqr_flags_var":
        args = (encoded[: 32 * (len(encoded) // 33)] + draw(st.sampled_from([b"", b"\x01"])),
                draw(st.sampled_from([b"", b"\x00", b"\x01", b"\x80", b"\x00\x00"])))
    elif name == "encode_points_var":
        args = (points, kind)
    elif name in ("point_add_var",):
        args = (one_point, draw(st.sampled_from([*_POINT_CHUNKS, b""])))
    elif name == "point_neg":
        args = (one_point,)
    elif name == "scalar_powers":
        args = (one_scalar, draw(st.sampled_from([-1, 0, 1, 3])))
    elif name in ("scalar_batch_inverse", "scalar_challenge_products", "scalar_vec_sum"):
        args = (scalars,)
    elif name == "scalar_vec_scale":
        args = (scalars, one_scalar)
    elif name in ("scalar_vec_mul", "scalar_vec_add", "scalar_vec_inner"):
        args = (scalars, _vector(draw, _SCALAR_CHUNKS, valid=4))
    elif name == "subset_sums_var":
        args = (points, draw(st.lists(st.lists(st.sampled_from([0, 1, 2, -1, 9, "x", 0.5]),
                                               max_size=3), max_size=3)))
    elif name == "fixed_msm_var":
        args = (points, scalars, _vector(draw, _SCALAR_CHUNKS, 2, valid=4),
                _vector(draw, _POINT_CHUNKS, 2, valid=4))
    else:
        args = (draw(st.sampled_from([3, 3, 5, 0, -1, 2**24 + 1])), draw(st.integers(-1, 4)),
                one_scalar, scalars)
    return name, args


def _outcome(mod: object, name: str, args: tuple[object, ...]) -> tuple[str, object]:
    try:
        if name == "fixed_msm_var":
            table_points, *rest = args
            table = mod.FixedBaseTable(table_points)  # type: ignore[attr-defined]
            return "ok", table.msm_var(*rest)
        if name == "accumulator":
            size, offset, k, x = args
            acc = mod.ScalarAccumulator(size)  # type: ignore[attr-defined]
            acc.axpy(k, x, offset)
            acc.add_const(offset, 1, k)
            acc.axpy_terms(k, [(offset, k, x)])
            return "ok", acc.to_bytes()
        return "ok", getattr(mod, name)(*args)
    except EncodingError as exc:
        return "error", (exc.reason, str(exc))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_calls())
def test_hostile_input_same_typed_error_native_and_reference(
        call: tuple[str, tuple[object, ...]]) -> None:
    # Only EncodingError may escape (anything else fails the test), with the same reason and
    # message from both backends, or both succeed with the same bytes.
    name, args = call
    expected = _outcome(ref, name, args)
    for module in NATIVES:
        assert _outcome(module, name, args) == expected, module


# --- threads -------------------------------------------------------------------------------------

@pytest.mark.parametrize("module", NATIVES, ids=lambda m: m.FIELD_BACKEND)
def test_results_are_bit_identical_for_any_thread_count(module: object) -> None:
    rng = random.Random(31)
    for n in (300, 1100, 5000):
        ds = [rng.randrange(1, N) for _ in range(n)]
        ks = [rng.randrange(N) for _ in range(n)]
        ks[3], ds[4] = 0, ds[5]  # a zero scalar and a repeated point
        packed_k, packed_p = scs(ks), pts(ds)
        expected = pt(sum(k * d for k, d in zip(ks, ds, strict=True)))
        results = {module.msm_var(packed_k, packed_p, threads=t)  # type: ignore[attr-defined]
                   for t in (1, 2, 3, 4, 7)}
        assert results == {expected}, n
    # the fixed-base tables split their points among threads (from 512 scalars on)
    ds = [rng.randrange(1, N) for _ in range(1200)]
    ks = [rng.randrange(N) for _ in range(1200)]
    extra_k = [rng.randrange(N) for _ in range(40)]
    extra_d = [rng.randrange(1, N) for _ in range(40)]
    table = module.FixedBaseTable(pts(ds))  # type: ignore[attr-defined]
    expected = pt(sum(k * d for k, d in zip(ks + extra_k, ds + extra_d, strict=True)))
    for t in (1, 2, 3, 5):
        assert table.msm_var(scs(ks), scs(extra_k), pts(extra_d), threads=t) == expected, t


@pytest.mark.parametrize("module", [*NATIVES, ref], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_thread_setting_like_par(module: object) -> None:
    previous = module.set_threads(3)  # type: ignore[attr-defined]
    try:
        assert module.threads() == 3  # type: ignore[attr-defined]
        assert module.set_threads(0) == 3  # type: ignore[attr-defined]
        assert module.threads() >= 1  # the machine's cores  # type: ignore[attr-defined]
        for bad in (-1, 65):
            with pytest.raises(EncodingError):
                module.set_threads(bad)  # type: ignore[attr-defined]
            with pytest.raises(EncodingError):
                module.msm_var(sc(1), pt(1), threads=bad)  # type: ignore[attr-defined]
            with pytest.raises(EncodingError):
                module.FixedBaseTable(pt(1)).msm_var(sc(1), threads=bad)  # type: ignore[attr-defined]
        assert module.msm_var(sc(2), pt(1), threads=1) == pt(2)  # type: ignore[attr-defined]
    finally:
        module.set_threads(previous)  # type: ignore[attr-defined]


# --- bucket rounds: AVX-512 IFMA lanes and scalar ---------------------------------------------

def _lane_backends(select: Callable[..., str]) -> list[str]:
    """"scalar", plus "ifma" where this CPU runs the AVX-512 IFMA lanes (``select`` is the
    kernel's backend switch: no argument reads it, a name sets it)."""
    names = ["scalar"]
    previous = select()
    try:
        select("ifma")
        names.append("ifma")
    except RuntimeError:
        pass
    finally:
        select(previous)
    return names


def _bucket_backends() -> list[str]:
    return _lane_backends(nat._bucket_backend)


@pytest.mark.parametrize("backend", _bucket_backends())
def test_bucket_rounds_every_backend(backend: str) -> None:
    # Pippenger and fixed-base tables with every shape of bucket: random, repeated points
    # (doublings), P and -P in one bucket (cancellations), zero scalars, one scalar for all
    # points (a single huge bucket per window), few and many points; against known logs.
    rng = random.Random(1414)
    cases = []
    for n in (40, 300, 2500):
        ds = [rng.randrange(1, N) for _ in range(n)]
        ks = [rng.randrange(N) for _ in range(n)]
        cases.append((ks, ds))
        rep = ds[:]
        for i in range(0, n, 3):
            rep[i] = ds[0]  # repeated points
        for i in range(1, n, 7):
            rep[i] = N - ds[0]  # their negations
        cases.append((ks, rep))
        cases.append(([ks[0]] * n, ds))  # one scalar: every digit in the same buckets
        cases.append(([k if i % 2 else 0 for i, k in enumerate(ks)], ds))
    previous = [m._bucket_backend(backend) for m in NATIVES]  # type: ignore[attr-defined]
    saved = nat._tune(0, 28)
    try:
        for ks, ds in cases:
            expected = pt(sum(k * d for k, d in zip(ks, ds, strict=True)))
            for module in NATIVES:
                assert module.msm_var(scs(ks), pts(ds), threads=1) == expected  # type: ignore[attr-defined]
                table = module.FixedBaseTable(pts(ds))  # type: ignore[attr-defined]
                assert table.msm_var(scs(ks), threads=2) == expected
    finally:
        nat._tune(*saved)
        for module, name in zip(NATIVES, previous):
            module._bucket_backend(name)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="unknown bucket backend"):
        nat._bucket_backend("gpu")


def test_ifma_rounds_pass_their_self_test_where_the_cpu_has_ifma() -> None:
    # A broken lane path would only switch itself off (the self-test guards production); on a
    # CPU with AVX-512 IFMA that must fail loudly here instead.
    from pathlib import Path

    cpuinfo = Path("/proc/cpuinfo")
    flags = cpuinfo.read_text() if cpuinfo.exists() else ""
    if "avx512ifma" not in flags:
        pytest.skip("no AVX-512 IFMA on this CPU")
    if not nat.IFMA_BUILT:  # type: ignore[attr-defined]
        pytest.skip("kernel built with CTPLUGIN_NO_IFMA=1")
    assert "ifma" in _bucket_backends()
    assert "ifma" in _sqrt_backends()
    assert nat._dmult_backend() == "ifma"  # type: ignore[attr-defined]


@FAST
@given(st.lists(st.tuples(secrets_st, st.sampled_from(["ok", "ok", "ok", "prefix", "range",
                                                       "off-curve"])), max_size=40),
       st.sampled_from(KINDS))
def test_batch_decoding_matches_reference_with_hostile_entries(
        entries: list[tuple[int, str]], kind: int) -> None:
    """Many records at once (the batched square roots: sixteen at a time with IFMA, and the
    tail): the same points as the reference, and the same first failure."""
    width = 32 if kind == kernel.KIND_XONLY else 33
    records = []
    for d, how in entries:
        enc = nat.encode_points_var(pt(d), kind)
        if how == "prefix" and kind != kernel.KIND_XONLY:
            enc = bytes([enc[0] ^ 0x04]) + enc[1:]
        elif how == "range":
            enc = enc[:width - 32] + sc(P + d % 7)
        elif how == "off-curve":
            enc = enc[:width - 32] + sc(_x_not_on_curve())
        records.append(enc)
    data = b"".join(records)
    try:
        expected = ref.decode_points_var(data, kind)
    except ValueError as exc:
        with pytest.raises(ValueError) as err:
            nat.decode_points_var(data, kind)
        assert str(err.value) == str(exc)
    else:
        assert nat.decode_points_var(data, kind) == expected


# --- batch decoding (square roots sixteen at a time where the CPU allows) ----------------------

def _sqrt_backends() -> list[str]:
    return _lane_backends(nat._sqrt_backend)


@pytest.mark.parametrize("backend", _sqrt_backends())
def test_batch_decoding_every_root_backend(backend: str) -> None:
    # many points per call (blocks of 256 roots), every kind, and the first failure in index
    # order reported whatever its kind (off-curve found after the roots, prefix / range before)
    rng = random.Random(22)
    ds = [rng.randrange(1, N) for _ in range(700)]
    packed = pts(ds)
    bad_x = sc(_x_not_on_curve())
    previous = [m._sqrt_backend(backend) for m in NATIVES]  # type: ignore[attr-defined]
    try:
        for module in NATIVES:
            for kind in KINDS:
                enc = module.encode_points_var(packed, kind)  # type: ignore[attr-defined]
                dec = module.decode_points_var(enc, kind)  # type: ignore[attr-defined]
                if kind == kernel.KIND_XONLY:
                    assert dec == pts([d if pt(d)[63] % 2 == 0 else N - d for d in ds])
                else:
                    assert dec == packed
                w = 32 if kind == kernel.KIND_XONLY else 33
                head = b"" if kind == kernel.KIND_XONLY else enc[:1]
                for off_at, other_at in ((300, 301), (301, 300), (5, 600), (600, 5)):
                    rec = bytearray(enc)
                    rec[w * off_at + w - 32: w * off_at + w] = bad_x  # off the curve
                    if kind != kernel.KIND_XONLY:
                        rec[w * other_at] ^= 0x40  # a bad prefix
                        first = min(off_at, other_at)
                        reason = "off-curve" if first == off_at else "prefix"
                    else:
                        rec[w * other_at: w * other_at + 32] = sc(P)  # x >= p
                        first = min(off_at, other_at)
                        reason = "off-curve" if first == off_at else "field-range"
                    with pytest.raises(EncodingError) as info:
                        module.decode_points_var(bytes(rec), kind)  # type: ignore[attr-defined]
                    assert info.value.reason == reason and f"point {first}:" in str(info.value)
                    with pytest.raises(EncodingError) as ref_info:
                        ref.decode_points_var(bytes(rec[: w * 610]), kind)
                    if first < 610:
                        assert ref_info.value.reason == reason
                assert head == enc[:len(head)]
    finally:
        for module, name in zip(NATIVES, previous):
            module._sqrt_backend(name)  # type: ignore[attr-defined]
