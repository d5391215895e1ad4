"""Signature-operation cost with P2SH (Elements ``consensus/tx_verify.cpp``
GetTransactionSigOpCost): a P2SH redeemScript counts accurately × 4, a witness program nested
in P2SH counts as a bare one, and a scriptSig that is not push-only hides its redeemScript."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.elements import Transaction, TxIn, TxOut
from ctplugin.hashes import hash160, sha256
from ctplugin.script.sigops import (
    _sigop_count_py,
    p2sh_sigops,
    sigop_count,
    transaction_sigop_cost,
    witness_sigops,
)

ASSET = bytes(32)
KEY = b"\x02" + bytes(32)
MULTISIG = b"\x52" + (b"\x21" + KEY) * 3 + b"\x53\xae"  # 2-of-3: 3 accurate sigops


def _p2sh(script: bytes) -> bytes:
    return b"\xa9\x14" + hash160(script) + b"\x87"


def _spend(script_sig: bytes, witness: tuple[bytes, ...] = ()) -> Transaction:
    return Transaction(version=2, inputs=(TxIn(sha256(b"p"), 0, script_sig=script_sig,
                                                script_witness=witness),),
                       outputs=(TxOut(asset=ASSET, value=1, script_pubkey=b"\x51"),))


def test_p2sh_redeem_script_counts_accurately_times_four() -> None:
    script_sig = b"\x00" + b"\x4c" + bytes((len(MULTISIG),)) + MULTISIG
    assert p2sh_sigops(_p2sh(MULTISIG), script_sig) == 3
    prev = TxOut(asset=ASSET, value=1, script_pubkey=_p2sh(MULTISIG))
    assert transaction_sigop_cost(_spend(script_sig), [prev]) == 12
    assert p2sh_sigops(_p2sh(MULTISIG), script_sig + b"\x76") == 0  # not push-only


def test_witness_programs_nested_in_p2sh_count_as_bare_ones() -> None:
    program = b"\x00\x20" + sha256(MULTISIG)
    witness = (b"", b"", MULTISIG)
    push = bytes((len(program),)) + program
    assert witness_sigops(_p2sh(program), witness, push) == 3
    assert witness_sigops(program, witness) == 3
    prev = TxOut(asset=ASSET, value=1, script_pubkey=_p2sh(program))
    assert transaction_sigop_cost(_spend(push, witness), [prev]) == 3  # the P2SH part: none
    wpkh = b"\x00\x14" + bytes(20)
    assert witness_sigops(_p2sh(wpkh), (b"s", KEY), bytes((22,)) + wpkh) == 1


_OPS = st.sampled_from([0x00, 0x01, 0x02, 0x4C, 0x4D, 0x4E, 0x51, 0x53, 0x60, 0x61, 0xAC, 0xAD,
                        0xAE, 0xAF, 0xC1, 0xC2, 0xFF])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_OPS.map(lambda op: bytes((op,))), st.binary(max_size=6)),
                max_size=30).map(b"".join), st.booleans())
def test_native_sigop_count_is_the_opcode_walk(script: bytes, accurate: bool) -> None:
    """The native count walks exactly as GetOp does: pushes skipped (their bytes never
    counted), truncated pushes stop it, multisig reads the opcode just before it."""
    assert sigop_count(script, accurate) == _sigop_count_py(script, accurate)


def test_native_sigop_count_edges() -> None:
    assert sigop_count(MULTISIG, True) == 3
    assert sigop_count(MULTISIG, False) == 20
    assert sigop_count(b"\x01\xac\xac", True) == 1  # the first 0xac is pushed data
    assert sigop_count(b"\xac\x4d\x01", True) == 1  # PUSHDATA2 without its length: stop
    assert sigop_count(b"\xac\x4e\xff\xff\xff\xff\xac", True) == 1  # a push past the end
    assert sigop_count(b"\x60\xaf", True) == 16 and sigop_count(b"\x61\xaf", True) == 20
    assert sigop_count(bytearray(b"\xc1\xc2"), False) == 2
