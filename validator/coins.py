"""UTXO records: the stored form of an output (its Elements serialization without witness).

The chainstate stores each output as its Elements serialization (asset ‖ value ‖ nonce ‖
scriptPubKey, docs/elements-format.md §1.1 TxOut, no witness); ``decode_txout`` reads it back with
the parser's C walker (``TxOut.parse``, the one TxOut decoder). Those bytes were written by this
validator, so a decoding failure means a corrupt database (``ChainstateCorruptError``), never a
consensus verdict.
"""

from __future__ import annotations

from ctplugin.elements import TxOut
from ctplugin.errors import ParseError
from validator.store.errors import ChainstateCorruptError


def encode_txout(out: TxOut) -> bytes:
    """The consensus serialization of an output without its witness (what the UTXO set keeps)."""
    return out.serialize()


def decode_txout(data: bytes) -> TxOut:
    """Inverse of ``encode_txout``; ``ChainstateCorruptError`` on anything malformed."""
    try:
        return TxOut.parse(data)
    except ParseError as exc:
        raise ChainstateCorruptError(f"malformed UTXO output: {exc}") from None
