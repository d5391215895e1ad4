"""Multi-scalar multiplication in the kernel (``ctplugin.secp256k1.kernel.backend``).

Rows (per point unless said; one thread unless said): ``msm`` for n random points and scalars,
with libsecp256k1's ``ecmult_multi_var`` on this machine kind beside it (docs/bulletproofs-format.md
§3, "Ng" figures in µs converted with t = 34 µs); ``msm_threads`` the same on every core (wall
time, the kernel's default thread count; its reference is still the single-threaded libsecp);
``msm_fixed256`` for a FixedBaseTable of 257 Bulletproof-like points (256 generators plus one)
with 17 extra points, as in one single-proof verification; and
``subset_sums_1024x30`` (per path) for DLC adaptor points: the 1024 consecutive outcomes of a
numeric range, each a path of 30 binary digits over a 60-point table (digit position j, value b ->
point 2j + b), as a numeric-outcome DLC enumerates them; ``subset_sums_1024x30_random`` is the
adversarial case of 1024 sorted random paths (far less prefix sharing).

``msm_g_plus_1`` is s·G + e·P through ``FixedBaseTable([G])`` (surjection-proof ring members,
ECDSA adaptor verification), per double multiplication.  Its reference is libsecp256k1's ecmult
measured in the same run: ecmult itself is not exported, so ``coincurve.PublicKey.verify`` (ECDSA
verification: one ecmult u1·G + u2·Q plus signature parsing and one scalar inversion, a few % more)
stands for it, timed interleaved with ours.  ``msm_g`` is s·G alone through the same table (no
reference: libsecp's public s·G is the constant-time ecmult_gen).  Both notes also give thread CPU
times, since the machine is shared.
"""

from __future__ import annotations

import os
import random

import coincurve

from bench.common import Row, make_row
from ctplugin.secp256k1 import kernel
from ctplugin.secp256k1.params import GX, GY, N
from ctplugin.timing import interleaved_times, median_time

REFERENCE_T_US = 34.0
# libsecp256k1 ecmult_multi_var, µs per point (n points plus G), this machine kind
REFERENCE_US = {1: 41.1, 2: 28.0, 8: 17.7, 64: 14.4, 128: 14.3, 256: 13.1, 1024: 9.79, 4096: 7.96,
                32768: 6.24}
REFERENCE_T = {n: us / REFERENCE_T_US for n, us in REFERENCE_US.items()}
REFERENCE_T.update({64: 0.42, 1024: 0.29, 32768: 0.18})  # the docs/design.md figures


def _points(rng: random.Random, n: int) -> bytes:
    return b"".join(
        coincurve.PublicKey.from_secret(rng.randrange(1, N).to_bytes(32, "big"))
        .format(compressed=False)[1:]
        for _ in range(n))


def _scalars(rng: random.Random, n: int) -> bytes:
    return b"".join(rng.randrange(N).to_bytes(32, "big") for _ in range(n))


def _g_rows(rng: random.Random, quick: bool, t_us: float) -> list[Row]:
    g_table = kernel.backend.FixedBaseTable(GX.to_bytes(32, "big") + GY.to_bytes(32, "big"))
    s, e, p = _scalars(rng, 1), _scalars(rng, 1), _points(rng, 1)
    secret = coincurve.PrivateKey(rng.randrange(1, N).to_bytes(32, "big"))
    message = rng.randbytes(32)
    signature, public = secret.sign(message, hasher=None), secret.public_key
    timed = interleaved_times({
        "ours": lambda: g_table.msm_var(s, e, p, threads=1),
        "g": lambda: g_table.msm_var(s, threads=1),
        "ecmult": lambda: public.verify(signature, message, hasher=None),
    }, repeat=5 if quick else 15, number=100 if quick else 300)
    (wall, cpu), (g_wall, g_cpu), (ref_wall, ref_cpu) = timed["ours"], timed["g"], timed["ecmult"]
    return [
        make_row("msm_g_plus_1", 1, wall, t_us, ref_wall * 1e6 / t_us,
                 note=f"ref = libsecp ECDSA verify, same run; CPU time {cpu * 1e6:.1f} us vs "
                      f"{ref_cpu * 1e6:.1f} us ({cpu / ref_cpu:.2f}x)"),
        make_row("msm_g", 1, g_wall, t_us,
                 note=f"s*G alone; CPU time {g_cpu * 1e6:.1f} us = {g_cpu / ref_cpu:.2f}x verify"),
    ]


def run(quick: bool, t_us: float) -> list[Row]:
    backend = kernel.backend
    rng = random.Random(2024)
    sizes = [1, 2, 8, 64, 128, 1024, 4096] + ([] if quick else [32768])
    repeat = 3 if quick else 7
    pool_points = _points(rng, max(sizes))
    rows = []
    for n in sizes:
        points, scalars = pool_points[: 64 * n], _scalars(rng, n)
        number = max(1, 2000 // n) if not quick else max(1, 300 // n)
        seconds = median_time(lambda p=points, s=scalars: backend.msm_var(s, p, threads=1),
                              repeat=repeat, number=number)
        rows.append(make_row("msm", n, seconds / n, t_us, REFERENCE_T[n]))
    cores = os.cpu_count() or 1
    for n in [m for m in sizes if m >= 1024]:  # every core (set_threads default), wall time
        points, scalars = pool_points[: 64 * n], _scalars(rng, n)
        number = max(1, 2000 // n) if not quick else max(1, 300 // n)
        seconds = median_time(lambda p=points, s=scalars: backend.msm_var(s, p, threads=cores),
                              repeat=repeat, number=number)
        rows.append(make_row("msm_threads", n, seconds / n, t_us, REFERENCE_T[n],
                             note=f"{cores} threads, wall; ref = single-threaded libsecp"))

    rows += _g_rows(rng, quick, t_us)

    table_points = pool_points[: 64 * 257]
    table = backend.FixedBaseTable(table_points)
    fixed_scalars = _scalars(rng, 257)
    extra_points, extra_scalars = pool_points[64 * 257: 64 * 274], _scalars(rng, 17)
    seconds = median_time(lambda: table.msm_var(fixed_scalars, extra_scalars, extra_points,
                                                threads=1),
                          repeat=repeat, number=10 if quick else 50)
    rows.append(make_row("msm_fixed256", 274, seconds / 274, t_us, REFERENCE_T[256],
                         note="257 table points + 17 extra; ref = general 256g"))

    sub_table = pool_points[: 64 * 60]
    first = rng.randrange(2**30 - 1024)
    consecutive = [[2 * j + ((v >> (29 - j)) & 1) for j in range(30)]
                   for v in range(first, first + 1024)]
    random_paths = sorted([2 * j + rng.randrange(2) for j in range(30)] for _ in range(1024))
    for name, paths in (("subset_sums_1024x30", consecutive),
                        ("subset_sums_1024x30_random", random_paths)):
        seconds = median_time(lambda p=paths: backend.subset_sums_var(sub_table, p),
                              repeat=repeat, number=5 if quick else 20)
        rows.append(make_row(name, 1024, seconds / 1024, t_us,
                             note=f"whole call {seconds * 1e3:.3f} ms"))
    return rows
