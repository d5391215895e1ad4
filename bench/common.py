"""Shared benchmark plumbing: rows and their output (timing and the unit t: ``ctplugin.timing``)."""

from __future__ import annotations

import json
import os
import resource
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
    """What the C reference (or the named baseline) costs for the same item, timed or stated."""
    note: str = ""
    target_t: float | None = None
    """The issue's target for this row in t (a bound, not a measurement); None where none."""
    peak_rss_mib: float | None = None
    """The benchmark process's peak resident memory once the row was measured (ru_maxrss:
    it only grows, so it bounds what this row and the ones before it needed)."""


def make_row(name: str, n: int, seconds_per_item: float, t_us: float,
             reference_t: float | None = None, note: str = "",
             target_t: float | None = None) -> Row:
    us = seconds_per_item * 1e6
    return Row(name=name, n=n, us=us, t=us / t_us, reference_t=reference_t, note=note,
               target_t=target_t)


def peak_rss_mib() -> float:
    """This process's peak resident set size so far (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


CPU_FEATURES = ("avx2", "bmi2", "adx", "sha_ni", "avx512f", "avx512ifma")
"""The CPU flags the kernel's builds and backends depend on (docs/borromean.md §5)."""


def machine() -> dict[str, str]:
    """What the figures ran on: the CPU's model and those of its features the kernel uses, and
    the kernel build with the backend each lane-parallel path chose (a CTPLUGIN_NO_IFMA=1 build
    reports ``ifma_built: no`` and runs the scalar paths on any CPU)."""
    from ctplugin.secp256k1 import kernel

    cpuinfo = Path("/proc/cpuinfo")
    text = cpuinfo.read_text() if cpuinfo.exists() else ""
    model = next((line.split(":", 1)[1].strip() for line in text.splitlines()
                  if line.startswith("model name")), os.uname().machine)
    flags = next((set(line.split(":", 1)[1].split()) for line in text.splitlines()
                  if line.startswith("flags")), set())
    info = {"cpu": model, "cores": str(os.cpu_count() or 1),
            "features": " ".join(f for f in CPU_FEATURES if f in flags) or "-"}
    backend = kernel.backend
    if not kernel.IS_NATIVE:
        return {**info, "kernel": "pure-Python reference"}
    return {**info, "kernel": backend.__name__.rsplit(".", 1)[1],
            "field": backend.FIELD_BACKEND, "ifma_built": "yes" if backend.IFMA_BUILT else "no",
            "ring": backend._dmult_backend(), "sqrt": backend._sqrt_backend(),
            "buckets": backend._bucket_backend()}


def report(bench: str, t_us: float, rows: list[Row], as_json: bool) -> str:
    """Render rows as the docs/design.md JSON object or as a printed table."""
    if as_json:
        return json.dumps({"bench": bench, "unit_t_us": round(t_us, 3), "machine": machine(),
                           "rows": [asdict(r) for r in rows]})
    lines = [f"{bench}: t = {t_us:.2f} us (one coincurve PublicKey.multiply, this run)",
             "machine: " + ", ".join(f"{k} {v}" for k, v in machine().items()),
             f"{'name':<28}{'n':>8}{'us/item':>14}{'t/item':>10}{'ref t':>9}{'vs ref':>8}"
             f"{'target t':>10}{'met':>5}  note"]
    for r in rows:
        ref = f"{r.reference_t:.3g}" if r.reference_t is not None else "-"
        ratio = f"{r.t / r.reference_t:.2f}x" if r.reference_t else "-"
        target = f"{r.target_t:.3g}" if r.target_t is not None else "-"
        met = "-" if r.target_t is None else ("yes" if r.t <= r.target_t else "no")
        lines.append(f"{r.name:<28}{r.n:>8}{r.us:>14.2f}{r.t:>10.3f}{ref:>9}{ratio:>8}"
                     f"{target:>10}{met:>5}  {r.note}")
    peaks = [r.peak_rss_mib for r in rows if r.peak_rss_mib is not None]
    if peaks:
        lines.append(f"peak RSS of the benchmark process: {max(peaks):.0f} MiB")
    return "\n".join(lines)
