"""Shared benchmark plumbing: rows and their output (timing and the unit t: ``harness.timing``)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path


def cache_dir() -> Path:
    """Where benchmarks keep inputs that are slow to build (``$CTPLUGIN_BENCH_CACHE`` or
    ``~/.cache/ctplugin``)."""
    root = os.environ.get("CTPLUGIN_BENCH_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "ctplugin"


@dataclass(frozen=True)
class Row:
    """One benchmark line; ``us`` and ``t`` are per item as the name says."""

    name: str
    n: int
    us: float
    t: float
    reference_t: float | None = None
    note: str = ""


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
