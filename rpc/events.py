"""The node's chain listeners of its own: the mempool sequence number and the tip-change
condition (``NodeEvents``), and the queue that delivers chain events to the wallets on a thread
of their own (``QueuedListener``).

``NodeEvents`` is registered first, so by the time ZMQ and the wallets hear of a change the
sequence number already counts it (bitcoind's mempool sequence: one step per added or removed
transaction).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Sequence

from ctplugin.elements import Block, Transaction
from validator import ChainListener

log = logging.getLogger("ctplugin.rpc")


class NodeEvents(ChainListener):
    def __init__(self, tip_changed: threading.Condition) -> None:
        self.tip_changed = tip_changed
        self.mempool_sequence = 0

    def _tip_moved(self) -> None:
        with self.tip_changed:
            self.tip_changed.notify_all()

    def block_connected(self, block: Block, height: int) -> None:
        self._tip_moved()

    def block_disconnected(self, block: Block, height: int) -> None:
        self._tip_moved()

    def transaction_added(self, tx: Transaction) -> None:
        self.mempool_sequence += 1

    def transaction_removed(self, tx: Transaction, reason: str) -> None:
        self.mempool_sequence += 1

    def mempool_removed_for_block(self, txs: Sequence[Transaction], height: int) -> None:
        self.mempool_sequence += len(txs)  # Core counts every removal, reported or not


class QueuedListener(ChainListener):
    """Chain events for ``target`` delivered on a thread of their own, in order: Core's
    validation-interface queue (``validationinterface.cpp``: the wallets hear of a new block or
    pool transaction on the scheduler thread, after the call that caused it has returned).

    So ``sendtoaddress`` answers once its transaction is in the mempool, and the other wallets'
    work on it (rewinding the outputs they own, writing it down) runs beside the next request
    instead of inside this one. ``sync`` is Core's ``SyncWithValidationInterfaceQueue``: every
    wallet request waits for the events queued before it (``NodeContext.execute``), so a wallet
    call never sees the chain ahead of its wallet; stricter than Core, whose wallet calls wait
    only when the tip moved.

    Each event runs under ``lock`` (the node's chain lock), as the listener ran when it was
    called directly: the wallets' code expects the chain to stand still while they read it.
    ``sync`` must therefore never be called with that lock held."""

    def __init__(self, target: ChainListener, lock: threading.RLock) -> None:
        self.target = target
        self._lock = lock
        self._events: deque[tuple[str, tuple[object, ...]]] = deque()
        self._changed = threading.Condition()
        self._queued = 0
        self._done = 0
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="ctplugin-notify", daemon=True)
        self._thread.start()

    def _put(self, method: str, *args: object) -> None:
        with self._changed:
            if self._closed:
                log.warning("chain event %s after the wallets' queue closed: dropped", method)
                return
            self._events.append((method, args))
            self._queued += 1
            self._changed.notify_all()

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._events and not self._closed:
                    self._changed.wait()
                if not self._events:
                    return
                method, args = self._events.popleft()
            try:
                with self._lock:
                    getattr(self.target, method)(*args)
            except Exception:  # a listener never breaks the node (Node._emit's rule)
                log.exception("chain listener %r failed in %s", self.target, method)
            with self._changed:
                self._done += 1
                self._changed.notify_all()

    def sync(self) -> None:
        """Wait until every event queued before this call has been delivered."""
        with self._changed:
            target = self._queued
            while self._done < target and self._thread.is_alive():
                self._changed.wait()

    def close(self) -> None:
        """Deliver what is queued, then stop the thread (later events are dropped)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        self._thread.join()

    def block_connected(self, block: Block, height: int) -> None:
        self._put("block_connected", block, height)

    def block_disconnected(self, block: Block, height: int) -> None:
        self._put("block_disconnected", block, height)

    def transaction_added(self, tx: Transaction) -> None:
        self._put("transaction_added", tx)

    def transaction_removed(self, tx: Transaction, reason: str) -> None:
        self._put("transaction_removed", tx, reason)

    def mempool_removed_for_block(self, txs: Sequence[Transaction], height: int) -> None:
        self._put("mempool_removed_for_block", txs, height)
