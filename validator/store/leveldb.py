"""Opening LevelDB through plyvel with the project's typed errors."""

from __future__ import annotations

import os

import plyvel

from validator.store.errors import DataDirLockedError, StoreError

LEVELDB_FILE_NAMES = frozenset({"CURRENT", "LOCK", "LOG", "LOG.old"})
LEVELDB_FILE_PREFIXES = ("MANIFEST-",)
LEVELDB_FILE_SUFFIXES = (".ldb", ".log", ".sst", ".dbtmp")


def is_leveldb_file(name: str) -> bool:
    """True for names LevelDB itself creates in a database directory."""
    return (name in LEVELDB_FILE_NAMES or name.startswith(LEVELDB_FILE_PREFIXES)
            or name.endswith(LEVELDB_FILE_SUFFIXES))


def is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, plyvel.IOError) and "lock" in text


def open_db(path: str, *, create: bool = True, paranoid: bool = False) -> plyvel.DB:
    """plyvel.DB with DataDirLockedError for a held LOCK; other plyvel errors propagate."""
    os.makedirs(path, exist_ok=True)
    try:
        return plyvel.DB(path, create_if_missing=create, paranoid_checks=paranoid)
    except plyvel.IOError as exc:
        if is_lock_error(exc):
            raise DataDirLockedError(path, str(exc)) from None
        raise StoreError(f"cannot open LevelDB at {path}: {exc}") from None
