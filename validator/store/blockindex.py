"""The block index: every block the node has seen, side branches included, in LevelDB.

One record per block (``BlockIndexEntry``): its header, height, status flags, first-seen
sequence number, transaction count, size and weight, and the positions of its block record and
undo record in the block files. The chain manager (``validator.chain``) keeps all entries in
memory as a tree (``parent`` links) and writes the ones it changes, with the file cursors, in
one batch per step.

Key layout (its own database, ``blocks/index``)::

    b"V"                 format version (1 byte)
    b"F"                 file cursors: blk file u32 ‖ blk size u64 ‖ rev file u32 ‖ rev size u64
    b"b" ‖ block hash    entry (see ``encode_entry``)

Status flags (Core's ``BlockStatus``, reduced to what our chain needs):
``HAVE_DATA`` the block record is in a blk file; ``HAVE_UNDO`` its undo record is in a rev file
(it was connected once); ``VALID`` it passed full validation when connected (so it may be
reconnected after a restart or a reorg); ``FAILED_VALID`` it failed validation itself;
``FAILED_CHILD`` it descends from a failed block.

Integrity (docs/durability.md §2): reads verify LevelDB's checksums and each entry is checked
against its own header (the key is the header's hash); a failure is ``BlockIndexCorruptError``
("... use -reindex"). Writes go through the data directory's ``WriteGuard``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

import plyvel

from ctplugin.elements import BlockHeader, parse_block_header
from ctplugin.errors import CtpluginError
from validator.store.blockfiles import FileCursor, FilePos
from validator.store.durability import WriteGuard
from validator.store.errors import BlockIndexCorruptError
from validator.store.leveldb import LevelDbHandle, open_versioned

FORMAT_VERSION = b"\x01"
_KEY_FILES = b"F"
_PREFIX_ENTRY = b"b"

HAVE_DATA = 1
HAVE_UNDO = 2
VALID = 4
FAILED_VALID = 8
FAILED_CHILD = 16
FAILED_MASK = FAILED_VALID | FAILED_CHILD

# status, seq, height, n_tx, size, weight, data file/offset, undo file/offset, header length
_ENTRY = struct.Struct("<IQIIIIiIiII")
_FILES = struct.Struct("<IQIQ")
_NO_FILE = -1


@dataclass(eq=False, slots=True)
class BlockIndexEntry:
    """One known block. Identity-compared (one object per hash); ``parent``,
    ``connectable`` and ``precious`` live in memory only (rebuilt when the index is loaded)."""

    hash: bytes
    header: BlockHeader
    status: int
    seq: int
    n_tx: int = 0
    size: int = 0
    weight: int = 0
    data_pos: FilePos | None = None
    undo_pos: FilePos | None = None
    parent: BlockIndexEntry | None = field(default=None, repr=False)
    # The block and all its ancestors have data and none failed: it can be on the best chain.
    connectable: bool = field(default=False, repr=False)
    # preciousblock's preference among blocks of equal height (higher wins; memory only).
    precious: int = field(default=0, repr=False)

    @property
    def height(self) -> int:
        return self.header.height

    @property
    def prev_hash(self) -> bytes:
        return self.header.prev_hash

    @property
    def failed(self) -> bool:
        return bool(self.status & FAILED_MASK)

    @property
    def has_data(self) -> bool:
        return bool(self.status & HAVE_DATA)

    def __repr__(self) -> str:
        return f"BlockIndexEntry({self.hash[::-1].hex()[:16]}…, height={self.height}, " \
               f"status={self.status}, seq={self.seq})"


def encode_entry(entry: BlockIndexEntry) -> bytes:
    header = entry.header.serialize()
    data = entry.data_pos or FilePos(_NO_FILE, 0)
    undo = entry.undo_pos or FilePos(_NO_FILE, 0)
    return _ENTRY.pack(entry.status, entry.seq, entry.height, entry.n_tx, entry.size,
                       entry.weight, data.file, data.offset, undo.file, undo.offset,
                       len(header)) + header


def decode_entry(block_hash: bytes, value: bytes) -> BlockIndexEntry:
    """Inverse of ``encode_entry``; ``BlockIndexCorruptError`` on anything inconsistent."""
    if len(value) < _ENTRY.size:
        raise BlockIndexCorruptError("block index entry truncated")
    (status, seq, height, n_tx, size, weight, dfile, doff, ufile, uoff,
     hlen) = _ENTRY.unpack_from(value)
    if len(value) != _ENTRY.size + hlen:
        raise BlockIndexCorruptError("block index entry length mismatch")
    try:
        header = parse_block_header(value[_ENTRY.size:])
    except CtpluginError as exc:
        raise BlockIndexCorruptError(f"block index header does not parse: {exc}") from None
    if header.hash != block_hash or header.height != height:
        raise BlockIndexCorruptError(f"block index entry {block_hash[::-1].hex()} does not "
                                     "match its header")
    if bool(status & HAVE_DATA) != (dfile != _NO_FILE) or \
            bool(status & HAVE_UNDO) != (ufile != _NO_FILE):
        raise BlockIndexCorruptError("block index entry flags disagree with its positions")
    return BlockIndexEntry(
        block_hash, header, status, seq, n_tx, size, weight,
        FilePos(dfile, doff) if dfile != _NO_FILE else None,
        FilePos(ufile, uoff) if ufile != _NO_FILE else None)


class BlockIndex(LevelDbHandle):
    """The block index database. One owner at a time (LevelDB LOCK)."""

    KIND = "block index"

    def __init__(self, db: plyvel.DB, path: str) -> None:
        self._db: plyvel.DB | None = db
        self.path = path
        self.guard = WriteGuard()  # the data directory's (``DataDir`` shares one)

    @classmethod
    def open(cls, path: str) -> BlockIndex:
        """Open (creating if needed); ``BlockIndexCorruptError`` for an unknown format."""
        return cls(open_versioned(path, FORMAT_VERSION, BlockIndexCorruptError, "block index"),
                   path)

    def cursors(self) -> tuple[FileCursor, FileCursor]:
        """(blk cursor, rev cursor) as last written."""
        try:
            value = self.db.get(_KEY_FILES, verify_checksums=True)
        except (plyvel.CorruptionError, plyvel.IOError) as exc:
            raise BlockIndexCorruptError(f"block index is unreadable: {exc}") from None
        if value is None:
            return FileCursor(), FileCursor()
        if len(value) != _FILES.size:
            raise BlockIndexCorruptError("malformed file cursor record")
        bfile, bsize, rfile, rsize = _FILES.unpack(value)
        return FileCursor(bfile, bsize), FileCursor(rfile, rsize)

    def load(self) -> list[BlockIndexEntry]:
        """Every entry (any order)."""
        entries = []
        try:
            with self.db.snapshot() as snap:
                for key, value in snap.iterator(prefix=_PREFIX_ENTRY, verify_checksums=True):
                    if len(key) != 33:
                        raise BlockIndexCorruptError("malformed block index key")
                    entries.append(decode_entry(key[1:], value))
        except (plyvel.CorruptionError, plyvel.IOError) as exc:
            raise BlockIndexCorruptError(f"block index is unreadable: {exc}") from None
        return entries

    def write(self, entries: Iterable[BlockIndexEntry], blk: FileCursor, rev: FileCursor,
              *, sync: bool = False) -> None:
        """Write entries and the file cursors in one atomic batch."""
        batch = self.db.write_batch(sync=sync)
        for entry in entries:
            batch.put(_PREFIX_ENTRY + entry.hash, encode_entry(entry))
        batch.put(_KEY_FILES, _FILES.pack(blk.file, blk.size, rev.file, rev.size))
        self.guard.write("block index", batch.write)
