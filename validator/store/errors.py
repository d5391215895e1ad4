"""Typed errors of the LevelDB stores."""

from __future__ import annotations

from ctplugin.errors import CtpluginError, ValidationError


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


class MissingInputError(ValidationError):
    """A spent outpoint is not in the UTXO set (missing, already spent, or spent twice)."""

    def __init__(self, outpoint: object, detail: str = "") -> None:
        super().__init__("bad-txns-inputs-missingorspent", detail=detail or f"{outpoint}")
        self.outpoint = outpoint


class DuplicateOutputError(ValidationError):
    """A created outpoint already exists (BIP30) or is created twice in one block."""

    def __init__(self, outpoint: object, detail: str = "") -> None:
        super().__init__("bad-txns-BIP30", detail=detail or f"{outpoint}")
        self.outpoint = outpoint
