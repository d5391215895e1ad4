"""The replay's data directory: a ``validator.Node`` opened the way a replay needs it, plus
the few summaries the driver prints.

- ``Engine.open(datadir, params)``: a ``validator.Node`` on the chain ``params``, proof cache
  off (a replay measures verification; docs/design.md "Proof caches"), flushes without fsync
  (as Core: a killed process loses nothing that was flushed or indexed). The modes drive
  ``engine.node`` directly: ``submit_block`` (block mode), ``prepare_block`` → the one
  ``PreparedBlock`` (stages 1–4; its ``work`` is stage 5, verified wherever the mode runs it)
  → ``commit_block`` (stage 6), ``mark_verified`` / ``reject_block``.
- Deferred modes (window, workers, dask) commit blocks before their proofs are verified with
  ``commit_block(prepared, verified=False)``: the node keeps such a block *pending* —
  connected in memory, but neither indexed nor flushed — until ``mark_verified``;
  ``reject_block`` takes a block whose proofs failed back out, ``recover`` every pending
  block. A replay killed at any moment therefore never leaves an unverified block behind: it
  resumes from the last verified block.
- What the node does not say in one call: ``chain_transactions``, ``coins_cache_mib``,
  ``utxo_summary``.
- ``abandon``: a forced Ctrl-C (``replay.stopping``) may land in the middle of a block's
  connection; the node then writes nothing more, and the next open recovers as after a kill.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from ctplugin.closing import Closeable
from ctplugin.elements.chainparams import ChainParams
from validator import Node

LEGACY_MARKER = "replay-verified"  # written by replays before Node.commit_block(verified=)


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

    def chain_transactions(self) -> int:
        """Transactions in the active chain up to the tip (Core's nChainTx)."""
        node = self.node
        total = 0
        for height in range(node.tip.height + 1):
            block_hash = node.block_hash(height)
            info = node.block_info(block_hash) if block_hash is not None else None
            total += info.n_tx if info is not None else 0
        return total

    def coins_cache_mib(self) -> float:
        """The coins cache's estimated memory use (Core's UpdateTip ``cache=``)."""
        return self.node.stats().coins_cache_bytes / (1 << 20)

    def recover(self) -> int:
        """Take out every pending block (a failure or an interruption left them unverified);
        returns how many. Also removes the verified-marker file of older replays."""
        with contextlib.suppress(FileNotFoundError):
            (self.datadir / LEGACY_MARKER).unlink()
        return self.node.abort_pending()

    def abandon(self) -> None:
        """A forced interrupt: write nothing more (``Node.abandon``); the next open recovers
        from disk as after a kill."""
        self.node.abandon()

    @property
    def abandoned(self) -> bool:
        return self.node.abandoned

    def utxo_summary(self) -> UtxoSummary:
        """Count and hash of the whole UTXO set (``Node.utxo_stats``: identical sets hash the
        same whatever the history), the hash in Core's uint256 display order, as the node's
        ``gettxoutsetinfo`` prints it, so the two compare by eye."""
        stats = self.node.utxo_stats()
        return UtxoSummary(stats.txouts, stats.utxo_set_hash[::-1].hex())

    # --- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        self.node.close()

