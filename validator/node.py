"""A validating node's state: data directory (chainstate + proof cache), block validator and
mempool, tied together.

``Node.open(path, genesis, params)`` opens (or creates) the data directory — a second opener
of the same directory gets ``DataDirLockedError`` — and, on an empty chainstate, applies the
genesis block. After a crash the chainstate is at the last fully written block (one atomic batch
per block), so reopening is the whole recovery; the mempool is memory only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ctplugin.closing import Closeable
from ctplugin.elements import Block, Transaction, parse_transaction
from ctplugin.elements.chainparams import ChainParams
from validator.block import BlockValidator, ConnectReport, connect_genesis
from validator.mempool import Mempool, MempoolEntry
from validator.store import DEFAULT_MAX_ENTRIES, BlockRef, CacheStats, DataDir, StoreError


@dataclass(frozen=True, slots=True)
class NodeStats:
    tip: BlockRef | None
    mempool_size: int
    cache: CacheStats


class Node(Closeable):
    """Chainstate + proof cache + mempool of one data directory."""

    def __init__(self, data: DataDir, params: ChainParams, use_cache: bool = True) -> None:
        self.data = data
        self.params = params
        cache = data.proof_cache if use_cache else None
        self.mempool = Mempool(data.chainstate, cache, params)
        self.validator = BlockValidator(data.chainstate, cache, params,
                                        known=self.mempool.known_transaction)

    @classmethod
    def open(cls, path: str | os.PathLike[str], genesis: Block, params: ChainParams, *,
             sync: bool = True, cache_max_entries: int = DEFAULT_MAX_ENTRIES,
             use_cache: bool = True) -> Node:
        data = DataDir.open(path, sync=sync, cache_max_entries=cache_max_entries)
        try:
            tip = data.chainstate.best_block()
            if tip is None:
                connect_genesis(data.chainstate, genesis)
            elif tip.height == 0 and tip.hash != genesis.hash:
                raise StoreError(f"data directory {os.fspath(path)} belongs to another chain")
            return cls(data, params, use_cache)
        except BaseException:
            data.close()
            raise

    # --- operations ------------------------------------------------------------------------

    @property
    def tip(self) -> BlockRef | None:
        return self.data.chainstate.best_block()

    def submit_block(self, data: bytes | Block) -> ConnectReport:
        """Validate and connect a block on the tip; the mempool drops what it confirms."""
        report = self.validator.connect(data)
        assert report.block is not None
        self.mempool.remove_for_block(report.block)
        return report

    def accept_transaction(self, data: bytes | Transaction) -> MempoolEntry:
        tx = data if isinstance(data, Transaction) else parse_transaction(data)
        return self.mempool.accept(tx)

    def disconnect_tip(self) -> BlockRef:
        """Undo the tip block. The mempool is cleared: its transactions were checked against
        the old tip (a node would re-submit them; ours are test and demo data)."""
        ref = self.validator.disconnect_tip()
        self.mempool.remove(list(self.mempool.entries))
        return ref

    def stats(self) -> NodeStats:
        return NodeStats(self.tip, len(self.mempool), self.data.proof_cache.stats())

    # --- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        self.data.close()

