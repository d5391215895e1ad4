"""The replay's Dask pool on a LocalCluster: tasks as packed buffers, bounded futures, and a
KilledWorker surfacing as a clear error."""

from __future__ import annotations

import hashlib
import os

import pytest

from replay.cluster import DaskError, DaskPool

FAULTS = "tests.replay_faults"


def test_tasks_run_on_an_in_process_local_cluster() -> None:
    payloads = {i: os.urandom(5000 + i) for i in range(10)}
    with DaskPool(f"{FAULTS}:digest", n_workers=2, processes=False, max_in_flight=3) as pool:
        got = {}
        for task_id, payload in payloads.items():
            pool.submit(task_id, payload)
            assert sum(1 for f in pool._live.values() if not f.done()) <= 3
            got.update((r.task_id, r.result) for r in pool.completed())
        got.update((r.task_id, r.result) for r in pool.drain())
        assert pool.in_flight == 0
    assert got == {i: hashlib.sha256(p).digest() for i, p in payloads.items()}


def test_a_task_raising_on_its_worker_is_named() -> None:
    with DaskPool(f"{FAULTS}:raises", n_workers=1, processes=False) as pool:
        pool.submit(5, b"")
        with pytest.raises(DaskError, match="task 5 raised on its worker: RuntimeError"):
            list(pool.drain())


def test_killed_worker_is_a_clear_error() -> None:
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            DaskPool(f"{FAULTS}:always_die", n_workers=1, processes=True) as pool:
        pool.submit(8, b"x")
        with pytest.raises(DaskError, match="task 8 was lost: every worker that ran it died "
                                            r"\(KilledWorker"):
            list(pool.drain())
