"""Block I/O: the one room for Bitcoin Core's block-file record framing (docs/replay.md §4.1–4.2;
Bitcoin Core ``src/node/blockstorage.cpp``, ``src/validation.cpp`` ``LoadExternalBlockFile``).

Every file of blocks we read or write is a sequence of records ``magic ‖ LE32 length ‖
payload``, the magic being the chain's ``ChainParams.network_magic``:

- the store's ``blkNNNNN.dat`` / ``revNNNNN.dat`` (``validator.store.blockfiles``: positional
  reads with ``RecordFile``, appends with ``write_record``);
- chain files (``write_chain`` / ``read_chain``): blocks genesis first in height order, strict
  framing, written atomically;
- a Core / Elements ``blocks/`` directory (``regtest.blocksdir`` writes one, replay's
  ``BlocksDirSource`` reads one with ``RecordReader(strict=False)``): ``xor.dat`` (Core v28+)
  holds an 8-byte key, and every byte of every blk file is XORed with ``key[file offset mod 8]``
  (``xor_obfuscate``; an all-zero key, or no ``xor.dat``, means no obfuscation).

Two reading tolerances, one reader (``RecordReader``):

- strict: any deviation (bad magic, a truncated header, a length over the bound or past the end
  of the file) raises ``RecordError`` naming the file and the offset;
- lax, what Core's ``-reindex`` tolerates: bytes that are not a record header (junk, the zero
  padding of a preallocated tail) are skipped up to the next magic and counted in
  ``skipped_bytes``; a header whose length is over the bound or runs past the end of the file
  (a record cut short) is reported as a ``BadFrame`` value in ``bad_frames`` and the scan goes
  on after its magic.

The bound on a block record is ``MAX_BLOCK_SERIALIZED_SIZE`` (4,000,000 bytes, Core's
``consensus/consensus.h``), the bound Core's reindex applies: a block's serialized size never
exceeds its weight, and no valid block weighs more than ``MAX_BLOCK_WEIGHT`` = 4,000,000, so a
longer length is junk, not a block. Undo records are not bounded by the block weight (Core reads
them through the serializer's ``MAX_SIZE``): the store reads its rev files with
``MAX_SERIALIZED_SIZE`` (32 MiB, ``serialize.h``).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from ctplugin.elements import Block
from ctplugin.errors import ParseError
from validator.store.errors import BlockFileError, StoreValueError

RECORD_HEADER_SIZE = 8  # magic ‖ LE32 length
MAGIC_SIZE = 4
MAX_BLOCK_SERIALIZED_SIZE = 4_000_000  # consensus.h: no valid block is larger (module doc)
MAX_SERIALIZED_SIZE = 32 << 20  # serialize.h MAX_SIZE: the bound for undo records
MAX_BLOCK_FILE_SIZE = 128 << 20  # blockstorage.h MAX_BLOCKFILE_SIZE
BLOCK_FILE_CHUNK_SIZE = 16 << 20  # blockstorage.h BLOCKFILE_CHUNK_SIZE (preallocation step)
XOR_FILE = "xor.dat"
XOR_KEY_SIZE = 8
NO_XOR_KEY = bytes(XOR_KEY_SIZE)
HEAD_SIZE = 80  # the fixed part of a block header: what ``skip`` and ``BadFrame.head`` see

BAD_MAGIC = "bad magic or truncated frame header"
BAD_LENGTH = "frame length out of range"
SCAN_CHUNK = 1 << 20  # how far a lax scan looks ahead for the next magic per read

_LE32 = struct.Struct("<I")

Skip = Callable[[bytes], bool]
"""Given the first bytes of a record's payload (up to ``HEAD_SIZE``), True: the record is passed
over without reading the rest (its ``Record.payload`` is ``b""``)."""


class RecordError(BlockFileError, ParseError):
    """A record file that does not hold what its framing promises: ``path``, the byte
    ``offset`` where reading failed and the ``reason``. A ``BlockFileError`` for the store's
    callers and a ``ParseError`` (with its offset) for the callers of a chain file."""

    def __init__(self, path: str | os.PathLike[str], offset: int, reason: str) -> None:
        ParseError.__init__(self, offset, reason)
        self.args = (f"{os.fspath(path)}: {reason} at offset {offset}",)
        self.path = os.fspath(path)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.path, self.offset, self.reason))


class Record(NamedTuple):
    """One record: ``offset`` of its payload (after the 8-byte header, as Core's
    ``FlatFilePos``) and the payload (``b""`` when ``skip`` passed it over; a block is never
    empty)."""

    offset: int
    payload: bytes


class BadFrame(NamedTuple):
    """A lax scan's record header whose length is over the bound or runs past the end of the
    file (a record cut short): where its payload would start, the length claimed, the payload
    bytes that are there (up to ``HEAD_SIZE``, deobfuscated) and why it was passed over."""

    offset: int
    length: int
    head: bytes
    reason: str


def check_magic(magic: bytes) -> bytes:
    if len(magic) != MAGIC_SIZE:
        raise StoreValueError("network magic must be 4 bytes")
    return bytes(magic)


def _check_key(key: bytes) -> bytes:
    if len(key) != XOR_KEY_SIZE:
        raise StoreValueError("the blocks XOR key is 8 bytes")
    return bytes(key)


def xor_obfuscate(data: bytes, key: bytes, offset: int) -> bytes:
    """``data`` (found at file ``offset``) XORed with ``key[(offset + i) mod 8]``: the same call
    obfuscates and deobfuscates. An all-zero key returns ``data`` unchanged."""
    _check_key(key)
    if not any(key) or not data:
        return bytes(data)
    shift = offset % XOR_KEY_SIZE
    rotated = key[shift:] + key[:shift]
    stream = rotated * (len(data) // XOR_KEY_SIZE + 1)
    n = len(data)
    # one big-integer XOR: far faster in Python than a byte loop over a 2 MB block
    mixed = int.from_bytes(data, "little") ^ int.from_bytes(stream[:n], "little")
    return mixed.to_bytes(n, "little")


def read_xor_key(directory: str | os.PathLike[str]) -> bytes:
    """The obfuscation key of a ``blocks/`` directory: ``xor.dat``, or all zeros when there is
    none (written before Core v28). ``BlockFileError`` if it is not 8 bytes or unreadable."""
    path = Path(directory) / XOR_FILE
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        return NO_XOR_KEY
    except OSError as exc:
        raise BlockFileError(f"cannot read {path}: {exc.strerror}") from None
    if len(key) != XOR_KEY_SIZE:
        raise BlockFileError(f"{path} holds {len(key)} bytes, an XOR key has {XOR_KEY_SIZE}")
    return key


def write_xor_key(directory: str | os.PathLike[str], key: bytes) -> None:
    (Path(directory) / XOR_FILE).write_bytes(_check_key(key))


def block_file_name(number: int, prefix: str = "blk") -> str:
    """``blk00042.dat`` (or ``rev…`` with ``prefix="rev"``), as Core names its files."""
    return f"{prefix}{number:05d}.dat"


def block_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The ``blkNNNNN.dat`` files of a ``blocks/`` directory in number order;
    ``BlockFileError`` if one is missing from the sequence (Core numbers them from 0)."""
    files = sorted(Path(directory).glob("blk[0-9][0-9][0-9][0-9][0-9].dat"))
    for number, path in enumerate(files):
        if path.name != block_file_name(number):
            raise BlockFileError(f"{path.name} is out of sequence (expected "
                                 f"{block_file_name(number)})")
    return files


# ------------------------------------------------------------------------------------------------
# Writing
# ------------------------------------------------------------------------------------------------


def write_record(fd: int, offset: int, magic: bytes, payload: bytes, trailer: bytes = b"", *,
                 xor_key: bytes = NO_XOR_KEY, max_size: int = MAX_BLOCK_SERIALIZED_SIZE,
                 name: str = "record file") -> int:
    """Write one record (``trailer``, e.g. the rev files' checksum, after the payload and not
    counted by the length) at ``offset`` of the open file ``fd`` with one ``pwrite``, XORed with
    ``xor_key`` by file offset; returns its size on disk. ``StoreValueError`` for a payload
    over ``max_size``, ``BlockFileError`` for a short write (``name`` names the file)."""
    if len(payload) > max_size:
        raise StoreValueError(f"record of {len(payload)} bytes exceeds {max_size}")
    parts = [check_magic(magic) + _LE32.pack(len(payload)), payload, trailer]
    size = RECORD_HEADER_SIZE + len(payload) + len(trailer)
    if any(_check_key(xor_key)):
        written = os.pwrite(fd, xor_obfuscate(b"".join(parts), xor_key, offset), offset)
    elif hasattr(os, "pwritev"):
        written = os.pwritev(fd, parts, offset)  # a block is ~2 MB: no concatenated copy
    else:
        written = os.pwrite(fd, b"".join(parts), offset)
    if written != size:
        raise BlockFileError(f"short write to {name} at offset {offset}")
    return size


def write_chain(path: str | os.PathLike[str], blocks: Iterable[Block], magic: bytes) -> None:
    """Write a chain file: ``blocks`` (genesis first, height order) as records framed with
    ``magic``, atomically (a temporary file, synced, then renamed over ``path``)."""
    tmp = f"{os.fspath(path)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        offset = 0
        for block in blocks:
            offset += write_record(fd, offset, magic, block.serialize(), name=tmp)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def unwritable(path: str | os.PathLike[str] | None) -> str | None:
    """Why a command could not create or replace the file or directory ``path`` (None if it
    can, or for None): checked before long work whose result goes there (a chain file, a
    ``blocks/`` directory, a report)."""
    if path is None:
        return None
    parent = Path(path).parent
    if not parent.is_dir():
        return "No such file or directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return "Permission denied"
    return None


# ------------------------------------------------------------------------------------------------
# Reading
# ------------------------------------------------------------------------------------------------


class RecordReader:
    """Every record of one file, streamed in file order (memory: one record), strict or lax
    (module docstring). ``xor_key`` undoes a ``blocks/`` directory's obfuscation; ``max_size``
    bounds a record's length; ``skip`` passes records over unread. After (or during) the
    iteration a lax reader's ``skipped_bytes`` counts the bytes that were not records and
    ``bad_frames`` lists the records it could not take."""

    def __init__(self, path: str | os.PathLike[str], magic: bytes, *, strict: bool,
                 xor_key: bytes = NO_XOR_KEY, max_size: int = MAX_BLOCK_SERIALIZED_SIZE,
                 skip: Skip | None = None) -> None:
        self.path = Path(path)
        self.magic = check_magic(magic)
        self.strict = strict
        self.xor_key = _check_key(xor_key)
        self._obfuscated = any(self.xor_key)
        self.max_size = max_size
        self.skip = skip
        self.skipped_bytes = 0
        self.bad_frames: list[BadFrame] = []

    def __iter__(self) -> Iterator[Record]:
        with self.path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if self.strict:
                yield from self._strict(handle, size)
            else:
                yield from self._lax(handle, size)

    def _read(self, handle: BinaryIO, offset: int, size: int) -> bytes:
        handle.seek(offset)
        data = handle.read(size)
        return xor_obfuscate(data, self.xor_key, offset) if self._obfuscated else data

    def _record(self, handle: BinaryIO, start: int, length: int) -> Record:
        if self.skip is not None and self.skip(self._read(handle, start, min(length, HEAD_SIZE))):
            return Record(start, b"")
        return Record(start, self._read(handle, start, length))

    def _strict(self, handle: BinaryIO, size: int) -> Iterator[Record]:
        pos = 0
        while pos < size:
            head = self._read(handle, pos, RECORD_HEADER_SIZE)
            if len(head) < RECORD_HEADER_SIZE or head[:MAGIC_SIZE] != self.magic:
                raise RecordError(self.path, pos, BAD_MAGIC)
            length = _LE32.unpack_from(head, MAGIC_SIZE)[0]
            start = pos + RECORD_HEADER_SIZE
            if length > self.max_size or start + length > size:
                raise RecordError(self.path, pos + MAGIC_SIZE, BAD_LENGTH)
            yield self._record(handle, start, length)
            pos = start + length

    def _lax(self, handle: BinaryIO, size: int) -> Iterator[Record]:
        pos = 0
        while pos + RECORD_HEADER_SIZE <= size:
            head = self._read(handle, pos, RECORD_HEADER_SIZE)
            if head[:MAGIC_SIZE] != self.magic:
                pos = self._resync(handle, pos, size)
                continue
            length = _LE32.unpack_from(head, MAGIC_SIZE)[0]
            start = pos + RECORD_HEADER_SIZE
            if length > self.max_size or start + length > size:
                there = self._read(handle, start, min(HEAD_SIZE, max(size - start, 0)))
                self.bad_frames.append(BadFrame(start, length, there,
                                                f"record length {length} out of range"))
                pos = self._resync(handle, pos, size)
                continue
            yield self._record(handle, start, length)
            pos = start + length
        self.skipped_bytes += max(size - pos, 0)

    def _resync(self, handle: BinaryIO, pos: int, size: int) -> int:
        """Skip from ``pos`` to the next (deobfuscated) magic after it, or to the end."""
        found = size
        at = pos + 1
        while at < size:
            # overlapping reads: a magic across a chunk boundary is still found
            chunk = self._read(handle, at, SCAN_CHUNK + MAGIC_SIZE - 1)
            hit = chunk.find(self.magic)
            if hit >= 0:
                found = at + hit
                break
            if len(chunk) < SCAN_CHUNK + MAGIC_SIZE - 1:
                break
            at += SCAN_CHUNK
        self.skipped_bytes += found - pos
        return found


class RecordFile:
    """One record file opened for positional reads (Core's ``FlatFilePos``: the offset of a
    payload), every read checking the record's header. ``trailer`` bytes follow each payload
    uncounted by its length (the rev files' checksum)."""

    def __init__(self, path: str | os.PathLike[str], magic: bytes, *,
                 xor_key: bytes = NO_XOR_KEY, max_size: int = MAX_BLOCK_SERIALIZED_SIZE,
                 trailer: int = 0) -> None:
        self.path = os.fspath(path)
        self.magic = check_magic(magic)
        self.xor_key = _check_key(xor_key)
        self.max_size = max_size
        self.trailer = trailer
        try:
            self._fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            raise BlockFileError(f"{self.path} is missing") from None

    def _pread(self, size: int, offset: int) -> bytes:
        data = os.pread(self._fd, size, offset)
        return xor_obfuscate(data, self.xor_key, offset) if any(self.xor_key) else data

    def read(self, offset: int) -> tuple[bytes, bytes]:
        """(payload, trailer) of the record whose payload starts at ``offset``;
        ``RecordError`` if its header's magic or length is wrong or it is cut short."""
        if offset < RECORD_HEADER_SIZE:
            raise RecordError(self.path, offset, "bad record position")
        header = self._pread(RECORD_HEADER_SIZE, offset - RECORD_HEADER_SIZE)
        if len(header) != RECORD_HEADER_SIZE or header[:MAGIC_SIZE] != self.magic:
            raise RecordError(self.path, offset - RECORD_HEADER_SIZE, BAD_MAGIC)
        length = _LE32.unpack_from(header, MAGIC_SIZE)[0]
        if length > self.max_size:
            raise RecordError(self.path, offset - MAGIC_SIZE,
                              f"record claims {length} bytes (at most {self.max_size})")
        data = self._pread(length + self.trailer, offset)
        if len(data) != length + self.trailer:
            raise RecordError(self.path, offset, "record is truncated")
        return data[:length], data[length:]

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_chain(path: str | os.PathLike[str], magic: bytes) -> Iterator[bytes]:
    """Raw blocks of a chain file (``write_chain``), one record at a time (memory stays at one
    block); strict framing: ``RecordError`` (a ``ParseError``) on any deviation."""
    for record in RecordReader(path, magic, strict=True):
        yield record.payload
