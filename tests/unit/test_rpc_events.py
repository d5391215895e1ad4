"""The wallets' event queue (``rpc.events.QueuedListener``): Core's validation-interface queue.

Events reach the target on the queue's own thread, in the order the node emitted them, each
under the chain lock; ``sync`` returns only once everything queued before it was delivered;
``close`` delivers what is left; a failing listener is logged and the queue goes on.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from rpc.events import QueuedListener
from validator import ChainListener


class Recorder(ChainListener):
    def __init__(self, lock: threading.RLock, delay: float = 0.0) -> None:
        self.lock = lock
        self.delay = delay
        self.seen: list[tuple[str, Any]] = []
        self.threads: set[str] = set()
        self.held: list[bool] = []
        self.fail_on: object = None

    def _record(self, method: str, arg: Any) -> None:
        time.sleep(self.delay)
        self.threads.add(threading.current_thread().name)
        # RLock has no public "held by me" test: a non-blocking acquire from another thread
        # would fail, one from this thread succeeds because it is re-entrant
        probe: list[bool] = []
        other = threading.Thread(target=lambda: probe.append(self.lock.acquire(blocking=False)))
        other.start()
        other.join()
        if probe[0]:
            self.lock.release()
        self.held.append(not probe[0])
        if arg is self.fail_on:
            raise RuntimeError("listener bug")
        self.seen.append((method, arg))

    def block_connected(self, block: Any, height: int) -> None:
        self._record("block_connected", height)

    def transaction_added(self, tx: Any) -> None:
        self._record("transaction_added", tx)

    def transaction_removed(self, tx: Any, reason: str) -> None:
        self._record("transaction_removed", (tx, reason))


def test_events_arrive_in_order_on_the_queue_thread_under_the_chain_lock() -> None:
    lock = threading.RLock()
    target = Recorder(lock, delay=0.01)
    queue = QueuedListener(target, lock)
    try:
        queue.transaction_added("a")
        queue.block_connected("block", 5)  # type: ignore[arg-type]
        queue.transaction_removed("a", "conflict")  # type: ignore[arg-type]
        assert len(target.seen) < 3  # the caller did not wait for the listener
        queue.sync()
        assert target.seen == [("transaction_added", "a"), ("block_connected", 5),
                               ("transaction_removed", ("a", "conflict"))]
        assert target.threads == {"ctplugin-notify"}
        assert all(target.held)
    finally:
        queue.close()


def test_sync_waits_for_what_was_queued_before_it() -> None:
    lock = threading.RLock()
    target = Recorder(lock, delay=0.05)
    queue = QueuedListener(target, lock)
    try:
        for n in range(4):
            queue.transaction_added(n)
        queue.sync()
        assert [arg for _, arg in target.seen] == [0, 1, 2, 3]
        queue.sync()  # nothing queued: returns at once
    finally:
        queue.close()


def test_a_failing_listener_is_logged_and_the_queue_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    lock = threading.RLock()
    target = Recorder(lock)
    target.fail_on = "bad"
    queue = QueuedListener(target, lock)
    try:
        queue.transaction_added("bad")
        queue.transaction_added("good")
        queue.sync()
    finally:
        queue.close()
    assert target.seen == [("transaction_added", "good")]
    assert "failed in transaction_added" in caplog.text


def test_close_delivers_what_is_queued_then_drops_later_events() -> None:
    lock = threading.RLock()
    target = Recorder(lock, delay=0.02)
    queue = QueuedListener(target, lock)
    queue.transaction_added("last")
    queue.close()
    assert target.seen == [("transaction_added", "last")]
    queue.transaction_added("late")
    queue.sync()  # the thread is gone: no wait
    assert target.seen == [("transaction_added", "last")]
