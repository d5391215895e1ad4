"""The chainstate: the UTXO set, per-block undo data and the best-block marker, in LevelDB.

Key layout (one database, strict one-byte prefixes)::

    b"V"                      format version (1 byte)
    b"B"                      best block: hash (32) ‖ height (u32 LE)
    b"c" ‖ txid ‖ u32le(n)    UTXO entry: height (u32 LE) ‖ flags (1: bit 0 = coinbase) ‖ txout
    b"u" ‖ block hash         undo record of that block (see ``_encode_undo``)

``connect_block`` and ``disconnect_tip`` each apply everything, including the best-block marker,
in ONE LevelDB write batch: a process killed at any moment reopens at either the old or the new
tip, never in between (design.md "Chainstate"). LevelDB appends the batch to its log with one
write() call, so even ``sync=False`` survives a killed process; ``sync=True`` (default) also
survives power loss.

The txout bytes are opaque here: the validator stores the Elements-serialized TxOut verbatim.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import plyvel

from validator.store.errors import (
    ChainstateConflictError,
    ChainstateCorruptError,
    DuplicateOutputError,
    MissingInputError,
    StoreError,
)
from validator.store.leveldb import LevelDbHandle, open_db

FORMAT_VERSION = b"\x01"
_KEY_VERSION = b"V"
_KEY_BEST = b"B"
_PREFIX_COIN = b"c"
_PREFIX_UNDO = b"u"
_NULL_HASH = bytes(32)
_U32 = struct.Struct("<I")
DEFAULT_COINS_CACHE = 100_000  # recently created / restored UTXO entries kept in memory


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
            raise ValueError("outpoint txid must be 32 bytes")
        if not 0 <= index <= 0xFFFFFFFF:
            raise ValueError("outpoint index must fit in 32 bits")
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
            raise ValueError("height must fit in 32 bits")

    def encode(self) -> bytes:
        return _U32.pack(self.height) + (b"\x01" if self.coinbase else b"\x00") + self.txout

    @classmethod
    def decode(cls, value: bytes) -> UtxoEntry:
        if len(value) < 5 or value[4] > 1:
            raise ChainstateCorruptError("malformed UTXO entry")
        return cls(_U32.unpack_from(value)[0], value[4] == 1, bytes(value[5:]))


@dataclass(frozen=True, slots=True)
class BlockRef:
    """A block on the active chain: its hash (internal byte order) and height."""

    hash: bytes
    height: int


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
    """What disconnecting a block needs: the entries it spent and the outpoints it created."""

    height: int
    prev_hash: bytes
    spent: tuple[tuple[Outpoint, UtxoEntry], ...]
    created: tuple[Outpoint, ...]


def _encode_undo(undo: BlockUndo) -> bytes:
    """u32 height ‖ prev hash ‖ u32 n_spent ‖ n × (txid ‖ u32 index ‖ u32 len ‖ entry)
    ‖ u32 n_created ‖ n × (txid ‖ u32 index)."""
    parts = [_U32.pack(undo.height), undo.prev_hash, _U32.pack(len(undo.spent))]
    for outpoint, entry in undo.spent:
        encoded = entry.encode()
        parts += [outpoint.txid, _U32.pack(outpoint.index), _U32.pack(len(encoded)), encoded]
    parts.append(_U32.pack(len(undo.created)))
    for outpoint in undo.created:
        parts += [outpoint.txid, _U32.pack(outpoint.index)]
    return b"".join(parts)


def _decode_undo(data: bytes) -> BlockUndo:
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
        outpoint = Outpoint(take(32), u32())
        spent.append((outpoint, UtxoEntry.decode(take(u32()))))
    n_created = u32()
    if n_created * 36 != len(view) - pos:
        raise ChainstateCorruptError("undo record created list does not match its length")
    created = tuple(Outpoint(take(32), u32()) for _ in range(n_created))
    return BlockUndo(height, prev_hash, tuple(spent), created)


class Chainstate(LevelDbHandle):
    """The UTXO set of the active chain with undo data. One owner at a time (LevelDB LOCK)."""

    KIND = "chainstate"

    def __init__(self, db: plyvel.DB, path: str, sync: bool,
                 coins_cache_max: int = DEFAULT_COINS_CACHE) -> None:
        self._db: plyvel.DB | None = db
        self.path = path
        self.sync = sync
        self._tip = self._read_tip()
        self._generation = 0  # successful writes through this handle (the only writer: LOCK)
        self.coins_cache_max = coins_cache_max
        self._coins: dict[Outpoint, UtxoEntry] = {}

    @classmethod
    def open(cls, path: str, *, sync: bool = True, cache_bytes: int = 64 << 20,
             coins_cache_max: int = DEFAULT_COINS_CACHE) -> Chainstate:
        """Open (creating if needed) the chainstate at ``path``.

        ``cache_bytes`` sizes LevelDB's block cache (and a quarter of it the write buffer).
        ``coins_cache_max`` bounds the in-memory coins cache (see ``_remember``; 0 disables it).

        ``DataDirLockedError`` if another owner holds it; ``ChainstateCorruptError`` if the
        database is unreadable or of an unknown format (never wiped: it is consensus state).
        """
        try:
            db = open_db(path, paranoid=True, cache_bytes=cache_bytes,
                         write_buffer_bytes=max(cache_bytes // 4, 1 << 20))
        except StoreError:
            raise
        except plyvel.Error as exc:
            raise ChainstateCorruptError(f"chainstate at {path} is unreadable: {exc}") from None
        try:
            version = db.get(_KEY_VERSION)
            if version is None:
                if next(db.iterator(include_value=False), None) is not None:
                    raise ChainstateCorruptError(f"chainstate at {path} has no format version")
                db.put(_KEY_VERSION, FORMAT_VERSION, sync=True)
            elif version != FORMAT_VERSION:
                raise ChainstateCorruptError(
                    f"chainstate at {path} has format version {version.hex()}, "
                    f"expected {FORMAT_VERSION.hex()}")
            return cls(db, path, sync, coins_cache_max)
        except BaseException:
            db.close()
            raise

    # --- lifecycle -------------------------------------------------------------------------

    # --- reads -----------------------------------------------------------------------------

    def _read_tip(self) -> BlockRef | None:
        value = self.db.get(_KEY_BEST)
        if value is None:
            return None
        if len(value) != 36:
            raise ChainstateCorruptError("malformed best-block marker")
        return BlockRef(value[:32], _U32.unpack_from(value, 32)[0])

    def best_block(self) -> BlockRef | None:
        """The tip of the active chain, or None before the first block."""
        return self._tip

    def get(self, outpoint: Outpoint) -> UtxoEntry | None:
        db = self.db  # a closed chainstate raises, cached entry or not
        entry = self._coins.get(outpoint)
        if entry is not None:
            return entry
        value = db.get(outpoint.key())
        return None if value is None else UtxoEntry.decode(value)

    def get_many(self, outpoints: Iterable[Outpoint]) -> dict[Outpoint, UtxoEntry | None]:
        """Entries of several outpoints, as of one consistent state: the coins cache (which
        mirrors every committed write) and one LevelDB snapshot for the rest."""
        db = self.db
        coins = self._coins
        result: dict[Outpoint, UtxoEntry | None] = {}
        missing: list[Outpoint] = []
        for outpoint in outpoints:
            entry = coins.get(outpoint)
            if entry is None:
                missing.append(outpoint)
            else:
                result[outpoint] = entry
        if missing:
            decode = UtxoEntry.decode
            with db.snapshot() as snap:
                get = snap.get
                for outpoint in missing:
                    value = get(outpoint.key())
                    result[outpoint] = None if value is None else decode(value)
        return result

    def _remember(self, entries: Iterable[tuple[Outpoint, UtxoEntry]],
                  forget: Iterable[Outpoint]) -> None:
        """Update the coins cache after a committed write: ``forget`` was deleted, ``entries``
        were written. Like Bitcoin Core's coins cache, it holds the outputs most likely to be
        spent next (just created, or restored by a disconnect) so connecting the next block
        reads them from memory. It is only ever filled with what this handle just wrote (one
        writer per database: the LOCK), so it always agrees with LevelDB; it is bounded, oldest
        first, and empty after a restart."""
        coins = self._coins
        for outpoint in forget:
            coins.pop(outpoint, None)
        if self.coins_cache_max <= 0:
            return
        coins.update(entries)
        excess = len(coins) - self.coins_cache_max
        if excess > 0:
            for outpoint in list(itertools.islice(coins, excess)):
                del coins[outpoint]

    def read_view(self, outpoints: Iterable[Outpoint]) -> SpendView:
        """``get_many`` with the write generation, for ``connect_block(..., view=...)``."""
        return SpendView(self._generation, self.get_many(outpoints))

    def __contains__(self, outpoint: object) -> bool:
        return isinstance(outpoint, Outpoint) and self.db.get(outpoint.key()) is not None

    def iter_utxos(self) -> Iterator[tuple[Outpoint, UtxoEntry]]:
        """Every UTXO in key order (txid, index), from one snapshot."""
        with self.db.snapshot() as snap:
            for key, value in snap.iterator(prefix=_PREFIX_COIN):
                yield Outpoint.from_key(key), UtxoEntry.decode(value)

    def utxo_snapshot(self) -> dict[Outpoint, UtxoEntry]:
        """The whole UTXO set as a dict (tests and tools; O(size) memory)."""
        return dict(self.iter_utxos())

    def undo_block_hashes(self) -> list[bytes]:
        """Hashes of every block that has undo data (exactly the connected blocks)."""
        return [key[1:] for key in self.db.iterator(prefix=_PREFIX_UNDO, include_value=False)]

    def undo(self, block_hash: bytes) -> BlockUndo | None:
        value = self.db.get(_PREFIX_UNDO + block_hash)
        return None if value is None else _decode_undo(value)

    # --- writes ----------------------------------------------------------------------------

    def connect_block(self, block_hash: bytes, height: int, prev_hash: bytes,
                      spent: Sequence[Outpoint],
                      created: Sequence[tuple[Outpoint, UtxoEntry]],
                      view: SpendView | None = None) -> BlockRef:
        """Apply a validated block: delete ``spent``, insert ``created``, store undo data, move
        the tip. All or nothing, in one atomic write batch.

        The block must extend the tip: ``prev_hash`` = tip hash and ``height`` = tip height + 1
        (the first block: height 0 and a null prev_hash), else ``ChainstateConflictError``.
        A spent outpoint must be in the UTXO set or created earlier in this block (the caller
        checks in-block order); otherwise, or if spent twice, ``MissingInputError``. A created
        outpoint that already exists or is created twice gives ``DuplicateOutputError``.
        Nothing is written when any check fails.

        ``view``: what the caller already read of the spent outpoints (``read_view``). Its
        entries are used instead of reading them again (the same checks apply to them); spent
        outpoints it lacks, and every created outpoint, are still read. A view older than the
        last write through this handle gives ``ChainstateConflictError``.
        """
        if len(block_hash) != 32 or len(prev_hash) != 32:
            raise ValueError("block hashes must be 32 bytes")
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
        if self.db.get(_PREFIX_UNDO + block_hash) is not None:
            raise ChainstateConflictError(f"block {block_hash[::-1].hex()} is already connected")

        created_here: dict[Outpoint, UtxoEntry] = dict(created)
        if len(created_here) != len(created):
            seen_created: set[Outpoint] = set()
            for outpoint, _ in created:
                if outpoint in seen_created:
                    raise DuplicateOutputError(outpoint, f"{outpoint} created twice in the block")
                seen_created.add(outpoint)
        known = view.entries if view is not None else {}
        to_read = list(created_here)
        to_read += [o for o in spent if o not in known]
        existing = self.get_many(to_read)
        for outpoint in created_here:
            if existing[outpoint] is not None:
                raise DuplicateOutputError(outpoint, f"{outpoint} already exists")
        existing.update(known)

        if len(set(spent)) != len(spent):
            seen: set[Outpoint] = set()
            for outpoint in spent:
                if outpoint in seen:
                    raise MissingInputError(outpoint, f"{outpoint} spent twice in the block")
                seen.add(outpoint)
        spent_from_set: list[tuple[Outpoint, UtxoEntry]] = []
        spent_in_block: set[Outpoint] = set()
        for outpoint in spent:
            entry = existing[outpoint]
            if entry is not None:
                spent_from_set.append((outpoint, entry))
            elif outpoint in created_here:
                spent_in_block.add(outpoint)
            else:
                raise MissingInputError(outpoint, f"{outpoint} is not in the UTXO set")

        net_created = [(o, e) for o, e in created_here.items() if o not in spent_in_block]
        undo = BlockUndo(height, prev_hash, tuple(spent_from_set),
                         tuple(o for o, _ in net_created))
        new_tip = BlockRef(block_hash, height)
        batch = self.db.write_batch(sync=self.sync)
        delete, put = batch.delete, batch.put
        for outpoint, _ in spent_from_set:
            delete(outpoint.key())
        for outpoint, entry in net_created:
            put(outpoint.key(), entry.encode())
        put(_PREFIX_UNDO + block_hash, _encode_undo(undo))
        put(_KEY_BEST, block_hash + _U32.pack(height))
        batch.write()
        self._tip = new_tip
        self._generation += 1
        self._remember(net_created, (o for o, _ in spent_from_set))
        return new_tip

    def disconnect_tip(self) -> BlockRef:
        """Undo the tip block in one atomic batch; returns the block that was disconnected.

        The UTXO set becomes exactly what it was before that block; the tip moves to its
        parent (None after disconnecting height 0). ``ChainstateConflictError`` with no tip.
        """
        tip = self._tip
        if tip is None:
            raise ChainstateConflictError("no block to disconnect")
        undo = self.undo(tip.hash)
        if undo is None:
            raise ChainstateCorruptError(f"undo data of tip {tip.hash[::-1].hex()} is missing")
        if undo.height != tip.height:
            raise ChainstateCorruptError("undo record height does not match the tip")
        batch = self.db.write_batch(sync=self.sync)
        for outpoint in undo.created:
            batch.delete(outpoint.key())
        for outpoint, entry in undo.spent:
            batch.put(outpoint.key(), entry.encode())
        batch.delete(_PREFIX_UNDO + tip.hash)
        if tip.height == 0:
            batch.delete(_KEY_BEST)
            new_tip = None
        else:
            batch.put(_KEY_BEST, undo.prev_hash + _U32.pack(tip.height - 1))
            new_tip = BlockRef(undo.prev_hash, tip.height - 1)
        batch.write()
        self._tip = new_tip
        self._generation += 1
        self._remember(undo.spent, undo.created)
        return tip
