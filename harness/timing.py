"""Timing helpers: the unit t and medians (docs/design.md "Measuring speed").

Machines are noisy, so figures are reported in t, one coincurve ``PublicKey.multiply`` (a
libsecp256k1 constant-time scalar multiplication) timed in the same process and run.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

import coincurve


def median_time(fn: Callable[[], object], *, repeat: int = 5, number: int = 1) -> float:
    """Median wall time of ``fn`` in seconds (each sample runs it ``number`` times; one warm-up
    call first for caches and lazy tables; the garbage collector is paused while timing)."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        fn()
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


def interleaved_times(fns: dict[str, Callable[[], object]], *, repeat: int,
                      number: int = 1) -> dict[str, tuple[float, float]]:
    """Median (wall, thread CPU) seconds per call of each fn, sampled in turns (one warm-up call
    each first; the garbage collector paused) so that a change in machine load hits all of them
    alike. Thread CPU time counts only the calling thread: use it for one-threaded work."""
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in fns}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for fn in fns.values():
            fn()
        for _ in range(repeat):
            for name, fn in fns.items():
                w0, c0 = time.perf_counter(), time.thread_time()
                for _ in range(number):
                    fn()
                samples[name].append(((time.perf_counter() - w0) / number,
                                      (time.thread_time() - c0) / number))
    finally:
        if gc_was_enabled:
            gc.enable()
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
            for k, v in samples.items()}


def measure_t_us(samples: int = 2000) -> float:
    """Microseconds of one coincurve ``PublicKey.multiply`` (the unit t), measured now."""
    key = coincurve.PublicKey.from_secret(b"\x11" * 32)
    scalar = bytes.fromhex("7d" * 32)

    def loop() -> None:
        for _ in range(samples):
            key.multiply(scalar)

    return median_time(loop, repeat=5) / samples * 1e6
