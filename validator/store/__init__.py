"""Persistent state of the validator: LevelDB (plyvel) databases and flat block files.

- ``DataDir``: one process's data directory (every store below + the salt), lock-owned.
- ``Chainstate``: UTXO set with an in-memory coins cache, flushed with the HEAD_BLOCKS protocol.
- ``BlockIndex``: every known block (side branches too) with its status and file positions.
- ``BlockFiles``: append-only blk/rev record files holding blocks and their undo data.
- ``blockio``: the block-file record framing every blk-style file uses (the store's, chain
  files, Core ``blocks/`` directories): one reader, one writer, ``xor.dat``.
- ``WriteGuard`` (``durability``): the stop after the first failed durable write, the
  corruption report, and the tests' fault seam (``FAULT_ENV``).
- ``ProofCache``: salted keys of verified proofs, bounded, consumed lazily, wiped when anything
  looks wrong.
"""

from validator.store.blockfiles import BlockFiles, FileCursor, FilePos
from validator.store.blockindex import (
    FAILED_CHILD,
    FAILED_MASK,
    FAILED_VALID,
    HAVE_DATA,
    HAVE_UNDO,
    VALID,
    BlockIndex,
    BlockIndexEntry,
)
from validator.store.chainstate import (
    BlockChanges,
    BlockRef,
    BlockUndo,
    Chainstate,
    FlushStats,
    HeadBlocks,
    Outpoint,
    SpendView,
    UtxoEntry,
    net_changes,
)
from validator.store.datadir import DataDir, read_or_create_salt
from validator.store.durability import FAULT_ENV, WRITE_SITES, WriteGuard
from validator.store.errors import (
    AbandonedError,
    BlockFileError,
    BlockFilesCorruptError,
    BlockIndexCorruptError,
    ChainstateConflictError,
    ChainstateCorruptError,
    CorruptDatabaseError,
    DataDirLockedError,
    DiskWriteError,
    DuplicateOutputError,
    MissingInputError,
    StoreError,
    StoreFatalError,
    StoreValueError,
    UnknownBlockError,
    UnwritableDataDirError,
)
from validator.store.proofcache import (
    DEFAULT_MAX_ENTRIES,
    DOMAIN_BALANCE,
    DOMAIN_RANGEPROOF,
    DOMAIN_SCRIPT,
    DOMAIN_SURJECTION,
    CacheStats,
    ProofCache,
    cache_key,
)

__all__ = [
    "DEFAULT_MAX_ENTRIES",
    "DOMAIN_BALANCE",
    "DOMAIN_RANGEPROOF",
    "DOMAIN_SCRIPT",
    "DOMAIN_SURJECTION",
    "FAILED_CHILD",
    "FAILED_MASK",
    "FAILED_VALID",
    "FAULT_ENV",
    "HAVE_DATA",
    "HAVE_UNDO",
    "VALID",
    "WRITE_SITES",
    "AbandonedError",
    "BlockChanges",
    "BlockFileError",
    "BlockFiles",
    "BlockFilesCorruptError",
    "BlockIndex",
    "BlockIndexCorruptError",
    "BlockIndexEntry",
    "BlockRef",
    "BlockUndo",
    "CacheStats",
    "Chainstate",
    "ChainstateConflictError",
    "ChainstateCorruptError",
    "CorruptDatabaseError",
    "DataDir",
    "DataDirLockedError",
    "DiskWriteError",
    "DuplicateOutputError",
    "FileCursor",
    "FilePos",
    "FlushStats",
    "HeadBlocks",
    "MissingInputError",
    "Outpoint",
    "ProofCache",
    "SpendView",
    "StoreError",
    "StoreFatalError",
    "StoreValueError",
    "UnknownBlockError",
    "UnwritableDataDirError",
    "UtxoEntry",
    "WriteGuard",
    "cache_key",
    "net_changes",
    "read_or_create_salt",
]
