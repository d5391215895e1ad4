"""Parameter parsers with bitcoind's messages and codes (docs/node-rpc.md §1.2–1.4)."""

from __future__ import annotations

import binascii
from decimal import Decimal, InvalidOperation
from typing import Any

from ctplugin.elements import Block, Transaction, parse_block, parse_transaction
from ctplugin.elements.consensus import COIN, MAX_MONEY
from ctplugin.elements.rpcjson import value_from_amount
from ctplugin.errors import ParseError
from rpc.errors import RpcCode, RpcError
from rpc.registry import json_type

MAX_HEX_CHARS = 2 * 32 * 1024 * 1024  # as large as a request body can be


def parse_hash(value: Any, name: str) -> bytes:
    """ParseHashV: 64 hex characters in RPC (reversed) order -> 32 bytes internal order."""
    if not isinstance(value, str):
        raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {_type_name(value)} is not of "
                                           "expected type string")
    if len(value) != 64:  # Core checks the length first
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"{name} must be of length 64 (not {len(value)}, for '{value}')")
    if not _is_hex(value):
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"{name} must be hexadecimal string (not '{value}')")
    return bytes.fromhex(value)[::-1]


def _is_hex(text: str) -> bool:
    return len(text) % 2 == 0 and all(c in "0123456789abcdefABCDEF" for c in text)


def _type_name(value: Any) -> str:
    return json_type(value).value


def parse_hex(value: Any, name: str) -> bytes:
    """ParseHexV: -8 "<name> must be hexadecimal string (not '...')"."""
    if not isinstance(value, str):
        raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {_type_name(value)} is not of "
                                           "expected type string")
    if len(value) > MAX_HEX_CHARS or not _is_hex(value):
        shown = value if len(value) <= 100 else value[:100] + "..."
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"{name} must be hexadecimal string (not '{shown}')")
    return bytes.fromhex(value)


def _number(value: Any) -> Decimal:
    """A JSON number or numeric string as a finite Decimal (-3 otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal, float, str)):
        raise RpcError(RpcCode.TYPE_ERROR, "Amount is not a number or string")
    try:
        number = Decimal(value) if not isinstance(value, float) else Decimal(repr(value))
    except (InvalidOperation, ValueError):
        raise RpcError(RpcCode.TYPE_ERROR, "Invalid amount") from None
    if not number.is_finite():
        raise RpcError(RpcCode.TYPE_ERROR, "Invalid amount")
    return number


def amount_from_value(value: Any, *, allow_negative: bool = False) -> int:
    """AmountFromValue: a JSON number or numeric string with at most 8 decimals -> satoshis."""
    number = _number(value)
    if abs(number) >= Decimal(10) ** 10:
        raise RpcError(RpcCode.TYPE_ERROR, "Invalid amount")
    scaled = number * COIN
    if scaled != scaled.to_integral_value():
        raise RpcError(RpcCode.TYPE_ERROR, "Invalid amount")
    amount = int(scaled)
    if amount > MAX_MONEY or (amount < 0 and not allow_negative):
        raise RpcError(RpcCode.TYPE_ERROR, "Amount out of range")
    return amount


def amount_json(amount: int) -> Decimal:
    return value_from_amount(amount)


def fee_rate_from_value(value: Any) -> int:
    """A fee rate in sat/vB (Core's ``fee_rate`` argument, up to 3 decimals) -> sat/kvB."""
    number = _number(value)
    if number < 0 or number > Decimal(10) ** 8:
        raise RpcError(RpcCode.TYPE_ERROR, "Invalid amount")
    per_kvb = number * 1000
    if per_kvb != per_kvb.to_integral_value():
        raise RpcError(RpcCode.TYPE_ERROR, "Invalid amount")
    return int(per_kvb)


def decode_transaction_hex(value: Any) -> Transaction:
    """DecodeHexTx: -22 "TX decode failed" (with the parser's reason appended)."""
    if not isinstance(value, str):
        raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {_type_name(value)} is not of "
                                           "expected type string")
    try:
        raw = binascii.unhexlify(value)
    except (binascii.Error, ValueError):
        raise RpcError(RpcCode.DESERIALIZATION_ERROR, "TX decode failed") from None
    try:
        return parse_transaction(raw)
    except ParseError as exc:
        raise RpcError(RpcCode.DESERIALIZATION_ERROR, f"TX decode failed: {exc}") from None


def decode_block_hex(value: Any) -> tuple[bytes, Block]:
    """DecodeHexBlk: the block's bytes and the block parsed from them (submitblock hands both
    to ``Node.submit_block``, which then neither parses nor serializes it again)."""
    if not isinstance(value, str):
        raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {_type_name(value)} is not of "
                                           "expected type string")
    try:
        raw = binascii.unhexlify(value)
        return raw, parse_block(raw)
    except (binascii.Error, ValueError, ParseError):
        raise RpcError(RpcCode.DESERIALIZATION_ERROR, "Block decode failed") from None
