"""Multi-scalar multiplication in the kernel (``ctplugin.secp256k1.kernel.backend``).

Rows (per point unless said): ``msm`` for n random points and scalars, with libsecp256k1's
``ecmult_multi_var`` on this machine kind beside it (bulletproofs-format.md §3, "Ng" figures in µs
converted with t = 34 µs); ``msm_fixed256`` for a FixedBaseTable of 257 Bulletproof-like points
(256 generators plus one) with 17 extra points, as in one single-proof verification; and
``subset_sums_1024x30`` (per path) for DLC adaptor points: the 1024 consecutive outcomes of a
numeric range, each a path of 30 binary digits over a 60-point table (digit position j, value b ->
point 2j + b), as a numeric-outcome DLC enumerates them; ``subset_sums_1024x30_random`` is the
adversarial case of 1024 sorted random paths (far less prefix sharing).
"""

from __future__ import annotations

import random

import coincurve

from bench.common import Row, make_row, median_time
from ctplugin.secp256k1 import kernel
from ctplugin.secp256k1.params import N

REFERENCE_T_US = 34.0
# libsecp256k1 ecmult_multi_var, µs per point (n points plus G), this machine kind
REFERENCE_US = {1: 41.1, 2: 28.0, 8: 17.7, 64: 14.4, 128: 14.3, 256: 13.1, 1024: 9.79, 4096: 7.96,
                32768: 6.24}
REFERENCE_T = {n: us / REFERENCE_T_US for n, us in REFERENCE_US.items()}
REFERENCE_T.update({64: 0.42, 1024: 0.29, 32768: 0.18})  # the design.md figures


def _points(rng: random.Random, n: int) -> bytes:
    return b"".join(
        coincurve.PublicKey.from_secret(rng.randrange(1, N).to_bytes(32, "big"))
        .format(compressed=False)[1:]
        for _ in range(n))


def _scalars(rng: random.Random, n: int) -> bytes:
    return b"".join(rng.randrange(N).to_bytes(32, "big") for _ in range(n))


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
        seconds = median_time(lambda p=points, s=scalars: backend.msm_var(s, p),
                              repeat=repeat, number=number)
        rows.append(make_row("msm", n, seconds / n, t_us, REFERENCE_T[n]))

    table_points = pool_points[: 64 * 257]
    table = backend.FixedBaseTable(table_points)
    fixed_scalars = _scalars(rng, 257)
    extra_points, extra_scalars = pool_points[64 * 257: 64 * 274], _scalars(rng, 17)
    seconds = median_time(lambda: table.msm_var(fixed_scalars, extra_scalars, extra_points),
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
