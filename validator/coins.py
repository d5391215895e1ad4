"""UTXO records: the stored form of an output (its Elements serialization without witness).

The chainstate stores each output as its Elements serialization (asset ‖ value ‖ nonce ‖
scriptPubKey, docs/elements-format.md §1.1 TxOut, no witness); ``decode_txout`` reads it back with
the parser's C walker (``TxOut.parse``, the one TxOut decoder). Those bytes were written by this
validator, so a decoding failure means a corrupt database (``ChainstateCorruptError``), never a
consensus verdict.
"""

from __future__ import annotations

import struct

from ctplugin.elements import TxOut
from ctplugin.errors import ParseError
from validator.store.errors import ChainstateCorruptError

_U32 = struct.Struct("<I")


def encode_txout(out: TxOut) -> bytes:
    """The consensus serialization of an output without its witness (what the UTXO set keeps)."""
    return out.serialize()


def utxo_hash_record(txid: bytes, index: int, stored: bytes) -> bytes:
    """One UTXO's part of ``utxo_set_hash`` (``Node.utxo_stats``, the audit's
    ``audit_utxo_set``): txid ‖ u32 LE index ‖ u32 LE length ‖ the stored entry, hashed in
    key order."""
    return txid + _U32.pack(index) + _U32.pack(len(stored)) + stored


def decode_txout(data: bytes) -> TxOut:
    """Inverse of ``encode_txout``; ``ChainstateCorruptError`` on anything malformed."""
    try:
        return TxOut.parse(data)
    except ParseError as exc:
        raise ChainstateCorruptError(f"malformed UTXO output: {exc}") from None
