"""CScriptNum encoding and the instruction decoder of ``ctplugin.elements.script``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctplugin.elements.script import (
    Op,
    next_op,
    script_num,
    script_num_decode,
    script_num_encode,
    script_ops,
    script_to_asm,
)
from ctplugin.errors import EncodingError


@given(st.integers(-(2**39), 2**39))
def test_script_num_round_trip_and_minimality(n: int) -> None:
    data = script_num_encode(n)
    assert script_num_decode(data, require_minimal=True, max_size=len(data)) == n
    if data:  # padding the magnitude keeps the value but is not minimal
        padded = data[:-1] + bytes((data[-1] & 0x7F, data[-1] & 0x80))
        assert script_num_decode(padded, max_size=9) == n
        with pytest.raises(EncodingError):
            script_num_decode(padded, require_minimal=True, max_size=9)


@pytest.mark.parametrize("data", [b"\x00", b"\x80", b"\x01\x00", b"\x7f\x80"])
def test_non_minimal_numbers(data: bytes) -> None:
    script_num_decode(data)
    with pytest.raises(EncodingError):
        script_num_decode(data, require_minimal=True)


def test_size_limit_and_known_encodings() -> None:
    with pytest.raises(EncodingError):
        script_num_decode(b"\x01\x02\x03\x04\x05")
    assert script_num_decode(b"\x01\x02\x03\x04\x05", max_size=5) == 0x0504030201
    assert script_num_encode(0) == b""
    assert script_num_encode(-1) == b"\x81"
    assert script_num_encode(128) == b"\x80\x00"
    assert script_num_encode(-128) == b"\x80\x80"
    assert script_num(1000) == b"\x02\xe8\x03"


@given(st.binary(max_size=60))
def test_next_op_walks_exactly_like_script_ops(script: bytes) -> None:
    ops, pos = [], 0
    while pos < len(script):
        step = next_op(script, pos)
        if step is None:
            assert script_ops(script) is None
            return
        op, data, pos = step
        ops.append((op, data))
    assert script_ops(script) == ops


def test_opcode_names() -> None:
    assert Op.OP_CHECKSIGADD == 0xBA and Op.OP_NOP2 is Op.OP_CHECKLOCKTIMEVERIFY
    assert script_to_asm(bytes((Op.OP_DETERMINISTICRANDOM, Op.OP_1, Op.OP_0))) == (
        "OP_DETERMINISTICRANDOM 1 0")
