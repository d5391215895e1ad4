"""The node's own chain listener: the mempool sequence number and the tip-change condition.

Registered first, so by the time ZMQ and the wallets hear of a change the sequence number
already counts it (bitcoind's mempool sequence: one step per added or removed transaction).
"""

from __future__ import annotations

import threading

from ctplugin.elements import Block, Transaction
from validator import ChainListener


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
