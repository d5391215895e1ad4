"""Work spread over threads, for the callers whose work runs mostly without the GIL (kernel
calls release it, and so does coincurve: cffi drops it around every libsecp256k1 call).

One shared pool serves them all, so a process never holds more idle threads than it has cores.
A task run on the pool must not itself wait on the pool (it could wait for a thread that is
waiting for it): ``side_by_side`` therefore runs its first share in the calling thread, and
called from a pool worker it runs everything there, as a plain loop.

Placement (Linux): pool worker k keeps to the process's CPU k + 1 (modulo the others), and
``side_by_side`` runs its caller's share on the first CPU. Why: in a KVM guest a vCPU idle for a
while is descheduled by the host and reported as preempted, so the scheduler wakes a thread on
the waker's CPU instead, and the shares run one after the other. Two Borromean proofs side by
side took 6.3 ms back to back but 11 ms after pauses of 50 ms on a 2-vCPU EPYC guest, and
6.3 ms after pauses once the threads were kept apart. The kernel's C threads are kept off
their caller's CPU for the same reason (native/threads.h, ``parallel_attr_``).
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()
_WORKERS_PLACED = itertools.count()
_WORKER = threading.local()  # .is_worker: set in the pool's own threads


def _cpus() -> list[int]:
    """The CPUs the calling thread may run on, in order (Linux: the process's unless placed),
    else an empty list (no placement)."""
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def _set_cpus(cpus: set[int]) -> bool:
    """Keep the calling thread to ``cpus`` (Linux: pid 0 = this thread); False when the system
    refuses (a CPU taken offline, a cpuset changed meanwhile): placement is only a hint."""
    try:
        os.sched_setaffinity(0, cpus)
    except OSError:
        return False
    return True


def _place_worker() -> None:
    """Keep pool worker k to the process's CPU k + 1 (modulo the others), never the first (an
    initializer that raised would break the pool, so a refusal leaves the worker unplaced)."""
    _WORKER.is_worker = True
    cpus = _cpus()
    if len(cpus) > 1:
        _set_cpus({cpus[1 + next(_WORKERS_PLACED) % (len(cpus) - 1)]})


def pool() -> ThreadPoolExecutor:
    """The process's shared worker threads (one per core beyond the caller's, at least one),
    started on first use."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) - 1),
                                       thread_name_prefix="ctplugin-parallel",
                                       initializer=_place_worker)
        return _POOL


def side_by_side(work: Callable[[T], R], items: Sequence[T], threads: int) -> list[R]:
    """``[work(item) for item in items]``, with up to ``threads`` items running at once: the
    first share in the calling thread, the others on the shared pool (all in the calling thread
    when that is a pool worker: nested calls cannot wait on each other). The results, and the
    exception raised (that of the first item in order that raised), are the plain loop's; every
    item has finished when the call returns or raises."""
    if threads <= 1 or len(items) <= 1 or getattr(_WORKER, "is_worker", False):
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
    cpus = _cpus()
    # the caller's share on the CPU the workers leave to it
    placed = len(cpus) > 1 and _set_cpus({cpus[0]})
    try:
        columns = [run(items[0::width])]
    finally:
        if placed:
            _set_cpus(set(cpus))
    columns += [future.result() for future in futures]
    results: list[R] = []
    for i in range(len(items)):
        ok, value = columns[i % width][i // width]
        if not ok:
            assert isinstance(value, BaseException)
            raise value
        results.append(value)  # type: ignore[arg-type]
    return results
