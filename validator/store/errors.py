"""Typed errors of the LevelDB stores."""

from __future__ import annotations

from ctplugin.errors import CtpluginError


class StoreError(CtpluginError):
    """A data directory or database problem (not a consensus verdict)."""


class DataDirLockedError(StoreError):
    """Another process (or another handle in this one) already owns the data directory."""

    def __init__(self, path: str, detail: str = "") -> None:
        super().__init__(f"data directory {path} is in use by another process"
                         + (f" ({detail})" if detail else ""))
        self.path = path


class ChainstateCorruptError(StoreError):
    """The chainstate database is unreadable or inconsistent; it is never repaired silently."""


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
