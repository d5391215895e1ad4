"""Block and undo files: append-only ``blkNNNNN.dat`` / ``revNNNNN.dat`` (replay.md §4.1–4.2).

Each record is ``magic ‖ LE32 length ‖ payload``, the magic being the chain's network magic
(``ChainParams.network_magic``). A block record's payload is the serialized block (with
witness), so Core-style readers and ``regtest.chain.read_chain`` can scan our files; an undo
record's payload is the encoded ``BlockUndo`` followed by a 32-byte checksum, sha256d(prev
block hash ‖ undo bytes), which the length does not count (as Core's rev files).

A position (``FilePos``) names the file number and the offset *after* the 8-byte record
header, as Core's block index does. Files roll over before they would exceed
``max_file_size`` (Core: 128 MiB). Blocks land in arrival order, side branches included.

Durability: a record is written with one ``pwrite`` before the index entry that points at it
is written, so after a killed process every indexed record is complete; ``fsync`` (called
before a flush writes the block index with sync) makes them survive power loss too. Where the
append position goes after a crash is the block index's business (``FileCursor``): a torn
record past the recorded end is cut off at open.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from ctplugin.hashes import sha256d
from validator.store.errors import BlockFileError, StoreError, StoreValueError

MAX_RECORD_SIZE = 32 << 20  # Core's MAX_SIZE: no block or undo record is larger
DEFAULT_MAX_FILE_SIZE = 128 << 20  # MAX_BLOCKFILE_SIZE
HEADER_SIZE = 8
CHECKSUM_SIZE = 32
_LE32 = struct.Struct("<I")


def _pwritev(fd: int, parts: list[bytes], offset: int) -> int:
    """Write ``parts`` back to back at ``offset``; the bytes written (short: fewer)."""
    if hasattr(os, "pwritev"):
        return os.pwritev(fd, parts, offset)
    return os.pwrite(fd, b"".join(parts), offset)


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
                 max_file_size: int = DEFAULT_MAX_FILE_SIZE, trailer: int = 0) -> None:
        if len(magic) != 4:
            raise StoreValueError("network magic must be 4 bytes")
        if max_file_size < HEADER_SIZE + 1:
            raise StoreValueError("max_file_size too small")
        self.directory = directory
        self.prefix = prefix
        self.magic = bytes(magic)
        self.max_file_size = max_file_size
        self.trailer = trailer
        self._cursor = cursor
        self._write_fd: int | None = None
        self._write_file = -1
        self._read_fds: dict[int, int] = {}
        self._unsynced: set[int] = set()
        os.makedirs(directory, exist_ok=True)
        self._cut_torn_tail()

    @property
    def cursor(self) -> FileCursor:
        return self._cursor

    def path(self, file: int) -> str:
        return os.path.join(self.directory, f"{self.prefix}{file:05d}.dat")

    def _cut_torn_tail(self) -> None:
        """Cut the current file back to the recorded size: bytes past it belong to a record
        whose index entry was never written (the process died between the two writes)."""
        path = self.path(self._cursor.file)
        try:
            size = os.path.getsize(path)
        except FileNotFoundError:
            return
        if size > self._cursor.size:
            os.truncate(path, self._cursor.size)

    # --- writes ----------------------------------------------------------------------------

    def append(self, payload: bytes, trailer: bytes = b"") -> FilePos:
        """Write one record at the cursor (rolling over to a new file when full)."""
        if len(trailer) != self.trailer:
            raise StoreValueError("wrong trailer length")
        if len(payload) > MAX_RECORD_SIZE:
            raise StoreError(f"record of {len(payload)} bytes exceeds {MAX_RECORD_SIZE}")
        record_size = HEADER_SIZE + len(payload) + len(trailer)
        cursor = self._cursor
        if cursor.size and cursor.size + record_size > self.max_file_size:
            cursor = FileCursor(cursor.file + 1, 0)
        fd = self._writer(cursor.file)
        # the parts as they are (a block is ~2 MB: no concatenated copy of it)
        parts = [self.magic + _LE32.pack(len(payload)), payload, trailer]
        written = _pwritev(fd, parts, cursor.size)
        if written != record_size:
            raise StoreError(f"short write to {self.path(cursor.file)}")
        self._unsynced.add(cursor.file)
        self._cursor = FileCursor(cursor.file, cursor.size + record_size)
        return FilePos(cursor.file, cursor.size + HEADER_SIZE)

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
        """(payload, trailer) of the record at ``pos``; ``BlockFileError`` if the header's
        magic or length is wrong or the record is cut short."""
        if pos.offset < HEADER_SIZE:
            raise BlockFileError(f"bad record position {pos}")
        fd = self._reader(pos.file)
        header = os.pread(fd, HEADER_SIZE, pos.offset - HEADER_SIZE)
        if len(header) != HEADER_SIZE or header[:4] != self.magic:
            raise BlockFileError(f"no record at {self.prefix} {pos}: bad magic")
        size = _LE32.unpack_from(header, 4)[0]
        if size > MAX_RECORD_SIZE:
            raise BlockFileError(f"record at {self.prefix} {pos} claims {size} bytes")
        data = os.pread(fd, size + self.trailer, pos.offset)
        if len(data) != size + self.trailer:
            raise BlockFileError(f"record at {self.prefix} {pos} is truncated")
        return data[:size], data[size:]

    def _reader(self, file: int) -> int:
        fd = self._read_fds.get(file)
        if fd is None:
            try:
                fd = os.open(self.path(file), os.O_RDONLY)
            except FileNotFoundError:
                raise BlockFileError(f"{self.path(file)} is missing") from None
            if len(self._read_fds) >= 16:
                oldest = next(iter(self._read_fds))
                os.close(self._read_fds.pop(oldest))
            self._read_fds[file] = fd
        return fd

    def close(self) -> None:
        if self._write_fd is not None:
            os.close(self._write_fd)
            self._write_fd = None
            self._write_file = -1
        for fd in self._read_fds.values():
            os.close(fd)
        self._read_fds.clear()


def undo_checksum(prev_hash: bytes, undo: bytes) -> bytes:
    """Core's rev-file checksum: sha256d(hash of the block's parent ‖ undo bytes)."""
    return sha256d(prev_hash + undo)


class BlockFiles:
    """The ``blocks/`` directory: block records and undo records, two file sequences."""

    def __init__(self, directory: str, magic: bytes, blk: FileCursor, rev: FileCursor,
                 max_file_size: int = DEFAULT_MAX_FILE_SIZE) -> None:
        self.directory = directory
        self.blocks = FlatFileSeq(directory, "blk", magic, blk, max_file_size)
        self.undo = FlatFileSeq(directory, "rev", magic, rev, max_file_size,
                                trailer=CHECKSUM_SIZE)

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


def scan_records(path: str, magic: bytes) -> Iterator[tuple[int, bytes]]:
    """(payload offset, payload) of every record in one file, in file order, skipping bytes
    that are not a record header (zero padding, torn tails, junk), as reindexing readers do.
    A record whose length runs past the end of the file ends the scan."""
    with open(path, "rb") as handle:
        data = handle.read()
    pos = 0
    end = len(data)
    while pos + HEADER_SIZE <= end:
        if data[pos: pos + 4] != magic:
            found = data.find(magic, pos + 1)
            if found < 0:
                return
            pos = found
            continue
        size = _LE32.unpack_from(data, pos + 4)[0]
        start = pos + HEADER_SIZE
        if size > MAX_RECORD_SIZE or start + size > end:
            pos += 1
            continue
        yield start, data[start: start + size]
        pos = start + size
