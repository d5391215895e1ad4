"""The replay worker pool: one buffer per task, bounded in-flight tasks, dead workers replaced
and their tasks retried, task-function bugs surfaced."""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import time
from pathlib import Path

import pytest

from replay.workers import WorkerError, WorkerPool, resolve_target
from tests import replay_faults

FAULTS = "tests.replay_faults"


def test_results_come_back_for_every_task() -> None:
    payloads = {i: os.urandom(1000 + i) for i in range(12)}
    with WorkerPool(2, f"{FAULTS}:digest", max_in_flight=3) as pool:
        got = {}
        for task_id, payload in payloads.items():
            pool.submit(task_id, payload)
            got.update((r.task_id, r.result) for r in pool.completed())
        got.update((r.task_id, r.result) for r in pool.drain())
        assert pool.in_flight == 0 and pool.replaced == 0
    assert got == {i: hashlib.sha256(p).digest() for i, p in payloads.items()}


def test_submit_applies_back_pressure() -> None:
    with WorkerPool(2, f"{FAULTS}:slow_digest", max_in_flight=2) as pool:
        seen = 0
        for task_id in range(6):
            pool.submit(task_id, bytes([5]))
            assert pool.unfinished <= 2
            seen += sum(1 for _ in pool.completed())
        seen += sum(1 for _ in pool.drain())
    assert seen == 6


def test_a_killed_worker_is_replaced_and_its_task_retried(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="replay.workers"), \
            WorkerPool(2, f"{FAULTS}:slow_digest", max_in_flight=4) as pool:
        for task_id in range(4):
            pool.submit(task_id, bytes([30, task_id]))
        deadline = time.monotonic() + 10
        while not pool.busy_pids() and time.monotonic() < deadline:
            time.sleep(0.01)
        victim = pool.busy_pids()[0]
        os.kill(victim, signal.SIGKILL)
        results = {r.task_id: r for r in pool.drain()}
        assert victim not in pool.worker_pids() and len(pool.worker_pids()) == 2
        assert pool.replaced == 1 and pool.retried == 1
    assert sorted(results) == [0, 1, 2, 3]
    assert sorted(r.attempts for r in results.values()) == [1, 1, 1, 2]
    assert f"worker {victim} died (signal 9); replaced, task " in caplog.text
    assert "retried (attempt 2/3)" in caplog.text
    assert all(r.result == hashlib.sha256(bytes([30, r.task_id])).digest()
               for r in results.values())


def test_a_worker_that_dies_while_starting_is_replaced(
        caplog: pytest.LogCaptureFixture) -> None:
    replay_faults.START_MARKER.unlink(missing_ok=True)
    try:
        with caplog.at_level(logging.WARNING, logger="replay.workers"), \
                WorkerPool(2, f"{FAULTS}:digest", warmup=f"{FAULTS}:die_once_at_start") as pool:
            assert pool.replaced == 1 and len(pool.worker_pids()) == 2
            pool.submit(1, b"abc")
            assert [r.result for r in pool.drain()] == [hashlib.sha256(b"abc").digest()]
    finally:
        replay_faults.START_MARKER.unlink(missing_ok=True)
    assert "a worker process died while starting (exit code 11); starting another" in \
        caplog.text


def test_workers_that_always_die_while_starting_fail_clearly() -> None:
    with pytest.raises(WorkerError, match=r"worker processes died before they were ready 2 "
                                          r"times in a row \(exit codes \[12, 12\]\)"):
        WorkerPool(1, f"{FAULTS}:digest", warmup=f"{FAULTS}:always_die_at_start",
                   max_attempts=2)


def test_a_worker_that_dies_on_a_task_once_gets_it_again(tmp_path: Path) -> None:
    marker = tmp_path / "died"
    with WorkerPool(1, f"{FAULTS}:die_once") as pool:
        pool.submit(1, str(marker).encode())
        (result,) = list(pool.drain())
    assert marker.exists() and result.attempts == 2 and pool.replaced == 1


def test_a_task_that_always_kills_its_worker_fails_clearly() -> None:
    with WorkerPool(1, f"{FAULTS}:always_die", max_attempts=2) as pool:
        pool.submit(42, b"x")
        with pytest.raises(WorkerError, match=r"task 42 failed: its worker died 2 times "
                                              r"\(exit codes \[9, 9\]\)"):
            list(pool.drain())


def test_a_raising_task_function_is_a_bug_not_a_verdict() -> None:
    with WorkerPool(1, f"{FAULTS}:raises") as pool:
        pool.submit(3, b"")
        with pytest.raises(WorkerError, match="RuntimeError: task function bug"):
            list(pool.drain())
        assert pool.replaced == 0


def test_bad_targets_fail_in_the_driver() -> None:
    with pytest.raises(ValueError):
        resolve_target("no_colon")
    with pytest.raises(ModuleNotFoundError):
        WorkerPool(1, "tests.no_such_module:fn")
