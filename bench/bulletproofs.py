"""Bulletproof benchmarks: verify, batch verify, prove, proof sizes.

Rows (docs/design.md §11 names; ``us``/``t`` per item as named):
``verify_single`` (one 64-bit proof), ``batch_single`` (n proofs, per range), ``batch_agg8`` and
``batch_agg64`` (n aggregated proofs, per range), ``prove_single``, ``prove_agg8`` (per proof),
``proof_size`` (n = m; the size is in the note).

A batch timing covers everything the validator pays: parsing each proof, its transcript and
claim (one ``range_proof_claims`` group, as the block validator builds it), and the one
multi-scalar multiplication. Proofs are distinct where generation time allows;
large aggregate batches cycle through a smaller pool of distinct proofs (stated in the note: the
work per proof does not depend on whether proofs repeat, since nothing is deduplicated except the
shared value generator, which is the same for every proof anyway).
"""

from __future__ import annotations

import gc
import os
import statistics
import time
from collections.abc import Callable

import coincurve

from bench.common import Row, make_row
from ctplugin.batch import BatchVerifier
from ctplugin.bulletproofs import generator_set, proof_length, prove, range_proof_claims, verify
from ctplugin.pedersen import H_GENERATOR, commit
from ctplugin.secp256k1 import kernel

REF_VERIFY_SINGLE = 63.0
# t per range, from the reference's figures (docs/bulletproofs-format.md §3)
REF_BATCH_SINGLE = {1: 62.0, 10: 13.7, 100: 7.6, 1000: 6.6}
REF_BATCH_AGG8 = 1.8
REF_BATCH_AGG64 = 1.06
REF_PROVE_SINGLE = 540.0
REF_PROVE_AGG8 = 140_000 / 34.0  # 140 ms per 8-aggregate at t ≈ 34 µs
SIZES = {1: 675, 2: 739, 4: 803, 8: 867, 16: 932, 64: 1060}


def _make_proofs(count: int, m: int, gens_n: int, seed: int) -> list[tuple[bytes, list[bytes]]]:
    gens = generator_set(gens_n)
    out = []
    for i in range(count):
        values = [(seed * 1_000_003 + i * 7919 + j * 104729) % (1 << 64) for j in range(m)]
        blinds = [int.from_bytes(os.urandom(32), "big") % (1 << 250) + 1 for _ in range(m)]
        proof = prove(values, blinds, H_GENERATOR, os.urandom(32), gens=gens)
        commits = [commit(v, b, H_GENERATOR).serialize() for v, b in zip(values, blinds)]
        out.append((proof, commits))
    return out


def _cpu_t_us(samples: int = 300) -> float:
    """CPU-time µs of one coincurve ``PublicKey.multiply`` (the unit t)."""
    key = coincurve.PublicKey.from_secret(b"\x11" * 32)
    scalar = bytes.fromhex("7d" * 32)
    start = time.process_time()
    for _ in range(samples):
        key.multiply(scalar)
    return (time.process_time() - start) / samples * 1e6


def _timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(seconds of fn, t in µs), as medians over ``repeat`` interleaved samples.

    The machine is shared with other jobs whose load changes within seconds, so both the work
    and the unit t are measured in CPU time (``time.process_time``; equal to wall time on an
    idle core), each sample of fn bracketed by a measurement of t; the row's t ratio is the
    median of the per-sample ratios.
    """
    fn()  # warm-up: caches, lazy tables
    seconds, units, ratios = [], [], []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            before = _cpu_t_us()
            start = time.process_time()
            fn()
            elapsed = time.process_time() - start
            unit = (before + _cpu_t_us()) / 2
            seconds.append(elapsed)
            units.append(unit)
            ratios.append(elapsed * 1e6 / unit)
    finally:
        if gc_was_enabled:
            gc.enable()
    ratio = statistics.median(ratios)
    unit = statistics.median(units)
    return ratio * unit / 1e6, unit


def _batch_seconds(pool: list[tuple[bytes, list[bytes]]], n: int, gens_n: int,
                   repeat: int) -> tuple[float, float]:
    gens = generator_set(gens_n)
    vg = H_GENERATOR.serialize()
    items = [pool[i % len(pool)] for i in range(n)]

    def run() -> None:
        proofs, commits = zip(*items)
        batch = BatchVerifier(gens.fixed)
        batch.add(range_proof_claims(proofs, commits, [vg] * len(proofs), None, 64, gens))
        if not batch.verify():
            raise AssertionError("benchmark batch failed to verify")

    return _timed(run, repeat)


def run(quick: bool, t_us: float) -> list[Row]:
    """All rows; the start-up ``t_us`` is superseded per row by a t measured around that row's
    timing (see ``_timed``), so each row's t and us agree even when the load changes."""
    del t_us
    rows: list[Row] = []
    native = "" if kernel.IS_NATIVE else "PURE-PYTHON kernel"
    gens256 = generator_set(256)
    vg = H_GENERATOR.serialize()

    n_single = [1, 10, 100] if quick else [1, 10, 100, 1000]
    singles = _make_proofs(max(n_single), 1, 256, seed=1)
    proof, commits = singles[0]
    s, t = _timed(lambda: verify(proof, commits, vg, None, 64, gens256),
                  repeat=21 if quick else 101)
    rows.append(make_row("verify_single", 1, s, t, REF_VERIFY_SINGLE, native))
    for n in n_single:
        s, t = _batch_seconds(singles, n, 256, repeat=7 if n >= 100 else 15)
        rows.append(make_row("batch_single", n, s / n, t, REF_BATCH_SINGLE[n], native))

    # 8-aggregates need n_gens >= 2·512 = 1024; 64-aggregates need 8192.
    agg8_pool = _make_proofs(10 if quick else 50, 8, 1024, seed=2)
    n8 = 100 if quick else 1000
    s, t = _batch_seconds(agg8_pool, n8, 1024, repeat=3 if quick else 7)
    rows.append(make_row("batch_agg8", n8, s / (8 * n8), t, REF_BATCH_AGG8,
                         f"pool of {len(agg8_pool)} distinct proofs {native}".strip()))
    agg64_pool = _make_proofs(2 if quick else 4, 64, 8192, seed=3)
    n64 = 20 if quick else 1000
    s, t = _batch_seconds(agg64_pool, n64, 8192, repeat=3 if quick else 5)
    rows.append(make_row("batch_agg64", n64, s / (64 * n64), t, REF_BATCH_AGG64,
                         f"pool of {len(agg64_pool)} distinct proofs {native}".strip()))

    nonce = bytes(range(32))
    s, t = _timed(lambda: prove([123456789], [0x1234], H_GENERATOR, nonce, gens=gens256),
                  repeat=5 if quick else 21)
    rows.append(make_row("prove_single", 1, s, t, REF_PROVE_SINGLE, native))
    gens1024 = generator_set(1024)
    s, t = _timed(lambda: prove(list(range(8)), list(range(1, 9)), H_GENERATOR, nonce,
                                gens=gens1024), repeat=3 if quick else 5)
    rows.append(make_row("prove_agg8", 1, s, t, REF_PROVE_AGG8, native))

    for m, want in SIZES.items():
        got = proof_length(64, m)
        rows.append(Row("proof_size", m, 0.0, 0.0, None,
                        f"{got} bytes (target {want}){'' if got == want else ' MISMATCH'}"))
    return rows
