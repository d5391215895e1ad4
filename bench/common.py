"""Shared benchmark plumbing: the t unit, timing, rows and output."""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import coincurve


@dataclass(frozen=True)
class Row:
    """One benchmark line; ``us`` and ``t`` are per item as the name says."""

    name: str
    n: int
    us: float
    t: float
    reference_t: float | None = None
    note: str = ""


def median_time(fn: Callable[[], object], *, repeat: int = 5, number: int = 1) -> float:
    """Median wall time of ``fn`` in seconds (each sample runs it ``number`` times)."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        fn()  # warm-up: caches, lazy tables
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            samples.append((time.perf_counter() - start) / number)
    finally:
        if gc_was_enabled:
            gc.enable()
    return statistics.median(samples)


def measure_t_us(samples: int = 2000) -> float:
    """Microseconds of one coincurve ``PublicKey.multiply`` (the unit t), measured now."""
    key = coincurve.PublicKey.from_secret(b"\x11" * 32)
    scalar = bytes.fromhex("7d" * 32)

    def loop() -> None:
        for _ in range(samples):
            key.multiply(scalar)

    return median_time(loop, repeat=5) / samples * 1e6


def make_row(name: str, n: int, seconds_per_item: float, t_us: float,
             reference_t: float | None = None, note: str = "") -> Row:
    us = seconds_per_item * 1e6
    return Row(name=name, n=n, us=us, t=us / t_us, reference_t=reference_t, note=note)


def report(bench: str, t_us: float, rows: list[Row], as_json: bool) -> str:
    """Render rows as the design.md JSON object or as a printed table."""
    if as_json:
        return json.dumps({"bench": bench, "unit_t_us": round(t_us, 3),
                           "rows": [asdict(r) for r in rows]})
    lines = [f"{bench}: t = {t_us:.2f} us (one coincurve PublicKey.multiply, this run)",
             f"{'name':<28}{'n':>8}{'us/item':>14}{'t/item':>10}{'ref t':>9}{'vs ref':>8}  note"]
    for r in rows:
        ref = f"{r.reference_t:.3g}" if r.reference_t is not None else "-"
        ratio = f"{r.t / r.reference_t:.2f}x" if r.reference_t else "-"
        lines.append(f"{r.name:<28}{r.n:>8}{r.us:>14.2f}{r.t:>10.3f}{ref:>9}{ratio:>8}  {r.note}")
    return "\n".join(lines)
