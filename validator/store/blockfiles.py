"""Block and undo files: append-only ``blkNNNNN.dat`` / ``revNNNNN.dat`` (docs/replay.md
§4.1–4.2).

Each record is ``magic ‖ LE32 length ‖ payload``, the magic being the chain's network magic
(``ChainParams.network_magic``), framed, written and read by the block-I/O room
(``validator.store.blockio``). A block record's payload is the serialized block (with witness),
so Core-style readers and ``read_chain`` can scan our files; an undo record's payload is the
encoded ``BlockUndo`` followed by a 32-byte checksum, sha256d(prev block hash ‖ undo bytes),
which the length does not count (as Core's rev files).

A position (``FilePos``) names the file number and the offset *after* the 8-byte record
header, as Core's block index does. Files roll over before they would exceed
``max_file_size`` (Core: 128 MiB). Blocks land in arrival order, side branches included.

Durability: a record is written with one ``pwrite`` before the index entry that points at it
is written, so after a killed process every indexed record is complete; ``fsync`` (called
before a flush writes the block index with sync) makes them survive power loss too. Where the
append position goes after a crash is the block index's business (``FileCursor``): a torn
record past the recorded end is cut off at open.

Every write and fsync runs through the data directory's ``WriteGuard``
(``validator.store.durability``): a failed one (a full disk) stops every later write, so the
block index never points past what reached the file. A torn record is then cut at the next
open, as after a kill.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from typing import NamedTuple

from ctplugin.hashes import sha256d
from validator.store.blockio import (
    MAX_BLOCK_FILE_SIZE,
    MAX_BLOCK_SERIALIZED_SIZE,
    MAX_SERIALIZED_SIZE,
    RECORD_HEADER_SIZE,
    RecordFile,
    block_file_name,
    check_magic,
    write_record,
)
from validator.store.durability import WriteGuard
from validator.store.errors import BlockFileError, StoreValueError

CHECKSUM_SIZE = 32


class FilePos(NamedTuple):
    """A record's file number and the offset of its payload (after the 8-byte header)."""

    file: int
    offset: int


@dataclass(frozen=True, slots=True)
class FileCursor:
    """Where the next record of a file sequence goes: the last file's number and size."""

    file: int = 0
    size: int = 0


class FlatFileSeq:
    """One numbered sequence of record files (``blk`` or ``rev``) in a directory."""

    def __init__(self, directory: str, prefix: str, magic: bytes, cursor: FileCursor,
                 max_file_size: int = MAX_BLOCK_FILE_SIZE, trailer: int = 0,
                 max_record_size: int = MAX_BLOCK_SERIALIZED_SIZE, site: str = "block files",
                 guard: WriteGuard | None = None) -> None:
        self.magic = check_magic(magic)
        self.site = site
        self.guard = guard if guard is not None else WriteGuard()
        if max_file_size < RECORD_HEADER_SIZE + 1:
            raise StoreValueError("max_file_size too small")
        self.directory = directory
        self.prefix = prefix
        self.max_file_size = max_file_size
        self.trailer = trailer
        self.max_record_size = max_record_size
        self._cursor = cursor
        self._write_fd: int | None = None
        self._write_file = -1
        self._readers: dict[int, RecordFile] = {}
        self._unsynced: set[int] = set()
        os.makedirs(directory, exist_ok=True)
        self._cut_torn_tail()

    @property
    def cursor(self) -> FileCursor:
        return self._cursor

    def path(self, file: int) -> str:
        return os.path.join(self.directory, block_file_name(file, self.prefix))

    def _cut_torn_tail(self) -> None:
        """Cut the current file back to the recorded size: bytes past it belong to a record
        whose index entry was never written (the process died between the two writes)."""
        path = self.path(self._cursor.file)
        try:
            size = os.path.getsize(path)
        except FileNotFoundError:
            return
        if size > self._cursor.size:
            self.guard.write(self.site, lambda: os.truncate(path, self._cursor.size))

    # --- writes ----------------------------------------------------------------------------

    def append(self, payload: bytes, trailer: bytes = b"") -> FilePos:
        """Write one record at the cursor (rolling over to a new file when full)."""
        if len(trailer) != self.trailer:
            raise StoreValueError("wrong trailer length")
        record_size = RECORD_HEADER_SIZE + len(payload) + len(trailer)
        cursor = self._cursor
        if cursor.size and cursor.size + record_size > self.max_file_size:
            cursor = FileCursor(cursor.file + 1, 0)
        name = self.path(cursor.file)

        def write() -> None:
            try:
                write_record(self._writer(cursor.file), cursor.size, self.magic, payload,
                             trailer, max_size=self.max_record_size, name=name)
            except BlockFileError as exc:  # a short write: the disk filled up under it
                raise OSError(errno.ENOSPC, str(exc)) from None

        self.guard.write(self.site, write)
        self._unsynced.add(cursor.file)
        self._cursor = FileCursor(cursor.file, cursor.size + record_size)
        return FilePos(cursor.file, cursor.size + RECORD_HEADER_SIZE)

    def _writer(self, file: int) -> int:
        if self._write_file != file:
            if self._write_fd is not None:
                os.close(self._write_fd)
                self._write_fd = None
            self._write_fd = os.open(self.path(file), os.O_WRONLY | os.O_CREAT, 0o644)
            self._write_file = file
        assert self._write_fd is not None
        return self._write_fd

    def fsync(self) -> None:
        """Make every record written so far survive power loss (then the directory entry)."""
        self.guard.write(self.site, self._fsync)

    def _fsync(self) -> None:
        for file in sorted(self._unsynced):
            if file == self._write_file and self._write_fd is not None:
                os.fsync(self._write_fd)
            else:
                fd = os.open(self.path(file), os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        if self._unsynced:
            fd = os.open(self.directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        self._unsynced.clear()

    # --- reads -----------------------------------------------------------------------------

    def read(self, pos: FilePos) -> tuple[bytes, bytes]:
        """(payload, trailer) of the record at ``pos``; ``BlockFileError`` (a ``RecordError``
        naming the file and offset) if the header's magic or length is wrong or the record is
        cut short."""
        return self._reader(pos.file).read(pos.offset)

    def _reader(self, file: int) -> RecordFile:
        reader = self._readers.get(file)
        if reader is None:
            reader = RecordFile(self.path(file), self.magic, max_size=self.max_record_size,
                                trailer=self.trailer)
            if len(self._readers) >= 16:
                oldest = next(iter(self._readers))
                self._readers.pop(oldest).close()
            self._readers[file] = reader
        return reader

    def close(self) -> None:
        if self._write_fd is not None:
            os.close(self._write_fd)
            self._write_fd = None
            self._write_file = -1
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()


def undo_checksum(prev_hash: bytes, undo: bytes) -> bytes:
    """Core's rev-file checksum: sha256d(hash of the block's parent ‖ undo bytes)."""
    return sha256d(prev_hash + undo)


class BlockFiles:
    """The ``blocks/`` directory: block records and undo records, two file sequences."""

    def __init__(self, directory: str, magic: bytes, blk: FileCursor, rev: FileCursor,
                 max_file_size: int = MAX_BLOCK_FILE_SIZE,
                 guard: WriteGuard | None = None) -> None:
        self.directory = directory
        self.guard = guard if guard is not None else WriteGuard()
        self.blocks = FlatFileSeq(directory, "blk", magic, blk, max_file_size,
                                  guard=self.guard)
        # an undo record is not bounded by the block weight (validator.store.blockio)
        self.undo = FlatFileSeq(directory, "rev", magic, rev, max_file_size,
                                trailer=CHECKSUM_SIZE, max_record_size=MAX_SERIALIZED_SIZE,
                                site="undo files", guard=self.guard)

    def write_block(self, raw: bytes) -> FilePos:
        return self.blocks.append(raw)

    def read_block(self, pos: FilePos) -> bytes:
        return self.blocks.read(pos)[0]

    def write_undo(self, undo: bytes, prev_hash: bytes) -> FilePos:
        return self.undo.append(undo, undo_checksum(prev_hash, undo))

    def read_undo(self, pos: FilePos, prev_hash: bytes) -> bytes:
        data, checksum = self.undo.read(pos)
        if checksum != undo_checksum(prev_hash, data):
            raise BlockFileError(f"undo record at rev {pos} fails its checksum")
        return data

    def fsync(self) -> None:
        self.blocks.fsync()
        self.undo.fsync()

    def close(self) -> None:
        self.blocks.close()
        self.undo.close()

