"""Elements' tapscript opcodes (Elements ``src/script/interpreter.cpp``; the opcode list is in
``src/script/script.h``) on our chain's transactions: streaming SHA256 with Elements' context
serialization, 64-bit arithmetic, introspection, OP_CHECKSIGFROMSTACK in both its forms
(BIP340 in tapscript, deferred into the block's batch), OP_TWEAKVERIFY, OP_ECMULSCALARVERIFY,
OP_DETERMINISTICRANDOM and OP_SUBSTR_LAZY — and that the tapscript-only ones are BAD_OPCODE
before tapscript."""

from __future__ import annotations

import hashlib

import pytest

from ctplugin.elements import TxOut
from ctplugin.script.checker import DeferredChecks
from ctplugin.script.errors import ScriptError
from ctplugin.script.interpreter import Sha256Context
from ctplugin.secp256k1 import ct, libsecp
from tests.unit.test_script_interpreter import (
    ASSET,
    AUX,
    KEY_A,
    KEY_B,
    E,
    fails,
    p2wsh,
    pub,
    push,
    script_path,
    xonly,
)


def le8(n: int) -> bytes:
    return (n & (1 << 64) - 1).to_bytes(8, "little")


def runs(leaf: bytes, *items: bytes) -> None:
    """``leaf`` as a tapscript with ``items`` on the stack (bottom first) verifies."""
    spend, _, control = script_path(leaf)
    spend.verify(spend.tx([(*items, leaf, control)]))


def refuses(leaf: bytes, code: E, *items: bytes) -> None:
    spend, _, control = script_path(leaf)
    fails(spend, spend.tx([(*items, leaf, control)]), code)


# --- streaming SHA256 -------------------------------------------------------------------------

@pytest.mark.parametrize("sizes", [(0, 0, 0), (1, 62, 1), (64, 64, 64), (55, 9, 75), (70, 70, 3)])
def test_sha256_streaming_equals_one_hash(sizes: tuple[int, int, int]) -> None:
    a, b, c = (bytes([i + 1]) * n for i, n in enumerate(sizes))
    leaf = (push(a) + b"\xc4" + push(b) + b"\xc5" + push(c) + b"\xc6"
            + push(hashlib.sha256(a + b + c).digest()) + b"\x87")
    runs(leaf)


def test_sha256_context_is_elements_serialization() -> None:
    ctx = Sha256Context()
    ctx.write(b"x" * 70)
    saved = ctx.save()
    assert len(saved) == 40 + 6 and saved[32:40] == (70 * 8).to_bytes(8, "little")
    again = Sha256Context.load(saved)
    again.write(b"y")
    assert again.finalize() == hashlib.sha256(b"x" * 70 + b"y").digest()
    odd_bits = saved[:32] + (70 * 8 + 1).to_bytes(8, "little") + saved[40:]
    for bad in (saved[:-1], saved[:39], odd_bits):
        with pytest.raises(ScriptError) as info:
            Sha256Context.load(bad)
        assert info.value.code is E.SHA2_CONTEXT_LOAD
    refuses(b"\x00" + push(b"a") + b"\xc5", E.SHA2_CONTEXT_LOAD)


# --- 64-bit arithmetic ------------------------------------------------------------------------

def test_add64_and_its_overflow() -> None:
    max64 = (1 << 63) - 1
    runs(push(le8(5)) + push(le8(-7)) + b"\xd7\x69" + push(le8(-2)) + b"\x87")
    # overflow: false on top of the untouched operands
    runs(push(le8(max64)) + push(le8(1)) + b"\xd7\x91\x69\x6d\x51")
    refuses(push(b"\x01") + push(le8(1)) + b"\xd7", E.EXPECTED_8BYTES)


def test_div64_gives_a_non_negative_remainder() -> None:
    # -7 = 2·(-4) + 1: remainder below, quotient on top
    runs(push(le8(-7)) + push(le8(2)) + b"\xda\x69" + push(le8(-4)) + b"\x88" + push(le8(1))
         + b"\x87")
    runs(push(le8(7)) + push(le8(0)) + b"\xda\x91\x69\x6d\x51")  # division by zero: false


def test_scriptnum_and_le64_conversions() -> None:
    runs(b"\x01\x85\xe0" + push(le8(-5)) + b"\x87")  # SCRIPTNUMTOLE64
    runs(push(le8(-5)) + b"\xe1\x01\x85\x87")  # LE64TOSCRIPTNUM
    refuses(push(le8(1 << 40)) + b"\xe1", E.ARITHMETIC64)  # does not fit 4 bytes
    runs(push(b"\xff\xff\xff\xff") + b"\xe2" + push(le8(0xFFFF_FFFF)) + b"\x87")  # LE32TOLE64
    refuses(push(b"\x01") + b"\xe2", E.ARITHMETIC64)


# --- introspection ----------------------------------------------------------------------------

def test_introspection_of_the_transaction_and_its_input() -> None:
    leaf = b"\xcd\x00\x87\x69"  # PUSHCURRENTINPUTINDEX = 0
    leaf += b"\xd4\x51\x87\x69"  # one input
    leaf += b"\xd5\x52\x87\x69"  # two outputs
    leaf += b"\x00\xcf\x01\x01\x88" + push(le8(1000)) + b"\x88"  # output 0: explicit 1000
    leaf += b"\x00\xca\x51\x88"  # input 0's scriptPubKey: witness version 1, then its program
    leaf += b"\x82\x01\x20\x88"  # (a 32-byte program: the output key, left as the result)
    runs(leaf)


def test_txweight_and_index_bounds() -> None:
    leaf = b"\xd6\x82\x58\x88"  # TXWEIGHT is 8 bytes: the transaction's weight
    spend, _, control = script_path(leaf)
    tx = spend.tx([(leaf, control)])
    spend.verify(tx)
    stack: list[bytes] = []
    from ctplugin.script.checker import ExecData, SigVersion, checker_for
    from ctplugin.script.interpreter import eval_script

    pre = spend.pre(tx)
    eval_script(stack, b"\xd6", 0, checker_for(pre, 0, 0), SigVersion.TAPSCRIPT, ExecData())
    assert stack == [le8(tx.weight)]
    refuses(b"\x55\xcf", E.INTROSPECT_INDEX_OUT_OF_BOUNDS)
    refuses(b"\x4f\xc8", E.INTROSPECT_INDEX_OUT_OF_BOUNDS)
    refuses(b"\xcb", E.INVALID_STACK_OPERATION)


def test_tapscript_only_opcodes_are_bad_before_tapscript() -> None:
    from tests.unit.test_script_interpreter import Spend

    for op in (0xC4, 0xC7, 0xCD, 0xD7, 0xE3, 0xE4):
        script = bytes((op,))
        spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(script))])
        fails(spend, spend.tx([(b"\x01", script)]), E.BAD_OPCODE)


# --- signatures and keys ----------------------------------------------------------------------

def test_checksigfromstack_in_tapscript_is_bip340_and_batched() -> None:
    msg = hashlib.sha256(b"oracle outcome").digest()
    sig = ct.schnorr_sign(KEY_A, msg, AUX)
    leaf = push(xonly(KEY_A)) + b"\xc1"
    spend, _, control = script_path(leaf)
    deferred = DeferredChecks()
    spend.verify(spend.tx([(sig, msg, leaf, control)]), deferred=deferred)
    [check] = deferred.schnorr
    assert (check.msg, check.sig) == (msg, sig) and libsecp.schnorr_verify(
        check.pubkey, check.msg, check.sig)
    spend.verify(spend.tx([(sig, msg, leaf, control)]))
    fails(spend, spend.tx([(sig, msg[::-1], leaf, control)]), E.SCHNORR_SIG)
    fails(spend, spend.tx([(sig + b"\x01", msg, leaf, control)]), E.SCHNORR_SIG_SIZE)
    fails(spend, spend.tx([(b"", msg, leaf, control)]), E.EVAL_FALSE)  # empty: false


def test_tweakverify_and_ecmulscalarverify() -> None:
    internal, tweak = xonly(KEY_A), hashlib.sha256(b"contract").digest()
    result = libsecp.xonly_tweak_add(internal, tweak)
    assert result is not None
    tweaked = bytes((2 + result[1],)) + result[0]
    runs(push(tweaked) + push(tweak) + push(internal) + b"\xe4\x51")
    refuses(push(tweaked) + push(tweak[::-1]) + push(internal) + b"\xe4\x51", E.ECMULTVERIFYFAIL)
    refuses(push(tweaked[1:]) + push(tweak) + push(internal) + b"\xe4\x51", E.PUBKEYTYPE)
    refuses(push(tweak) + push(internal) + b"\xe4\x51", E.UNKNOWN_ERROR)  # at() throws
    scalar = KEY_B.to_bytes(32, "big")
    runs(push(pub(KEY_B)) + push(pub(1)) + push(scalar) + b"\xe3\x51")
    refuses(push(pub(KEY_A)) + push(pub(1)) + push(scalar) + b"\xe3\x51", E.ECMULTVERIFYFAIL)


# --- opcodes of every script version ----------------------------------------------------------

def test_substr_lazy_clamps_and_substr_does_not() -> None:
    runs(push(b"abcdef") + b"\x54\x5a\xc3" + push(b"ef") + b"\x87")
    refuses(push(b"abcdef") + b"\x54\x5a\x7f", E.INVALID_STACK_OPERATION)
    runs(push(b"abcdef") + b"\x58\x51\xc3\x00\x87")  # start past the end: empty


def _draw(seed: bytes, lo: int, hi: int) -> int:
    """OP_DETERMINISTICRANDOM's definition: little-endian 8-byte words of
    SHA256(seed ‖ counter), the first not above the largest multiple of the range."""
    span = hi - lo
    limit = (2**64 - 1) // span * span
    for counter in range(100):
        digest = hashlib.sha256(seed + counter.to_bytes(8, "little")).digest()
        for i in range(3):
            word = int.from_bytes(digest[8 * i:8 * i + 8], "little")
            if word <= limit:
                return lo + word % span
    raise AssertionError("no draw")


@pytest.mark.parametrize("seed", [b"seed", b"", bytes(40)])
def test_deterministic_random(seed: bytes) -> None:
    value = _draw(seed, 3, 10)
    runs(push(seed) + b"\x53\x5a\xc0" + bytes((0x50 + value,)) + b"\x87")
    runs(push(b"seed") + b"\x55\x55\xc0\x55\x87")  # min = max: min
    refuses(push(b"seed") + b"\x56\x55\xc0", E.UNKNOWN_ERROR)  # min above max
