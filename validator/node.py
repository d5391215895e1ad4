"""A validating node: data directory, chain manager, block validator and mempool, tied together.

``Node.open(path, params)`` opens (or creates) the data directory of the chain ``params`` (its
genesis included) — a second opener gets ``DataDirLockedError``, a directory made for another
chain ``StoreError`` — recovers from a crash if needed (``validator.chain``: an
interrupted flush is finished, blocks accepted since the last flush are reconnected from the
block files) and is then ready:

- ``submit_block(raw, block=None)`` stores any block whose parent is known and moves to the
  best chain (reorganising if a branch became longer); the answer is a ``SubmitResult`` with BIP22's
  strings (``bip22``: None when the block was connected);
- ``accept_transaction`` / ``test_accept_transaction`` (the mempool); disconnected transactions
  that are still valid return to the mempool after a reorganisation;
- ``invalidate_block`` / ``reconsider_block``;
- queries: ``tip``, ``block_hash``, ``block_info``, ``read_block``, ``block_undo``,
  ``chain_tips``, ``utxo``, ``utxo_stats`` (with ``utxo_set_hash``), ``median_time_past``;
- ``subscribe(listener)``: ``ChainListener`` callbacks, called in order once each change is
  durable (its block and index records written: a killed process restarts with it).

Integrity (docs/durability.md): the last ``check_blocks`` blocks are verified at start-up
(``Chain.verify``, Core's CVerifyDB) and a damaged store refuses the start with a
``CorruptDatabaseError`` naming it and the recovery command, which ``reindex`` /
``reindex_chainstate`` carry out; after a failed durable write (``DiskWriteError``, recorded by
``data.guard``) nothing more is written and block submission raises it.

One thread drives a node (the RPC server's worker); ``tip`` alone may be read from any thread.
"""

from __future__ import annotations

import collections
import hashlib
import logging
import os
import shutil
import struct
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

from ctplugin.closing import Closeable
from ctplugin.elements import (
    Block,
    BlockHeader,
    Transaction,
    TxOut,
    parse_block,
    parse_transaction,
)
from ctplugin.elements.chainparams import ChainParams
from ctplugin.errors import ParseError, ValidationError
from validator.block import BlockValidator, bip34_implies_bip30_limit
from validator.chain import (
    DEFAULT_CHECKBLOCKS,
    DEFAULT_CHECKLEVEL,
    DEFAULT_FLUSH_INTERVAL,
    DEFAULT_MAX_UNFLUSHED_BLOCKS,
    Activation,
    Chain,
    FlushPolicy,
)
from validator.coins import decode_txout, encode_txout, utxo_hash_record
from validator.mempool import REMOVED_BY_CALLER, Mempool, MempoolEntry
from validator.policy import PolicySettings, check_standard
from validator.prepared import ConnectReport, PreparedBlock
from validator.store import (
    DEFAULT_MAX_ENTRIES,
    FAILED_MASK,
    VALID,
    AbandonedError,
    BlockIndexEntry,
    BlockRef,
    BlockUndo,
    CacheStats,
    ChainstateConflictError,
    DataDir,
    Outpoint,
    StoreError,
    UtxoEntry,
)
from validator.store.blockio import RecordReader, block_files
from validator.timing import Stage, StageTimer
from validator.verify import verify

DEFAULT_DBCACHE_MIB = 450  # Core's -dbcache default
CHAIN_FILE = "chain"
"""The data directory's record of the chain it was made for (``ChainParams.name``): two chains
may share a genesis (``regtest.params``), so the block index alone cannot tell them apart."""
_log = logging.getLogger(__name__)


def _recorded_chain(path: str) -> str | None:
    try:
        with open(os.path.join(path, CHAIN_FILE), encoding="utf-8") as handle:
            return handle.read().strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"cannot read {os.path.join(path, CHAIN_FILE)}: {exc}") from None


def _record_chain(path: str, name: str) -> None:
    """Write ``CHAIN_FILE`` atomically (a killed process leaves the old state or the new)."""
    target = os.path.join(path, CHAIN_FILE)
    tmp = f"{target}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(name + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, target)


REINDEX_DIR = "blocks.reindex"
"""Where ``-reindex`` moves the old ``blocks/`` (its blk files are read back from there); its
presence at start-up means a reindex is under way (resumed, as Core keeps its reindex flag)."""
REINDEX_DONE = "blocks.reindex.done"


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def prepare_reindex(path: str, requested: bool) -> str | None:
    """The directory of blk files a reindex reads, or None when there is none to run.

    A new reindex moves ``blocks/`` to ``REINDEX_DIR`` (one rename) and drops the chainstate;
    an interrupted one (``REINDEX_DIR`` present) is resumed from scratch: the half-built
    ``blocks/`` and chainstate are dropped, the moved files stay the source. A finished one
    left ``REINDEX_DONE`` to delete."""
    source = os.path.join(path, REINDEX_DIR)
    done = os.path.join(path, REINDEX_DONE)
    if os.path.isdir(done):
        shutil.rmtree(done)
    blocks = DataDir.blocks_path(path)
    if os.path.isdir(source):
        shutil.rmtree(blocks, ignore_errors=True)
    elif requested and os.path.isdir(blocks):
        os.replace(blocks, source)
        _fsync_dir(path)
    elif requested:
        os.makedirs(source)
    else:
        return None
    shutil.rmtree(DataDir.chainstate_path(path), ignore_errors=True)
    return source


def reindex_block_files(node: Node, source: str) -> int:
    """Submit every block record of the blk files in ``source`` to ``node`` (Core's -reindex,
    src/node/blockstorage.cpp ImportBlocks / LoadExternalBlockFile): read laxly (junk and cut
    records skipped, as Core's reader resynchronises on the magic), blocks whose parent is not
    known yet kept until it arrives, every block validated in full. Returns how many blocks
    were stored."""
    magic = node.params.network_magic
    waiting: dict[bytes, list[tuple[bytes, Block]]] = {}
    stored = 0
    for path in block_files(source):
        _log.info("Reindexing block file %s...", path.name)
        for record in RecordReader(path, magic, strict=False):
            try:
                block = parse_block(record.payload)
            except ParseError:
                continue
            queue = collections.deque([(record.payload, block)])
            while queue:  # in file order: the first seen of equal branches stays first
                raw, block = queue.popleft()
                if block.header.prev_hash not in node.chain.entries:
                    if block.header.height:
                        waiting.setdefault(block.header.prev_hash, []).append((raw, block))
                    continue
                result = node.submit_block(raw, block)
                if result.status in ("connected", "stored"):
                    stored += 1
                queue += waiting.pop(block.hash, [])
    node.flush()
    _log.info("Reindexing finished: %d blocks, tip %s at height %d", stored,
              node.tip.hash[::-1].hex(), node.tip.height)
    return stored


def finish_reindex(path: str) -> None:
    """The reindexed directory is durable (flushed): the moved files go (renamed first, so a
    crash in the deletion is not taken for a reindex under way)."""
    source = os.path.join(path, REINDEX_DIR)
    done = os.path.join(path, REINDEX_DONE)
    if os.path.isdir(source):
        os.replace(source, done)
        _fsync_dir(path)
        shutil.rmtree(done)


@dataclass(frozen=True, slots=True)
class NodeStats:
    tip: BlockRef
    mempool_size: int
    cache: CacheStats
    coins_cache_bytes: int  # estimated memory of the coins cache
    unflushed_blocks: int  # connects/disconnects since the last chainstate flush
    known_blocks: int  # block index entries, side branches included


@dataclass(frozen=True, slots=True)
class SubmitResult:
    """The outcome of ``submit_block``.

    ``status``: "connected" (now on the active chain), "stored" (kept on a side branch, or
    not yet connectable: BIP22 "inconclusive"), "duplicate", "duplicate-invalid", or "invalid"
    (``error`` says why). ``report`` is the block's ``ConnectReport`` when it was connected.
    """

    hash: bytes
    status: str
    error: ValidationError | None = None
    report: ConnectReport | None = None
    tip_after: bytes | None = None

    @property
    def accepted(self) -> bool:
        return self.status == "connected"

    @property
    def new_tip(self) -> bool:
        """Connected, and still the tip when ``submit_block`` returned."""
        return self.accepted and self.tip_after == self.hash

    @property
    def reason(self) -> str | None:
        """The BIP22 string when the block was not connected (``bip22``), else None."""
        return self.bip22

    def connected(self) -> ConnectReport:
        """The connect report of a block that became part of the active chain; otherwise its
        ``ValidationError``, or ``ChainstateConflictError`` for one that was not connected
        (duplicate, side branch)."""
        if self.error is not None:
            raise self.error
        if self.report is None:
            raise ChainstateConflictError(f"block {self.hash[::-1].hex()} was not connected "
                                          f"({self.bip22})")
        return self.report

    @property
    def bip22(self) -> str | None:
        """``submitblock``'s answer: None if connected, else "inconclusive", "duplicate",
        "duplicate-invalid" or the reject reason."""
        if self.status == "connected":
            return None
        if self.status == "stored":
            return "inconclusive"
        if self.status == "invalid":
            assert self.error is not None
            return self.error.reason
        return self.status


@dataclass(frozen=True, slots=True)
class BlockInfo:
    """A block index entry as ``getblock`` / ``getblockheader`` need it."""

    hash: bytes
    height: int
    header: BlockHeader
    status: str  # getchaintips' words: active, valid-fork, valid-headers, headers-only, invalid
    n_tx: int
    size: int
    weight: int
    in_active_chain: bool
    confirmations: int  # -1 off the active chain
    next_hash: bytes | None  # the next block on the active chain
    median_time_past: int
    has_data: bool
    has_undo: bool
    sequence: int  # first-seen order (lower wins ties)

    @property
    def prev_hash(self) -> bytes:
        return self.header.prev_hash

    @property
    def stripped_size(self) -> int:
        return (self.weight - self.size) // 3


@dataclass(frozen=True, slots=True)
class ChainTip:
    height: int
    hash: bytes
    branchlen: int
    status: str


@dataclass(frozen=True, slots=True)
class UtxoStats:
    """``gettxoutsetinfo``: the UTXO set at ``height``. ``utxo_set_hash`` is SHA256 over every
    entry in key order (txid ‖ u32 LE index ‖ u32 LE length ‖ stored entry), so identical sets
    give identical hashes whatever history produced them."""

    height: int
    best_hash: bytes
    txouts: int
    transactions: int
    explicit_amounts: dict[bytes, int]  # asset → sum of explicit values
    blinded_outputs: int  # outputs whose value is a commitment
    serialized_size: int
    utxo_set_hash: bytes
    disk_size: int


class ChainListener:
    """Node events (ZMQ, wallets, waitfornewblock): override what you need; the default
    methods do nothing. Called on the node's thread, in order, after the change is durable;
    an exception in a listener is logged and does not affect the node."""

    def block_connected(self, block: Block, height: int) -> None:
        """``block`` joined the active chain at ``height``."""

    def block_disconnected(self, block: Block, height: int) -> None:
        """``block`` (at ``height``) left the active chain."""

    def transaction_added(self, tx: Transaction) -> None:
        """``tx`` entered the mempool (accepted, or returned there by a reorganisation)."""

    def transaction_removed(self, tx: Transaction, reason: str) -> None:
        """``tx`` left the mempool: "conflict", "reorg" or "removed" (never "block": those go
        to ``mempool_removed_for_block`` at once)."""

    def mempool_removed_for_block(self, txs: Sequence[Transaction], height: int) -> None:
        """The pool transactions the block at ``height`` confirmed left the mempool, before
        its ``block_connected``: one event per block, not one per transaction (Core's
        MempoolTransactionsRemovedForBlock; Core sends no TransactionRemovedFromMempool for
        MemPoolRemovalReason::BLOCK either)."""


_U32 = struct.Struct("<I")


def _status(entry: BlockIndexEntry, active: bool, chain: Chain) -> str:
    """getchaintips' status of an entry (Core's rules)."""
    if active:
        return "active"
    if entry.status & FAILED_MASK:
        return "invalid"
    if not entry.connectable and not all(e.has_data for e in chain._ancestry(entry)):
        return "headers-only"
    if entry.status & VALID:
        return "valid-fork"
    return "valid-headers"


class Node(Closeable):
    """Chain manager + mempool + proof cache of one data directory."""

    def __init__(self, data: DataDir, params: ChainParams, policy: FlushPolicy,
                 use_cache: bool = True, relay: PolicySettings | None = None, *,
                 check_blocks: int = DEFAULT_CHECKBLOCKS,
                 check_level: int = DEFAULT_CHECKLEVEL) -> None:
        self.data = data
        self.params = params
        cache = data.proof_cache if use_cache else None
        # the chain manager, made below, owns the header times the timelocks are judged on
        def median_times(height: int) -> int:
            return self.chain.median_time_past_at(height)

        self.mempool = Mempool(data.chainstate, cache, params, relay, median_times=median_times)
        self.validator = BlockValidator(data.chainstate, cache, params,
                                        known=self.mempool.known_transactions,
                                        bip30_limit=bip34_implies_bip30_limit(params.genesis),
                                        median_times=median_times)
        self.chain = Chain(data, self.validator, params, params.genesis, policy)
        self._listeners: list[ChainListener] = []
        self._closed = False
        self.reindexed = 0  # blocks read back from the block files by a -reindex
        _log.info("Verifying last %d blocks at level %d", check_blocks, check_level)  # Core's
        self.checked_blocks = self.chain.verify(check_blocks, check_level)
        _log.info("Verification: No coin database inconsistencies in last %d blocks",
                  self.checked_blocks)
        self.chain.activate()  # reconnect what was accepted since the last flush
        self._maybe_flush()

    @classmethod
    def open(cls, path: str | os.PathLike[str], params: ChainParams, *,
             sync: bool = True, dbcache: float = DEFAULT_DBCACHE_MIB,
             flush_interval: float = DEFAULT_FLUSH_INTERVAL,
             max_unflushed_blocks: int = DEFAULT_MAX_UNFLUSHED_BLOCKS,
             cache_max_entries: int = DEFAULT_MAX_ENTRIES, use_cache: bool = True,
             reindex: bool = False, reindex_chainstate: bool = False,
             check_blocks: int = DEFAULT_CHECKBLOCKS, check_level: int = DEFAULT_CHECKLEVEL,
             batch_bytes: int | None = None, relay: PolicySettings | None = None) -> Node:
        """Open (or create) the node's data directory at ``path`` for the chain ``params``; a
        directory made for another chain (``CHAIN_FILE``, or another genesis) is a
        ``StoreError`` naming both.

        ``sync``: flushes survive power loss (not only a killed process). ``dbcache``: the
        coins cache budget in MiB (Core's -dbcache). ``flush_interval`` (seconds) and
        ``max_unflushed_blocks`` bound how much a crash makes the node replay.
        ``reindex``: rebuild the block index and the chainstate from the blk files (Core's
        -reindex, ``reindex_block_files``); ``reindex_chainstate``: rebuild the UTXO set from
        the indexed blocks (Core's -reindex-chainstate), reconnecting every block with full
        validation. ``check_blocks`` / ``check_level``: the start-up verification
        (``Chain.verify``, Core's -checkblocks / -checklevel); a damaged store is a
        ``CorruptDatabaseError`` naming it and the recovery command.
        ``batch_bytes``: cap of one chainstate flush batch (Core's -dbbatchsize).
        ``relay``: the mempool's policy settings (``PolicySettings``; elementsd's defaults when
        None).
        """
        path = os.fspath(path)
        source = prepare_reindex(path, reindex)
        if reindex_chainstate:
            shutil.rmtree(DataDir.chainstate_path(path), ignore_errors=True)
        extra = {} if batch_bytes is None else {"batch_bytes": batch_bytes}
        data = DataDir.open(path, params.network_magic, sync=sync,
                            cache_max_entries=cache_max_entries,
                            cache_budget=int(dbcache * (1 << 20)), **extra)
        try:
            recorded = _recorded_chain(path)
            if recorded is not None and recorded != params.name:
                raise StoreError(f"data directory {path} was made for chain {recorded!r}, "
                                 f"not {params.name!r}")
            node = cls(data, params, FlushPolicy(flush_interval, max_unflushed_blocks),
                       use_cache, relay, check_blocks=check_blocks, check_level=check_level)
            if recorded is None:  # a new directory (or one made before chains had names)
                _record_chain(path, params.name)
        except BaseException:
            data.close()
            raise
        try:
            if source is not None:
                node.reindexed = reindex_block_files(node, source)
                finish_reindex(path)
            return node
        except BaseException:
            node.close()
            raise

    # --- events ----------------------------------------------------------------------------

    def subscribe(self, listener: ChainListener) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: ChainListener) -> None:
        self._listeners.remove(listener)

    def _emit(self, method: str, *args: object) -> None:
        for listener in list(self._listeners):
            try:
                getattr(listener, method)(*args)
            except Exception:  # a listener never breaks the node
                _log.exception("chain listener %r failed in %s", listener, method)

    def _after(self, activation: Activation) -> None:
        """Mempool bookkeeping and events for what an activation did, in order."""
        disconnected: list[Transaction] = []
        events: list[tuple[str, tuple[object, ...]]] = []
        reorganized = False
        for kind, block, height in activation.steps:
            if kind == "disconnect":
                reorganized = True
                disconnected[:0] = block.transactions[1:]  # lower blocks first, block order
                events.append(("block_disconnected", (block, height)))
            else:
                confirmed, conflicts = self.mempool.remove_for_block(block)
                events.append(("mempool_removed_for_block", (confirmed, height)))
                events += zip(repeat("transaction_removed"), conflicts)
                events.append(("block_connected", (block, height)))
        if reorganized:
            added, dropped = self.mempool.reorganize(disconnected)
            events += [("transaction_added", (tx,)) for tx in added]
            events += [("transaction_removed", (tx, reason)) for tx, reason in dropped]
        self._maybe_flush()
        if self._listeners:
            for method, args in events:
                self._emit(method, *args)

    def _maybe_flush(self) -> None:
        if self.chain.flush_due():
            self.chain.flush()

    # --- blocks ----------------------------------------------------------------------------

    @property
    def tip(self) -> BlockRef:
        """The active chain's tip (safe to read from any thread)."""
        return self.chain.tip_ref

    def submit_block(self, raw: bytes, block: Block | None = None) -> SubmitResult:
        """Store a block and activate the best chain (module docstring). ``block``: ``raw``
        already parsed (submitblock's decoded block), so it is neither parsed nor serialized
        again; without it ``ParseError`` for bytes that are not a block. Everything else is in
        the result. After a fatal store error (``data.guard.failure``) every call raises it:
        the node is stopping."""
        self.data.guard.check()
        start = time.perf_counter()
        if block is None:
            block = parse_block(raw)
        parsed = time.perf_counter()
        outcome, error = self.chain.accept(block, raw)
        stored = time.perf_counter()
        if outcome != "new":
            return SubmitResult(block.hash, outcome, error, None, self.tip.hash)
        activation = self.chain.activate()
        self._after(activation)
        report = activation.reports.get(block.hash)
        if report is not None:
            timings = report.timings
            timings[Stage.PARSE] = timings.get(Stage.PARSE, 0.0) + (parsed - start)
            timings[Stage.STORE] = stored - parsed
            # the rest of the call: undo record, index entry, mempool, events, flush check
            elapsed = time.perf_counter() - start
            timings[Stage.CHAIN] = max(elapsed - sum(timings.values()), 0.0)
        tip = self.tip.hash
        verdict = activation.verdicts.get(block.hash)
        if verdict is not None:
            return SubmitResult(block.hash, "invalid", verdict, None, tip)
        if report is not None:
            return SubmitResult(block.hash, "connected", None, report, tip)
        return SubmitResult(block.hash, "stored", None, None, tip)

    # --- stage by stage (replay's window / workers modes) -----------------------------------

    def prepare_block(self, raw: bytes, block: Block | None = None) -> PreparedBlock:
        """Stages 1–4 of a block on the current tip (header time, checks, inputs, plan, cache
        lookups): its ``ProofWork`` to verify wherever the caller likes; nothing is verified
        or written. ``block``: ``raw`` already parsed. ``ValidationError`` / ``ParseError`` as
        ``submit_block`` would report them."""
        timer = StageTimer()
        if block is None:
            with timer.stage(Stage.PARSE):
                block = parse_block(raw)
        chain = self.chain
        if block.header.prev_hash == chain.tip.hash:  # else prepare names the wrong parent
            chain.check_header_time(block.header, chain.tip)
        return self.validator.prepare(block, self.tip, timer, raw=raw)

    def test_block(self, raw: bytes, block: Block | None = None) -> None:
        """Core's TestBlockValidity on the tip (testproposedblock): every check and proof of
        a block built on the tip, nothing stored, connected or consumed;
        ``ValidationError`` naming the culprit otherwise."""
        prepared = self.prepare_block(raw, block)
        verify(prepared.work, prepared.timer, prepared.prefetch)

    def commit_block(self, prepared: PreparedBlock, *, verified: bool = True) -> ConnectReport:
        """Stage 6 of a prepared block: store it and connect it on the tip it was prepared on
        (``ChainstateConflictError`` if the tip moved). ``verified=False``: its proofs are
        still being checked elsewhere — the block is pending, the chainstate is not flushed
        until ``mark_verified``; a failed verdict goes to ``reject_block``. Events and mempool
        updates as for ``submit_block``."""
        self.data.guard.check()
        if self.tip != prepared.tip:
            raise ChainstateConflictError("the tip moved since the block was prepared")
        if prepared.raw is None:
            raise ChainstateConflictError("a block prepared without its bytes cannot be stored")
        block = prepared.block
        self.chain.connect_prepared(block, prepared.raw,
                                    lambda: self.validator.commit_prepared(prepared), verified)
        report = prepared.report(0)
        self._after(Activation([("connect", block, block.header.height)],
                               {block.hash: report}, {block.hash: None}))
        return report

    def mark_verified(self, block_hash: bytes) -> None:
        """The proofs of a pending block — and of every pending block below it — verified."""
        self.chain.mark_verified(block_hash)
        self._maybe_flush()

    def reject_block(self, block_hash: bytes) -> None:
        """A pending block's proofs failed: the pending blocks above it are forgotten, it is
        disconnected and remembered as invalid, the best remaining chain is activated."""
        self._after(self.chain.reject(block_hash))

    def abort_pending(self) -> int:
        """Disconnect and forget every pending block (as if never submitted); how many."""
        activation = self.chain.abort_pending()
        self._after(activation)
        return len(activation.steps)

    @property
    def pending_blocks(self) -> list[BlockRef]:
        return [BlockRef(e.hash, e.height) for e in self.chain.pending]

    def invalidate_block(self, block_hash: bytes) -> None:
        """Core's invalidateblock: the block and its descendants become invalid, the best
        other chain becomes active, disconnected transactions return to the mempool.
        ``UnknownBlockError`` for an unknown hash."""
        self._after(self.chain.invalidate(block_hash))

    def reconsider_block(self, block_hash: bytes) -> list[ConnectReport]:
        """Core's reconsiderblock: clear the failure marks of the block, its ancestors and
        descendants, and activate the best chain again. Returns the reports of the blocks
        this connected, in order."""
        activation = self.chain.reconsider(block_hash)
        self._after(activation)
        return list(activation.reports.values())

    def check_standard(self, tx: Transaction) -> None:
        """IsStandardTx under the node's relay policy (testproposedblock's acceptnonstd=false);
        ``ValidationError`` with the reject reason otherwise."""
        check_standard(tx, self.mempool.settings, self.params.policy_asset)

    def precious_block(self, block_hash: bytes) -> None:
        """Core's preciousblock (``Chain.precious``); ``UnknownBlockError`` for an unknown
        hash."""
        self._after(self.chain.precious(block_hash))

    def submit_header(self, header: BlockHeader) -> tuple[str, ValidationError | None]:
        """Core's submitheader: store a header whose parent is known (``Chain.accept_header``
        outcomes: "new", "duplicate", "duplicate-invalid", "invalid" with the error)."""
        return self.chain.accept_header(header)

    def block_hash(self, height: int) -> bytes | None:
        """The active chain's block at ``height`` (None out of range)."""
        active = self.chain.active
        return active[height].hash if 0 <= height < len(active) else None

    def block_info(self, block_hash: bytes) -> BlockInfo | None:
        """The block index entry of a block (None if unknown)."""
        chain = self.chain
        entry = chain.entries.get(block_hash)
        if entry is None:
            return None
        active = chain.in_active_chain(entry)
        tip = chain.tip
        following = chain.active[entry.height + 1] if active and entry is not tip else None
        return BlockInfo(
            entry.hash, entry.height, entry.header, _status(entry, active, chain), entry.n_tx,
            entry.size, entry.weight, active, tip.height - entry.height + 1 if active else -1,
            following.hash if following is not None else None, chain.median_time_past(entry),
            entry.has_data, entry.undo_pos is not None, entry.seq)

    def read_block(self, block_hash: bytes) -> bytes:
        """The stored bytes of a block (``BlockFileError`` if it has none)."""
        return self.chain.read_raw(self.chain.entry(block_hash))

    def block_undo(self, block_hash: bytes) -> BlockUndo | None:
        """The coins a block spent from the UTXO set (None if it was never connected)."""
        return self.chain.block_undo(self.chain.entry(block_hash))

    def block_spent_outputs(self, block_hash: bytes) -> list[list[UtxoEntry]] | None:
        """Per non-coinbase transaction, per input, the coin it spent (height, coinbase flag,
        stored TxOut — ``decode_txout`` reads it), outputs created earlier in the same block
        included: getblock verbosity 2/3's fee and prevout. None if the block was never
        connected (no undo data)."""
        chain = self.chain
        entry = chain.entry(block_hash)
        undo = chain.block_undo(entry)
        if undo is None:
            return None
        block = chain.read_block(entry)
        coins = dict(undo.spent)
        height = block.header.height
        result: list[list[UtxoEntry]] = []
        for i, tx in enumerate(block.transactions):
            if i:
                result.append([coins[Outpoint.trusted(t.prevout_hash, t.prevout_index)]
                               for t in tx.inputs])
            for n, out in enumerate(tx.outputs):
                coins[Outpoint.trusted(tx.txid, n)] = UtxoEntry(height, i == 0,
                                                                encode_txout(out))
        return result

    def set_clock(self, now: Callable[[], float]) -> None:
        """The clock header times are judged against (time-too-new): the wall clock unless a
        node above sets its own (setmocktime)."""
        self.chain.now = now

    def median_time_past(self, block_hash: bytes | None = None) -> int:
        chain = self.chain
        return chain.median_time_past(chain.tip if block_hash is None
                                      else chain.entry(block_hash))

    def chain_tips(self) -> list[ChainTip]:
        chain = self.chain
        tips = []
        for entry in chain.tips():
            active = chain.in_active_chain(entry)
            fork = chain.fork_point(entry)
            tips.append(ChainTip(entry.height, entry.hash, entry.height - fork.height,
                                 _status(entry, active, chain)))
        tips.sort(key=lambda t: (-t.height, t.hash))
        return tips

    # --- UTXO set --------------------------------------------------------------------------

    def utxo(self, outpoint: Outpoint | tuple[bytes, int]) -> UtxoEntry | None:
        """The unspent output at ``outpoint`` (txid, index) on the active chain, or None."""
        txid, index = outpoint
        if len(txid) != 32 or not 0 <= index <= 0xFFFFFFFF:
            return None
        return self.data.chainstate.get(Outpoint.trusted(txid, index))

    def iter_utxos(self) -> Iterator[tuple[Outpoint, UtxoEntry]]:
        """Every unspent output of the active chain in key order (scantxoutset), unflushed
        changes included; the caller holds the node's lock while it iterates."""
        return self.data.chainstate.iter_utxos()

    def utxo_stats(self) -> UtxoStats:
        """Statistics of the whole UTXO set (flushes first, as Core's gettxoutsetinfo)."""
        self.flush()
        digest = hashlib.sha256()
        txouts = 0
        txids: set[bytes] = set()
        amounts: dict[bytes, int] = {}
        blinded = 0
        size = 0
        for outpoint, entry in self.data.chainstate.iter_utxos():
            encoded = entry.encode()
            digest.update(utxo_hash_record(outpoint.txid, outpoint.index, encoded))
            txouts += 1
            size += 36 + len(encoded)
            txids.add(outpoint.txid)
            record = decode_txout(entry.txout)
            if isinstance(record.value, int) and len(record.asset) == 32:
                amounts[record.asset] = amounts.get(record.asset, 0) + record.value
            else:
                blinded += isinstance(record.value, bytes)
        tip = self.tip
        disk = sum(os.path.getsize(os.path.join(root, name))
                   for root, _, names in os.walk(DataDir.chainstate_path(self.data.path))
                   for name in names)
        return UtxoStats(tip.height, tip.hash, txouts, len(txids), amounts, blinded, size,
                         digest.digest(), disk)

    # --- mempool ---------------------------------------------------------------------------

    def accept_transaction(self, data: bytes | Transaction) -> MempoolEntry:
        """Validate a transaction against the tip and the pool and add it (``ValidationError``
        otherwise)."""
        tx = data if isinstance(data, Transaction) else parse_transaction(data)
        entry = self.mempool.accept(tx)
        self._emit("transaction_added", tx)
        return entry

    def verify_ahead(self, outputs: Sequence[TxOut],
                     ring_points: Mapping[bytes, bytes] | None = None) -> None:
        """Start verifying the proofs of outputs whose transaction is about to be submitted
        (``Mempool.verify_ahead``; any thread): its ``accept_transaction`` then waits for them
        instead of verifying them again. ``ring_points``: the signer's ring points of
        Borromean range proofs, by proof (``borromean.SignedRangeProof``), which make it
        faster."""
        self.mempool.verify_ahead(outputs, ring_points)

    def test_accept_transaction(self, data: bytes | Transaction) -> MempoolEntry:
        """``accept_transaction``'s checks without adding it (testmempoolaccept)."""
        tx = data if isinstance(data, Transaction) else parse_transaction(data)
        return self.mempool.test_accept(tx)

    def remove_transactions(self, txids: Iterable[bytes]) -> list[Transaction]:
        """Drop pool transactions and their descendants."""
        removed = self.mempool.remove(txids)
        for tx in removed:
            self._emit("transaction_removed", tx, REMOVED_BY_CALLER)
        return removed

    # --- lifecycle -------------------------------------------------------------------------

    def stats(self) -> NodeStats:
        chainstate = self.data.chainstate
        return NodeStats(self.tip, len(self.mempool), self.data.proof_cache.stats(),
                         chainstate.usage, chainstate.blocks_since_flush,
                         len(self.chain.entries))

    def wallet_path(self, name: str) -> str:
        """Where the wallet called ``name`` keeps its database (``DataDir.wallet_path``)."""
        return self.data.wallet_path(name)

    def flush(self) -> None:
        """Write everything to disk now (the chainstate with its best block)."""
        self.chain.flush()

    def abandon(self) -> None:
        """Write nothing more, as if the process had been killed now: for an owner interrupted
        in the middle of a call (a forced Ctrl-C), after which the in-memory state may be
        half-changed. The data directory's write guard stops as after a failed write
        (``AbandonedError``): every later durable write is refused and ``close`` only closes
        the stores; the next start recovers from what is on disk, as after a crash
        (docs/durability.md)."""
        self.data.guard.fatal(AbandonedError())

    @property
    def abandoned(self) -> bool:
        return isinstance(self.data.guard.failure, AbandonedError)

    def close(self) -> None:
        """Flush and close (once); pending blocks (proofs never confirmed) are dropped first."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.data.guard.failure is not None:
                # a write failed, a store is damaged or the node was abandoned: write nothing
                # more (Core's AbortNode); the next start recovers from what is on disk, or
                # refuses
                return
            if self.chain.pending:
                self.abort_pending()
            self.chain.flush()
        finally:
            self.data.close()

