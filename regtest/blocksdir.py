"""A chain written in Bitcoin Core / Elements ``blocks/`` directory layout (replay.md §4.1), so
tests and benchmarks replay the same blocks from a chain file and from a node-style directory.

Layout, as Core writes it:

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

MAX_BLOCK_FILE_SIZE = 128 << 20  # MAX_BLOCKFILE_SIZE
BLOCK_FILE_CHUNK_SIZE = 16 << 20  # BLOCKFILE_CHUNK_SIZE
XOR_FILE = "xor.dat"
XOR_KEY_SIZE = 8
RECORD_HEADER_SIZE = 8  # magic ‖ LE32 size


def block_file_name(number: int) -> str:
    return f"blk{number:05d}.dat"


def xor_obfuscate(data: bytes, key: bytes, offset: int) -> bytes:
    """``data`` (found at file ``offset``) XORed with ``key[(offset + i) mod 8]``: the same call
    obfuscates and deobfuscates. An all-zero key returns ``data`` unchanged."""
    if len(key) != XOR_KEY_SIZE:
        raise ValueError("the blocks XOR key is 8 bytes")
    if not any(key) or not data:
        return bytes(data)
    shift = offset % XOR_KEY_SIZE
    rotated = key[shift:] + key[:shift]
    stream = rotated * (len(data) // XOR_KEY_SIZE + 1)
    n = len(data)
    mixed = int.from_bytes(data, "little") ^ int.from_bytes(stream[:n], "little")
    return mixed.to_bytes(n, "little")


def arrival_order(blocks: Sequence[bytes], seed: int) -> list[bytes]:
    """Genesis first (a node writes it at startup), every other block in a reproducible random
    order: children before their parents, as blocks arrive from several peers."""
    rest = list(blocks[1:])
    random.Random(seed).shuffle(rest)
    return [*blocks[:1], *rest]


def write_blocks_dir(directory: str | os.PathLike[str], blocks: Iterable[bytes], *,
                     xor_key: bytes = bytes(XOR_KEY_SIZE), magic: bytes = NETWORK_MAGIC,
                     max_file_size: int = MAX_BLOCK_FILE_SIZE,
                     chunk_size: int = BLOCK_FILE_CHUNK_SIZE) -> list[Path]:
    """Write ``blocks`` (raw, in the order given) as ``directory/blk*.dat`` plus ``xor.dat``;
    returns the blk files. The directory must not hold blk files already."""
    if len(xor_key) != XOR_KEY_SIZE or len(magic) != 4:
        raise ValueError("xor_key is 8 bytes and magic 4 bytes")
    if max_file_size <= RECORD_HEADER_SIZE or chunk_size <= 0:
        raise ValueError("max_file_size and chunk_size must be positive")
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    if any(root.glob("blk*.dat")):
        raise FileExistsError(f"{root} already holds blk files")
    (root / XOR_FILE).write_bytes(xor_key)
    files: list[Path] = []
    handle = None
    size = 0
    try:
        for raw in blocks:
            record = magic + len(raw).to_bytes(4, "little") + raw
            if handle is None or (size and size + len(record) > max_file_size):
                if handle is not None:
                    handle.close()  # finalized: exactly its records, no padding
                files.append(root / block_file_name(len(files)))
                handle = files[-1].open("wb")
                size = 0
            handle.write(xor_obfuscate(record, xor_key, size))
            size += len(record)
        if handle is not None:
            # The open file's preallocated tail: raw zeros up to the next chunk boundary.
            handle.write(bytes(-size % chunk_size))
            handle.flush()
            os.fsync(handle.fileno())
    finally:
        if handle is not None:
            handle.close()
    return files
