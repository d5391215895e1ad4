"""A chain written in Bitcoin Core / Elements ``blocks/`` directory layout (docs/replay.md §4.1),
so tests and benchmarks replay the same blocks from a chain file and from a node-style directory.

Layout, as Core writes it (the record framing and ``xor.dat`` are the block-I/O room's,
``validator.store.blockio``):

- ``blkNNNNN.dat`` files of records ``magic ‖ LE32 size ‖ block``; a file rolls over before it
  would exceed ``max_file_size`` (Core: 128 MiB) and the finished file is truncated to its size;
- the file being written is preallocated in ``chunk_size`` steps (Core: 16 MiB), so its tail is
  zeros — written raw, *not* through the obfuscation (Core preallocates with fallocate);
- ``xor.dat`` (Core v28+): an 8-byte key; every byte of every blk file is XORed with
  ``key[file offset mod 8]``. An all-zero key means no obfuscation;
- blocks are in arrival order, not height order: ``write_blocks_dir`` writes them in the order
  given (``arrival_order`` shuffles all but genesis reproducibly).

The reader is ``replay.sources.BlocksDirSource``.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable, Sequence
from pathlib import Path

from regtest.params import NETWORK_MAGIC
from validator import (
    BLOCK_FILE_CHUNK_SIZE,
    MAX_BLOCK_FILE_SIZE,
    NO_XOR_KEY,
    RECORD_HEADER_SIZE,
    XOR_KEY_SIZE,
    StoreValueError,
    block_file_name,
    write_record,
    write_xor_key,
)


def arrival_order(blocks: Sequence[bytes], seed: int) -> list[bytes]:
    """Genesis first (a node writes it at startup), every other block in a reproducible random
    order: children before their parents, as blocks arrive from several peers."""
    rest = list(blocks[1:])
    random.Random(seed).shuffle(rest)
    return [*blocks[:1], *rest]


def write_blocks_dir(directory: str | os.PathLike[str], blocks: Iterable[bytes], *,
                     xor_key: bytes = NO_XOR_KEY, magic: bytes = NETWORK_MAGIC,
                     max_file_size: int = MAX_BLOCK_FILE_SIZE,
                     chunk_size: int = BLOCK_FILE_CHUNK_SIZE) -> list[Path]:
    """Write ``blocks`` (raw, in the order given) as ``directory/blk*.dat`` plus ``xor.dat``;
    returns the blk files. The directory must not hold blk files already."""
    if len(xor_key) != XOR_KEY_SIZE or len(magic) != 4:
        raise StoreValueError("xor_key is 8 bytes and magic 4 bytes")
    if max_file_size <= RECORD_HEADER_SIZE or chunk_size <= 0:
        raise StoreValueError("max_file_size and chunk_size must be positive")
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    if any(root.glob("blk*.dat")):
        raise FileExistsError(f"{root} already holds blk files")
    write_xor_key(root, xor_key)
    files: list[Path] = []
    fd = -1
    size = 0
    try:
        for raw in blocks:
            record_size = RECORD_HEADER_SIZE + len(raw)
            if fd < 0 or (size and size + record_size > max_file_size):
                if fd >= 0:
                    os.close(fd)  # finalized: exactly its records, no padding
                files.append(root / block_file_name(len(files)))
                fd = os.open(files[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                size = 0
            size += write_record(fd, size, magic, raw, xor_key=xor_key, name=str(files[-1]))
        if fd >= 0:
            # The open file's preallocated tail: raw zeros up to the next chunk boundary.
            os.pwrite(fd, bytes(-size % chunk_size), size)
            os.fsync(fd)
    finally:
        if fd >= 0:
            os.close(fd)
    return files
