"""The node's debug.log lines of chain and mempool changes, in Core's shapes (Bitcoin Core
``src/validation.cpp``: ``UpdateTipLog``, ``InvalidChainFound``; ``src/net_processing.cpp``:
``AcceptToMemoryPool``), written by a chain listener (``validator.ChainListener``) and by the
RPC methods that submit transactions or mark blocks.

- ``UpdateTip: new best=<hash> height=<h> version=0x<v> log2_work=<w> tx=<n> date='<UTC>'
  progress=1.000000 cache=<x>MiB(<n>txo)`` for every block connected or disconnected (then the
  new best is its parent), as Core's ConnectTip / DisconnectTip.
- ``[validation] DisconnectTip: disconnect block=<hash> height=<h>`` (category validation).
- ``[mempool] AcceptToMemoryPool: peer=local: accepted <txid> (wtxid=<wtxid>) (poolsz N txn,
  M kB)`` (category mempool); a refused one ``[mempoolrej] <txid> (wtxid=<wtxid>) from
  peer=local was not accepted: <reason>`` (category mempoolrej). ``peer=local``: every
  transaction here comes from this node's RPC or wallets.
- ``[bench]   - <stage>: <ms>ms`` for each stage of a block the node mined or was given
  (generate*, submitblock), then ``[bench] - Connect block: <ms>ms`` (category bench; Core's
  ConnectBlock timings, with our stages: docs/design.md §1).
- ``InvalidChainFound: invalid block=… height=… log2_work=… date=…`` and ``InvalidChainFound:
  current best=…`` for invalidateblock; ``ReconsiderBlock: block=… height=…`` for
  reconsiderblock.

Shapes and chain work: ``regtest.corelog`` (shared with replay's progress lines).
"""

from __future__ import annotations

import logging

from ctplugin.elements import Block, Transaction
from ctplugin.elements.model import BlockHeader
from regtest.corelog import format_timestamp, log2_work, update_tip_line
from rpc.logs import category_logger
from validator import ChainListener, ConnectReport, Node

log = logging.getLogger("ctplugin.validation")
bench_log = category_logger("bench")
mempool_log = category_logger("mempool")
mempoolrej_log = category_logger("mempoolrej")
validation_log = category_logger("validation")


def _block_line(header: BlockHeader, block_hash_hex: str) -> str:
    """Core's ``best=… height=… log2_work=… date=…`` of InvalidChainFound."""
    return (f"block={block_hash_hex}  height={header.height}  "
            f"log2_work={log2_work(header.height):f}  date={format_timestamp(header.time)}")


class ChainLog(ChainListener):
    """UpdateTip, DisconnectTip and AcceptToMemoryPool lines of one node (module docstring)."""

    def __init__(self, node: Node) -> None:
        self.node = node
        # Core's nChainTx: transactions in the active chain up to the tip, kept as it moves
        self.chain_tx = sum(info.n_tx for info in map(node.block_info, self._active_hashes())
                            if info is not None)

    def _active_hashes(self) -> list[bytes]:
        tip = self.node.tip.height
        return [h for h in map(self.node.block_hash, range(tip + 1)) if h is not None]

    def _update_tip(self, header: BlockHeader, block_hash_hex: str) -> None:
        chainstate = self.node.data.chainstate
        log.info("%s", update_tip_line(block_hash_hex, header.height, header.version,
                                       header.time, self.chain_tx, 1.0,
                                       chainstate.usage / (1 << 20), len(chainstate)))

    def block_connected(self, block: Block, height: int) -> None:
        self.chain_tx += len(block.transactions)
        self._update_tip(block.header, block.header.hash_hex)

    def block_disconnected(self, block: Block, height: int) -> None:
        self.chain_tx -= len(block.transactions)
        validation_log.debug("DisconnectTip: disconnect block=%s height=%d",
                             block.header.hash_hex, height)
        parent = self.node.block_info(block.header.prev_hash)
        if parent is not None:
            self._update_tip(parent.header, parent.hash[::-1].hex())

    def transaction_added(self, tx: Transaction) -> None:
        if mempool_log.isEnabledFor(logging.DEBUG):
            entries = self.node.mempool.entries.values()
            usage = sum(entry.tx.size for entry in entries)
            mempool_log.debug("AcceptToMemoryPool: peer=local: accepted %s (wtxid=%s) (poolsz %d "
                              "txn, %d kB)", tx.txid_hex, tx.wtxid_hex, len(entries),
                              usage // 1000)


def log_connect_bench(report: ConnectReport | None) -> None:
    """The stage timings of a block just connected (None: it was not)."""
    if report is None or not bench_log.isEnabledFor(logging.DEBUG):
        return
    for stage, seconds in report.timings.items():
        bench_log.debug("  - %s: %.2fms", stage, seconds * 1e3)
    bench_log.debug("- Connect block: %.2fms", report.total_seconds * 1e3)


def log_rejected(tx: Transaction, reason: str) -> None:
    """A transaction the mempool refused (sendrawtransaction, a wallet's send)."""
    mempoolrej_log.debug("%s (wtxid=%s) from peer=local was not accepted: %s", tx.txid_hex,
                         tx.wtxid_hex, reason)


def log_invalidated(node: Node, block_hash: bytes) -> None:
    """invalidateblock's lines, once the best other chain is active (Core's
    InvalidChainFound)."""
    info = node.block_info(block_hash)
    tip = node.block_info(node.tip.hash)
    if info is None or tip is None:
        return
    log.info("InvalidChainFound: invalid %s", _block_line(info.header, block_hash[::-1].hex()))
    log.info("InvalidChainFound:  current best=%s", _block_line(tip.header, tip.hash[::-1].hex())
             .removeprefix("block="))


def log_reconsidered(node: Node, block_hash: bytes) -> None:
    """reconsiderblock's line: the block's failure marks are cleared, the best chain active."""
    info = node.block_info(block_hash)
    if info is not None:
        log.info("ReconsiderBlock: block=%s height=%d: invalidity cleared, best chain height=%d",
                 block_hash[::-1].hex(), info.height, node.tip.height)
