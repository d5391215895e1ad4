"""Persistent state of the validator, in LevelDB (plyvel).

- ``DataDir``: one process's data directory (chainstate + proof cache + salt), lock-owned.
- ``Chainstate``: UTXO set, undo data and best block, one atomic batch per block.
- ``ProofCache``: salted keys of verified proofs, bounded, wiped when anything looks wrong.
"""

from validator.store.chainstate import (
    BlockRef,
    BlockUndo,
    Chainstate,
    Outpoint,
    SpendView,
    UtxoEntry,
)
from validator.store.datadir import DataDir, read_or_create_salt
from validator.store.errors import (
    ChainstateConflictError,
    ChainstateCorruptError,
    DataDirLockedError,
    DuplicateOutputError,
    MissingInputError,
    StoreError,
)
from validator.store.proofcache import (
    DEFAULT_MAX_ENTRIES,
    DOMAIN_RANGEPROOF,
    DOMAIN_SCRIPT,
    DOMAIN_SURJECTION,
    CacheStats,
    ProofCache,
    cache_key,
)

__all__ = [
    "DEFAULT_MAX_ENTRIES",
    "DOMAIN_RANGEPROOF",
    "DOMAIN_SCRIPT",
    "DOMAIN_SURJECTION",
    "BlockRef",
    "BlockUndo",
    "CacheStats",
    "Chainstate",
    "ChainstateConflictError",
    "ChainstateCorruptError",
    "DataDir",
    "DataDirLockedError",
    "DuplicateOutputError",
    "MissingInputError",
    "Outpoint",
    "ProofCache",
    "SpendView",
    "StoreError",
    "UtxoEntry",
    "cache_key",
    "read_or_create_salt",
]
