"""The stateless task the workers and Dask run: verify the packed proof work of consecutive
blocks (``validator.verify_blocks``: ONE batch for all their range proofs and balances, then
their surjection proofs) and answer with a small verdict.

A task buffer is ONE bytes object: the pickled (kernel threads, list of the blocks'
``ProofWork``) — items are immutable values of bytes; derived state is rebuilt in the worker.
The kernel threads (``ctplugin.secp256k1.kernel.set_threads``, 0 = all cores) apply to the
worker's process: with one worker per core, 1 (the default) keeps the workers from
oversubscribing the machine. The verdict is the pickled
``(None | (block position, ValidationError), {stage: seconds})``. Workers touch no chainstate
and no cache, so running a task twice (a retry, Dask speculation) gives the same verdict.
"""

from __future__ import annotations

import gc
import pickle
from collections.abc import Sequence

from ctplugin.bulletproofs import consensus_generators
from ctplugin.errors import ValidationError
from ctplugin.secp256k1 import kernel
from validator import ProofWork, StageTimer, tune_collector, verify_blocks

Verdict = tuple[tuple[int, ValidationError] | None, dict[str, float]]


_threads_in_effect: int | None = None  # this process's kernel setting, once a task set it


def pack_works(works: Sequence[ProofWork], kernel_threads: int = 1) -> bytes:
    return pickle.dumps((kernel_threads, list(works)), protocol=pickle.HIGHEST_PROTOCOL)


def unpack_verdict(data: bytes) -> Verdict:
    failure, seconds = pickle.loads(data)
    return failure, seconds


def _loads_acyclic(payload: bytes) -> tuple[int, list[ProofWork]]:
    """Unpickle a task with the cyclic garbage collector paused. The work is a tree of tuples
    and bytes (no cycles to find), but its tens of thousands of new tuples start collections
    that walk them: a 250-transaction block's work (``bench replay``'s chain) unpickles in
    2.4 ms paused, 3.0 ms at the workers' thresholds (``tune_collector``), 4.7 ms at Python's
    default ones."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        threads, works = pickle.loads(payload)
    finally:
        if enabled:
            gc.enable()
    return threads, works


def verify_task(payload: bytes) -> bytes:
    global _threads_in_effect
    threads, works = _loads_acyclic(payload)
    if threads != _threads_in_effect:
        kernel.set_threads(threads)
        _threads_in_effect = threads
    timer = StageTimer()
    failure = verify_blocks(works, timer)
    return pickle.dumps((failure, timer.seconds), protocol=pickle.HIGHEST_PROTOCOL)


def warm(_: bytes = b"") -> bytes:
    """Build the per-process state before the first task (the Bulletproof generator set, the
    collector's thresholds for validation)."""
    tune_collector()
    consensus_generators()
    return b""
