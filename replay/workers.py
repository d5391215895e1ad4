"""A pool of worker processes for stateless proof work (docs/design.md "Data flow", scale-out).

The driver submits *tasks*: one contiguous ``bytes`` buffer each (every proof of one or more
blocks, packed), sent over a pipe as a single frame — never one message per proof. A worker
runs the pool's task function on it and sends back a small verdict buffer.

- Bounded: at most ``max_in_flight`` tasks are submitted and unfinished; ``submit`` blocks
  (collecting finished tasks) while the pool is full — back-pressure, so the driver never runs
  more than that far ahead and memory stays bounded.
- Results come back in completion order (``completed``); task ids tell the driver which.
- A worker that dies (killed, crashed, out of memory) is replaced, and the task it held is
  retried on a fresh worker, up to ``max_attempts`` times; after that ``WorkerError`` names the
  task and the exit codes. A task function that *raises* is a bug, not a verdict: it surfaces as
  ``WorkerError`` at once (no retry: it would raise again).
- Workers are started with the ``forkserver`` method (no fork of a threaded driver) and import
  the task function by name (``"module:function"``), so they share no state with the driver:
  the chainstate and the proof cache stay the driver's alone.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import multiprocessing
import os
import signal
import struct
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, Protocol

from ctplugin.closing import Closeable
from ctplugin.errors import CtpluginError

TaskFunction = Callable[[bytes], bytes]

_HEAD = struct.Struct("<Q")  # task id
_REPLY = struct.Struct("<QBd")  # task id, status, cpu seconds
_OK, _RAISED = 0, 1
_STOP = b""
_log = logging.getLogger(__name__)


class WorkerError(CtpluginError):
    """The pool cannot finish a task (its worker keeps dying, or the task function raised)."""


def resolve_target(target: str) -> TaskFunction:
    """``"package.module:function"`` → the function."""
    module_name, _, name = target.partition(":")
    if not module_name or not name:
        raise ValueError(f"task target {target!r} is not 'module:function'")
    fn = getattr(importlib.import_module(module_name), name)
    if not callable(fn):
        raise ValueError(f"task target {target!r} is not callable")
    return fn


def _worker_main(conn: Connection, target: str, warmup: str | None) -> None:
    """A worker's loop: receive a task frame, run the function, send the verdict frame."""
    # Ctrl-C reaches the terminal's whole process group: the parent handles it (one line,
    # status 130) and stops its workers, which must not each print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    fn = resolve_target(target)
    if warmup:
        resolve_target(warmup)(b"")
    conn.send_bytes(b"ready")
    while True:
        try:
            frame = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if frame == _STOP:
            return
        (task_id,) = _HEAD.unpack_from(frame)
        cpu = time.process_time()
        try:
            result = fn(frame[_HEAD.size:])
            status = _OK
        except Exception:  # reported to the driver, which raises WorkerError
            result = traceback.format_exc().encode()
            status = _RAISED
        conn.send_bytes(_REPLY.pack(task_id, status, time.process_time() - cpu) + result)


@dataclass(slots=True)
class _Task:
    task_id: int
    payload: bytes
    attempts: int = 0
    exit_codes: list[int | None] = field(default_factory=list)


@dataclass(slots=True)
class _Worker:
    process: BaseProcess
    conn: Connection
    task: _Task | None = None


@dataclass(frozen=True, slots=True)
class TaskResult:
    task_id: int
    result: bytes
    cpu_seconds: float
    attempts: int


class TaskPool(Protocol):
    """What the workers and dask modes drive: ``WorkerPool`` and ``replay.cluster.DaskPool``."""

    @property
    def in_flight(self) -> int: ...

    def submit(self, task_id: int, payload: bytes) -> None: ...

    def completed(self, block: bool = False) -> Iterator[TaskResult]: ...

    def drain(self) -> Iterator[TaskResult]: ...

    def close(self) -> None: ...


class WorkerPool(Closeable):
    """``n_workers`` processes running ``target`` on task buffers (see the module docstring)."""

    def __init__(self, n_workers: int, target: str, *, max_in_flight: int | None = None,
                 max_attempts: int = 3, warmup: str | None = None,
                 start_method: str = "forkserver") -> None:
        if n_workers < 1:
            raise ValueError("a pool needs at least one worker")
        resolve_target(target)  # fail early, in the driver, on a bad name
        self.target = target
        self.warmup = warmup
        self.n_workers = n_workers
        self.max_in_flight = max_in_flight or 2 * n_workers
        self.max_attempts = max_attempts
        self.replaced = 0  # workers that died and were replaced
        self.retried = 0  # task attempts beyond the first
        self._ctx: Any = multiprocessing.get_context(start_method)
        self._workers: list[_Worker] = []
        self._queue: deque[_Task] = deque()  # submitted, not yet on a worker
        self._done: deque[TaskResult] = deque()
        self._in_flight = 0
        try:
            for _ in range(n_workers):
                self._workers.append(self._start())
            for index, worker in enumerate(self._workers):  # started together, greeted in turn
                code = self._await_ready(worker)
                if code is not None:
                    self._workers[index] = self._start_ready([code])
        except BaseException:
            self.close()
            raise

    # --- workers -----------------------------------------------------------------------------

    def _start(self) -> _Worker:
        parent, child = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(target=_worker_main, args=(child, self.target, self.warmup),
                                    name="ctplugin-replay-worker", daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent)

    def _await_ready(self, worker: _Worker) -> int | None:
        """Wait for a started worker's greeting: None once it is ready, or its exit code if it
        died first (killed, crashed, or its task function does not import)."""
        try:
            ready = worker.conn.recv_bytes()
        except (EOFError, OSError):
            worker.process.join(5)
            with contextlib.suppress(OSError):
                worker.conn.close()
            return worker.process.exitcode
        if ready != b"ready":
            raise WorkerError("a worker process sent an unexpected greeting")
        return None

    def _start_ready(self, codes: list[int | None] | None = None) -> _Worker:
        """A ready worker: one that dies before its greeting is a death like any other
        (replaced, logged), up to ``max_attempts`` deaths in a row (``codes``: the deaths so
        far), then ``WorkerError``."""
        codes = [] if codes is None else codes
        while True:
            if codes:
                self.replaced += 1
                if len(codes) >= self.max_attempts:
                    raise WorkerError(f"worker processes died before they were ready "
                                      f"{len(codes)} times in a row (exit codes {codes})")
                _log.warning("a worker process died while starting (%s); starting another",
                             _death(codes[-1]))
            worker = self._start()
            code = self._await_ready(worker)
            if code is None:
                return worker
            codes.append(code)

    def worker_pids(self) -> list[int]:
        return [w.process.pid for w in self._workers if w.process.pid is not None]

    def busy_pids(self) -> list[int]:
        """Pids of workers currently holding a task."""
        return [w.process.pid for w in self._workers
                if w.task is not None and w.process.pid is not None]

    # --- submitting and collecting -------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Tasks submitted and not yet handed out by ``completed``."""
        return self._in_flight

    @property
    def unfinished(self) -> int:
        """Tasks submitted and not finished (what ``max_in_flight`` bounds)."""
        return self._in_flight - len(self._done)

    def submit(self, task_id: int, payload: bytes) -> None:
        """Queue a task; blocks while ``max_in_flight`` tasks are unfinished (finished ones are
        kept for ``completed``)."""
        while self.unfinished >= self.max_in_flight:
            self._poll(block=True)
        self._queue.append(_Task(task_id, payload))
        self._in_flight += 1
        self._dispatch()

    def completed(self, block: bool = False) -> Iterator[TaskResult]:
        """Finished tasks, in completion order. ``block``: wait for at least one if none is
        ready (and any task is in flight)."""
        if block and not self._done and self._in_flight:
            while not self._done:
                self._poll(block=True)
        else:
            self._poll(block=False)
        while self._done:
            result = self._done.popleft()
            self._in_flight -= 1
            yield result

    def drain(self) -> Iterator[TaskResult]:
        """Every unfinished task, as each finishes."""
        while self._in_flight:
            yield from self.completed(block=True)

    def _dispatch(self) -> None:
        for worker in self._workers:
            if not self._queue:
                return
            if worker.task is None:
                task = self._queue.popleft()
                task.attempts += 1
                if task.attempts > 1:
                    self.retried += 1
                worker.task = task
                # If it died, _poll notices its sentinel and retries the task.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    worker.conn.send_bytes(_HEAD.pack(task.task_id) + task.payload)

    def _poll(self, block: bool) -> None:
        busy = [w for w in self._workers if w.task is not None]
        if not busy:
            self._dispatch()
            return
        waitables: list[object] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        ready = wait(waitables, timeout=None if block else 0)  # type: ignore[arg-type]
        for worker in busy:
            if worker.conn in ready:
                try:
                    frame = worker.conn.recv_bytes()
                except (EOFError, OSError):
                    self._replace(worker)
                    continue
                self._finish(worker, frame)
            elif worker.process.sentinel in ready:
                self._replace(worker)
        self._dispatch()

    def _finish(self, worker: _Worker, frame: bytes) -> None:
        task = worker.task
        assert task is not None
        task_id, status, cpu = _REPLY.unpack_from(frame)
        if task_id != task.task_id:
            raise WorkerError(f"worker answered task {task_id} while holding {task.task_id}")
        worker.task = None
        body = frame[_REPLY.size:]
        if status == _RAISED:
            raise WorkerError(f"task {task_id} raised in its worker:\n{body.decode()}")
        self._done.append(TaskResult(task_id, body, cpu, task.attempts))

    def _replace(self, worker: _Worker) -> None:
        """A worker died: start another in its place and put its task back (at the front, so
        the oldest work is redone first), unless it has used up its attempts."""
        task = worker.task
        worker.task = None
        worker.process.join(5)
        code = worker.process.exitcode
        with contextlib.suppress(OSError):
            worker.conn.close()
        self.replaced += 1
        if task is not None:
            task.exit_codes.append(code)
            if task.attempts >= self.max_attempts:
                raise WorkerError(f"task {task.task_id} failed: its worker died "
                                  f"{task.attempts} times (exit codes {task.exit_codes})")
            _log.warning("worker %s died (%s); replaced, task %d retried (attempt %d/%d)",
                         worker.process.pid, _death(code), task.task_id, task.attempts + 1,
                         self.max_attempts)
            self._queue.appendleft(task)
        else:
            _log.warning("worker %s died (%s); replaced", worker.process.pid, _death(code))
        self._workers[self._workers.index(worker)] = self._start_ready()

    # --- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """Stop every worker (politely, then by force) and forget queued tasks."""
        for worker in self._workers:
            with contextlib.suppress(OSError):
                worker.conn.send_bytes(_STOP)
        deadline = time.monotonic() + 5
        for worker in self._workers:
            worker.process.join(max(deadline - time.monotonic(), 0))
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(5)
            with contextlib.suppress(OSError):
                worker.conn.close()
        self._workers.clear()
        self._queue.clear()
        self._done.clear()
        self._in_flight = 0



def _death(code: int | None) -> str:
    """How a worker process ended, for messages."""
    if code is not None and code < 0:
        return f"signal {-code}"
    return f"exit code {code}"


def default_workers() -> int:
    """One worker per core the process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return max(os.cpu_count() or 1, 1)
