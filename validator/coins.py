"""UTXO records: the stored form of an output (its Elements serialization without witness).

The chainstate stores each output as its Elements serialization (asset ‖ value ‖ nonce ‖
scriptPubKey, elements-format.md §1.1 TxOut, no witness); ``decode_txout`` reads it back. Those
bytes were written by this validator, so a decoding failure means a corrupt database
(``ChainstateCorruptError``), never a consensus verdict.
"""

from __future__ import annotations

from typing import NamedTuple

from ctplugin.elements import TxOut
from ctplugin.errors import EncodingError
from validator.store.errors import ChainstateCorruptError

_ASSET_LEN = {1: 33, 0x0A: 33, 0x0B: 33}
_VALUE_LEN = {1: 9, 8: 33, 9: 33}
_NONCE_LEN = {0: 1, 1: 33, 2: 33, 3: 33}


def encode_txout(out: TxOut) -> bytes:
    """The consensus serialization of an output without its witness (what the UTXO set keeps)."""
    return out.serialize()


class SpentRecord(NamedTuple):
    """A stored output's fields in the model's encodings, without ``TxOut``'s validation (the
    bytes were validated when the output was created); what the rules read of a spent output."""

    asset: bytes
    value: int | bytes
    nonce: bytes
    script_pubkey: bytes


def decode_txout(data: bytes) -> TxOut:
    """Inverse of ``encode_txout``; ``ChainstateCorruptError`` on anything malformed."""
    rec = decode_spent(data)
    try:
        return TxOut(asset=rec.asset, value=rec.value, nonce=rec.nonce,
                     script_pubkey=rec.script_pubkey)
    except EncodingError as exc:
        raise ChainstateCorruptError(f"malformed UTXO output: {exc}") from None


def decode_spent(data: bytes) -> SpentRecord:
    """The fields of a stored output; ``ChainstateCorruptError`` on a malformed record."""
    try:
        pos = 0
        asset_len = _ASSET_LEN[data[pos]]
        asset_raw = data[pos: pos + asset_len]
        pos += asset_len
        value_len = _VALUE_LEN[data[pos]]
        value_raw = data[pos: pos + value_len]
        pos += value_len
        nonce_len = _NONCE_LEN[data[pos]]
        nonce_raw = data[pos: pos + nonce_len]
        pos += nonce_len
        first = data[pos]
        if first < 0xFD:
            script_len, pos = first, pos + 1
        elif first == 0xFD:
            script_len, pos = int.from_bytes(data[pos + 1: pos + 3], "little"), pos + 3
        elif first == 0xFE:
            script_len, pos = int.from_bytes(data[pos + 1: pos + 5], "little"), pos + 5
        else:
            raise ValueError("script length too large")
        if pos + script_len != len(data) or len(nonce_raw) != nonce_len:
            raise ValueError("length mismatch")
        asset = asset_raw[1:] if asset_raw[0] == 1 else asset_raw
        value: int | bytes = (int.from_bytes(value_raw[1:], "big") if value_raw[0] == 1
                              else value_raw)
        nonce = b"" if nonce_raw == b"\x00" else nonce_raw
        return SpentRecord(bytes(asset), value, bytes(nonce), bytes(data[pos:]))
    except (IndexError, KeyError, ValueError) as exc:
        raise ChainstateCorruptError(f"malformed UTXO output: {exc}") from None
