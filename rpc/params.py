"""Parameter parsers with bitcoind's messages and codes (docs/node-rpc.md §1.2–1.4)."""

from __future__ import annotations

import binascii
import re
from decimal import Decimal
from typing import Any

from ctplugin.elements import Block, Transaction, parse_block, parse_transaction
from ctplugin.elements.consensus import MAX_BLOCK_WEIGHT, MAX_MONEY, WITNESS_SCALE_FACTOR
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


INT32_MAX = (1 << 31) - 1


def int32(value: int) -> int:
    """An integer argument Core reads with ``getInt<int>()`` (a C ``int``): -1 "JSON integer
    out of range" outside it, as UniValue (src/univalue/include/univalue.h). The registry has
    already made it an int64 (``rpc.registry.integer``)."""
    if not -INT32_MAX - 1 <= value <= INT32_MAX:
        raise RpcError(RpcCode.MISC_ERROR, "JSON integer out of range")
    return value


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


FIXED_POINT_UPPER_BOUND = 10**18 - 1  # ParseFixedPoint's UPPER_BOUND (src/util/strencodings.cpp)
_FIXED_POINT = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?)([0-9]+))?",
                          re.ASCII)
"""ParseFixedPoint's grammar: ASCII digits only (IsDigit), no spaces, ``_``, ``+`` sign, or
leading zeros; a single ``0`` before the point; at least one digit after ``.`` and ``e``."""


def parse_fixed_point(text: str, decimals: int) -> int | None:
    """Bitcoin Core's ``ParseFixedPoint(text, decimals)`` (src/util/strencodings.cpp): the
    value times 10^decimals as an integer, or None where Core returns false — syntax, more
    than 18 significant digits, a fraction finer than 10^-decimals, an exponent of 10^18 or
    more, a result of magnitude 10^18 or more. ``-0`` is 0, as there. The grammar is matched
    by ``re`` and the digits counted on strings, so an 8 MB argument costs one linear scan and
    never a big-integer conversion."""
    match = _FIXED_POINT.fullmatch(text)
    if match is None:
        return None
    sign, whole, fraction, exponent_sign, exponent_digits = match.groups()
    fraction = fraction or ""
    # The digits Core folds into its mantissa: the single leading 0 is skipped, trailing zeros
    # are only counted (mantissa_tzeros), so what must fit is the digits up to the last nonzero.
    digits = ("" if whole == "0" else whole) + fraction
    significant = digits.rstrip("0")
    trailing_zeros = len(digits) - len(significant)
    significant = significant.lstrip("0")
    if len(significant) > 18:
        return None  # overflow while reading the mantissa
    exponent = 0
    if exponent_digits is not None:
        exponent_digits = exponent_digits.lstrip("0")
        if len(exponent_digits) > 18:
            return None  # overflow while reading the exponent
        exponent = int(exponent_digits or "0")
        if exponent_sign == "-":
            exponent = -exponent
    exponent = exponent - len(fraction) + trailing_zeros + decimals
    if exponent < 0 or exponent >= 18:
        return None  # finer than 10^-decimals, or 10^(18-decimals) or more
    value = int(significant or "0") * 10**exponent
    if value > FIXED_POINT_UPPER_BOUND:
        return None
    return -value if sign else value


def amount_from_value(value: Any, decimals: int = 8) -> int:
    """Bitcoin Core's ``AmountFromValue`` (src/rpc/util.cpp): a JSON number (its text as read,
    ``rpc.jsonrpc.JsonNumber``) or a string, through ``parse_fixed_point`` -> satoshis.
    -3 "Amount is not a number or string", -3 "Invalid amount", -3 "Amount out of range"
    (negative, or above MAX_MONEY)."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal, str)):
        raise RpcError(RpcCode.TYPE_ERROR, "Amount is not a number or string")
    amount = parse_fixed_point(value if isinstance(value, str) else str(value), decimals)
    if amount is None:
        raise RpcError(RpcCode.TYPE_ERROR, "Invalid amount")
    if not 0 <= amount <= MAX_MONEY:
        raise RpcError(RpcCode.TYPE_ERROR, "Amount out of range")
    return amount


def amount_json(amount: int) -> Decimal:
    return value_from_amount(amount)


def fee_rate_from_value(value: Any) -> int:
    """A fee rate in sat/vB (Core's ``fee_rate`` argument: ``AmountFromValue(value, 3)``, so up
    to 3 decimals) -> sat/kvB."""
    return amount_from_value(value, decimals=3)


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


def decodable(tx: Transaction) -> Transaction:
    """``tx`` if the JSON of a decoding call (``decoderawtransaction``) may be built for it:
    -22 "TX decode failed: bad-txns-oversize" for a transaction whose non-witness part alone
    is over a block's weight (Bitcoin Core's ``CheckTransaction``, src/consensus/tx_check.cpp:
    no block can hold it). Core still decodes such a transaction; here the per-output and
    per-script-byte work of the JSON (addresses, descriptors, asm) is bounded by what a valid
    transaction can need (docs/node-rpc.md §1.4)."""
    if tx.base_size * WITNESS_SCALE_FACTOR > MAX_BLOCK_WEIGHT:
        raise RpcError(RpcCode.DESERIALIZATION_ERROR, "TX decode failed: bad-txns-oversize")
    return tx


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
