"""``--txindex``: txid → (block hash, position) for every transaction of the active chain.

Its own LevelDB (``DATADIR/indexes/txindex``), kept by listening to the chain: a connected block
adds its transactions, a disconnected one removes them, each block in one write batch together
with the index's best block (Core's ``BaseIndex`` locator). At start-up the index catches up
with the chain from that best block: blocks of a branch that is no longer active are undone
back to the fork point, then the active chain is indexed forward, so a crash at any moment
leaves an index that start-up repairs.
"""

from __future__ import annotations

import logging
import os
import struct

import plyvel

from ctplugin.closing import Closeable
from ctplugin.elements import Block, parse_block
from validator import ChainListener, Node

log = logging.getLogger("ctplugin.rpc")

_BEST = b"B"
_TX = b"t"
_POS = struct.Struct("<I")


class TxIndex(ChainListener, Closeable):
    def __init__(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)
        self.db = plyvel.DB(path, create_if_missing=True)

    def close(self) -> None:
        if not self.db.closed:
            self.db.close()

    def best_block(self) -> bytes | None:
        return self.db.get(_BEST)

    def lookup(self, txid: bytes) -> tuple[bytes, int] | None:
        value = self.db.get(_TX + txid)
        if value is None or len(value) != 36:
            return None
        return value[:32], _POS.unpack(value[32:])[0]

    def block_connected(self, block: Block, height: int) -> None:
        with self.db.write_batch() as batch:
            for position, tx in enumerate(block.transactions):
                batch.put(_TX + tx.txid, block.hash + _POS.pack(position))
            batch.put(_BEST, block.hash)

    def block_disconnected(self, block: Block, height: int) -> None:
        with self.db.write_batch() as batch:
            for tx in block.transactions:
                value = self.db.get(_TX + tx.txid)
                if value is not None and value[:32] == block.hash:
                    batch.delete(_TX + tx.txid)
            batch.put(_BEST, block.header.prev_hash)

    def catch_up(self, node: Node) -> int:
        """Bring the index to the node's tip (module docstring); returns blocks indexed."""
        best = self.best_block()
        info = node.block_info(best) if best is not None else None
        while info is not None and not info.in_active_chain:  # undo a branch that lost
            block = parse_block(node.read_block(info.hash))
            self.block_disconnected(block, info.height)
            info = node.block_info(info.prev_hash)
        start = info.height + 1 if info is not None else 0
        tip = node.tip
        for height in range(start, tip.height + 1):
            block_hash = node.block_hash(height)
            assert block_hash is not None
            self.block_connected(parse_block(node.read_block(block_hash)), height)
        if tip.height + 1 > start:
            log.info("txindex: indexed %d blocks", tip.height + 1 - start)
        return max(0, tip.height + 1 - start)
