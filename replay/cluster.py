"""The same task protocol as ``replay.workers.WorkerPool``, over a Dask distributed cluster
(docs/replay.md §5.2).

- ``scheduler=None``: a ``LocalCluster`` on 127.0.0.1 (``n_workers`` worker processes, one
  thread each: claim building is Python and holds the GIL; no dashboard), closed with the pool.
  ``processes=False`` runs the workers as threads of this process (fast start, for tests).
- ``scheduler="tcp://HOST:PORT"``: an existing cluster (``dask scheduler`` +
  ``dask worker tcp://HOST:PORT --nworkers N --nthreads 1`` on machines that have this package
  installed); the driver only connects a ``Client``.
- Tasks: one packed ``bytes`` buffer each (Dask ships bytes as one raw frame, no pickling of
  the proofs), submitted with ``pure=False`` and a deterministic key (no hashing of payloads),
  at most ``max_in_flight`` futures at once (default 3 × the cluster's threads), collected with
  ``as_completed``; a finished future is released at once so the cluster frees its data.
- Every worker connected at the start is prepared before the clock starts (the task function
  imported, ``warmup`` run: the Bulletproof generators built); a worker that cannot import
  this package is a ``DaskError`` then, not a failure of the first block's task.
- Workers are side-effect free: the task function verifies and returns a small verdict. A task
  Dask runs twice gives the same verdict. The chainstate and the proof cache stay the driver's.
- ``KilledWorker`` (the task's workers died ``distributed.scheduler.allowed-failures`` times)
  and lost connections surface as ``DaskError`` naming the task: never as an accepted block.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

from ctplugin.closing import Closeable
from ctplugin.errors import CtpluginError
from replay.workers import TaskResult, resolve_target


class DaskError(CtpluginError):
    """The cluster could not run a task (KilledWorker, scheduler gone, task raised)."""


def _prepare_worker(target: str, warmup: str | None, ignore_interrupts: bool = False) -> None:
    """Run on every worker when the pool starts: import the task function (and with it this
    package) and build its per-process state (``warmup``), so that no task pays for them — the
    first task of a fresh worker process would otherwise spend about a second importing.

    ``ignore_interrupts`` (a LocalCluster's workers, children of the driver): a terminal's
    Ctrl-C reaches the whole process group, and a worker killed by it would leave the driver
    waiting for verdicts no one computes; the driver alone handles it, as ``WorkerPool``'s
    workers leave it to the driver. ``client.run`` calls this on the worker's event loop, in
    its main thread, where handlers can be set."""
    if ignore_interrupts and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    resolve_target(target)
    if warmup:
        resolve_target(warmup)(b"")


def _run_task(target: str, payload: bytes) -> tuple[bytes, float]:
    """What a Dask worker runs: the task function by name, and its CPU time."""
    fn = resolve_target(target)
    cpu = time.process_time()
    result = fn(payload)
    return result, time.process_time() - cpu


class DaskPool(Closeable):
    """``submit`` / ``completed`` / ``drain`` / ``close`` over a Dask cluster."""

    def __init__(self, target: str, *, scheduler: str | None = None, n_workers: int = 2,
                 processes: bool = True, max_in_flight: int | None = None,
                 retries: int = 0, memory_limit: str | None = None,
                 connect_timeout: str = "30s", warmup: str | None = None) -> None:
        from distributed import Client, LocalCluster, as_completed

        resolve_target(target)
        self.target = target
        self.retries = retries
        self._cluster: Any = None
        if scheduler is None:
            kwargs: dict[str, Any] = {}
            if memory_limit is not None:
                kwargs["memory_limit"] = memory_limit
            if processes:  # TCP on loopback only; in-process workers talk over inproc://
                kwargs["host"] = "127.0.0.1"
            # No dashboard; the scheduler's remaining HTTP routes (health, metrics) on a free
            # loopback port instead of its default 8787 (taken if another cluster runs).
            self._cluster = LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=processes,
                dashboard_address=None,
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}, **kwargs)
            self.client = Client(self._cluster)
            self.description = f"LocalCluster ({n_workers} workers, 1 thread each)"
        else:
            try:
                self.client = Client(scheduler, timeout=connect_timeout)
            except (OSError, TimeoutError) as exc:
                raise DaskError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from None
            self.description = f"Dask cluster {scheduler}"
        self._prefix = f"ctplugin-replay-{uuid.uuid4().hex[:8]}"
        self._futures = as_completed(with_results=False)
        self._ids: dict[Any, int] = {}  # future key → task id
        self._live: dict[Any, Any] = {}  # future key → future
        try:
            self._prepare_workers(scheduler, warmup, connect_timeout)
        except BaseException:
            self.close()
            raise
        threads = sum(self.client.nthreads().values()) or n_workers
        self.n_workers = len(self.client.nthreads()) or n_workers
        self.max_in_flight = max_in_flight or 3 * threads

    def _prepare_workers(self, scheduler: str | None, warmup: str | None,
                         connect_timeout: str) -> None:
        """Wait for a worker (an existing cluster may have none yet), then prepare every
        connected one (``_prepare_worker``); workers joining later prepare on their first
        task. A worker that cannot import this package is named here, before any block."""
        from dask.utils import parse_timedelta

        if scheduler is not None and not self.client.nthreads():
            try:
                self.client.wait_for_workers(1, timeout=parse_timedelta(connect_timeout))
            except TimeoutError:
                raise DaskError(f"the Dask scheduler {scheduler} has no workers (none joined "
                                f"within {connect_timeout})") from None
        try:
            self.client.run(_prepare_worker, self.target, warmup, self._cluster is not None)
        except Exception as exc:
            raise DaskError(f"the Dask workers cannot run {self.target}: "
                            f"{type(exc).__name__}: {exc} (every worker needs this package "
                            "installed, the same version as the driver)") from None

    @property
    def in_flight(self) -> int:
        return len(self._ids)

    def submit(self, task_id: int, payload: bytes) -> None:
        """Submit a task; blocks (keeping finished results for ``completed``) while the
        cluster holds ``max_in_flight`` unfinished futures."""
        from distributed import wait

        while True:
            running = [f for f in self._live.values() if not f.done()]
            if len(running) < self.max_in_flight:
                break
            wait(running, return_when="FIRST_COMPLETED")
        key = f"{self._prefix}-{task_id}"
        future = self.client.submit(_run_task, self.target, payload, key=key, pure=False,
                                    retries=self.retries)
        self._ids[future.key] = task_id
        self._live[future.key] = future
        self._futures.add(future)

    def completed(self, block: bool = False) -> Iterator[TaskResult]:
        if block and self._ids and not self._futures.has_ready():
            batch = [next(self._futures)]
            batch += self._futures.next_batch(block=False)
        else:
            batch = self._futures.next_batch(block=False) if self._futures.has_ready() else []
        for future in batch:
            yield self._result(future)

    def drain(self) -> Iterator[TaskResult]:
        while self._ids:
            yield from self.completed(block=True)

    def _result(self, future: Any) -> TaskResult:
        from distributed.scheduler import KilledWorker

        task_id = self._ids.pop(future.key)
        self._live.pop(future.key, None)
        try:
            result, cpu = future.result()
        except KilledWorker as exc:
            raise DaskError(
                f"task {task_id} was lost: every worker that ran it died (KilledWorker after "
                f"distributed.scheduler.allowed-failures retries: {exc}); its proofs were not "
                "verified, so the replay stops here") from None
        except (OSError, TimeoutError) as exc:
            raise DaskError(f"task {task_id}: lost contact with the cluster: {exc}") from None
        except Exception as exc:
            raise DaskError(f"task {task_id} raised on its worker: "
                            f"{type(exc).__name__}: {exc}") from None
        finally:
            future.release()
        return TaskResult(task_id, result, cpu, 1)

    def close(self) -> None:
        for future in self._live.values():
            future.cancel()
        self._futures.clear()
        self._ids.clear()
        self._live.clear()
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

