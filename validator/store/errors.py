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


class ChainstateCorruptError(StoreError):
    """The chainstate database is unreadable or inconsistent; it is never repaired silently."""


class BlockFileError(StoreError):
    """A block or undo record that cannot be read back: missing file, bad magic or length,
    truncated, failed checksum, or bytes that are not the block the index names."""


class BlockIndexCorruptError(StoreError):
    """The block index database is unreadable or inconsistent (never repaired silently)."""


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
