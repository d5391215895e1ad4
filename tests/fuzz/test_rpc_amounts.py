"""Amounts as bitcoind reads them (docs/node-rpc.md §1.2): ``rpc.params.parse_fixed_point`` is
Bitcoin Core's ``ParseFixedPoint`` (src/util/strencodings.cpp) and ``amount_from_value`` its
``AmountFromValue`` (src/rpc/util.cpp).

Three layers of evidence: Core's own unit-test vectors (src/test/util_tests.cpp
``test_ParseFixedPoint``, src/test/rpc_tests.cpp ``rpc_parse_monetary_values``), the hostile
spellings a Python parser lets through (``1_0``, full-width digits, padding, ``1E+99999999999``),
and a differential fuzz against a digit-by-digit transcription of Core's loop (``_core_loop``
below: int64 arithmetic and its overflow checks, written out as the C++ reads), which our
regex-and-count implementation must agree with on every string.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rpc.errors import RpcCode, RpcError
from rpc.jsonrpc import JsonNumber, decode_json
from rpc.params import amount_from_value, fee_rate_from_value, parse_fixed_point

UPPER_BOUND = 10**18 - 1


def _core_loop(val: str, decimals: int) -> int | None:
    """ParseFixedPoint as the C++ reads, step by step (the test's oracle)."""
    mantissa = exponent = tzeros = point_ofs = 0
    ptr, end = 0, len(val)
    negative = exp_negative = False

    def is_digit(ch: str) -> bool:
        return "0" <= ch <= "9"

    def mantissa_digit(ch: str) -> bool:
        nonlocal mantissa, tzeros
        if ch == "0":
            tzeros += 1
            return True
        for _ in range(tzeros + 1):
            if mantissa > UPPER_BOUND // 10:
                return False
            mantissa *= 10
        mantissa += ord(ch) - ord("0")
        tzeros = 0
        return True

    if ptr < end and val[ptr] == "-":
        negative = True
        ptr += 1
    if ptr >= end:
        return None
    if val[ptr] == "0":
        ptr += 1
    elif "1" <= val[ptr] <= "9":
        while ptr < end and is_digit(val[ptr]):
            if not mantissa_digit(val[ptr]):
                return None
            ptr += 1
    else:
        return None
    if ptr < end and val[ptr] == ".":
        ptr += 1
        if not (ptr < end and is_digit(val[ptr])):
            return None
        while ptr < end and is_digit(val[ptr]):
            if not mantissa_digit(val[ptr]):
                return None
            ptr += 1
            point_ofs += 1
    if ptr < end and val[ptr] in "eE":
        ptr += 1
        if ptr < end and val[ptr] == "+":
            ptr += 1
        elif ptr < end and val[ptr] == "-":
            exp_negative = True
            ptr += 1
        if not (ptr < end and is_digit(val[ptr])):
            return None
        while ptr < end and is_digit(val[ptr]):
            if exponent > UPPER_BOUND // 10:
                return None
            exponent = exponent * 10 + ord(val[ptr]) - ord("0")
            ptr += 1
    if ptr != end:
        return None
    if exp_negative:
        exponent = -exponent
    exponent = exponent - point_ofs + tzeros + decimals
    if negative:
        mantissa = -mantissa
    if exponent < 0 or exponent >= 18:
        return None
    for _ in range(exponent):
        if abs(mantissa) > UPPER_BOUND // 10:
            return None
        mantissa *= 10
    if abs(mantissa) > UPPER_BOUND:
        return None
    return mantissa


CORE_ACCEPTS = [  # src/test/util_tests.cpp test_ParseFixedPoint (decimals 8)
    ("0", 0), ("1", 100000000), ("0.0", 0), ("-0.1", -10000000), ("1.1", 110000000),
    ("1.10000000000000000", 110000000), ("1.1e1", 1100000000), ("1.1e-1", 11000000),
    ("1000", 100000000000), ("-1000", -100000000000), ("0.00000001", 1),
    ("0.0000000100000000", 1), ("-0.00000001", -1), ("1000000000.00000001", 100000000000000001),
    ("9999999999.99999999", 999999999999999999), ("-9999999999.99999999", -999999999999999999),
]
CORE_REFUSES = [
    "", "-", "a-1000", "-a1000", "-1000a", "-01000", "00.1", ".1", "--0.1", "0.000000001",
    "-0.000000001", "0.00000001000000001", "-10000000000.00000000", "10000000000.00000000",
    "-10000000000.00000001", "10000000000.00000001", "-10000000000.00000009",
    "10000000000.00000009", "-99999999999.99999999", "99999909999.09999999",
    "92233720368.54775807", "92233720368.54775808", "-92233720368.54775808",
    "-92233720368.54775809", "1.1e", "1.1e-", "1.",
]


@pytest.mark.parametrize(("text", "expected"), CORE_ACCEPTS)
def test_core_vectors_accepted(text: str, expected: int) -> None:
    assert parse_fixed_point(text, 8) == expected == _core_loop(text, 8)


@pytest.mark.parametrize("text", CORE_REFUSES)
def test_core_vectors_refused(text: str) -> None:
    assert parse_fixed_point(text, 8) is None
    assert _core_loop(text, 8) is None


def test_core_vectors_three_decimals() -> None:
    assert parse_fixed_point("0.001", 3) == 1
    for text in ("0.0009", "31.00100001", "31.0011", "31.99999999", "31.999999999999999999999"):
        assert parse_fixed_point(text, 3) is None


@pytest.mark.parametrize(("text", "satoshis"), [  # src/test/rpc_tests.cpp
    ("0", 0), ("0.00000000", 0), ("0.00000001", 1), ("0.17622195", 17622195),
    ("0.5", 50000000), ("20999999.9999999", 2099999999999990),
    ("20999999.99999999", 2099999999999999), ("1e-8", 1), ("0.1e-7", 1), ("0.01e-6", 1),
    ("0.00000000000000000000000000000000000001e+30", 1),
    ("10000000000000000000000000000000000000000000000000000000000000000e-64", 100000000),
    ("0.00000001000000", 1), ("0.19e-6", 19),
])
def test_amount_from_value_core_vectors(text: str, satoshis: int) -> None:
    assert amount_from_value(JsonNumber(text)) == satoshis
    assert amount_from_value(text) == satoshis


def _refused(value: Any) -> tuple[int, str]:
    with pytest.raises(RpcError) as caught:
        amount_from_value(value)
    return caught.value.code, caught.value.message


@pytest.mark.parametrize("text", [
    # what Python's Decimal()/int()/float() accept and Core does not
    "1_0", "1_000.5", "\uff11", "\u0661", "1\uff10", " 1", "1 ", "\t1", "1\n", "+1", "01",
    ".5", "5.", "1e", "0x10", "Infinity", "NaN", "-Infinity", "1,5", "1.5.1", "",
    # Core's own refusals, and huge exponents that must not cost anything
    "1e-9", "0.000000019", "19e-9", ".19e-6", "92233720368.54775808", "1e+11", "1e11", "93e+9",
    "1E+99999999999", "1E-99999999999", "1e" + "9" * 5000, "9" * 100_000,
])
def test_hostile_amount_spellings_are_invalid_amount(text: str) -> None:
    assert _refused(text) == (RpcCode.TYPE_ERROR, "Invalid amount")


def test_range_and_type_errors() -> None:
    assert _refused("-0.00000001") == (RpcCode.TYPE_ERROR, "Amount out of range")
    assert _refused("21000000.00000001") == (RpcCode.TYPE_ERROR, "Amount out of range")
    assert amount_from_value("21000000") == 21_000_000 * 100_000_000
    assert amount_from_value("-0") == 0  # Core: ParseFixedPoint("-0") is 0, not negative
    for value in (True, None, [1], {"a": 1}, 1.5):
        assert _refused(value) == (RpcCode.TYPE_ERROR, "Amount is not a number or string")


def test_json_numbers_keep_their_text() -> None:
    """A JSON number reaches the parser as the text it was sent as (UniValue's getValStr)."""
    assert amount_from_value(decode_json(b"[1e-8]")[0]) == 1
    assert amount_from_value(decode_json(b"[0.10]")[0]) == 10_000_000
    assert amount_from_value(decode_json(b"[-0]")[0]) == 0
    assert _refused(decode_json(b"[1E+99999999999]")[0]) == (RpcCode.TYPE_ERROR,
                                                             "Invalid amount")
    # More digits than Python's int() converts by default: still one number, refused by the
    # parser (not a -32700 parse error and not a ValueError).
    huge = decode_json(b"[" + b"9" * 5000 + b"]")[0]
    assert isinstance(huge, Decimal)
    assert _refused(huge) == (RpcCode.TYPE_ERROR, "Invalid amount")


def test_fee_rate_takes_three_decimals() -> None:
    assert fee_rate_from_value("1.5") == 1500
    assert fee_rate_from_value(JsonNumber("0.001")) == 1
    with pytest.raises(RpcError, match="Invalid amount"):
        fee_rate_from_value("0.0001")
    with pytest.raises(RpcError, match="Invalid amount"):
        fee_rate_from_value("1_5")


_ALPHABET = st.sampled_from([*"0123456789-+.eE", "00", "9" * 9, "\uff11", "_", " "])


@settings(max_examples=3000, deadline=None)
@given(st.lists(_ALPHABET, max_size=24).map("".join), st.sampled_from([0, 3, 8]))
def test_agrees_with_cores_loop(text: str, decimals: int) -> None:
    assert parse_fixed_point(text, decimals) == _core_loop(text, decimals)


@settings(max_examples=1000, deadline=None)
@given(st.integers(min_value=-(10**20), max_value=10**20), st.integers(0, 30),
       st.integers(-30, 30))
def test_agrees_with_cores_loop_on_numbers(digits: int, point: int, exponent: int) -> None:
    """Well-formed numbers around every bound: ``digits`` with the point ``point`` places from
    the right (zero-padded so there is one digit before it) and an optional exponent."""
    body = str(abs(digits)).rjust(point + 1, "0")
    text = body if not point else f"{body[:-point]}.{body[-point:]}"
    text = ("-" if digits < 0 else "") + text + (f"e{exponent}" if exponent else "")
    assert parse_fixed_point(text, 8) == _core_loop(text, 8)
