"""The chainstate: the UTXO set of the active chain, with an in-memory coins cache, in LevelDB.

Key layout (one database, strict one-byte prefixes)::

    b"V"                      format version (1 byte)
    b"B"                      BEST_BLOCK: hash (32) ‖ height (u32 LE) of the flushed tip
    b"H"                      HEAD_BLOCKS while a flush is being written: new tip ‖ old tip
                              (hash ‖ u32 height each; the old one all-ones when there was none)
    b"c" ‖ txid ‖ u32le(n)    UTXO entry: height (u32 LE) ‖ flags (1: bit 0 = coinbase) ‖ txout

The coins cache (Bitcoin Core's ``CCoinsViewCache`` and ``-dbcache``, docs/replay.md §4.5):
``connect_block`` and ``disconnect_block`` change only memory. Each cached coin is clean (as on
disk), dirty (to be written) or dirty and fresh (not on disk: spending it just forgets it, so
coins created and spent between two flushes never touch LevelDB). ``flush`` writes the net
change as write batches bracketed by Core's HEAD_BLOCKS protocol:

1. the first batch erases BEST_BLOCK and records HEAD_BLOCKS = (new tip, old tip);
2. coin writes follow, split into batches of at most ``batch_bytes``;
3. the last batch erases HEAD_BLOCKS and writes BEST_BLOCK = new tip (synced if ``sync``).

A flush that fits one batch is one atomic write. A process killed inside a multi-batch flush
leaves HEAD_BLOCKS: reopening reports it (``interrupted_flush``) and the chain manager calls
``recover`` with the undo data of the old branch and the changes of the new one, which are
re-applied idempotently (a put or delete of a coin may be repeated) and flushed again, so the
database ends exactly at the new tip. Undo data lives with the blocks (``validator.store
.blockfiles``): ``connect_block`` keeps each block's ``BlockUndo`` until ``take_undo``.

The txout bytes are opaque here: the validator stores the Elements-serialized TxOut verbatim.

Integrity (docs/durability.md §2): every read verifies LevelDB's block checksums (Core's
``verify_checksums``, src/dbwrapper.cpp) and the database is opened with paranoid checks; a
failure is a ``ChainstateCorruptError`` ("Corrupted block database detected ... use
-reindex-chainstate") reported to the ``guard``, never altered data served. Flush batches are
written through the ``guard`` (``validator.store.durability``): the first failed write stops
every later one.
"""

from __future__ import annotations

import itertools
import struct
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import NamedTuple, cast

import plyvel

from validator.store.durability import WriteGuard
from validator.store.errors import (
    ChainstateConflictError,
    ChainstateCorruptError,
    DuplicateOutputError,
    MissingInputError,
    StoreValueError,
)
from validator.store.leveldb import LevelDbHandle, open_versioned

FORMAT_VERSION = b"\x02"
_KEY_BEST = b"B"
_KEY_HEAD = b"H"
_PREFIX_COIN = b"c"
_NULL_HASH = bytes(32)
_NO_HEIGHT = 0xFFFFFFFF
_U32 = struct.Struct("<I")
_OUTPOINT_FORMAT = "32sI"  # txid ‖ u32 index
_UNDO_SPENT_HEAD = struct.Struct("<32sIII?")  # outpoint ‖ u32 entry length ‖ entry's height, flag
DEFAULT_CACHE_BUDGET = 64 << 20  # bytes of coins cache before a flush is due
DEFAULT_BATCH_BYTES = 16 << 20  # Core's -dbbatchsize
COIN_OVERHEAD = 320  # estimated Python bytes per cached coin, besides its txout bytes
SPENT_OVERHEAD = 200  # a spent (deletion pending) coin: key objects and set entries


class _OutpointFields(NamedTuple):
    txid: bytes
    index: int  # type: ignore[assignment]  # shadows tuple.index on purpose: Core's name


class Outpoint(_OutpointFields):
    """A transaction output reference: txid (32 bytes, internal byte order) and index.

    A named tuple: block connection makes and hashes thousands per block, and a tuple's hash
    and equality run in C (equal to the plain tuple ``(txid, index)``). ``Outpoint(...)``
    validates; ``Outpoint.trusted`` skips that for fields the parser already bounded (a
    32-byte hash, a u32 index).
    """

    __slots__ = ()

    def __new__(cls, txid: bytes, index: int) -> Outpoint:
        if len(txid) != 32:
            raise StoreValueError("outpoint txid must be 32 bytes")
        if not 0 <= index <= 0xFFFFFFFF:
            raise StoreValueError("outpoint index must fit in 32 bits")
        return tuple.__new__(cls, (txid, index))

    @classmethod
    def trusted(cls, txid: bytes, index: int) -> Outpoint:
        return tuple.__new__(cls, (txid, index))

    def key(self) -> bytes:
        return _PREFIX_COIN + self[0] + _U32.pack(self[1])

    @classmethod
    def from_key(cls, key: bytes) -> Outpoint:
        if len(key) != 37 or key[:1] != _PREFIX_COIN:
            raise ChainstateCorruptError(f"bad UTXO key {key.hex()}")
        return tuple.__new__(cls, (key[1:33], _U32.unpack_from(key, 33)[0]))

    def __str__(self) -> str:
        return f"{self.txid[::-1].hex()}:{self.index}"

    def __repr__(self) -> str:
        return f"Outpoint({self})"


@dataclass(frozen=True, slots=True)
class UtxoEntry:
    """An unspent output: creation height, coinbase flag and the serialized TxOut (opaque)."""

    height: int
    coinbase: bool
    txout: bytes

    def __post_init__(self) -> None:
        if not 0 <= self.height <= 0xFFFFFFFF:
            raise StoreValueError("height must fit in 32 bits")

    @classmethod
    def trusted(cls, height: int, coinbase: bool, txout: bytes) -> UtxoEntry:
        """Construct without the range check, for a height the caller took from a block
        header (the parser bounds it to 32 bits)."""
        entry = object.__new__(cls)
        _set_height(entry, height)
        _set_coinbase(entry, coinbase)
        _set_txout(entry, txout)
        return entry

    def encode(self) -> bytes:
        return _U32.pack(self.height) + (b"\x01" if self.coinbase else b"\x00") + self.txout

    @classmethod
    def decode(cls, value: bytes) -> UtxoEntry:
        if len(value) < 5 or value[4] > 1:
            raise ChainstateCorruptError("malformed UTXO entry")
        return cls(_U32.unpack_from(value)[0], value[4] == 1, bytes(value[5:]))


# Slot setters bypass the frozen dataclass's __setattr__ (for ``UtxoEntry.trusted`` only).
_set_height = UtxoEntry.__dict__["height"].__set__
_set_coinbase = UtxoEntry.__dict__["coinbase"].__set__
_set_txout = UtxoEntry.__dict__["txout"].__set__


@dataclass(frozen=True, slots=True)
class BlockRef:
    """A block on the active chain: its hash (internal byte order) and height."""

    hash: bytes
    height: int


@dataclass(frozen=True, slots=True)
class HeadBlocks:
    """What an interrupted flush was writing: from the ``old`` tip (None: empty chainstate)
    to the ``new`` one."""

    new: BlockRef
    old: BlockRef | None


@dataclass(frozen=True, slots=True)
class SpendView:
    """UTXO entries read in one snapshot (``Chainstate.read_view``), with the chainstate's write
    generation at that read. ``connect_block`` takes the entries of the outpoints it spends from
    here instead of reading them again, which is sound only while nothing was written since:
    it checks the generation and refuses a stale view."""

    generation: int
    entries: dict[Outpoint, UtxoEntry | None]


@dataclass(frozen=True, slots=True)
class BlockUndo:
    """What disconnecting a block needs: the entries it spent from the UTXO set (in input
    order; outputs created and spent inside the block are not among them) and the outpoints it
    added (net of those)."""

    height: int
    prev_hash: bytes
    spent: tuple[tuple[Outpoint, UtxoEntry], ...]
    created: tuple[Outpoint, ...]

    def encode(self) -> bytes:
        """u32 height ‖ prev hash ‖ u32 n_spent ‖ n × (txid ‖ u32 index ‖ u32 len ‖ entry)
        ‖ u32 n_created ‖ n × (txid ‖ u32 index)."""
        head = _UNDO_SPENT_HEAD.pack
        created = self.created
        # the created outpoints (fixed size) in ONE pack call: per outpoint it was most of
        # the encoding's time (a warm block's undo record is written on its critical path)
        return b"".join([
            _U32.pack(self.height), self.prev_hash, _U32.pack(len(self.spent)),
            *[head(txid, index, 5 + len(entry.txout), entry.height, entry.coinbase)
              + entry.txout for (txid, index), entry in self.spent],
            _U32.pack(len(created)),
            struct.pack(f"<{_OUTPOINT_FORMAT * len(created)}",
                        *itertools.chain.from_iterable(created))])

    @classmethod
    def decode(cls, data: bytes) -> BlockUndo:
        """Inverse of ``encode``; ``ChainstateCorruptError`` on anything malformed."""
        view = memoryview(data)
        pos = 0

        def take(n: int) -> bytes:
            nonlocal pos
            if n > len(view) - pos:
                raise ChainstateCorruptError("undo record truncated")
            chunk = bytes(view[pos: pos + n])
            pos += n
            return chunk

        def u32() -> int:
            return _U32.unpack(take(4))[0]

        height = u32()
        prev_hash = take(32)
        n_spent = u32()
        if n_spent * 45 > len(view) - pos:  # each spent item takes at least 40 + 5 bytes
            raise ChainstateCorruptError("undo record spent count exceeds its length")
        spent = []
        for _ in range(n_spent):
            outpoint = Outpoint.trusted(take(32), u32())
            spent.append((outpoint, UtxoEntry.decode(take(u32()))))
        n_created = u32()
        if n_created * 36 != len(view) - pos:
            raise ChainstateCorruptError("undo record created list does not match its length")
        created = tuple(Outpoint.trusted(take(32), u32()) for _ in range(n_created))
        return cls(height, prev_hash, tuple(spent), created)


BlockChanges = tuple[Sequence[Outpoint], Sequence[tuple[Outpoint, UtxoEntry]]]
"""(outpoints a block spends from the UTXO set, entries it adds) — net of in-block spends."""


def net_changes(spent: Sequence[Outpoint],
                created: Sequence[tuple[Outpoint, UtxoEntry]]) -> BlockChanges:
    """A block's (spent, created) lists with outputs created and spent inside it removed."""
    created_here = {o for o, _ in created}
    in_block = {o for o in spent if o in created_here}
    if not in_block:
        return spent, created
    return ([o for o in spent if o not in in_block],
            [(o, e) for o, e in created if o not in in_block])


def _encode_ref(ref: BlockRef | None) -> bytes:
    if ref is None:
        return _NULL_HASH + _U32.pack(_NO_HEIGHT)
    return ref.hash + _U32.pack(ref.height)


def _decode_ref(value: bytes) -> BlockRef | None:
    height = _U32.unpack_from(value, 32)[0]
    return None if height == _NO_HEIGHT else BlockRef(bytes(value[:32]), height)


@dataclass(frozen=True, slots=True)
class FlushStats:
    coins_written: int
    coins_deleted: int
    batches: int


class Chainstate(LevelDbHandle):
    """The UTXO set of the active chain. One owner at a time (LevelDB LOCK)."""

    KIND = "chainstate"

    def __init__(self, db: plyvel.DB, path: str, sync: bool, cache_budget: int,
                 batch_bytes: int) -> None:
        self._db: plyvel.DB | None = db
        self.path = path
        self.sync = sync
        self.cache_budget = cache_budget
        self.batch_bytes = batch_bytes
        self.guard = WriteGuard()  # the data directory's (``DataDir`` shares one)
        # Test hook: called with the batch number after each partial batch of a multi-batch
        # flush (crash tests kill the process there).
        self.after_partial_batch: Callable[[int], None] | None = None
        self._interrupted = self._read_head()
        self._flushed = self._read_best()
        if self._interrupted is not None and self._flushed is not None:
            raise ChainstateCorruptError("chainstate has both BEST_BLOCK and HEAD_BLOCKS")
        self._tip = self._flushed
        self._generation = 0  # changes through this handle (the only writer: LOCK)
        self._coins: dict[Outpoint, UtxoEntry | None] = {}  # None: spent, deletion pending
        self._dirty: set[Outpoint] = set()
        self._fresh: set[Outpoint] = set()  # dirty coins that are not in LevelDB
        self._usage = 0
        self._undo: dict[bytes, BlockUndo] = {}
        self.blocks_since_flush = 0

    @classmethod
    def open(cls, path: str, *, sync: bool = True, cache_bytes: int = 8 << 20,
             cache_budget: int = DEFAULT_CACHE_BUDGET,
             batch_bytes: int = DEFAULT_BATCH_BYTES) -> Chainstate:
        """Open (creating if needed) the chainstate at ``path``.

        ``cache_bytes`` sizes LevelDB's block cache (and a quarter of it the write buffer);
        ``cache_budget`` is the coins cache's memory budget in bytes (``usage`` is compared to
        it by whoever decides when to ``flush``); ``batch_bytes`` caps one flush batch.

        ``DataDirLockedError`` if another owner holds it; ``ChainstateCorruptError`` if the
        database is unreadable or of an unknown format (never wiped: it is consensus state).
        """
        db = open_versioned(path, FORMAT_VERSION, ChainstateCorruptError, "chainstate",
                            cache_bytes=cache_bytes,
                            write_buffer_bytes=max(cache_bytes // 4, 1 << 20))
        try:
            return cls(db, path, sync, cache_budget, batch_bytes)
        except BaseException:
            db.close()
            raise

    # --- markers ---------------------------------------------------------------------------

    def _get_marker(self, key: bytes) -> bytes | None:
        try:
            value: bytes | None = self.db.get(key, verify_checksums=True)
        except (plyvel.CorruptionError, plyvel.IOError) as exc:
            raise self._corrupt(exc) from None
        return value

    def _read_best(self) -> BlockRef | None:
        value = self._get_marker(_KEY_BEST)
        if value is None:
            return None
        if len(value) != 36:
            raise ChainstateCorruptError("malformed best-block marker")
        return BlockRef(value[:32], _U32.unpack_from(value, 32)[0])

    def _read_head(self) -> HeadBlocks | None:
        value = self._get_marker(_KEY_HEAD)
        if value is None:
            return None
        new = _decode_ref(value[:36]) if len(value) == 72 else None
        if new is None:
            raise ChainstateCorruptError("malformed HEAD_BLOCKS marker")
        return HeadBlocks(new, _decode_ref(value[36:]))

    @property
    def interrupted_flush(self) -> HeadBlocks | None:
        """Set when the last flush was cut short: ``recover`` must run before anything else."""
        return self._interrupted

    def best_block(self) -> BlockRef | None:
        """The tip of the chainstate (in memory), or None before the first block."""
        return self._tip

    def flushed_block(self) -> BlockRef | None:
        """The tip as written to LevelDB by the last completed flush."""
        return self._flushed

    @property
    def usage(self) -> int:
        """Estimated bytes held by the coins cache (compare with ``cache_budget``)."""
        return self._usage

    def __len__(self) -> int:
        """Number of cached coins (spent-pending ones included)."""
        return len(self._coins)

    # --- reads -----------------------------------------------------------------------------

    def _check_ready(self) -> plyvel.DB:
        db = self.db
        if self._interrupted is not None:
            raise ChainstateConflictError("an interrupted flush must be recovered first")
        return db

    def get(self, outpoint: Outpoint) -> UtxoEntry | None:
        return self.get_many((outpoint,))[outpoint]

    def get_many(self, outpoints: Iterable[Outpoint]) -> dict[Outpoint, UtxoEntry | None]:
        """Entries of several outpoints: the coins cache, then one LevelDB snapshot for the
        rest (entries found there join the cache, clean)."""
        db = self._check_ready()
        coins = self._coins
        result: dict[Outpoint, UtxoEntry | None] = {}
        missing: list[Outpoint] = []
        absent = _ABSENT
        for outpoint in outpoints:
            entry = coins.get(outpoint, absent)
            if entry is absent:
                missing.append(outpoint)
            else:
                result[outpoint] = entry
        if missing:
            decode = UtxoEntry.decode
            usage = 0
            try:
                with db.snapshot() as snap:
                    get = snap.get
                    for outpoint in missing:
                        value = get(outpoint.key(), verify_checksums=True)
                        if value is None:
                            result[outpoint] = None
                        else:
                            found = result[outpoint] = coins[outpoint] = decode(value)
                            usage += COIN_OVERHEAD + len(found.txout)
            except (plyvel.CorruptionError, plyvel.IOError) as exc:
                raise self._corrupt(exc) from None
            finally:
                self._usage += usage
        return result

    def read_view(self, outpoints: Iterable[Outpoint]) -> SpendView:
        """``get_many`` with the write generation, for ``connect_block(..., view=...)``."""
        return SpendView(self._generation, self.get_many(outpoints))

    def __contains__(self, outpoint: object) -> bool:
        return isinstance(outpoint, Outpoint) and self.get(outpoint) is not None

    def _corrupt(self, exc: BaseException) -> ChainstateCorruptError:
        """A LevelDB read failure (checksum, missing table file) as the fatal error."""
        error = ChainstateCorruptError(f"LevelDB read failed in {self.path}: {exc}")
        self.guard.fatal(error)
        return error

    def iter_utxos(self) -> Iterator[tuple[Outpoint, UtxoEntry]]:
        """Every UTXO in key order (txid, then the index's little-endian bytes), as of now:
        LevelDB through one snapshot with the unflushed changes laid over it."""
        try:
            yield from self._iter_utxos()
        except (plyvel.CorruptionError, plyvel.IOError) as exc:
            raise self._corrupt(exc) from None

    def _iter_utxos(self) -> Iterator[tuple[Outpoint, UtxoEntry]]:
        self._check_ready()
        overlay = {o.key(): self._coins[o] for o in self._dirty}
        if not overlay:
            with self.db.snapshot() as snap:
                for key, value in snap.iterator(prefix=_PREFIX_COIN, verify_checksums=True):
                    yield Outpoint.from_key(key), UtxoEntry.decode(value)
            return
        pending = sorted(overlay.items())
        i = 0
        with self.db.snapshot() as snap:
            for key, value in snap.iterator(prefix=_PREFIX_COIN, verify_checksums=True):
                while i < len(pending) and pending[i][0] < key:
                    if pending[i][1] is not None:
                        yield Outpoint.from_key(pending[i][0]), pending[i][1]  # type: ignore[misc]
                    i += 1
                if i < len(pending) and pending[i][0] == key:
                    if pending[i][1] is not None:
                        yield Outpoint.from_key(key), pending[i][1]  # type: ignore[misc]
                    i += 1
                    continue
                yield Outpoint.from_key(key), UtxoEntry.decode(value)
        for key, entry in pending[i:]:
            if entry is not None:
                yield Outpoint.from_key(key), entry

    def utxo_snapshot(self) -> dict[Outpoint, UtxoEntry]:
        """The whole UTXO set as a dict (tests and tools; O(size) memory)."""
        return dict(self.iter_utxos())

    # --- cache updates ---------------------------------------------------------------------

    def _spend(self, outpoint: Outpoint) -> None:
        coins = self._coins
        old = coins.get(outpoint, _ABSENT)
        if outpoint in self._fresh and old is not None:  # never written: forget it
            del coins[outpoint]
            self._fresh.discard(outpoint)
            self._dirty.discard(outpoint)
            self._usage -= COIN_OVERHEAD + len(old.txout)
            return
        if old is _ABSENT:
            self._usage += SPENT_OVERHEAD
        elif old is not None:
            self._usage += SPENT_OVERHEAD - COIN_OVERHEAD - len(old.txout)
        coins[outpoint] = None
        self._dirty.add(outpoint)

    def _add(self, outpoint: Outpoint, entry: UtxoEntry, fresh: bool) -> None:
        coins = self._coins
        old = coins.get(outpoint, _ABSENT)
        if old is _ABSENT:
            self._usage += COIN_OVERHEAD + len(entry.txout)
        elif old is None:
            self._usage += COIN_OVERHEAD + len(entry.txout) - SPENT_OVERHEAD
            fresh = False  # deleted in memory only: LevelDB still has it
        else:
            self._usage += len(entry.txout) - len(old.txout)
            fresh = fresh and outpoint in self._fresh
        coins[outpoint] = entry
        self._dirty.add(outpoint)
        if fresh:
            self._fresh.add(outpoint)
        else:
            self._fresh.discard(outpoint)

    # --- block changes ---------------------------------------------------------------------

    def connect_block(self, block_hash: bytes, height: int, prev_hash: bytes,
                      spent: Sequence[Outpoint],
                      created: Sequence[tuple[Outpoint, UtxoEntry]],
                      view: SpendView | None = None, *, check_created: bool = True) -> BlockRef:
        """Apply a validated block in memory: spend ``spent``, add ``created``, move the tip.
        Its undo data is kept for ``take_undo``. All or nothing.

        The block must extend the tip: ``prev_hash`` = tip hash and ``height`` = tip height + 1
        (the first block: height 0 and a null prev_hash), else ``ChainstateConflictError``.
        A spent outpoint must be in the UTXO set or created earlier in this block (the caller
        checks in-block order); otherwise, or if spent twice, ``MissingInputError``. A created
        outpoint that already exists or is created twice gives ``DuplicateOutputError``.
        Nothing changes when any check fails.

        ``view``: what the caller already read of the spent outpoints (``read_view``). Its
        entries are used instead of reading them again (the same checks apply to them); spent
        outpoints it lacks, and every created outpoint, are still read. A view older than the
        last change through this handle gives ``ChainstateConflictError``.

        ``check_created=False``: the caller vouches that no created outpoint is in the UTXO
        set (the validator, where BIP34 implies BIP30): they are looked for in the coins cache
        only, not read from LevelDB, and become fresh coins.
        """
        if len(block_hash) != 32 or len(prev_hash) != 32:
            raise StoreValueError("block hashes must be 32 bytes")
        self._check_ready()
        tip = self._tip
        if tip is None:
            if height != 0 or prev_hash != _NULL_HASH:
                raise ChainstateConflictError(
                    "the first block must have height 0 and a null prev_hash")
        elif prev_hash != tip.hash or height != tip.height + 1:
            raise ChainstateConflictError(
                f"block {block_hash[::-1].hex()} at height {height} does not extend the tip "
                f"{tip.hash[::-1].hex()} at height {tip.height}")
        if view is not None and view.generation != self._generation:
            raise ChainstateConflictError("the spent outputs were read before the last write")

        created_here: dict[Outpoint, UtxoEntry] = dict(created)
        if len(created_here) != len(created):
            seen_created: set[Outpoint] = set()
            for outpoint, _ in created:
                if outpoint in seen_created:
                    raise DuplicateOutputError(outpoint, f"{outpoint} created twice in the block")
                seen_created.add(outpoint)
        known = view.entries if view is not None else {}
        spent_set = set(spent)
        unread = list(spent_set.difference(known))
        if check_created:
            unread[:0] = created_here
        existing = self.get_many(unread) if unread else {}
        coins = self._coins
        # check_created=False: one pass answers both "is any created outpoint an unspent
        # coin" and "may they be added without looking at each" (``_add_fresh_many``) when
        # none is in the cache at all, the usual case
        in_cache = True if check_created else any(map(coins.__contains__, created_here))
        lookup = existing.get if check_created else coins.get
        clash = next(filter(None, map(lookup, created_here)), None) if in_cache else None
        if clash is not None:
            outpoint = next(o for o in created_here if lookup(o) is not None)
            raise DuplicateOutputError(outpoint, f"{outpoint} already exists")
        if len(spent_set) != len(spent):
            seen: set[Outpoint] = set()
            for outpoint in spent:
                if outpoint in seen:
                    raise MissingInputError(outpoint, f"{outpoint} spent twice in the block")
                seen.add(outpoint)
        if existing:
            existing.update(known)
        else:
            existing = known  # read only from here on
        entries = list(map(existing.__getitem__, spent))
        spent_in_block: set[Outpoint] = set()
        from_set: Sequence[Outpoint] = spent
        from_set_entries = cast(list[UtxoEntry], entries)
        if not all(entries):
            from_set, from_set_entries = [], []
            for outpoint, entry in zip(spent, entries):
                if entry is not None:
                    from_set.append(outpoint)
                    from_set_entries.append(entry)
                elif outpoint in created_here:
                    spent_in_block.add(outpoint)
                else:
                    raise MissingInputError(outpoint, f"{outpoint} is not in the UTXO set")

        if spent_in_block:
            net_created = [(o, e) for o, e in created_here.items() if o not in spent_in_block]
            net_points = tuple(map(_point_of, net_created))
        else:
            net_created, net_points = list(created_here.items()), tuple(created_here)
        self._spend_many(from_set, from_set_entries)
        # none of them is an unspent coin (checked above); with ``in_cache`` False none is in
        # the cache even as a spent marker: ``_spend_many`` marks only outpoints of the UTXO
        # set, none of which is created here (that would have been a clash)
        self._add_fresh_many(net_created, net_points, in_cache)
        self._undo[block_hash] = BlockUndo(height, prev_hash,
                                           tuple(zip(from_set, from_set_entries)), net_points)
        new_tip = BlockRef(block_hash, height)
        self._tip = new_tip
        self._generation += 1
        self.blocks_since_flush += 1
        return new_tip

    def _spend_many(self, points: Sequence[Outpoint], entries: Sequence[UtxoEntry]) -> None:
        """``_spend`` of each outpoint, given with its cached entry (as just read: every
        entry ``get_many`` or a current ``read_view`` returns is the cache's own)."""
        coins = self._coins
        fresh = self._fresh.intersection(points)
        if fresh:  # created since the last flush: forgotten
            every = len(fresh) == len(points)  # a block on a recent tip: no filtering
            gone = entries if every else [e for o, e in zip(points, entries) if o in fresh]
            deque(map(coins.__delitem__, fresh), maxlen=0)
            self._fresh -= fresh
            self._dirty -= fresh
            self._usage -= COIN_OVERHEAD * len(gone) + sum(map(len, map(_txout_of, gone)))
            if every:
                return
            kept = [(o, e) for o, e in zip(points, entries) if o not in fresh]
            points, entries = list(map(_point_of, kept)), list(map(_entry_of, kept))
        if not points:
            return
        coins.update(zip(points, repeat(None)))
        self._dirty.update(points)
        self._usage += ((SPENT_OVERHEAD - COIN_OVERHEAD) * len(points)
                        - sum(map(len, map(_txout_of, entries))))

    def _add_fresh_many(self, created: Sequence[tuple[Outpoint, UtxoEntry]],
                        points: Sequence[Outpoint], in_cache: bool = True) -> None:
        """``_add(..., fresh=True)`` of each entry (``points``: their outpoints); none of them
        is a cached unspent coin. ``in_cache=False``: the caller saw that none is in the
        cache at all."""
        coins = self._coins
        if in_cache and any(map(coins.__contains__, points)):  # spent in memory, still in LevelDB
            for outpoint, entry in created:
                self._add(outpoint, entry, fresh=True)
            return
        coins.update(created)
        self._dirty.update(points)
        self._fresh.update(points)
        self._usage += (COIN_OVERHEAD * len(created)
                        + sum(map(len, map(_txout_of, map(_entry_of, created)))))

    def take_undo(self, block_hash: bytes) -> BlockUndo:
        """The undo data of a block ``connect_block`` applied (handed over once)."""
        try:
            return self._undo.pop(block_hash)
        except KeyError:
            raise ChainstateConflictError(
                f"no undo data held for block {block_hash[::-1].hex()}") from None

    def disconnect_block(self, block_hash: bytes, undo: BlockUndo) -> BlockRef:
        """Undo the tip block ``block_hash`` in memory with its undo data; returns the block
        that was disconnected. The UTXO set becomes exactly what it was before that block; the
        tip moves to its parent (None after disconnecting height 0)."""
        self._check_ready()
        tip = self._tip
        if tip is None:
            raise ChainstateConflictError("no block to disconnect")
        if tip.hash != block_hash:
            raise ChainstateConflictError(f"block {block_hash[::-1].hex()} is not the tip")
        if undo.height != tip.height:
            raise ChainstateCorruptError("undo record height does not match the tip")
        present = self.get_many(undo.created)
        for outpoint in undo.created:
            entry = present[outpoint]
            if entry is None:
                raise ChainstateCorruptError(f"{outpoint}, created by the tip, is missing")
            self._spend(outpoint)
        for outpoint, entry in undo.spent:
            self._add(outpoint, entry, fresh=False)
        self._undo.pop(block_hash, None)
        self._tip = None if tip.height == 0 else BlockRef(undo.prev_hash, tip.height - 1)
        self._generation += 1
        self.blocks_since_flush += 1
        return tip

    # --- flushing --------------------------------------------------------------------------

    def flush(self, *, head_old: BlockRef | None = None) -> FlushStats:
        """Write the cache's net changes and the tip with the HEAD_BLOCKS protocol (module
        docstring). ``head_old`` overrides the old tip recorded in HEAD_BLOCKS (``recover``
        keeps the one of the interrupted flush). Spent coins leave the cache; if it is over
        budget, clean coins are dropped, oldest first, down to three quarters of it."""
        db = self.db
        tip = self._tip
        if tip is None:
            raise ChainstateConflictError("nothing to flush before the first block")
        if not self._dirty and tip == self._flushed and self._interrupted is None:
            return FlushStats(0, 0, 0)
        old = head_old if self._interrupted is not None else self._flushed
        sync = self.sync
        batch = db.write_batch(sync=sync)
        batch.delete(_KEY_BEST)
        batch.put(_KEY_HEAD, _encode_ref(tip) + _encode_ref(old))
        size = 0
        batches = 0
        written = deleted = 0
        coins = self._coins
        for outpoint in self._dirty:
            entry = coins[outpoint]
            if entry is None:
                batch.delete(outpoint.key())
                deleted += 1
                size += 40
            else:
                value = entry.encode()
                batch.put(outpoint.key(), value)
                written += 1
                size += 40 + len(value)
            if size >= self.batch_bytes:
                self.guard.write("chainstate", batch.write)
                batches += 1
                if self.after_partial_batch is not None:
                    self.after_partial_batch(batches)
                batch = db.write_batch(sync=sync)
                size = 0
        batch.delete(_KEY_HEAD)
        batch.put(_KEY_BEST, _encode_ref(tip))
        self.guard.write("chainstate", batch.write)
        batches += 1
        for outpoint in self._dirty:
            if coins[outpoint] is None:
                del coins[outpoint]
                self._usage -= SPENT_OVERHEAD
        self._dirty.clear()
        self._fresh.clear()
        self._flushed = tip
        self._interrupted = None
        self.blocks_since_flush = 0
        self._generation += 1
        if self._usage > self.cache_budget:
            self._trim(self.cache_budget * 3 // 4)
        return FlushStats(written, deleted, batches)

    def _trim(self, target: int) -> None:
        """Drop clean coins (all of them are clean right after a flush), oldest first."""
        coins = self._coins
        drop = 0
        freed = 0
        excess = self._usage - target
        for entry in coins.values():
            if freed >= excess:
                break
            freed += COIN_OVERHEAD + (len(entry.txout) if entry is not None else 0)
            drop += 1
        for outpoint in list(itertools.islice(coins, drop)):
            del coins[outpoint]
        self._usage -= freed

    def recover(self, rollback: Sequence[BlockUndo], forward: Sequence[BlockChanges]) -> BlockRef:
        """Finish an interrupted flush (``interrupted_flush``): undo the old branch from the old
        tip down to the fork point (``rollback``: undo data, old tip first), re-apply the new
        branch from the fork point up (``forward``: each block's net changes, lowest first),
        and flush to the new tip. Every step is a put or a delete, so it is correct whatever
        part of the interrupted flush reached the disk, and may itself be interrupted and
        run again."""
        head = self._interrupted
        if head is None:
            raise ChainstateConflictError("no interrupted flush to recover")
        for undo in rollback:
            for outpoint in undo.created:
                self._spend(outpoint)
            for outpoint, entry in undo.spent:
                self._add(outpoint, entry, fresh=False)
        for spent, created in forward:
            for outpoint in spent:
                self._spend(outpoint)
            for outpoint, entry in created:
                self._add(outpoint, entry, fresh=False)
        self._tip = head.new
        self.flush(head_old=head.old)
        return head.new


_ABSENT = UtxoEntry(0, False, b"absent")  # sentinel of ``dict.get``, compared by identity
_txout_of = attrgetter("txout")
_point_of = itemgetter(0)
_entry_of = itemgetter(1)
