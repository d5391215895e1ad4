"""``python -m bench NAME [--quick] [--json]``; NAME ``all`` runs every benchmark module."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from dataclasses import replace

import bench
from bench.common import peak_rss_mib, report
from ctplugin.secp256k1 import kernel
from ctplugin.timing import measure_t_us

_NOT_BENCHMARKS = {"common", "__main__"}


def available() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(bench.__path__)
                  if m.name not in _NOT_BENCHMARKS and not m.name.startswith("_"))


def main(argv: list[str] | None = None) -> int:
    names = available()
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("name", choices=[*names, "all"])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--json", action="store_true", help="one JSON object per benchmark")
    args = parser.parse_args(argv)
    # Rows are single-threaded unless their name says otherwise (``*_threads`` rows ask the
    # kernel for its threads explicitly): the kernel's own default is every core.
    kernel.set_threads(1)
    for name in names if args.name == "all" else [args.name]:
        module = importlib.import_module(f"bench.{name}")
        t_us = measure_t_us()
        rows = module.run(quick=args.quick, t_us=t_us)
        # Every row carries the process's peak memory once its benchmark finished (a row that
        # measured its own, as replay's memory row does, keeps it).
        peak = peak_rss_mib()
        rows = [r if r.peak_rss_mib is not None else replace(r, peak_rss_mib=peak)
                for r in rows]
        print(report(name, t_us, rows, args.json), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
