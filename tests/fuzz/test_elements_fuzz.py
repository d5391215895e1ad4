"""Hostile input: mutation fuzzing of the real vectors, explicit malformed cases, and a
differential check against wallycore on every mutant both libraries read.

Properties: parsing raises nothing but ParseError (offset inside the input); whatever parses
re-serializes to exactly the input (so nothing is silently normalized), rebuilds identically via
the Python constructors, hashes, and decodes to JSON without error.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin.elements import (
    Block,
    Transaction,
    TxOut,
    parse_block,
    parse_block_header,
    parse_transaction,
)
from ctplugin.elements.rpcjson import decode_transaction, dumps
from ctplugin.errors import ParseError
from harness.elements_vectors import load_entries
from harness.interop import model_fields, wally_fields
from tests.conftest import FIXTURES, SLOW_SCALE, shared_file

TX_PATHS = [FIXTURES / "elements_transactions.json",
            shared_file("elements-vectors", "transactions.json")]
BLOCK_PATHS = [FIXTURES / "elements_blocks.json", shared_file("elements-vectors", "blocks.json")]
TX_POOL = sorted(raw for e in load_entries(TX_PATHS, "transactions")
                 if len(raw := bytes.fromhex(e["hex"])) <= 6000)
BLOCK_POOL = sorted(raw for e in load_entries(BLOCK_PATHS, "blocks")
                    if len(raw := bytes.fromhex(e["hex"])) <= 7000)
INTERESTING = (0x00, 0x01, 0x02, 0x03, 0x08, 0x09, 0x0A, 0x0B, 0x40, 0x80, 0xFC, 0xFD, 0xFE, 0xFF)

# Rules Elements enforces while reading that wallycore's reader does not; a mutant wally reads
# may be refused by us only for one of these.
ELEMENTS_ONLY_REJECTIONS = {
    "trailing bytes after transaction",       # decoderawtransaction refuses extra data
    "superfluous witness record",             # witness flag set, all witnesses empty
    "superfluous issuance record",            # issuance flag set, amount and keys null
    "confidential value may not be null",     # CTxOut value 0x00
    "confidential asset may not be null",     # CTxOut asset 0x00
    "unknown transaction optional data",      # flag bits other than 1
    "non-canonical compact size",             # ReadCompactSize
    "compact size exceeds MAX_SIZE",          # ReadCompactSize range check
    "unrecognized confidential value prefix",  # only 00/01/08/09
    "unrecognized confidential asset prefix",  # only 00/01/0a/0b
    "unrecognized confidential nonce prefix",  # only 00/01/02/03
    "output count exceeds remaining bytes",   # non-null outputs need >= 44 bytes each
}


@st.composite
def mutants(draw: st.DrawFn, pool: list[bytes]) -> bytes:
    data = bytearray(draw(st.sampled_from(pool)))
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        pos = draw(st.integers(0, len(data) - 1))
        kind = draw(st.integers(0, 6))
        if kind == 0:
            data[pos] = draw(st.integers(0, 255))
        elif kind == 1:
            data[pos] = draw(st.sampled_from(INTERESTING))
        elif kind == 2:
            del data[pos:pos + draw(st.integers(1, 64))]
        elif kind == 3:
            data[pos:pos] = draw(st.binary(min_size=1, max_size=12))
        elif kind == 4:
            del data[pos:]
        elif kind == 5:
            data[pos:pos + 4] = draw(st.integers(0, 2**32 - 1)).to_bytes(4, "little")
        else:
            end = min(len(data), pos + draw(st.integers(1, 80)))
            data[pos:pos] = data[pos:end]
    return bytes(data)


def _exercise(tx: Transaction, data: bytes) -> None:
    """Everything a caller may do with a parsed transaction must work."""
    assert tx.serialize() == data
    rebuilt = Transaction(version=tx.version, inputs=[dataclasses.replace(i) for i in tx.inputs],
                          outputs=[dataclasses.replace(o) for o in tx.outputs],
                          locktime=tx.locktime)
    assert rebuilt.serialize() == data
    assert rebuilt.txid == tx.txid and rebuilt.wtxid == tx.wtxid
    assert rebuilt.withash == tx.withash
    json.loads(dumps(decode_transaction(tx)))


def _parse_or_error(data: bytes) -> Transaction | ParseError:
    try:
        return parse_transaction(data)
    except ParseError as exc:
        assert 0 <= exc.offset <= len(data)
        assert exc.reason
        return exc


FUZZ = settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
FUZZ_SLOW = settings(max_examples=int(10000 * SLOW_SCALE), deadline=None,
                     suppress_health_check=list(HealthCheck))


def _check_transaction_mutant(data: bytes) -> None:
    result = _parse_or_error(data)
    if isinstance(result, Transaction):
        _exercise(result, data)


def _check_against_wally(data: bytes) -> None:
    wallycore = pytest.importorskip("wallycore")
    flags = wallycore.WALLY_TX_FLAG_USE_ELEMENTS | wallycore.WALLY_TX_FLAG_USE_WITNESS
    ours = _parse_or_error(data)
    try:
        theirs = wallycore.tx_from_bytes(data, flags)
    except ValueError:
        theirs = None
    if theirs is None:
        if isinstance(ours, Transaction):
            # Elements reads a 0xffffffff prevout index as the null prevout whatever the hash
            # (no issuance/peg-in flags); wally only does so for the all-zero hash.
            assert any(i.prevout_index == 0xFFFF_FFFF and i.prevout_hash != bytes(32)
                       for i in ours.inputs)
        return
    if isinstance(ours, ParseError):
        assert ours.reason in ELEMENTS_ONLY_REJECTIONS, ours
        return
    assert wally_fields(theirs) == model_fields(ours)
    if ours.inputs and not any(i.is_pegin and i.issuance is not None for i in ours.inputs):
        # wally drops the peg-in flag of an input that also has an issuance when it hashes
        assert bytes(wallycore.tx_get_txid(theirs)) == ours.txid


@FUZZ
@given(mutants(TX_POOL))
def test_transaction_mutants(data: bytes) -> None:
    _check_transaction_mutant(data)


@FUZZ
@given(mutants(TX_POOL))
def test_transaction_mutants_agree_with_wallycore(data: bytes) -> None:
    _check_against_wally(data)


@FUZZ
@given(mutants(BLOCK_POOL))
def test_block_mutants(data: bytes) -> None:
    try:
        block = parse_block(data)
    except ParseError as exc:
        assert 0 <= exc.offset <= len(data)
    else:
        assert block.serialize() == data
        block.compute_merkle_root()
        block.check_witness_commitment()
        assert block.hash == block.header.hash
        rebuilt = Block(header=dataclasses.replace(block.header),
                        transactions=[dataclasses.replace(t) for t in block.transactions])
        assert rebuilt.serialize() == data
    try:
        header = parse_block_header(data)
    except ParseError:
        pass
    else:
        assert header.serialize() == data


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes(data: bytes) -> None:
    _check_transaction_mutant(data)
    for parse in (parse_block, parse_block_header):
        with contextlib.suppress(ParseError):
            parse(data)


@pytest.mark.slow
@FUZZ_SLOW
@given(mutants(TX_POOL))
def test_transaction_mutants_slow(data: bytes) -> None:
    _check_transaction_mutant(data)
    _check_against_wally(data)


@pytest.mark.slow
@FUZZ_SLOW
@given(mutants(BLOCK_POOL))
def test_block_mutants_slow(data: bytes) -> None:
    test_block_mutants.hypothesis.inner_test(data)  # type: ignore[attr-defined]


# -- explicit malformed cases ----------------------------------------------------------------

ASSET = bytes(range(32))
SIMPLE = Transaction(version=2, inputs=[], outputs=[TxOut(asset=ASSET, value=1)], locktime=0)


def _reason(data: bytes) -> tuple[int, str]:
    with pytest.raises(ParseError) as info:
        parse_transaction(data)
    return info.value.offset, info.value.reason


@pytest.mark.parametrize(("data", "offset", "reason"), [
    (b"", 0, "truncated version"),
    (b"\x02\x00\x00\x00", 4, "truncated flags"),
    (b"\x02\x00\x00\x00\x02", 4, "unknown transaction optional data"),
    # 2**24 inputs announced with a handful of bytes: refused before any allocation
    (b"\x02\x00\x00\x00\x00\xfe\x00\x00\x00\x01" + bytes(20), 5,
     "input count exceeds remaining bytes"),
    (b"\x02\x00\x00\x00\x00\xff" + (2**40).to_bytes(8, "little"), 5,
     "compact size exceeds MAX_SIZE"),
    (b"\x02\x00\x00\x00\x00\xfd\x05\x00", 5, "non-canonical compact size"),
    (b"\x02\x00\x00\x00\x00\x00\xfe\xff\xff\xff\x7f", 6, "compact size exceeds MAX_SIZE"),
])
def test_malformed_headers(data: bytes, offset: int, reason: str) -> None:
    assert _reason(data) == (offset, reason)


def test_elements_read_rules() -> None:
    raw = bytearray(SIMPLE.serialize())
    assert parse_transaction(bytes(raw)) == SIMPLE
    out_at = 4 + 1 + 1 + 1  # version, flags, 0 inputs, 1 output
    assert _reason(bytes(raw) + b"\x00") == (len(raw), "trailing bytes after transaction")
    null_asset = raw[:out_at] + b"\x00" + raw[out_at + 33:]
    assert _reason(bytes(null_asset))[1] == "output count exceeds remaining bytes"
    bad = bytearray(raw)
    bad[out_at] = 0x05
    assert _reason(bytes(bad)) == (out_at, "unrecognized confidential asset prefix")
    bad = bytearray(raw)
    bad[out_at + 33] = 0x00
    assert _reason(bytes(bad)) == (out_at + 33, "confidential value may not be null")
    bad = bytearray(raw)
    bad[out_at + 33] = 0x0A
    assert _reason(bytes(bad)) == (out_at + 33, "unrecognized confidential value prefix")
    bad = bytearray(raw)
    bad[out_at + 42] = 0x04
    assert _reason(bytes(bad)) == (out_at + 42, "unrecognized confidential nonce prefix")
    # witness flag with nothing in the witness: one empty witness per output, 2 bytes
    superfluous = bytearray(raw) + b"\x00\x00"
    superfluous[4] = 1
    assert _reason(bytes(superfluous)) == (len(raw), "superfluous witness record")


def test_superfluous_issuance_and_null_prevout_flags() -> None:
    prevout = b"\x11" * 32
    body = (b"\x02\x00\x00\x00\x00\x01" + prevout + (0x8000_0000 | 3).to_bytes(4, "little")
            + b"\x00" + b"\xff\xff\xff\xff" + bytes(64) + b"\x00\x00")
    tail = b"\x01" + SIMPLE.outputs[0].serialize() + bytes(4)
    offset, reason = _reason(body + tail)
    assert (offset, reason) == (6 + 32 + 4 + 1 + 4, "superfluous issuance record")
    # an index of 0xffffffff carries no flags whatever the hash (Elements' reading)
    plain = (b"\x02\x00\x00\x00\x00\x01" + prevout + b"\xff\xff\xff\xff" + b"\x00"
             + b"\xff\xff\xff\xff" + tail)
    tx = parse_transaction(plain)
    assert tx.inputs[0].issuance is None and not tx.inputs[0].is_pegin
    assert not tx.inputs[0].is_null_prevout and not tx.is_coinbase


def test_hostile_witness_counts_fail_fast() -> None:
    raw = bytearray(SIMPLE.serialize())
    raw[4] = 1
    # 1 output witness: surjection proof length claims 30 MB
    data = bytes(raw) + b"\xfe" + (30_000_000).to_bytes(4, "little")
    assert _reason(data)[1] == "truncated surjection proof"


def test_block_rules() -> None:
    header = parse_block(bytes.fromhex(load_entries(BLOCK_PATHS, "blocks")[0]["hex"])).header
    raw = header.serialize()
    with pytest.raises(ParseError, match="transaction count exceeds remaining bytes"):
        parse_block(raw + b"\xfd\xff\xff" + bytes(100))
    with pytest.raises(ParseError, match="trailing bytes after block header"):
        parse_block_header(raw + b"\x00")
    dynafed = bytearray(raw)
    dynafed[3] |= 0x80  # claims dynafed: now the challenge bytes are read as entry types
    with pytest.raises(ParseError):
        parse_block_header(bytes(dynafed[:80]) + b"\x03")


def test_decode_json_of_every_vector() -> None:
    for entry in load_entries(TX_PATHS, "transactions"):
        tx = parse_transaction(bytes.fromhex(entry["hex"]))
        decoded: dict[str, Any] = json.loads(dumps(decode_transaction(tx)))
        assert decoded["txid"] == tx.txid_hex and decoded["withash"] == tx.withash_hex
        assert len(decoded["vin"]) == len(tx.inputs)
        assert len(decoded["vout"]) == len(tx.outputs)
