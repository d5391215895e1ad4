"""Opening LevelDB through plyvel with the project's typed errors."""

from __future__ import annotations

import os
from typing import ClassVar

import plyvel

from ctplugin.closing import Closeable
from validator.store.errors import DataDirLockedError, StoreError, UnwritableDataDirError

LEVELDB_FILE_NAMES = frozenset({"CURRENT", "LOCK", "LOG", "LOG.old"})
LEVELDB_FILE_PREFIXES = ("MANIFEST-",)
LEVELDB_FILE_SUFFIXES = (".ldb", ".log", ".sst", ".dbtmp")


def is_leveldb_file(name: str) -> bool:
    """True for names LevelDB itself creates in a database directory."""
    return (name in LEVELDB_FILE_NAMES or name.startswith(LEVELDB_FILE_PREFIXES)
            or name.endswith(LEVELDB_FILE_SUFFIXES))


def is_unwritable_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, OSError) and ("permission denied" in text
                                         or "operation not permitted" in text
                                         or "read-only file system" in text)


def is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, plyvel.IOError) and "lock" in text and not is_unwritable_error(exc)


def open_db(path: str, *, create: bool = True, paranoid: bool = False,
            cache_bytes: int = 8 << 20, write_buffer_bytes: int = 4 << 20) -> plyvel.DB:
    """plyvel.DB with DataDirLockedError for a held LOCK, UnwritableDataDirError for a directory
    that cannot be written, StoreError for other I/O errors; corruption (plyvel.CorruptionError)
    propagates.

    A 10-bit bloom filter per table makes lookups of absent keys (missing inputs, cache
    misses) cost no disk read, as in Bitcoin Core's chainstate.
    """
    try:
        os.makedirs(path, exist_ok=True)
        return plyvel.DB(path, create_if_missing=create, paranoid_checks=paranoid,
                         bloom_filter_bits=10, lru_cache_size=cache_bytes,
                         write_buffer_size=write_buffer_bytes)
    except OSError as exc:  # plyvel.IOError is one
        if is_unwritable_error(exc):
            raise UnwritableDataDirError(path, str(exc)) from None
        if is_lock_error(exc):
            raise DataDirLockedError(path, str(exc)) from None
        raise StoreError(f"cannot open LevelDB at {path}: {exc}") from None


def open_versioned(path: str, version: bytes, corrupt: type[StoreError], what: str,
                   **options: int) -> plyvel.DB:
    """``open_db`` (paranoid) for a database with a format version under key b"V": an empty
    database gets ``version``; a different one, records without one, or an unreadable database
    raise ``corrupt`` (consensus state is never wiped), and so does an existing database that
    cannot be opened (a damaged CURRENT or MANIFEST, a missing table file).
    ``DataDirLockedError`` and ``UnwritableDataDirError`` pass through."""
    existed = os.path.exists(os.path.join(path, "CURRENT"))
    try:
        db = open_db(path, paranoid=True, **options)  # type: ignore[arg-type]
    except (DataDirLockedError, UnwritableDataDirError):
        raise
    except StoreError as exc:
        if not existed:
            raise
        raise corrupt(f"{what} at {path} cannot be opened: {exc}") from None
    except plyvel.Error as exc:
        raise corrupt(f"{what} at {path} is unreadable: {exc}") from None
    try:
        found = db.get(b"V", verify_checksums=True)
        if found is None:
            if next(db.iterator(include_value=False), None) is not None:
                raise corrupt(f"{what} at {path} has no format version")
            db.put(b"V", version, sync=True)
        elif found != version:
            raise corrupt(f"{what} at {path} has format version {found.hex()}, "
                          f"expected {version.hex()}")
    except plyvel.Error as exc:
        db.close()
        raise corrupt(f"{what} at {path} is unreadable: {exc}") from None
    except BaseException:
        db.close()
        raise
    return db


class LevelDbHandle(Closeable):
    """Owner of one open plyvel database: ``db`` (raising once closed), ``close``, ``with``."""

    KIND: ClassVar[str] = "database"
    _db: plyvel.DB | None

    @property
    def db(self) -> plyvel.DB:
        if self._db is None:
            raise StoreError(f"{self.KIND} is closed")
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def closed(self) -> bool:
        return self._db is None

