"""The interpreter on our chain's transactions (Elements digests): every script type — bare,
P2PKH, P2SH, bare multisig, P2WPKH, P2WSH, taproot key and script path — Elements' errors,
policy vs consensus flags, upgrade hooks, and deferred checks agreeing with immediate ones.
Elements' own vectors are in ``test_script_vectors.py``, its tapscript opcodes in
``test_script_elements_opcodes.py``."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin.elements import Transaction, TxIn, TxOut
from ctplugin.hashes import hash160, sha256
from ctplugin.script.checker import DeferredChecks, checker_for
from ctplugin.script.errors import ScriptError, ScriptErrorCode
from ctplugin.script.flags import BLOCK, STANDARD, ScriptFlags
from ctplugin.script.interpreter import p2wpkh_script_code, verify_input
from ctplugin.script.sighash import (
    PrecomputedTransaction,
    legacy_sighash,
    segwit_v0_sighash,
    taproot_sighash,
)
from ctplugin.script.taproot import ControlBlock, Leaf, TaprootOutput, tweak_hash
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N

E = ScriptErrorCode
GENESIS = sha256(b"test genesis")
ASSET = bytes(range(32))
KEY_A, KEY_B, KEY_C = 0xA11CE, 0xB0B, 0xC0FFEE
AUX = bytes(32)


def pub(secret: int) -> bytes:
    return ct.base_mul(secret).to_bytes()


def xonly(secret: int) -> bytes:
    return ct.xonly_public_key(secret)


def push(data: bytes) -> bytes:
    assert len(data) < 0x4C
    return bytes((len(data),)) + data


def p2wpkh(pubkey: bytes) -> bytes:
    return b"\x00\x14" + hash160(pubkey)


def p2wsh(script: bytes) -> bytes:
    return b"\x00\x20" + sha256(script)


def multisig_2of2(a: bytes, b: bytes) -> bytes:
    return b"\x52" + push(a) + push(b) + b"\x52\xae"


class Spend:
    """A one-input (or more) transaction spending ``spent`` outputs, to sign and verify."""

    def __init__(self, spent: Sequence[TxOut], *, version: int = 2, locktime: int = 0,
                 sequences: Sequence[int] | None = None) -> None:
        self.spent = list(spent)
        seqs = sequences or [0xFFFF_FFFE] * len(spent)
        self.inputs = [TxIn(prevout_hash=sha256(bytes([i])), prevout_index=i, sequence=s)
                       for i, s in enumerate(seqs)]
        self.outputs = [TxOut(asset=ASSET, value=1000, script_pubkey=b"\x51"),
                        TxOut(asset=ASSET, value=10, script_pubkey=b"")]
        self.version, self.locktime = version, locktime

    def tx(self, witnesses: Sequence[tuple[bytes, ...]] = (), script_sigs: Sequence[bytes] = ()
           ) -> Transaction:
        inputs = [replace(txin, script_witness=witnesses[i] if i < len(witnesses) else (),
                          script_sig=script_sigs[i] if i < len(script_sigs) else b"")
                  for i, txin in enumerate(self.inputs)]
        return Transaction(version=self.version, inputs=inputs, outputs=self.outputs,
                           locktime=self.locktime)

    def pre(self, tx: Transaction | None = None) -> PrecomputedTransaction:
        return PrecomputedTransaction(tx or self.tx(), self.spent, GENESIS)

    def v0_sig(self, secret: int, script_code: bytes, index: int = 0, hash_type: int = 1,
               rangeproof: bool = True) -> bytes:
        digest = segwit_v0_sighash(self.pre(), index, script_code, self.spent[index].value,
                                   hash_type, rangeproof)
        return ct.ecdsa_sign(secret, digest) + bytes((hash_type,))

    def legacy_sig(self, secret: int, script_code: bytes, index: int = 0,
                   hash_type: int = 1) -> bytes:
        digest = legacy_sighash(self.tx(), index, script_code, hash_type, rangeproof=True)
        return ct.ecdsa_sign(secret, digest) + bytes((hash_type,))

    def tap_sig(self, secret: int, index: int = 0, hash_type: int = 0,
                leaf: bytes | None = None, annex: bytes | None = None) -> bytes:
        digest = taproot_sighash(self.pre(), index, hash_type, leaf_hash=leaf, annex=annex)
        sig = ct.schnorr_sign(secret, digest, AUX)
        return sig + (bytes((hash_type,)) if hash_type else b"")

    def verify(self, tx: Transaction, flags: int = BLOCK, index: int = 0,
               deferred: DeferredChecks | None = None) -> None:
        pre = self.pre(tx)
        verify_input(pre, index, flags, checker_for(pre, index, flags, deferred, key=index))


def fails(spend: Spend, tx: Transaction, code: ScriptErrorCode, flags: int = BLOCK) -> None:
    with pytest.raises(ScriptError) as info:
        spend.verify(tx, flags)
    assert info.value.code is code, info.value


def key_path_secret(secret: int) -> tuple[int, bytes]:
    p = xonly(secret)
    tweaked = ct.taproot_tweak_secret(secret, tweak_hash(p, None))
    return int.from_bytes(tweaked, "big"), TaprootOutput(p).script_pubkey


# --- bare OP_TRUE -----------------------------------------------------------------------------

def test_op_true_spends_with_an_empty_scriptsig_and_no_witness() -> None:
    spend = Spend([TxOut(asset=ASSET, value=5, script_pubkey=b"\x51")])
    spend.verify(spend.tx())
    spend.verify(spend.tx(), STANDARD)
    fails(spend, spend.tx([(b"\x01",)]), E.WITNESS_UNEXPECTED)
    # a push-only scriptSig is consensus-valid (Elements); CLEANSTACK is policy
    spend.verify(spend.tx(script_sigs=[b"\x51"]))
    fails(spend, spend.tx(script_sigs=[b"\x51"]), E.CLEANSTACK, STANDARD)
    # a scriptSig that is not push-only runs as Elements runs it (OP_DUP on an empty stack)
    fails(spend, spend.tx(script_sigs=[b"\x76"]), E.INVALID_STACK_OPERATION)
    spend.verify(spend.tx(script_sigs=[b"\x51\x76\x75"]))
    fails(spend, spend.tx(script_sigs=[b"\x51\x76\x75"]), E.CLEANSTACK, STANDARD)


# --- P2WPKH ------------------------------------------------------------------------------------

def p2wpkh_case(secret: int = KEY_A, value: int | bytes = 50_000) -> Spend:
    return Spend([TxOut(asset=ASSET, value=value, script_pubkey=p2wpkh(pub(secret)))])


def test_p2wpkh_signed_spend_verifies_under_block_and_policy_flags() -> None:
    for value in (50_000, b"\x08" + bytes(range(32))):  # explicit or confidential amount
        spend = p2wpkh_case(value=value)
        code = p2wpkh_script_code(hash160(pub(KEY_A)))
        tx = spend.tx([(spend.v0_sig(KEY_A, code), pub(KEY_A))])
        spend.verify(tx)
        spend.verify(tx, STANDARD)


def test_p2wpkh_failures_are_elements_errors() -> None:
    spend = p2wpkh_case()
    code = p2wpkh_script_code(hash160(pub(KEY_A)))
    sig = spend.v0_sig(KEY_A, code)
    fails(spend, spend.tx([()]), E.WITNESS_PROGRAM_MISMATCH)  # unsigned: no witness
    fails(spend, spend.tx([(sig,)]), E.WITNESS_PROGRAM_MISMATCH)
    fails(spend, spend.tx([(sig, pub(KEY_B))]), E.EQUALVERIFY)  # another key
    other = spend.v0_sig(KEY_B, code)  # right key, signature by another key
    fails(spend, spend.tx([(other, pub(KEY_A))]), E.EVAL_FALSE)
    fails(spend, spend.tx([(other, pub(KEY_A))]), E.SIG_NULLFAIL, STANDARD)
    wrong_type = sig[:-1] + b"\x02"  # a signature over ALL presented as NONE
    fails(spend, spend.tx([(wrong_type, pub(KEY_A))]), E.EVAL_FALSE)
    fails(spend, spend.tx([(b"", pub(KEY_A))]), E.EVAL_FALSE)
    fails(spend, spend.tx([(sig, pub(KEY_A))], script_sigs=[b"\x00"]), E.WITNESS_MALLEATED)


@pytest.mark.parametrize("position", range(0, 71, 7))
def test_p2wpkh_a_flipped_bit_anywhere_in_the_signature_fails(position: int) -> None:
    spend = p2wpkh_case()
    code = p2wpkh_script_code(hash160(pub(KEY_A)))
    sig = bytearray(spend.v0_sig(KEY_A, code))
    position %= len(sig)
    sig[position] ^= 0x01
    with pytest.raises(ScriptError) as info:
        spend.verify(spend.tx([(bytes(sig), pub(KEY_A))]))
    assert info.value.code in (E.EVAL_FALSE, E.SIG_DER)


def der(r: int, s: int) -> bytes:
    def integer(x: int) -> bytes:
        raw = x.to_bytes(33, "big").lstrip(b"\x00") or b"\x00"
        if raw[0] & 0x80:
            raw = b"\x00" + raw
        return b"\x02" + bytes((len(raw),)) + raw
    body = integer(r) + integer(s)
    return b"\x30" + bytes((len(body),)) + body


def test_high_s_and_undefined_hash_types_are_policy_only() -> None:
    spend = p2wpkh_case()
    code = p2wpkh_script_code(hash160(pub(KEY_A)))
    sig = spend.v0_sig(KEY_A, code)
    len_r = sig[3]
    r = int.from_bytes(sig[4:4 + len_r], "big")
    s = int.from_bytes(sig[6 + len_r:-1], "big")
    tx = spend.tx([(der(r, N - s) + b"\x01", pub(KEY_A))])
    spend.verify(tx)  # consensus normalizes S
    fails(spend, tx, E.SIG_HIGH_S, STANDARD)
    odd = spend.v0_sig(KEY_A, code, hash_type=0x04)  # acts as ALL in consensus
    spend.verify(spend.tx([(odd, pub(KEY_A))]))
    fails(spend, spend.tx([(odd, pub(KEY_A))]), E.SIG_HASHTYPE, STANDARD)


def test_sighash_rangeproof_is_accepted_with_the_flag() -> None:
    spend = p2wpkh_case()
    code = p2wpkh_script_code(hash160(pub(KEY_A)))
    sig = spend.v0_sig(KEY_A, code, hash_type=0x41)
    spend.verify(spend.tx([(sig, pub(KEY_A))]))
    spend.verify(spend.tx([(sig, pub(KEY_A))]), STANDARD)
    # without the flag 0x41 signs a different digest (and policy calls it undefined)
    no_flag = BLOCK & ~ScriptFlags.SIGHASH_RANGEPROOF
    fails(spend, spend.tx([(sig, pub(KEY_A))]), E.EVAL_FALSE, no_flag)


def test_uncompressed_keys_are_policy_only_in_segwit() -> None:
    full = ct.base_mul(KEY_A).to_bytes(compressed=False)
    spend = Spend([TxOut(asset=ASSET, value=7, script_pubkey=b"\x00\x14" + hash160(full))])
    sig = spend.v0_sig(KEY_A, p2wpkh_script_code(hash160(full)))
    tx = spend.tx([(sig, full)])
    spend.verify(tx)
    fails(spend, tx, E.WITNESS_PUBKEYTYPE, STANDARD)


# --- P2WSH ---------------------------------------------------------------------------------------

def test_p2wsh_two_of_two_multisig() -> None:
    script = multisig_2of2(pub(KEY_A), pub(KEY_B))
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(script))])
    sa, sb = spend.v0_sig(KEY_A, script), spend.v0_sig(KEY_B, script)
    spend.verify(spend.tx([(b"", sa, sb, script)]))
    spend.verify(spend.tx([(b"", sa, sb, script)]), STANDARD)
    fails(spend, spend.tx([(b"", sb, sa, script)]), E.EVAL_FALSE)  # order matters
    fails(spend, spend.tx([(b"\x01", sa, sb, script)]), E.SIG_NULLDUMMY)  # consensus here
    fails(spend, spend.tx([(b"", sa, spend.v0_sig(KEY_C, script), script)]), E.EVAL_FALSE)
    fails(spend, spend.tx([(b"", sa, sb, script + b"\x51")]), E.WITNESS_PROGRAM_MISMATCH)
    fails(spend, spend.tx([()]), E.WITNESS_PROGRAM_WITNESS_EMPTY)


def test_p2wsh_one_of_two_finds_the_second_key() -> None:
    script = b"\x51" + push(pub(KEY_A)) + push(pub(KEY_B)) + b"\x52\xae"
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(script))])
    spend.verify(spend.tx([(b"", spend.v0_sig(KEY_B, script), script)]))
    spend.verify(spend.tx([(b"", spend.v0_sig(KEY_B, script), script)]), STANDARD)


def cltv_script(lock: int) -> bytes:
    from ctplugin.elements.script import script_num
    return script_num(lock) + b"\xb1\x75" + push(pub(KEY_A)) + b"\xac"


def test_checklocktimeverify() -> None:
    script = cltv_script(500)
    out = TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(script))
    for locktime, sequence, expected in ((500, 0xFFFFFFFE, None), (499, 0xFFFFFFFE, False),
                                         (600, 0xFFFFFFFF, False),
                                         (500_000_001, 0xFFFFFFFE, False)):
        spend = Spend([out], locktime=locktime, sequences=[sequence])
        tx = spend.tx([(spend.v0_sig(KEY_A, script), script)])
        if expected is None:
            spend.verify(tx)
        else:
            fails(spend, tx, E.UNSATISFIED_LOCKTIME)
    negative = b"\x4f\xb1\x75" + push(pub(KEY_A)) + b"\xac"
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(negative))], locktime=5)
    fails(spend, spend.tx([(spend.v0_sig(KEY_A, negative), negative)]), E.NEGATIVE_LOCKTIME)


def test_checksequenceverify() -> None:
    from ctplugin.elements.script import script_num
    script = script_num(10) + b"\xb2\x75" + push(pub(KEY_A)) + b"\xac"
    out = TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(script))
    for version, sequence, ok in ((2, 10, True), (2, 9, False), (1, 10, False),
                                  (2, 10 | (1 << 31), False), (2, 10 | (1 << 22), False)):
        spend = Spend([out], version=version, sequences=[sequence])
        tx = spend.tx([(spend.v0_sig(KEY_A, script), script)])
        if ok:
            spend.verify(tx)
        else:
            fails(spend, tx, E.UNSATISFIED_LOCKTIME)


def test_hash_lock_and_elements_string_opcodes() -> None:
    preimage = b"secret"
    script = b"\xa8" + push(sha256(preimage)) + b"\x88" + push(pub(KEY_A)) + b"\xac"
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(script))])
    spend.verify(spend.tx([(spend.v0_sig(KEY_A, script), preimage, script)]))
    fails(spend, spend.tx([(spend.v0_sig(KEY_A, script), b"guess", script)]), E.EQUALVERIFY)
    cat = b"\x7e" + push(b"abcd") + b"\x87"  # OP_CAT works in Elements
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(cat))])
    spend.verify(spend.tx([(b"ab", b"cd", cat)]))
    shifts = b"\x51\x98\x76" + push(b"\x02") + b"\x88\x51\x99\x51\x87"  # LSHIFT, RSHIFT by 1
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(shifts))])
    spend.verify(spend.tx([(b"\x01", shifts)]))


def test_disabled_and_elements_only_opcodes() -> None:
    mul = b"\x00\x63\x95\x68\x51"  # OP_MUL in an unexecuted branch is still disabled
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(mul))])
    fails(spend, spend.tx([(mul,)]), E.DISABLED_OPCODE)
    csfs = b"\xc2\x51"  # OP_CHECKSIGFROMSTACKVERIFY before tapscript: an ECDSA check that must hold
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(csfs))])
    fails(spend, spend.tx([(b"", b"", b"", csfs)]), E.CHECKSIGVERIFY)
    msg = b"any message"
    sig = ct.ecdsa_sign(KEY_A, sha256(msg))
    spend.verify(spend.tx([(sig, msg, pub(KEY_A), csfs)]))
    fails(spend, spend.tx([(sig, msg + b"!", pub(KEY_A), csfs)]), E.CHECKSIGVERIFY)
    introspect = b"\x51\x63\xd4\x68"  # tapscript-only opcode, executed in v0: Elements' BAD_OPCODE
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(introspect))])
    fails(spend, spend.tx([(introspect,)]), E.BAD_OPCODE)


def test_minimalif_is_policy_in_v0() -> None:
    script = b"\x63\x51\x67\x00\x68"
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(script))])
    spend.verify(spend.tx([(b"\x02", script)]))
    fails(spend, spend.tx([(b"\x02", script)]), E.MINIMALIF, STANDARD)


# --- taproot key path --------------------------------------------------------------------------

def test_taproot_key_path() -> None:
    secret, spk = key_path_secret(KEY_A)
    spend = Spend([TxOut(asset=ASSET, value=3, script_pubkey=spk)])
    for hash_type in (0, 1, 2, 3, 0x81, 0x82, 0x83):
        tx = spend.tx([(spend.tap_sig(secret, hash_type=hash_type),)])
        spend.verify(tx)
        spend.verify(tx, STANDARD)
    sig = spend.tap_sig(secret)
    fails(spend, spend.tx([()]), E.WITNESS_PROGRAM_WITNESS_EMPTY)
    fails(spend, spend.tx([(sig + b"\x00",)]), E.SCHNORR_SIG_HASHTYPE)
    fails(spend, spend.tx([(sig + b"\x41",)]), E.SCHNORR_SIG_HASHTYPE)
    fails(spend, spend.tx([(sig[:63],)]), E.SCHNORR_SIG_SIZE)
    fails(spend, spend.tx([(spend.tap_sig(KEY_A),)]), E.SCHNORR_SIG)  # untweaked key
    fails(spend, spend.tx([(spend.tap_sig(secret, hash_type=1)[:64] + b"\x02",)]), E.SCHNORR_SIG)
    for i in range(0, 64, 9):
        flipped = bytearray(sig)
        flipped[i] ^= 0x10
        fails(spend, spend.tx([(bytes(flipped),)]), E.SCHNORR_SIG)
    # an annex is committed to by the signature (non-standard, but consensus-valid)
    fails(spend, spend.tx([(sig, b"\x50annex")]), E.SCHNORR_SIG)
    spend.verify(spend.tx([(spend.tap_sig(secret, annex=b"\x50annex"), b"\x50annex")]))
    fails(spend, spend.tx([(sig,)], script_sigs=[b"\x00"]), E.WITNESS_MALLEATED)


# --- taproot script path -----------------------------------------------------------------------

def script_path(leaf_script: bytes, internal: int = KEY_C, leaf_version: int = 0xC4
                ) -> tuple[Spend, TaprootOutput, bytes]:
    other = Leaf(b"\x6a")  # a second leaf, so the control block has a path
    output = TaprootOutput(xonly(internal), (Leaf(leaf_script, leaf_version), other))
    spend = Spend([TxOut(asset=ASSET, value=3, script_pubkey=output.script_pubkey)])
    return spend, output, output.control_block(leaf_script).serialize()


def test_tapscript_checksig_leaf() -> None:
    leaf = push(xonly(KEY_A)) + b"\xac"
    spend, _, control = script_path(leaf)
    lh = Leaf(leaf).hash
    sig = spend.tap_sig(KEY_A, leaf=lh)
    spend.verify(spend.tx([(sig, leaf, control)]))
    spend.verify(spend.tx([(sig, leaf, control)]), STANDARD)
    fails(spend, spend.tx([(b"", leaf, control)]), E.EVAL_FALSE)  # empty signature = false
    fails(spend, spend.tx([(spend.tap_sig(KEY_A), leaf, control)]), E.SCHNORR_SIG)  # key path msg
    fails(spend, spend.tx([(spend.tap_sig(KEY_B, leaf=lh), leaf, control)]), E.SCHNORR_SIG)


def test_wrong_control_blocks() -> None:
    leaf = push(xonly(KEY_A)) + b"\xac"
    spend, _, control = script_path(leaf)
    sig = spend.tap_sig(KEY_A, leaf=Leaf(leaf).hash)
    block = ControlBlock.parse(control)
    wrong_parity = replace(block, parity=block.parity ^ 1).serialize()
    wrong_key = replace(block, internal_key=xonly(KEY_B)).serialize()
    wrong_path = replace(block, path=(bytes(32),)).serialize()
    for bad in (wrong_parity, wrong_key, wrong_path):
        fails(spend, spend.tx([(sig, leaf, bad)]), E.WITNESS_PROGRAM_MISMATCH)
    fails(spend, spend.tx([(sig, leaf, control[:-1])]), E.TAPROOT_WRONG_CONTROL_SIZE)
    fails(spend, spend.tx([(sig, leaf + b"\x51", control)]), E.WITNESS_PROGRAM_MISMATCH)


def test_checksigadd_threshold_with_an_empty_signature() -> None:
    keys = [xonly(k) for k in (KEY_A, KEY_B, KEY_C)]
    leaf = push(keys[0]) + b"\xac" + push(keys[1]) + b"\xba" + push(keys[2]) + b"\xba\x52\x9c"
    spend, _, control = script_path(leaf)
    lh = Leaf(leaf).hash
    sa, sc = spend.tap_sig(KEY_A, leaf=lh), spend.tap_sig(KEY_C, leaf=lh)
    spend.verify(spend.tx([(sc, b"", sa, leaf, control)]))  # witness: last key's sig first
    fails(spend, spend.tx([(b"", b"", sa, leaf, control)]), E.EVAL_FALSE)
    fails(spend, spend.tx([(sa, b"", sa, leaf, control)]), E.SCHNORR_SIG)


def test_tapscript_rules() -> None:
    spend, _, control = script_path(b"\x63\x51\x68")
    fails(spend, spend.tx([(b"\x02", b"\x63\x51\x68", control)]), E.TAPSCRIPT_MINIMALIF)
    leaf = b"\x52" + push(pub(KEY_A)) + push(pub(KEY_B)) + b"\x52\xae"
    spend, _, control = script_path(leaf)
    fails(spend, spend.tx([(b"", b"", b"", leaf, control)]), E.TAPSCRIPT_CHECKMULTISIG)
    leaf = b"\x00\xac"  # empty public key
    spend, _, control = script_path(leaf)
    fails(spend, spend.tx([(b"\x01" * 64, leaf, control)]), E.PUBKEYTYPE)
    leaf = push(b"\x02" * 33) + b"\xac"  # unknown key type: an upgrade hook, success for now
    spend, _, control = script_path(leaf)
    spend.verify(spend.tx([(b"\x01" * 64, leaf, control)]))
    fails(spend, spend.tx([(b"\x01" * 64, leaf, control)]), E.DISCOURAGE_UPGRADABLE_PUBKEYTYPE,
          STANDARD)
    fails(spend, spend.tx([(b"", leaf, control)]), E.EVAL_FALSE)  # empty signature: false


def test_over_budget_tapscript() -> None:
    repeats = 12
    key = push(xonly(KEY_A))
    leaf = (b"\x76" + key + b"\xad") * repeats + key + b"\xac"
    spend, _, control = script_path(leaf)
    sig = spend.tap_sig(KEY_A, leaf=Leaf(leaf).hash)
    fails(spend, spend.tx([(sig, leaf, control)]), E.TAPSCRIPT_VALIDATION_WEIGHT)
    few = (b"\x76" + key + b"\xad") * 2 + key + b"\xac"
    spend, _, control = script_path(few)
    spend.verify(spend.tx([(spend.tap_sig(KEY_A, leaf=Leaf(few).hash), few, control)]))


@pytest.mark.parametrize("leaf", [b"\x50", b"\x51\x89", b"\xbb\x6a", b"\x6a\xfe", b"\x00\xe5"])
def test_op_success_makes_a_tapscript_valid_and_is_discouraged(leaf: bytes) -> None:
    spend, _, control = script_path(leaf)
    spend.verify(spend.tx([(leaf, control)]))  # even before an OP_RETURN: the pre-scan wins
    fails(spend, spend.tx([(leaf, control)]), E.DISCOURAGE_OP_SUCCESS, STANDARD)


def test_op_success_needs_a_decodable_tapscript() -> None:
    leaf = b"\x4c"  # a truncated push: the pre-scan fails before it could find an OP_SUCCESS
    spend, _, control = script_path(leaf)
    fails(spend, spend.tx([(leaf, control)]), E.BAD_OPCODE)


def test_elements_opcodes_are_not_op_success_in_tapscript() -> None:
    leaf = b"\x7e" + push(b"abcd") + b"\x87"  # OP_CAT is an opcode, not OP_SUCCESS (Bitcoin's)
    spend, _, control = script_path(leaf)
    spend.verify(spend.tx([(b"ab", b"cd", leaf, control)]))
    fails(spend, spend.tx([(b"ab", b"ce", leaf, control)]), E.EVAL_FALSE)


def test_unknown_leaf_version_is_upgrade_room() -> None:
    spend, _, control = script_path(b"\x6a", leaf_version=0xC0)  # Bitcoin's tapscript version
    spend.verify(spend.tx([(b"\x6a", control)]))
    fails(spend, spend.tx([(b"\x6a", control)]), E.DISCOURAGE_UPGRADABLE_TAPROOT_VERSION,
          STANDARD)


def test_a_simplicity_leaf_is_the_one_unsupported_spend() -> None:
    spend, _, control = script_path(bytes(32), leaf_version=0xBE)
    flags = BLOCK | ScriptFlags.SIMPLICITY
    with pytest.raises(ScriptError) as info:
        spend.verify(spend.tx([(b"", b"", bytes(32), control)]), flags)
    assert info.value.unsupported
    spend.verify(spend.tx([(b"", b"", bytes(32), control)]))  # without the flag: upgrade room


# --- outside the template set ------------------------------------------------------------------

@pytest.mark.parametrize("spk", [b"\x52\x20" + b"\x07" * 32, b"\x51\x14" + b"\x07" * 20,
                                 b"\x60\x28" + b"\x07" * 40])
def test_unknown_witness_programs_are_upgrade_room(spk: bytes) -> None:
    spend = Spend([TxOut(asset=ASSET, value=3, script_pubkey=spk)])
    spend.verify(spend.tx([(b"\x01",)]))
    fails(spend, spend.tx([(b"\x01",)]), E.DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM, STANDARD)


def test_pay_to_anchor_is_spendable_by_anyone() -> None:
    spend = Spend([TxOut(asset=ASSET, value=3, script_pubkey=b"\x51\x02\x4e\x73")])
    spend.verify(spend.tx())
    spend.verify(spend.tx(), STANDARD)


# --- legacy scripts: P2PKH, bare multisig, P2SH ------------------------------------------------

def p2pkh(pubkey: bytes) -> bytes:
    return b"\x76\xa9\x14" + hash160(pubkey) + b"\x88\xac"


def p2sh(script: bytes) -> bytes:
    return b"\xa9\x14" + hash160(script) + b"\x87"


def test_p2pkh() -> None:
    spk = p2pkh(pub(KEY_A))
    spend = Spend([TxOut(asset=ASSET, value=3, script_pubkey=spk)])
    sig = spend.legacy_sig(KEY_A, spk)
    spend.verify(spend.tx(script_sigs=[push(sig) + push(pub(KEY_A))]), STANDARD)
    fails(spend, spend.tx(script_sigs=[push(sig) + push(pub(KEY_B))]), E.EQUALVERIFY)
    other = spend.legacy_sig(KEY_B, spk)
    fails(spend, spend.tx(script_sigs=[push(other) + push(pub(KEY_A))]), E.EVAL_FALSE)
    fails(spend, spend.tx(script_sigs=[push(other) + push(pub(KEY_A))]), E.SIG_NULLFAIL,
          STANDARD)
    fails(spend, spend.tx([(b"\x01",)], [push(sig) + push(pub(KEY_A))]), E.WITNESS_UNEXPECTED)


def test_bare_multisig_and_its_dummy() -> None:
    script = multisig_2of2(pub(KEY_A), pub(KEY_B))
    spend = Spend([TxOut(asset=ASSET, value=3, script_pubkey=script)])
    sigs = push(spend.legacy_sig(KEY_A, script)) + push(spend.legacy_sig(KEY_B, script))
    spend.verify(spend.tx(script_sigs=[b"\x00" + sigs]), STANDARD)
    fails(spend, spend.tx(script_sigs=[b"\x51" + sigs]), E.SIG_NULLDUMMY)
    fails(spend, spend.tx(script_sigs=[sigs]), E.INVALID_STACK_OPERATION)  # no dummy
    swapped = push(spend.legacy_sig(KEY_B, script)) + push(spend.legacy_sig(KEY_A, script))
    fails(spend, spend.tx(script_sigs=[b"\x00" + swapped]), E.EVAL_FALSE)  # key order


def test_p2sh_multisig_and_nested_segwit() -> None:
    redeem = multisig_2of2(pub(KEY_A), pub(KEY_B))
    spend = Spend([TxOut(asset=ASSET, value=3, script_pubkey=p2sh(redeem))])
    sigs = push(spend.legacy_sig(KEY_A, redeem)) + push(spend.legacy_sig(KEY_B, redeem))
    script_sig = b"\x00" + sigs + push(redeem)
    spend.verify(spend.tx(script_sigs=[script_sig]), STANDARD)
    fails(spend, spend.tx(script_sigs=[script_sig + b"\x61"]), E.SIG_PUSHONLY)
    # P2SH-P2WPKH: the scriptSig is exactly the push of the witness program
    program = p2wpkh(pub(KEY_B))
    spend = Spend([TxOut(asset=ASSET, value=6, script_pubkey=p2sh(program))])
    code = p2wpkh_script_code(hash160(pub(KEY_B)))
    witness = (spend.v0_sig(KEY_B, code), pub(KEY_B))
    spend.verify(spend.tx([witness], [push(program)]), STANDARD)
    fails(spend, spend.tx([witness], [b"\x00" + push(program)]), E.WITNESS_MALLEATED_P2SH)
    # P2SH-P2WSH
    script = multisig_2of2(pub(KEY_A), pub(KEY_B))
    program = p2wsh(script)
    spend = Spend([TxOut(asset=ASSET, value=6, script_pubkey=p2sh(program))])
    witness = (b"", spend.v0_sig(KEY_A, script), spend.v0_sig(KEY_B, script), script)
    spend.verify(spend.tx([witness], [push(program)]), STANDARD)


def test_legacy_codeseparator_and_findanddelete() -> None:
    # the signature covers the script after OP_CODESEPARATOR, with the signature deleted
    script = b"\xab" + push(pub(KEY_A)) + b"\xac"
    spend = Spend([TxOut(asset=ASSET, value=3, script_pubkey=script)])
    sig = spend.legacy_sig(KEY_A, push(pub(KEY_A)) + b"\xac")
    spend.verify(spend.tx(script_sigs=[push(sig)]))
    fails(spend, spend.tx(script_sigs=[push(sig)]), E.OP_CODESEPARATOR, STANDARD)


def test_v0_wrong_length_is_an_elements_error() -> None:
    spend = Spend([TxOut(asset=ASSET, value=3, script_pubkey=b"\x00\x10" + bytes(range(1, 17)))])
    fails(spend, spend.tx([(b"\x01",)]), E.WITNESS_PROGRAM_WRONG_LENGTH)


# --- deferred checks ---------------------------------------------------------------------------

def test_deferred_runs_record_what_immediate_runs_verify() -> None:
    secret, spk = key_path_secret(KEY_A)
    leaf = push(xonly(KEY_A)) + b"\xac"
    other = TaprootOutput(xonly(KEY_C), Leaf(leaf))
    script = multisig_2of2(pub(KEY_A), pub(KEY_B))
    spend = Spend([TxOut(asset=ASSET, value=3, script_pubkey=spk),
                   TxOut(asset=ASSET, value=4, script_pubkey=other.script_pubkey),
                   TxOut(asset=ASSET, value=5, script_pubkey=p2wsh(script)),
                   TxOut(asset=ASSET, value=6, script_pubkey=p2wpkh(pub(KEY_B)))])
    code = p2wpkh_script_code(hash160(pub(KEY_B)))
    tx = spend.tx([(spend.tap_sig(secret, 0),),
                   (spend.tap_sig(KEY_A, 1, leaf=Leaf(leaf).hash), leaf,
                    other.control_block(leaf).serialize()),
                   (b"", spend.v0_sig(KEY_A, script, 2), spend.v0_sig(KEY_B, script, 2), script),
                   (spend.v0_sig(KEY_B, code, 3), pub(KEY_B))])
    deferred = DeferredChecks()
    for i in range(4):
        spend.verify(tx, index=i)
        spend.verify(tx, index=i, deferred=deferred)
    assert len(deferred.schnorr) == 2 and len(deferred.tweaks) == 1 and len(deferred.ecdsa) == 3
    assert [c.key for c in deferred.ecdsa] == [2, 2, 3]
    assert all(c.verify() for c in deferred.ecdsa) and all(t.verify() for t in deferred.tweaks)
    from ctplugin.secp256k1 import libsecp
    assert all(libsecp.schnorr_verify(c.pubkey, c.msg, c.sig) for c in deferred.schnorr)
    # a bad signature passes the optimistic run but its recorded check fails
    bad = bytearray(spend.tap_sig(secret, 0))
    bad[5] ^= 1
    deferred = DeferredChecks()
    spend.verify(spend.tx([(bytes(bad),)]), deferred=deferred)
    [check] = deferred.schnorr
    assert not libsecp.schnorr_verify(check.pubkey, check.msg, check.sig)


def test_nested_conditionals() -> None:
    script = bytes.fromhex("636351675268676453675468685387")
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(script))])
    spend.verify(spend.tx([(b"", b"", script)]))  # outer false → NOTIF(false) → 3
    fails(spend, spend.tx([(b"", b"\x01", script)]), E.EVAL_FALSE)  # outer true, inner false → 2
    fails(spend, spend.tx([(b"\x01", b"\x01", script)]), E.EVAL_FALSE)  # → 1
    for bad in (b"\x51\x63\x51", b"\x67\x51", b"\x51\x68"):
        spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(bad))])
        fails(spend, spend.tx([(bad,)]), E.UNBALANCED_CONDITIONAL)


# --- hostile input -----------------------------------------------------------------------------

_ITEM = st.one_of(st.binary(max_size=8), st.sampled_from([b"\x01", b"\x81", b"\x80", bytes(4)]),
                  st.binary(min_size=60, max_size=80), st.binary(min_size=519, max_size=530))
_SCRIPT = st.lists(st.one_of(st.integers(0, 255).map(lambda b: bytes((b,))),
                             st.binary(max_size=3).map(lambda d: bytes((len(d),)) + d)),
                   max_size=40).map(b"".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SCRIPT, st.lists(_ITEM, max_size=6), st.sampled_from(["p2wsh", "tapscript"]),
       st.booleans())
def test_hostile_scripts_and_witnesses_raise_only_script_errors(
        script: bytes, items: list[bytes], kind: str, policy: bool) -> None:
    """Any script and witness: the verdict is a pass or a ScriptError, never another exception
    (stack underflows, huge numbers, shifts and PICKs, truncated pushes, bad encodings)."""
    if kind == "p2wsh":
        spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=p2wsh(script))])
        witness = (*items, script)
    else:
        spend, _, control = script_path(script)
        witness = (*items, script, control)
    with contextlib.suppress(ScriptError):
        spend.verify(spend.tx([witness]), STANDARD if policy else BLOCK)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=45), st.lists(_ITEM, max_size=4), st.binary(max_size=6))
def test_hostile_script_pubkeys_and_script_sigs(spk: bytes, items: list[bytes],
                                                script_sig: bytes) -> None:
    spend = Spend([TxOut(asset=ASSET, value=9, script_pubkey=spk)])
    with contextlib.suppress(ScriptError):
        spend.verify(spend.tx([tuple(items)], script_sigs=[script_sig]))


def test_the_plain_int_flag_view_matches_the_flags() -> None:
    """``flags.Bits`` (the interpreter's fast view) names every bit as ``ScriptFlags`` does."""
    from ctplugin.script.flags import Bits

    bits = {name: value for name, value in vars(Bits).items() if name.isupper()}
    assert bits == {f.name: int(f) for f in ScriptFlags if f.name != "NONE"}
