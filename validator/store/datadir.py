"""The node's data directory: chainstate and proof cache databases plus the per-node salt.

Layout::

    <datadir>/chainstate/    LevelDB: UTXO set, undo data, best block (``Chainstate``)
    <datadir>/proofcache/    LevelDB: keys of verified proofs (``ProofCache``)
    <datadir>/salt           32 random bytes, created once (atomically) on first open

Ownership: the chainstate database's LevelDB LOCK is taken first and held until ``close``; it
stands for the whole directory, so a second opener (another process, or a second handle in this
one) gets ``DataDirLockedError`` before anything else is touched.
"""

from __future__ import annotations

import contextlib
import os
import secrets

from ctplugin.closing import Closeable
from validator.store.chainstate import Chainstate
from validator.store.errors import DataDirLockedError, StoreError
from validator.store.proofcache import DEFAULT_MAX_ENTRIES, ProofCache

__all__ = ["DataDir", "DataDirLockedError", "read_or_create_salt"]

SALT_FILE = "salt"
SALT_LEN = 32


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
    """An open data directory (``DataDir.open(path)``); use as a context manager."""

    def __init__(self, path: str, chainstate: Chainstate, proof_cache: ProofCache,
                 salt: bytes, salt_created: bool) -> None:
        self.path = path
        self.salt_created = salt_created  # True on the very first open
        self.chainstate = chainstate
        self.proof_cache = proof_cache
        self.salt = salt

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, sync: bool = True,
             cache_max_entries: int = DEFAULT_MAX_ENTRIES) -> DataDir:
        """Open or create the data directory. ``sync`` applies to chainstate writes."""
        path = os.fspath(path)
        if os.path.lexists(path) and not os.path.isdir(path):
            raise StoreError(f"data directory {path} is not a directory")
        os.makedirs(path, exist_ok=True)
        try:
            chainstate = Chainstate.open(os.path.join(path, "chainstate"), sync=sync)
        except DataDirLockedError as exc:
            raise DataDirLockedError(path, str(exc)) from None
        try:
            salt, created = read_or_create_salt(path)
            cache_path = os.path.join(path, "proofcache")
            cache = ProofCache.open(cache_path, salt, max_entries=cache_max_entries)
        except BaseException:
            chainstate.close()
            raise
        return cls(path, chainstate, cache, salt, created)

    def close(self) -> None:
        with contextlib.ExitStack() as stack:  # close the lock holder (chainstate) last
            stack.callback(self.chainstate.close)
            self.proof_cache.close()

