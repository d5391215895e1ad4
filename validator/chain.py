"""The chain manager: block index, best chain, reorganisations, flushing and crash recovery.

Every block the node accepts is appended to the block files and entered in the block index
(``validator.store.blockindex``) with a first-seen sequence number, whatever branch it is on.
The best chain is the connectable block with the most blocks (our signed blocks count one
each: height is the work), the lowest sequence number winning ties; "connectable" means the
block and every ancestor have data and none failed validation. ``activate`` moves the
chainstate there the way Core's ActivateBestChain does: disconnect to the fork point, connect
the new branch block by block through the validator; a block that fails is marked
``FAILED_VALID`` and its descendants ``FAILED_CHILD``, and the loop picks the best remaining
branch (falling back to the old one when nothing better is left).

Durability (docs/replay.md §4.5, docs/design.md "Chainstate"):

- accepting a block writes its record (blk file) and then its index entry: a killed process
  never loses an accepted block (and ``sync`` flushes make it survive power loss too);
- connecting changes only the chainstate's coins cache; the block's undo record goes to a rev
  file and its index entry (``VALID``, undo position) is written once per activation;
- ``flush`` (when the coins cache is over budget, every ``max_unflushed_blocks`` blocks, every
  ``flush_interval`` seconds, before UTXO-set statistics and at close) fsyncs the files (with
  ``sync``), writes the index (synced), then the chainstate with the HEAD_BLOCKS protocol;
- at start-up an interrupted chainstate flush is finished (``Chainstate.recover``: old branch
  rolled back with its undo records, new branch re-applied from its blocks), then ``activate``
  reconnects, with full validation, every block accepted since the last flush. A process
  killed at any moment, a reorganisation and this replay included, restarts at a consistent
  tip: the chainstate always equals a clean replay of the chain to its tip.

A block whose failure could come from tampered bytes rather than its header (Merkle root,
witness commitment, weight: ``MUTATION_REASONS``, Core's BLOCK_MUTATED) is never marked
invalid: its bytes are dropped and the genuine block can still arrive.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ctplugin.elements import Block, BlockHeader, parse_block
from ctplugin.elements.chainparams import ChainParams
from ctplugin.elements.consensus import MEDIAN_TIME_SPAN
from ctplugin.elements.script import is_unspendable
from ctplugin.errors import ParseError, ValidationError
from validator import reasons
from validator.block import BlockValidator, connect_genesis
from validator.coins import encode_txout
from validator.prepared import ConnectReport
from validator.store import (
    FAILED_CHILD,
    FAILED_VALID,
    HAVE_DATA,
    HAVE_UNDO,
    VALID,
    BlockChanges,
    BlockFileError,
    BlockFilesCorruptError,
    BlockIndexCorruptError,
    BlockIndexEntry,
    BlockRef,
    BlockUndo,
    ChainstateConflictError,
    ChainstateCorruptError,
    DataDir,
    Outpoint,
    StoreError,
    UnknownBlockError,
    UtxoEntry,
    net_changes,
)

MUTATION_REASONS = frozenset({
    reasons.BAD_TXNMRKLROOT, reasons.BAD_TXNS_DUPLICATE, reasons.BAD_WITNESS_MERKLE_MATCH,
    reasons.UNEXPECTED_WITNESS, reasons.BAD_BLK_WEIGHT, reasons.BLOCK_PROOF_INVALID,
})
"""Reject reasons that may come from altered block bytes under a genuine header (the block hash
covers neither the header's solution nor, beyond the Merkle root, the block's bytes)."""

_UNDO_STORE = {"store": "undo data (rev files)", "recovery": "-reindex"}
DEFAULT_CHECKBLOCKS = 6  # Core's -checkblocks default (src/validation.h)
DEFAULT_CHECKLEVEL = 3  # Core's -checklevel default
DEFAULT_FLUSH_INTERVAL = 60.0
DEFAULT_MAX_UNFLUSHED_BLOCKS = 1000
_BLOCK_MEMO = 16  # parsed blocks kept in memory (the recently accepted ones)


@dataclass(frozen=True, slots=True)
class FlushPolicy:
    """When the chainstate is flushed besides close: the coins cache is over its budget
    (``Chainstate.cache_budget``), ``max_unflushed_blocks`` connects/disconnects since the last
    flush (this bounds the replay after a crash), or ``interval`` seconds."""

    interval: float = DEFAULT_FLUSH_INTERVAL
    max_unflushed_blocks: int = DEFAULT_MAX_UNFLUSHED_BLOCKS


@dataclass(slots=True)
class Activation:
    """What one ``activate`` (or invalidate / reconsider) did, in order."""

    steps: list[tuple[str, Block, int]] = field(default_factory=list)  # ("connect"|"disconnect")
    reports: dict[bytes, ConnectReport] = field(default_factory=dict)
    verdicts: dict[bytes, ValidationError | None] = field(default_factory=dict)

    @property
    def disconnected(self) -> list[tuple[Block, int]]:
        return [(b, h) for kind, b, h in self.steps if kind == "disconnect"]

    @property
    def connected(self) -> list[tuple[Block, int]]:
        return [(b, h) for kind, b, h in self.steps if kind == "connect"]


def block_changes(block: Block, *, genesis: bool = False,
                  genesis_outputs: bool = True) -> BlockChanges:
    """The UTXO changes connecting ``block`` makes, net of in-block spends: what the validator
    writes for a valid block (``BlockValidator.resolve_inputs``; genesis: ``connect_genesis``,
    whose outputs are not coinbase outputs for maturity, and none at all without
    ``genesis_outputs``, the chain's ``connect_genesis_outputs``). Used to re-apply a block
    whose validity is already established (recovery of an interrupted flush)."""
    if genesis and not genesis_outputs:
        return net_changes([], [])
    height = block.header.height
    spent: list[Outpoint] = []
    created: list[tuple[Outpoint, UtxoEntry]] = []
    for i, tx in enumerate(block.transactions):
        if i and not genesis:
            spent += [Outpoint.trusted(t.prevout_hash, t.prevout_index) for t in tx.inputs]
        coinbase = i == 0 and not genesis
        txid = tx.txid
        created += [(Outpoint.trusted(txid, n), UtxoEntry(height, coinbase, encode_txout(out)))
                    for n, out in enumerate(tx.outputs) if not is_unspendable(out.script_pubkey)]
    return net_changes(spent, created)


def _key(entry: BlockIndexEntry) -> tuple[int, int, int]:
    """Best-chain order: more blocks first, then the latest preciousblock, then first seen."""
    return entry.height, entry.precious, -entry.seq


class Chain:
    """The block tree of one data directory and the active chain through it."""

    def __init__(self, data: DataDir, validator: BlockValidator, params: ChainParams,
                 genesis: Block, policy: FlushPolicy,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.data = data
        self.validator = validator
        self.params = params
        self.policy = policy
        self.genesis_hash = genesis.hash
        self._clock = clock
        self.now: Callable[[], float] = time.time
        """The node's clock for header times (setmocktime-aware above the validator)."""
        self._last_flush = clock()
        self.entries: dict[bytes, BlockIndexEntry] = {}
        self.children: dict[bytes, list[BlockIndexEntry]] = {}
        self.active: list[BlockIndexEntry] = []
        self._candidates: set[BlockIndexEntry] = set()
        self._dirty: dict[bytes, BlockIndexEntry] = {}
        self._next_seq = 0
        # preciousblock's counter (memory only, as Core's nBlockReverseSequenceId)
        self._precious_next = 1
        self._precious_height = -1
        self._memo: dict[bytes, Block] = {}
        # Connected blocks whose proofs are still being verified elsewhere (connect_prepared
        # with verified=False), lowest first: the chainstate is not flushed while there are any.
        self.pending: list[BlockIndexEntry] = []
        self.tip_ref: BlockRef = BlockRef(genesis.hash, 0)  # replaced atomically
        self._load(genesis)

    # --- start-up --------------------------------------------------------------------------

    def _load(self, genesis: Block) -> None:
        data = self.data
        for entry in data.block_index.load():
            self.entries[entry.hash] = entry
        for entry in self.entries.values():
            if entry.height:
                entry.parent = self.entries.get(entry.prev_hash)
                if entry.parent is None:
                    raise BlockIndexCorruptError(
                        f"block index entry {entry.hash[::-1].hex()} has no parent entry")
                self.children.setdefault(entry.prev_hash, []).append(entry)
            self._next_seq = max(self._next_seq, entry.seq + 1)
        known = self.entries.get(genesis.hash)
        if self.entries and (known is None or known.height != 0):
            raise StoreError(f"data directory {data.path} belongs to another chain")
        if known is None:
            raw = genesis.serialize()
            known = self._new_entry(genesis, raw, HAVE_DATA | VALID)
            self._write_index(sync=True)
        chainstate = data.chainstate
        if chainstate.interrupted_flush is not None:
            self._recover_flush()
        tip = chainstate.best_block()
        if tip is None:
            connect_genesis(chainstate, genesis, self.params.connect_genesis_outputs)
            self._store_undo(known, chainstate.take_undo(genesis.hash))
            self._write_index()
            self.active = [known]
            self.flush()
        else:
            at_tip = self.entries.get(tip.hash)
            if at_tip is None or at_tip.height != tip.height:
                raise ChainstateCorruptError(
                    f"chainstate tip {tip.hash[::-1].hex()} is not in the block index",
                    recovery="-reindex or -reindex-chainstate")
            self.active = list(reversed(list(self._ancestry(at_tip))))
            if self.active[0] is not known:
                raise StoreError(f"data directory {data.path} belongs to another chain")
        self._set_tip()
        self._recompute_candidates()

    def _recover_flush(self) -> None:
        """Finish the chainstate flush a crash interrupted (``Chainstate.recover``)."""
        head = self.data.chainstate.interrupted_flush
        assert head is not None
        new = self.entries.get(head.new.hash)
        old = self.entries.get(head.old.hash) if head.old is not None else None
        if new is None or (head.old is not None and old is None):
            raise ChainstateCorruptError("HEAD_BLOCKS names blocks the block index lacks")
        fork = self._fork(old, new) if old is not None else None
        rollback: list[BlockUndo] = []
        entry = old
        while entry is not None and entry is not fork:
            rollback.append(self._read_undo(entry))
            entry = entry.parent
        path = list(self._ancestry(new, stop=fork))
        path.reverse()
        forward = [block_changes(self._read_block(e), genesis=e.height == 0,
                                 genesis_outputs=self.params.connect_genesis_outputs)
                   for e in path]
        self.data.chainstate.recover(rollback, forward)

    # --- start-up verification ------------------------------------------------------------

    def verify(self, check_blocks: int = DEFAULT_CHECKBLOCKS,
               check_level: int = DEFAULT_CHECKLEVEL) -> int:
        """Core's CVerifyDB (src/validation.cpp, docs/durability.md §4) over the last
        ``check_blocks`` blocks of the active chain (0 or less: all of them), at
        ``check_level`` (clamped to 0..4):

        0. read each block back from its blk file (the hash check of ``read_raw``);
        1. its context-free validity (``BlockValidator.check_block``: Merkle roots, sizes...);
        2. its undo record (checksum, decodes, belongs to the block);
        3. disconnect the blocks from the tip down on a scratch view of the UTXO set: every
           output a block created must be there exactly as the block makes it, the undo
           record's created list must equal the block's, then the undo record's spent coins
           come back. The chainstate itself is not touched.
        4. (Core reconnects the blocks) is level 3 here: ``activate`` re-validates in full
           whatever it connects.

        Returns how many blocks were checked. A failure is a ``CorruptDatabaseError`` naming
        the store (block files, undo data, chainstate) and the recovery command."""
        level = max(0, min(4, check_level))
        depth = len(self.active) if check_blocks <= 0 else min(check_blocks, len(self.active))
        view: dict[Outpoint, UtxoEntry | None] = {}
        chainstate = self.data.chainstate

        def coin(outpoint: Outpoint) -> UtxoEntry | None:
            return view[outpoint] if outpoint in view else chainstate.get(outpoint)

        checked = 0
        for entry in reversed(self.active[len(self.active) - depth:]):
            where = f"block {entry.hash[::-1].hex()} at height {entry.height}"
            try:
                block = self._read_checked(entry)[1]
            except BlockFileError as exc:
                raise BlockFilesCorruptError(f"{where}: {exc}") from None
            if level >= 1 and entry.height:
                parent = entry.parent
                assert parent is not None
                try:
                    self.validator.check_block(block, BlockRef(parent.hash, parent.height))
                except ValidationError as exc:
                    raise BlockFilesCorruptError(f"{where} fails its checks: "
                                                 f"{exc.reason}") from None
            if level >= 2:
                undo = self._read_undo(entry)
            if level >= 3:
                spent, created = block_changes(
                    block, genesis=entry.height == 0,
                    genesis_outputs=self.params.connect_genesis_outputs)
                if {o for o, _ in created} != set(undo.created):
                    raise ChainstateCorruptError(f"{where}: its undo record lists other "
                                                 "outputs than the block creates", **_UNDO_STORE)
                for outpoint, made in created:
                    if coin(outpoint) != made:
                        raise ChainstateCorruptError(f"{where}: output {outpoint} is not in "
                                                     "the UTXO set as the block created it")
                    view[outpoint] = None
                if {o for o, _ in undo.spent} != set(spent):
                    raise ChainstateCorruptError(f"{where}: its undo record restores other "
                                                 "coins than the block spends", **_UNDO_STORE)
                for outpoint, restored in undo.spent:
                    view[outpoint] = restored
            checked += 1
        return checked

    # --- tree helpers ----------------------------------------------------------------------

    def _ancestry(self, entry: BlockIndexEntry | None,
                  stop: BlockIndexEntry | None = None) -> Iterator[BlockIndexEntry]:
        while entry is not None and entry is not stop:
            yield entry
            entry = entry.parent

    def _fork(self, a: BlockIndexEntry, b: BlockIndexEntry) -> BlockIndexEntry:
        """The last common ancestor of two entries."""
        while a.height > b.height:
            a = a.parent  # type: ignore[assignment]
        while b.height > a.height:
            b = b.parent  # type: ignore[assignment]
        while a is not b:
            a, b = a.parent, b.parent  # type: ignore[assignment]
        return a

    def in_active_chain(self, entry: BlockIndexEntry) -> bool:
        return entry.height < len(self.active) and self.active[entry.height] is entry

    @property
    def tip(self) -> BlockIndexEntry:
        return self.active[-1]

    def entry(self, block_hash: bytes) -> BlockIndexEntry:
        entry = self.entries.get(block_hash)
        if entry is None:
            raise UnknownBlockError(block_hash)
        return entry

    def descendants(self, entry: BlockIndexEntry) -> Iterator[BlockIndexEntry]:
        stack = list(self.children.get(entry.hash, ()))
        while stack:
            child = stack.pop()
            yield child
            stack.extend(self.children.get(child.hash, ()))

    def _set_tip(self) -> None:
        tip = self.active[-1]
        self.tip_ref = BlockRef(tip.hash, tip.height)

    def _recompute_candidates(self) -> None:
        """Connectable flags and the candidate set, from scratch (after a failure, a data loss,
        invalidate or reconsider)."""
        for entry in sorted(self.entries.values(), key=lambda e: e.height):
            parent_ok = entry.parent.connectable if entry.parent is not None else \
                entry.hash == self.genesis_hash
            entry.connectable = parent_ok and entry.has_data and not entry.failed
        self._candidates = {e for e in self.entries.values() if e.connectable}
        self._prune_candidates()

    def _prune_candidates(self) -> None:
        """Drop candidates worse than the tip (they cannot win while it stands). Nothing is
        dropped while the tip itself is not connectable (failed or without data): the chain
        must then fall back to whatever is best."""
        if not self.tip.connectable:
            return
        floor = _key(self.tip)
        self._candidates = {e for e in self._candidates if _key(e) >= floor}
        self._candidates.add(self.tip)

    # --- block storage ---------------------------------------------------------------------

    def _new_entry(self, block: Block, raw: bytes, status: int) -> BlockIndexEntry:
        pos = self.data.block_files.write_block(raw) if status & HAVE_DATA else None
        entry = BlockIndexEntry(block.hash, block.header, status, self._next_seq,
                                len(block.transactions), len(raw), block.weight, pos)
        self._next_seq += 1
        self.entries[entry.hash] = entry
        if entry.height:
            entry.parent = self.entries[entry.prev_hash]
            self.children.setdefault(entry.prev_hash, []).append(entry)
        self._dirty[entry.hash] = entry
        return entry

    def _store_undo(self, entry: BlockIndexEntry, undo: BlockUndo) -> None:
        if not entry.status & HAVE_UNDO:
            entry.undo_pos = self.data.block_files.write_undo(undo.encode(), entry.prev_hash)
            entry.status |= HAVE_UNDO
        entry.status |= VALID
        self._dirty[entry.hash] = entry

    def _write_index(self, *, sync: bool = False) -> None:
        """Write the changed entries (pending blocks stay in memory: a crash forgets them)."""
        files = self.data.block_files
        pending = self.pending
        entries = [e for e in self._dirty.values() if e not in pending]
        self.data.block_index.write(entries, files.blocks.cursor, files.undo.cursor, sync=sync)
        self._dirty = {h: e for h, e in self._dirty.items() if e in pending}

    def read_raw(self, entry: BlockIndexEntry) -> bytes:
        """The block's bytes from its blk file, checked to be that block (Core's
        ReadBlockFromDisk hash check, src/node/blockstorage.cpp): ``BlockFileError`` if it has
        none, they do not parse, or their header hashes to another block."""
        return self._read_checked(entry)[0]

    def _read_checked(self, entry: BlockIndexEntry) -> tuple[bytes, Block]:
        if entry.data_pos is None:
            raise BlockFileError(f"block {entry.hash[::-1].hex()} has no data")
        raw = self.data.block_files.read_block(entry.data_pos)
        try:
            block = parse_block(raw)
        except ParseError as exc:
            raise BlockFileError(f"stored block {entry.hash[::-1].hex()} does not parse: "
                                 f"{exc}") from None
        if block.hash != entry.hash:
            raise BlockFileError(f"stored block at {entry.data_pos} is not "
                                 f"{entry.hash[::-1].hex()}")
        return raw, block

    def _read_block(self, entry: BlockIndexEntry) -> Block:
        block = self._memo.get(entry.hash)
        if block is not None:
            return block
        return self._read_checked(entry)[1]

    def _read_undo(self, entry: BlockIndexEntry) -> BlockUndo:
        """The undo data consensus needs (a disconnect, recovery, the start-up check): a
        damaged record is fatal, reported to the data directory's guard (nothing more is
        written)."""
        try:
            return self._decode_undo(entry)
        except ChainstateCorruptError as exc:
            self.data.guard.fatal(exc)
            raise

    def _decode_undo(self, entry: BlockIndexEntry) -> BlockUndo:
        if entry.undo_pos is None:
            raise ChainstateCorruptError(f"block {entry.hash[::-1].hex()} has no undo data",
                                         **_UNDO_STORE)
        try:
            undo = BlockUndo.decode(self.data.block_files.read_undo(entry.undo_pos,
                                                                    entry.prev_hash))
        except BlockFileError as exc:
            raise ChainstateCorruptError(str(exc), **_UNDO_STORE) from None
        except ChainstateCorruptError as exc:  # the checksum held but the record is malformed
            raise ChainstateCorruptError(str(exc.detail), **_UNDO_STORE) from None
        if undo.height != entry.height or undo.prev_hash != entry.prev_hash:
            raise ChainstateCorruptError(f"undo record of {entry.hash[::-1].hex()} is not its",
                                         **_UNDO_STORE)
        return undo

    def block_undo(self, entry: BlockIndexEntry) -> BlockUndo | None:
        """A query's read of the undo data (getblock's prevouts): a damaged record is a
        ``BlockFileError`` there (Core's "Can't read undo data from disk"), not a stop — the
        node needs it only to disconnect the block, where it is fatal."""
        if entry.undo_pos is None:
            return None
        try:
            return self._decode_undo(entry)
        except ChainstateCorruptError as exc:
            raise BlockFileError(f"Can't read undo data from disk: {exc.detail}") from None

    def _memoize(self, block: Block) -> None:
        memo = self._memo
        memo[block.hash] = block
        while len(memo) > _BLOCK_MEMO:
            del memo[next(iter(memo))]

    def _lose_data(self, entry: BlockIndexEntry) -> None:
        """The stored bytes are unusable (unreadable, or not the block the header commits to):
        forget them so the genuine block can be accepted again."""
        entry.status &= ~(HAVE_DATA | VALID)
        entry.data_pos = None
        self._memo.pop(entry.hash, None)
        self._dirty[entry.hash] = entry
        self._recompute_candidates()

    def _mark_failed(self, entry: BlockIndexEntry) -> None:
        entry.status = (entry.status | FAILED_VALID) & ~VALID
        self._dirty[entry.hash] = entry
        for child in self.descendants(entry):
            child.status |= FAILED_CHILD
            self._dirty[child.hash] = child
        self._recompute_candidates()

    # --- accepting blocks ------------------------------------------------------------------

    def check_header_time(self, header: BlockHeader, parent: BlockIndexEntry) -> None:
        """The header's time against ``parent``'s median time past and the node's clock
        (``BlockValidator.check_block_time``): the one place a block's time is judged."""
        self.validator.check_block_time(header.time, self.median_time_past(parent), self.now())

    def accept(self, block: Block, raw: bytes, *, header_time_checked: bool = False
               ) -> tuple[str, ValidationError | None]:
        """Store a submitted block. Returns (outcome, error) with outcome one of "new"
        (stored), "duplicate" (already stored), "duplicate-invalid" (known and failed),
        "invalid" (rejected: error set; a header failure is remembered so resubmitting gives
        "duplicate-invalid"). ``header_time_checked``: the caller ran ``check_header_time``
        on this parent already (a block prepared on the tip), so it is not run twice."""
        header = block.header
        entry = self.entries.get(block.hash)
        if entry is not None:
            if entry.failed:
                return "duplicate-invalid", None
            if entry.has_data:
                return "duplicate", None
        parent = self.entries.get(header.prev_hash)
        if parent is None or header.height == 0:
            return "invalid", ValidationError(reasons.PREV_BLK_NOT_FOUND)
        if parent.failed:
            error = ValidationError(reasons.BAD_PREVBLK, detail="the previous block is invalid")
            self._remember_failure(block, raw, entry, FAILED_CHILD)
            return "invalid", error
        if header.height != parent.height + 1:
            # The index keys a block's height by its header; one that contradicts its parent
            # must not enter it (getchaintips would list the claimed height), so it is refused
            # without being remembered.
            return "invalid", ValidationError(reasons.BAD_BLK_HEIGHT)
        if not header_time_checked:
            try:
                self.check_header_time(header, parent)
            except ValidationError as exc:
                if exc.reason == reasons.TIME_TOO_OLD:  # invalid for good, as Core marks it
                    self._remember_failure(block, raw, entry, FAILED_VALID)
                return "invalid", exc
        if parent is not self.tip:
            # Not connected right away: run the context-free checks now (connecting runs them
            # for a block on the tip).
            try:
                self.validator.check_block(block, BlockRef(parent.hash, parent.height))
            except ValidationError as exc:
                if exc.reason not in MUTATION_REASONS:
                    self._remember_failure(block, raw, entry, FAILED_VALID)
                return "invalid", exc
        if entry is None:
            entry = self._new_entry(block, raw, HAVE_DATA)
        else:  # a known header without (usable) bytes: take these; first seen = now, as
            # Core numbers blocks when their data arrives
            entry.data_pos = self.data.block_files.write_block(raw)
            entry.status |= HAVE_DATA
            entry.seq = self._next_seq
            self._next_seq += 1
            entry.n_tx, entry.size = len(block.transactions), len(raw)
            entry.weight = block.weight
            self._dirty[entry.hash] = entry
        self._write_index()
        self._memoize(block)
        if self.children.get(entry.hash):
            self._recompute_candidates()  # its stored descendants may be connectable again
        else:
            entry.connectable = parent.connectable
            if entry.connectable and _key(entry) >= _key(self.tip):
                self._candidates.add(entry)
        return "new", None

    def accept_header(self, header: BlockHeader) -> tuple[str, ValidationError | None]:
        """Store a submitted header without its block (Core's AcceptBlockHeader): outcomes as
        ``accept``'s. The entry has no data (getchaintips: headers-only) until ``accept``
        takes the block's bytes."""
        entry = self.entries.get(header.hash)
        if entry is not None:
            return ("duplicate-invalid" if entry.failed else "duplicate"), None
        parent = self.entries.get(header.prev_hash)
        if parent is None or header.height == 0:
            return "invalid", ValidationError(reasons.PREV_BLK_NOT_FOUND)
        if parent.failed:
            return "invalid", ValidationError(reasons.BAD_PREVBLK,
                                              detail="the previous block is invalid")
        if header.height != parent.height + 1:
            return "invalid", ValidationError(reasons.BAD_BLK_HEIGHT)
        try:
            self.check_header_time(header, parent)
            self.validator.check_header(header)
        except ValidationError as exc:
            return "invalid", exc
        self._new_entry(Block(header, ()), b"", 0)
        self._write_index()
        return "new", None

    def _remember_failure(self, block: Block, raw: bytes, entry: BlockIndexEntry | None,
                          flag: int) -> None:
        if entry is None:
            entry = self._new_entry(block, raw, 0)
        entry.status |= flag
        self._dirty[entry.hash] = entry
        self._write_index()

    # --- activating the best chain ---------------------------------------------------------

    def _best(self) -> BlockIndexEntry:
        return max(self._candidates, key=_key)  # genesis is always a candidate

    def activate(self, result: Activation | None = None) -> Activation:
        """Move the chainstate to the best connectable block (module docstring)."""
        result = result if result is not None else Activation()
        while True:
            best = self._best()
            tip = self.tip
            if best is tip or (tip.connectable and _key(tip) >= _key(best)):
                break
            fork = self._fork(tip, best)
            while self.tip is not fork:
                self._disconnect_tip(result)
            path = list(self._ancestry(best, stop=fork))
            path.reverse()
            for entry in path:
                if not self._connect(entry, result):
                    break
        self._prune_candidates()
        self._write_index()
        return result

    def _connect(self, entry: BlockIndexEntry, result: Activation) -> bool:
        try:
            block = self._read_block(entry)
        except BlockFileError:
            self._lose_data(entry)
            return False
        try:
            report = self.validator.connect(block)
        except ValidationError as exc:
            result.verdicts[entry.hash] = exc
            if exc.reason in MUTATION_REASONS:
                self._lose_data(entry)
            else:
                self._mark_failed(entry)
            return False
        self._store_undo(entry, self.data.chainstate.take_undo(entry.hash))
        self.active.append(entry)
        self._set_tip()
        result.steps.append(("connect", block, entry.height))
        result.reports[entry.hash] = report
        result.verdicts[entry.hash] = None
        return True

    def connect_prepared(self, block: Block, raw: bytes, commit: Callable[[], object],
                         verified: bool) -> BlockIndexEntry:
        """Store and connect a block the caller validated stage by stage on the tip:
        ``commit`` applies it to the chainstate (stage 6). ``verified=False``: its proofs are
        still being checked; it is *pending* — in memory only (neither its index entry nor the
        chainstate is written) until ``mark_verified``; ``reject`` / ``abort_pending`` take it
        back out. A crash meanwhile restarts at the last verified, flushed tip."""
        if block.header.prev_hash != self.tip.hash:
            raise ChainstateConflictError("the prepared block no longer extends the tip")
        if not verified and self.entries.get(block.hash) is None:
            self.pending.append(self._new_entry(block, raw, HAVE_DATA))
            self._memoize(block)
        # Node.prepare_block judged the header time on this same tip (commit_block checks the
        # tip did not move): not again
        outcome, error = self.accept(block, raw, header_time_checked=True)
        entry = self.entries.get(block.hash)
        if outcome not in ("new", "duplicate") or entry is None or entry.failed \
                or self.in_active_chain(entry):
            raise ChainstateConflictError(
                f"block {block.hash[::-1].hex()} cannot be connected: {outcome} {error or ''}")
        commit()
        self._store_undo(entry, self.data.chainstate.take_undo(entry.hash))
        if not verified:
            entry.status &= ~VALID
            if entry not in self.pending:
                self.pending.append(entry)
        # on the tip with its data, not failed: connectable (accept set it only for a block it
        # stored itself; a pending block was stored above, so accept answered "duplicate")
        entry.connectable = True
        self.active.append(entry)
        self._set_tip()
        self._prune_candidates()
        self._write_index()
        return entry

    def mark_verified(self, block_hash: bytes) -> None:
        """The proofs of a pending block (and of every pending block below it) verified."""
        entry = self.entry(block_hash)
        if entry not in self.pending:
            raise ChainstateConflictError(f"block {block_hash[::-1].hex()} is not pending")
        done = self.pending[:self.pending.index(entry) + 1]
        del self.pending[:len(done)]
        for e in done:
            e.status |= VALID
            self._dirty[e.hash] = e
        self._write_index()

    def abort_pending(self, result: Activation | None = None,
                      keep: BlockIndexEntry | None = None) -> Activation:
        """Disconnect every pending block (above ``keep``, if given) and forget it, as if it
        had never been submitted."""
        result = result if result is not None else Activation()
        while self.pending and self.tip is self.pending[-1] and self.tip is not keep:
            self._disconnect_tip(result)  # forgets it
        return result

    def _forget(self, entry: BlockIndexEntry) -> None:
        self.pending.remove(entry)
        del self.entries[entry.hash]
        siblings = self.children.get(entry.prev_hash, [])
        if entry in siblings:
            siblings.remove(entry)
        self._candidates.discard(entry)
        self._dirty.pop(entry.hash, None)
        self._memo.pop(entry.hash, None)

    def reject(self, block_hash: bytes) -> Activation:
        """A pending block's proofs failed: forget the pending blocks above it, disconnect it
        and remember it as invalid (resubmitting it gives duplicate-invalid), then activate
        the best remaining chain. Pending blocks below it stay pending."""
        entry = self.entry(block_hash)
        if entry not in self.pending:
            raise ChainstateConflictError(f"block {block_hash[::-1].hex()} is not pending")
        result = self.abort_pending(keep=entry)
        self.pending.remove(entry)  # disconnected below as a known block, not forgotten
        self._disconnect_tip(result)
        entry.status = FAILED_VALID  # its bytes were never indexed: a failed header
        entry.data_pos = entry.undo_pos = None
        self._dirty[entry.hash] = entry
        self._recompute_candidates()
        return self.activate(result)

    def _disconnect_tip(self, result: Activation) -> None:
        entry = self.tip
        if entry.height == 0:
            raise ChainstateConflictError("the genesis block cannot be disconnected")
        undo = self._read_undo(entry)
        try:
            block = self._read_block(entry)
        except BlockFileError as exc:
            raise self.data.guard.fatal(BlockFilesCorruptError(
                f"cannot read a block to disconnect: {exc}")) from None
        self.validator.disconnect(entry.hash, undo)
        self.active.pop()
        self._set_tip()
        if entry in self.pending:  # never indexed: gone with its connection
            self._forget(entry)
        result.steps.append(("disconnect", block, entry.height))

    def invalidate(self, block_hash: bytes) -> Activation:
        """Mark a block (and its descendants) invalid, leave it if active, activate the best
        remaining chain (Core's invalidateblock)."""
        entry = self.entry(block_hash)
        if entry.height == 0:
            raise ChainstateConflictError("the genesis block cannot be invalidated")
        result = Activation()
        while self.in_active_chain(entry):
            self._disconnect_tip(result)
        entry.status |= FAILED_VALID
        self._dirty[entry.hash] = entry
        for child in self.descendants(entry):
            child.status |= FAILED_CHILD
            self._dirty[child.hash] = child
        self._recompute_candidates()
        return self.activate(result)

    def reconsider(self, block_hash: bytes) -> Activation:
        """Clear the failure flags of a block, its descendants and its ancestors, then activate
        (Core's reconsiderblock)."""
        entry = self.entry(block_hash)
        for other in [entry, *self.descendants(entry), *self._ancestry(entry.parent)]:
            if other.failed:
                other.status &= ~(FAILED_VALID | FAILED_CHILD)
                self._dirty[other.hash] = other
        self._recompute_candidates()
        return self.activate()

    def precious(self, block_hash: bytes) -> Activation:
        """Core's PreciousBlock: a block at least as high as the tip is treated as if seen
        before every other, so it wins the tie (``BlockIndexEntry.precious``, never written: a
        restart forgets it, as Core's does); later calls win over earlier ones until the tip
        grows."""
        entry = self.entry(block_hash)
        tip = self.tip
        if entry.height < tip.height:
            return Activation()
        if tip.height > self._precious_height:
            self._precious_next = 1
        self._precious_height = tip.height
        self._candidates.discard(entry)
        entry.precious = self._precious_next
        self._precious_next += 1
        if entry.connectable:
            self._candidates.add(entry)
            self._prune_candidates()
        return self.activate()

    # --- flushing --------------------------------------------------------------------------

    def flush_due(self) -> bool:
        chainstate = self.data.chainstate
        return not self.pending and (chainstate.usage > chainstate.cache_budget
                or chainstate.blocks_since_flush >= self.policy.max_unflushed_blocks
                or (chainstate.blocks_since_flush > 0
                    and self._clock() - self._last_flush >= self.policy.interval))

    def flush(self) -> None:
        """Make everything durable: block files (fsync with ``sync``), the index, then the
        chainstate (HEAD_BLOCKS protocol) and the proof cache's pending deletions."""
        data = self.data
        sync = data.chainstate.sync
        if sync:
            data.block_files.fsync()
        self._write_index(sync=sync)
        if not self.pending:  # never persist a block whose proofs are not verified
            data.chainstate.flush()
            self._last_flush = self._clock()
        data.proof_cache.flush()

    # --- queries ---------------------------------------------------------------------------

    def read_block(self, entry: BlockIndexEntry) -> Block:
        return self._read_block(entry)

    def median_time_past(self, entry: BlockIndexEntry) -> int:
        times = sorted(e.header.time for _, e in zip(range(MEDIAN_TIME_SPAN),
                                                     self._ancestry(entry), strict=False))
        return times[len(times) // 2]

    def median_time_past_at(self, height: int) -> int:
        """The median time past of the active chain's block at ``height`` (0 ≤ height ≤ the
        tip's): what timelocks are judged against (``validator.timelocks.MedianTimes``)."""
        if not 0 <= height < len(self.active):
            raise IndexError(f"no active block at height {height}")
        return self.median_time_past(self.active[height])

    def tips(self) -> list[BlockIndexEntry]:
        """Entries without children, plus the active tip (getchaintips)."""
        found = [e for e in self.entries.values() if not self.children.get(e.hash)]
        if self.tip not in found:
            found.append(self.tip)
        return found

    def fork_point(self, entry: BlockIndexEntry) -> BlockIndexEntry:
        """Where ``entry``'s branch leaves the active chain."""
        return self._fork(entry, self.tip)
