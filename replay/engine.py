"""The replay driver's one view of the validator (its public surface only) and of the data
directory it owns.

- ``Engine.open(datadir)``: a ``validator.Node`` on our regtest chain, proof cache off (a replay
  measures verification; design.md "Proof caches"), flushes without fsync (as Core: a killed
  process loses nothing that was flushed or indexed).
- ``connect`` (a block, all stages: ``Node.submit_block``), ``prepare`` (stages 1–4 → the
  block's ``ProofWork``, nothing verified or written: ``Node.prepare_block``) and ``commit``
  (stage 6: ``Node.commit_block``), ``tip``, ``utxo_summary`` (``Node.utxo_stats``). Stage 5 is
  ``validator.verify`` / ``verify_blocks`` on the ``ProofWork`` — wherever the mode runs it.
- Deferred modes (window, workers, dask) commit blocks before their proofs are verified with
  ``commit(prepared, verified=False)``: the node keeps such a block *pending* — connected in
  memory, but neither indexed nor flushed — until ``mark_verified``; ``reject`` takes a block
  whose proofs failed back out, ``recover`` (``Node.abort_pending``) every pending block. A
  replay killed at any moment therefore never leaves an unverified block behind: it resumes
  from the last verified block.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from ctplugin.closing import Closeable
from ctplugin.elements import Block
from ctplugin.elements.chainparams import ChainParams
from validator import (
    BlockRef,
    ConnectReport,
    Node,
    PreparedBlock,
    ProofWork,
    StageTimer,
)

LEGACY_MARKER = "replay-verified"  # written by replays before Node.commit_block(verified=)


@dataclass(slots=True)
class Prepared:
    """A block after stages 1–4: its proof work and what committing it needs."""

    block: Block
    work: ProofWork
    items: dict[str, int]  # items per family ("range", "surjection", ...)
    timer: StageTimer
    inputs: PreparedBlock  # the node's prepared block, handed back to ``commit``

    @property
    def n_range(self) -> int:
        """Range proofs of both kinds (families "range": Bulletproofs, "borromean")."""
        return self.items.get("range", 0) + self.items.get("borromean", 0)

    @property
    def n_surjection(self) -> int:
        return self.items.get("surjection", 0)

    @property
    def n_proofs(self) -> int:
        return sum(self.items.values())


@dataclass(frozen=True, slots=True)
class UtxoSummary:
    count: int
    hash_hex: str


class Engine(Closeable):
    """One open data directory, driven by the replay (see the module docstring)."""

    def __init__(self, node: Node, datadir: Path) -> None:
        self.node = node
        self.datadir = datadir

    @classmethod
    def open(cls, datadir: str | os.PathLike[str], params: ChainParams) -> Engine:
        """``params``: the chain the blocks belong to (``regtest.params.select_chain``); a
        data directory made for another chain is refused (``Node.open``)."""
        node = Node.open(datadir, params, sync=False, use_cache=False)
        return cls(node, Path(datadir))

    @property
    def tip(self) -> BlockRef:
        tip = self.node.tip
        assert tip is not None  # Node.open connects genesis into an empty chainstate
        return tip

    def block_hash(self, height: int) -> bytes | None:
        """The hash of this data directory's block at ``height`` (None above its tip)."""
        return self.node.block_hash(height)

    def chain_transactions(self) -> int:
        """Transactions in the active chain up to the tip (Core's nChainTx)."""
        node = self.node
        total = 0
        for height in range(self.tip.height + 1):
            block_hash = node.block_hash(height)
            info = node.block_info(block_hash) if block_hash is not None else None
            total += info.n_tx if info is not None else 0
        return total

    def coins_cache_mib(self) -> float:
        """The coins cache's estimated memory use (Core's UpdateTip ``cache=``)."""
        return self.node.stats().coins_cache_bytes / (1 << 20)

    def connect(self, raw: bytes) -> ConnectReport:
        """Every stage of one block, verified before it is connected (block mode);
        ``ValidationError`` / ``ParseError`` for a rejected block."""
        return self.node.submit_block(raw).connected()

    def prepare(self, raw: bytes) -> Prepared:
        """Stages 1–4 of ``raw`` on the current tip; ``ValidationError`` / ``ParseError`` as
        connect would raise them. Nothing is verified or written."""
        prepared = self.node.prepare_block(raw)
        return Prepared(prepared.block, prepared.work, prepared.items, prepared.timer,
                        prepared)

    def commit(self, prepared: Prepared, *, verified: bool = True) -> None:
        """Stage 6 (it must extend the tip); ``verified=False``: pending (module docstring)."""
        self.node.commit_block(prepared.inputs, verified=verified)

    def mark_verified(self, block_hash: bytes) -> None:
        """The pending blocks up to ``block_hash`` had their proofs verified."""
        self.node.mark_verified(block_hash)

    def reject(self, block_hash: bytes) -> None:
        """A pending block's proofs failed: it and the pending blocks above it are taken out
        (the ones below stay pending)."""
        self.node.reject_block(block_hash)

    def recover(self) -> int:
        """Take out every pending block (a failure or an interruption left them unverified);
        returns how many. Also removes the verified-marker file of older replays."""
        with contextlib.suppress(FileNotFoundError):
            (self.datadir / LEGACY_MARKER).unlink()
        return self.node.abort_pending()

    def utxo_summary(self) -> UtxoSummary:
        """Count and hash of the whole UTXO set (``Node.utxo_stats``: identical sets hash the
        same whatever the history), the hash in Core's uint256 display order, as the node's
        ``gettxoutsetinfo`` prints it, so the two compare by eye."""
        stats = self.node.utxo_stats()
        return UtxoSummary(stats.txouts, stats.utxo_set_hash[::-1].hex())

    # --- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        self.node.close()

