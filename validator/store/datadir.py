"""The node's data directory: one database per concern, the block files and the per-node salt.

Layout::

    <datadir>/chainstate/       LevelDB: UTXO set and best-block markers (``Chainstate``)
    <datadir>/blocks/index/     LevelDB: the block index (``BlockIndex``)
    <datadir>/blocks/blkNNNNN.dat, revNNNNN.dat   block and undo records (``BlockFiles``)
    <datadir>/indexes/proofcache/  LevelDB: keys of verified proofs (``ProofCache``)
    <datadir>/wallets/<name>/   the node's wallets (``DataDir.wallet_path``; opened by the node)
    <datadir>/salt              32 random bytes, created once (atomically) on first open

Durability: the stores share one ``WriteGuard`` (``DataDir.guard``,
``validator.store.durability``): the first failed durable write anywhere stops every later
one, and a detected corruption is reported through it too (docs/durability.md §3).

Ownership: the chainstate database's LevelDB LOCK is taken first and held until ``close``; it
stands for the whole directory, so a second opener (another process, or a second handle in this
one) gets ``DataDirLockedError`` before anything else is touched.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from urllib.parse import quote

from ctplugin.closing import Closeable
from validator.store.blockfiles import BlockFiles
from validator.store.blockindex import BlockIndex
from validator.store.blockio import MAX_BLOCK_FILE_SIZE
from validator.store.chainstate import DEFAULT_BATCH_BYTES, DEFAULT_CACHE_BUDGET, Chainstate
from validator.store.errors import DataDirLockedError, StoreError
from validator.store.proofcache import DEFAULT_MAX_ENTRIES, ProofCache

__all__ = ["DataDir", "DataDirLockedError", "read_or_create_salt"]

SALT_FILE = "salt"
SALT_LEN = 32
DEFAULT_WALLET_DIR = "@default"  # the wallet named "" (quote() never yields "@")


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_or_create_salt(directory: str) -> tuple[bytes, bool]:
    """(salt, created): the directory's salt, made on first use with secrets.token_bytes.

    Created atomically: written to a temporary file, fsynced, then linked into place with
    ``os.link`` (which fails if the name exists), so a salt file is either absent or complete.
    A salt file of the wrong size is replaced (its only user, the proof cache, then rebuilds).
    """
    path = os.path.join(directory, SALT_FILE)
    try:
        with open(path, "rb") as handle:
            salt = handle.read(SALT_LEN + 1)
        if len(salt) == SALT_LEN:
            return salt, False
        os.remove(path)
    except FileNotFoundError:
        pass
    salt = secrets.token_bytes(SALT_LEN)
    tmp = os.path.join(directory, f".{SALT_FILE}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(salt)
        handle.flush()
        os.fsync(handle.fileno())
    try:
        os.link(tmp, path)
    except FileExistsError:  # created concurrently: use that one
        with open(path, "rb") as handle:
            salt = handle.read()
    finally:
        os.remove(tmp)
    _fsync_dir(directory)
    return salt, True


class DataDir(Closeable):
    """An open data directory (``DataDir.open(path, magic)``); use as a context manager."""

    def __init__(self, path: str, chainstate: Chainstate, index: BlockIndex, files: BlockFiles,
                 proof_cache: ProofCache, salt: bytes, salt_created: bool) -> None:
        self.path = path
        self.salt_created = salt_created  # True on the very first open
        self.chainstate = chainstate
        self.block_index = index
        self.block_files = files
        self.proof_cache = proof_cache
        self.salt = salt
        self.guard = chainstate.guard
        index.guard = proof_cache.guard = self.guard  # the block files got it at open

    @staticmethod
    def chainstate_path(path: str) -> str:
        return os.path.join(path, "chainstate")

    @staticmethod
    def blocks_path(path: str) -> str:
        return os.path.join(path, "blocks")

    @property
    def wallets_path(self) -> str:
        return os.path.join(self.path, "wallets")

    def wallet_path(self, name: str) -> str:
        """The directory of the wallet called ``name`` (any string; "" is the default
        wallet): ``wallets/<name percent-encoded, dots too>``, so a name can never reach outside
        ``wallets/`` or collide with another name. The node opens its own LevelDB there."""
        if "\x00" in name:
            raise StoreError("wallet names cannot contain NUL")
        encoded = quote(name, safe="").replace(".", "%2E")  # no "." or ".." either
        return os.path.join(self.wallets_path, encoded or DEFAULT_WALLET_DIR)

    @classmethod
    def open(cls, path: str | os.PathLike[str], magic: bytes, *, sync: bool = True,
             cache_max_entries: int = DEFAULT_MAX_ENTRIES,
             cache_budget: int = DEFAULT_CACHE_BUDGET, batch_bytes: int = DEFAULT_BATCH_BYTES,
             max_file_size: int = MAX_BLOCK_FILE_SIZE) -> DataDir:
        """Open or create the data directory; ``magic`` frames the block-file records.
        ``sync`` makes flushes survive power loss (fsync of the block files, synced LevelDB
        batches); ``cache_budget`` and ``batch_bytes`` go to the ``Chainstate``."""
        path = os.fspath(path)
        if os.path.lexists(path) and not os.path.isdir(path):
            raise StoreError(f"data directory {path} is not a directory")
        os.makedirs(path, exist_ok=True)
        try:
            chainstate = Chainstate.open(cls.chainstate_path(path), sync=sync,
                                         cache_budget=cache_budget, batch_bytes=batch_bytes)
        except DataDirLockedError as exc:
            raise DataDirLockedError(path, str(exc)) from None
        with contextlib.ExitStack() as undo:
            undo.callback(chainstate.close)
            blocks = cls.blocks_path(path)
            index = BlockIndex.open(os.path.join(blocks, "index"))
            undo.callback(index.close)
            blk, rev = index.cursors()
            files = BlockFiles(blocks, magic, blk, rev, max_file_size,
                               guard=chainstate.guard)
            undo.callback(files.close)
            salt, created = read_or_create_salt(path)
            # under indexes/ (a derived index of verified proofs): Elements' test framework
            # keeps only blocks/, chainstate/ and indexes/ of a cached chain directory
            os.makedirs(os.path.join(path, "indexes"), exist_ok=True)
            cache = ProofCache.open(os.path.join(path, "indexes", "proofcache"), salt,
                                    max_entries=cache_max_entries)
            undo.pop_all()
            return cls(path, chainstate, index, files, cache, salt, created)
        raise AssertionError("unreachable")  # pragma: no cover (ExitStack re-raises)

    def close(self) -> None:
        with contextlib.ExitStack() as stack:  # close the lock holder (chainstate) last
            stack.callback(self.chainstate.close)
            stack.callback(self.block_index.close)
            stack.callback(self.block_files.close)
            self.proof_cache.close()

