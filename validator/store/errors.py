"""Typed errors of the LevelDB stores."""

from __future__ import annotations

from ctplugin.errors import CtpluginError


class StoreError(CtpluginError):
    """A data directory or database problem (not a consensus verdict)."""


class StoreValueError(StoreError, ValueError):
    """A value a store cannot hold or use: an outpoint txid that is not 32 bytes, an index or
    height outside 32 bits, a proof-cache salt or key that is not 32 bytes, a network magic that
    is not 4 bytes... (a ValueError too, as ``EncodingError`` is)."""


class DataDirLockedError(StoreError):
    """Another process (or another handle in this one) already owns the data directory."""

    def __init__(self, path: str, detail: str = "") -> None:
        super().__init__(f"data directory {path} is in use by another process"
                         + (f" ({detail})" if detail else ""))
        self.path = path


class StoreFatalError(StoreError):
    """The node must stop: a store cannot be trusted (corruption) or written (a failed durable
    write). Bitcoin Core's ``AbortNode`` / ``fatalError`` (src/node/abort.cpp): nothing more is
    written, the node shuts down, and ``recovery`` names the command that repairs the store."""

    STORE = "data directory"
    RECOVERY = "-reindex"

    def __init__(self, message: str, *, store: str | None = None,
                 recovery: str | None = None) -> None:
        super().__init__(message)
        self.store = store or self.STORE
        self.recovery = recovery or self.RECOVERY


class CorruptDatabaseError(StoreFatalError):
    """A store read back something other than what was written (a LevelDB checksum, our own
    checksum, a hash or a cross-check failed). The message is Core's start-up refusal
    (src/node/chainstate.cpp, src/init.cpp): "Corrupted block database detected ... Please
    restart with -reindex or -reindex-chainstate to recover", naming the damaged store."""

    def __init__(self, detail: str, *, store: str | None = None,
                 recovery: str | None = None) -> None:
        super().__init__(detail, store=store, recovery=recovery)
        self.detail = detail

    def __str__(self) -> str:
        return (f"Corrupted block database detected: {self.store}: {self.detail}. "
                f"Please restart with {self.recovery} to recover.")


class DiskWriteError(StoreFatalError):
    """A durable write failed (ENOSPC, EIO, a read-only file system...). Core's words: "Disk
    space is too low!" for a full disk (src/node/blockstorage.cpp), otherwise "A fatal internal
    error occurred, see debug.log for details" (src/node/abort.cpp)."""

    def __init__(self, site: str, detail: str, *, full: bool) -> None:
        super().__init__(detail, store=site, recovery="restart once the disk is writable")
        self.site = site
        self.detail = detail
        self.full = full

    def __str__(self) -> str:
        head = ("Disk space is too low!" if self.full
                else "A fatal internal error occurred, see debug.log for details")
        return f"{head} (writing the {self.site}: {self.detail}); the node stops"


class AbandonedError(StoreFatalError):
    """The owner gave up on the data directory in the middle of a change (a forced Ctrl-C,
    ``Node.abandon``): its in-memory state may be half-changed, so nothing more is written, as
    if the process had been killed; the next start recovers from disk as after a kill."""

    def __init__(self) -> None:
        super().__init__("the data directory was abandoned mid-change (interrupted): nothing "
                         "more is written", recovery="a restart (it recovers as after a kill)")


class UnwritableDataDirError(StoreError):
    """The data directory cannot be written (permissions, a read-only file system): Core's
    "Cannot write to data directory '...'; check permissions." (src/init.cpp)."""

    def __init__(self, path: str, detail: str = "") -> None:
        super().__init__(f"Cannot write to data directory '{path}'; check permissions."
                         + (f" ({detail})" if detail else ""))
        self.path = path


class ChainstateCorruptError(CorruptDatabaseError):
    """The chainstate database is unreadable or inconsistent; it is never repaired silently
    (``-reindex-chainstate`` rebuilds it from the block files)."""

    STORE = "chainstate"
    RECOVERY = "-reindex-chainstate"


class BlockFilesCorruptError(CorruptDatabaseError):
    """A block or undo record the active chain needs is unreadable or is not what the block
    index names (start-up verification, a disconnect): ``-reindex`` rebuilds from what the
    block files still hold."""

    STORE = "block files"
    RECOVERY = "-reindex"


class BlockFileError(StoreError):
    """A block or undo record that cannot be read back: missing file, bad magic or length,
    truncated, failed checksum, or bytes that are not the block the index names."""


class BlockIndexCorruptError(CorruptDatabaseError):
    """The block index database is unreadable or inconsistent (never repaired silently;
    ``-reindex`` rebuilds it from the block files)."""

    STORE = "block index"
    RECOVERY = "-reindex"


class UnknownBlockError(StoreError):
    """A block hash the block index does not know."""

    def __init__(self, block_hash: bytes) -> None:
        super().__init__(f"block {block_hash[::-1].hex()} not found")
        self.block_hash = block_hash


class ChainstateConflictError(StoreError):
    """A block that does not extend the tip (wrong prev_hash/height), or no tip to disconnect."""


class MissingInputError(ChainstateConflictError):
    """A spent outpoint is not in the UTXO set (missing, already spent, or spent twice). The
    validator checks spends before writing, so for it this is an inconsistency, not a verdict."""

    def __init__(self, outpoint: object, detail: str = "") -> None:
        super().__init__(detail or f"{outpoint} is not in the UTXO set")
        self.outpoint = outpoint


class DuplicateOutputError(ChainstateConflictError):
    """A created outpoint already exists or is created twice in one block (the validator turns
    the first into its BIP30 verdict)."""

    def __init__(self, outpoint: object, detail: str = "") -> None:
        super().__init__(detail or f"{outpoint} already exists")
        self.outpoint = outpoint
