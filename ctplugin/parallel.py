"""Work spread over threads, for the callers whose work runs mostly without the GIL (kernel
calls release it, and so does coincurve: cffi drops it around every libsecp256k1 call).

One shared pool serves them all, so a process never holds more idle threads than it has cores.
A task run on the pool must not itself wait on the pool (it could wait for a thread that is
waiting for it); ``side_by_side`` therefore runs its first item in the calling thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """The process's shared worker threads (one per core beyond the caller's, at least one),
    started on first use."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) - 1),
                                       thread_name_prefix="ctplugin-parallel")
        return _POOL


def side_by_side(work: Callable[[T], R], items: Sequence[T], threads: int) -> list[R]:
    """``[work(item) for item in items]``, with up to ``threads`` items running at once: the
    first share in the calling thread, the others on the shared pool. The results, and the
    exception raised (that of the first item in order that raised), are the plain loop's; every
    item has finished when the call returns or raises."""
    if threads <= 1 or len(items) <= 1:
        return [work(item) for item in items]
    width = min(threads, len(items))

    def run(chunk: Sequence[T]) -> list[tuple[bool, R | BaseException]]:
        done: list[tuple[bool, R | BaseException]] = []
        for item in chunk:
            try:
                done.append((True, work(item)))
            except Exception as error:  # handed to the caller, in item order
                done.append((False, error))
        return done

    futures = [pool().submit(run, items[c::width]) for c in range(1, width)]
    columns = [run(items[0::width])] + [future.result() for future in futures]
    results: list[R] = []
    for i in range(len(items)):
        ok, value = columns[i % width][i // width]
        if not ok:
            assert isinstance(value, BaseException)
            raise value
        results.append(value)  # type: ignore[arg-type]
    return results
