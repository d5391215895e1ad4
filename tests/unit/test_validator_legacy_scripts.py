"""Every script Elements accepts, through the validator (docs/design.md §3): outputs to P2PKH,
P2SH, P2SH-P2WPKH, P2SH-P2WSH multisig and bare multisig — made by hand here, signed with
libsecp256k1 over Elements' legacy and segwit v0 digests (docs/sighash.md §1) — are created
and spent in the mempool and in blocks; a non-standard output script is valid in a block and
refused only by the mempool's policy; a bad ECDSA signature in a legacy script is named by
transaction and input with Elements' error."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest

from ctplugin.elements import Transaction, TxOut
from ctplugin.errors import ValidationError
from ctplugin.hashes import hash160, sha256
from ctplugin.script.interpreter import p2wpkh_script_code
from ctplugin.script.sighash import PrecomputedTransaction, legacy_sighash, segwit_v0_sighash
from ctplugin.secp256k1 import ct
from regtest.params import POLICY_ASSET
from regtest.wallet.signing import (
    combine_multisig_witness,
    finalize_multisig,
    sign_multisig_input,
)
from tests.conftest import connect_block
from tests.unit.test_validator_scripts import (
    GENESIS,
    KEY,
    OTHER,
    Chain,
    Coin,
    key_path_sig,
    pub,
    push,
)
from validator import Node

THIRD = 0x7412D  # a key none of the scripts names
VALUE = 100_000
FEE = 20_000
SIGHASH_ALL = 1
MULTISIG_2_OF_2 = b"\x52" + push(pub(KEY)) + push(pub(OTHER)) + b"\x52\xae"
MULTISIG_1_OF_2 = b"\x51" + push(pub(KEY)) + push(pub(OTHER)) + b"\x52\xae"
P2WPKH_REDEEM = b"\x00\x14" + hash160(pub(KEY))
P2WSH_REDEEM = b"\x00\x20" + sha256(MULTISIG_2_OF_2)


def p2sh(redeem: bytes) -> bytes:
    return b"\xa9\x14" + hash160(redeem) + b"\x87"


SCRIPTS = {
    "p2pkh": b"\x76\xa9\x14" + hash160(pub(KEY)) + b"\x88\xac",
    "p2sh": p2sh(MULTISIG_1_OF_2),  # a plain (non-segwit) P2SH: 1-of-2 multisig redeem script
    "p2sh-p2wpkh": p2sh(P2WPKH_REDEEM),
    "p2sh-p2wsh": p2sh(P2WSH_REDEEM),  # 2-of-2 multisig witness script
    "bare-multisig": MULTISIG_2_OF_2,
}
NON_STANDARD = b"\x52\x93\x55\x87"  # OP_2 OP_ADD OP_5 OP_EQUAL: spent by pushing 3

# Per input: (scriptSig, witness) of a spend of one of SCRIPTS, given the transaction's
# precomputed digests, the input index and the signing key (KEY: the right one).
Signer = Callable[[PrecomputedTransaction, int, int], tuple[bytes, tuple[bytes, ...]]]


def _legacy_sig(pre: PrecomputedTransaction, n: int, script_code: bytes, secret: int) -> bytes:
    digest = legacy_sighash(pre.tx, n, script_code, SIGHASH_ALL)
    return ct.ecdsa_sign(secret, digest) + bytes((SIGHASH_ALL,))


def _p2pkh(pre: PrecomputedTransaction, n: int, secret: int) -> tuple[bytes, tuple[bytes, ...]]:
    sig = _legacy_sig(pre, n, SCRIPTS["p2pkh"], secret)
    return push(sig) + push(pub(KEY)), ()


def _p2sh(pre: PrecomputedTransaction, n: int, secret: int) -> tuple[bytes, tuple[bytes, ...]]:
    sig = _legacy_sig(pre, n, MULTISIG_1_OF_2, secret)  # the redeem script is the scriptCode
    return b"\x00" + push(sig) + push(MULTISIG_1_OF_2), ()


def _p2sh_p2wpkh(pre: PrecomputedTransaction, n: int, secret: int
                 ) -> tuple[bytes, tuple[bytes, ...]]:
    code = p2wpkh_script_code(hash160(pub(KEY)))
    digest = segwit_v0_sighash(pre, n, code, VALUE, SIGHASH_ALL, True)
    return push(P2WPKH_REDEEM), (ct.ecdsa_sign(secret, digest) + b"\x01", pub(KEY))


def _p2sh_p2wsh(pre: PrecomputedTransaction, n: int, secret: int
                ) -> tuple[bytes, tuple[bytes, ...]]:
    digest = segwit_v0_sighash(pre, n, MULTISIG_2_OF_2, VALUE, SIGHASH_ALL, True)
    first = ct.ecdsa_sign(secret, digest) + bytes((SIGHASH_ALL,))
    if secret == KEY:  # the wallet's multisig signer gives the same witness
        witness = finalize_multisig(MULTISIG_2_OF_2, {
            pub(KEY): sign_multisig_input(pre, n, MULTISIG_2_OF_2, KEY),
            pub(OTHER): sign_multisig_input(pre, n, MULTISIG_2_OF_2, OTHER)})
        assert witness == (b"", first, witness[2], MULTISIG_2_OF_2)
    second = sign_multisig_input(pre, n, MULTISIG_2_OF_2, OTHER)
    return push(P2WSH_REDEEM), (b"", first, second, MULTISIG_2_OF_2)


def _bare_multisig(pre: PrecomputedTransaction, n: int, secret: int
                   ) -> tuple[bytes, tuple[bytes, ...]]:
    first = _legacy_sig(pre, n, MULTISIG_2_OF_2, secret)
    second = _legacy_sig(pre, n, MULTISIG_2_OF_2, OTHER)
    return b"\x00" + push(first) + push(second), ()


SIGNERS: dict[str, Signer] = {"p2pkh": _p2pkh, "p2sh": _p2sh, "p2sh-p2wpkh": _p2sh_p2wpkh,
                              "p2sh-p2wsh": _p2sh_p2wsh, "bare-multisig": _bare_multisig}


def spend(coins: Sequence[Coin], signers: Sequence[Signer], secret: int = KEY) -> Transaction:
    """A transaction spending ``coins`` to OP_TRUE, input ``n`` signed by ``signers[n]``."""
    total = sum(c.out.value for c in coins)
    unsigned = Transaction(version=2, inputs=[c.txin for c in coins], outputs=[
        TxOut(asset=POLICY_ASSET, value=total - FEE, script_pubkey=b"\x51"),
        TxOut(asset=POLICY_ASSET, value=FEE)])
    pre = PrecomputedTransaction(unsigned, [c.out for c in coins], GENESIS.hash)
    inputs = []
    for n, (txin, signer) in enumerate(zip(unsigned.inputs, signers)):
        script_sig, witness = signer(pre, n, secret)
        inputs.append(replace(txin, script_sig=script_sig, script_witness=witness))
    return replace(unsigned, inputs=inputs)


def fund(chain: Chain, scripts: Sequence[bytes]) -> tuple[Transaction, list[Coin]]:
    """A key-path spend paying VALUE to each of ``scripts`` (the change to OP_TRUE)."""
    coin = chain.take("keypath")
    outs = [TxOut(asset=POLICY_ASSET, value=VALUE, script_pubkey=s) for s in scripts]
    change = coin.out.value - VALUE * len(outs) - FEE
    unsigned = Transaction(version=2, inputs=[coin.txin], outputs=[
        *outs, TxOut(asset=POLICY_ASSET, value=change, script_pubkey=b"\x51"),
        TxOut(asset=POLICY_ASSET, value=FEE)])
    pre = PrecomputedTransaction(unsigned, [coin.out], GENESIS.hash)
    tx = replace(unsigned, inputs=[replace(coin.txin, script_witness=(key_path_sig(pre, 0),))])
    return tx, [Coin(tx.txid, j, out) for j, out in enumerate(tx.outputs[:len(scripts)])]


@pytest.fixture
def chain(node: Node) -> Chain:
    return Chain(node, copies=3)


def test_mempool_and_block_accept_outputs_and_spends_of_every_script(chain: Chain) -> None:
    """The outputs enter through the mempool, the spend too (its scripts under the policy
    flags), and the block that confirms the spend finds its scripts in the script cache."""
    tx, coins = fund(chain, list(SCRIPTS.values()))
    chain.node.accept_transaction(tx.serialize())
    connect_block(chain.node, chain.block([tx]))
    spender = spend(coins, list(SIGNERS.values()))
    chain.node.accept_transaction(spender.serialize())
    report = connect_block(chain.node, chain.block([spender]))
    assert report.cached["script"] == 1
    assert chain.node.utxo((spender.txid, 0)) is not None


def test_block_verifies_every_script_itself(chain: Chain) -> None:
    """Without the mempool: the block's script pass runs each legacy, P2SH and wrapped segwit
    input and checks their ECDSA signatures (deferred to the block's check items)."""
    tx, coins = fund(chain, list(SCRIPTS.values()))
    connect_block(chain.node, chain.block([tx]))
    spender = spend(coins, list(SIGNERS.values()))
    report = connect_block(chain.node, chain.block([spender]))
    assert report.cached["script"] == 0
    # deferred: P2PKH 1, P2SH-P2WPKH 1, P2SH-P2WSH 2, bare 2-of-2 2; the 1-of-2's signature is
    # checked as the script runs (its failure would only move CHECKMULTISIG to the next key)
    assert report.items["ecdsa"] == 6


def test_two_parties_sign_a_shared_multisig_in_turn(chain: Chain) -> None:
    """Each holder of one key of a 2-of-2 P2SH-P2WSH signs in turn (two wallets'
    signrawtransactionwithwallet): the first leaves a placeholder for the missing signature,
    the second keeps the first's and completes the witness, which the mempool accepts."""
    tx, (coin,) = fund(chain, [SCRIPTS["p2sh-p2wsh"]])
    connect_block(chain.node, chain.block([tx]))

    def in_turn(pre: PrecomputedTransaction, n: int, secret: int
                ) -> tuple[bytes, tuple[bytes, ...]]:
        half, complete = combine_multisig_witness(pre, n, MULTISIG_2_OF_2, (),
                                                  {pub(OTHER): OTHER})
        # Core's SignStep: the signatures in key order, then empty placeholders up to m
        assert not complete and half[0] == half[2] == b"" and half[3] == MULTISIG_2_OF_2
        whole, complete = combine_multisig_witness(pre, n, MULTISIG_2_OF_2, half,
                                                   {pub(KEY): KEY})
        assert complete and whole[2] == half[1]  # the other party's signature is kept
        again, complete = combine_multisig_witness(pre, n, MULTISIG_2_OF_2, whole, {})
        assert complete and again == whole  # nothing to add: the same witness
        return push(P2WSH_REDEEM), whole

    chain.node.accept_transaction(spend([coin], [in_turn]).serialize())


EVAL_FALSE = "Script evaluated without error but finished with a false/empty top stack element"


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_signature_by_another_key_is_named(chain: Chain, name: str) -> None:
    """Input 1's (first) signature made by a key the script does not name: Elements' consensus
    error (the mempool's NULLFAIL is policy, so its consensus re-run reports the mandatory
    one), the transaction and input named in the block."""
    tx, coins = fund(chain, [SCRIPTS["p2pkh"], SCRIPTS["p2pkh"], SCRIPTS[name]])
    connect_block(chain.node, chain.block([tx]))
    good = spend(coins[:1], [_p2pkh])

    def bad(pre: PrecomputedTransaction, n: int, secret: int) -> tuple[bytes, tuple[bytes, ...]]:
        return SIGNERS[name](pre, n, THIRD)

    both = spend(coins[1:], [_p2pkh, bad])
    expected = "mandatory-script-verify-flag-failed (" + EVAL_FALSE + ")"
    with pytest.raises(ValidationError) as err:
        chain.node.accept_transaction(both.serialize())
    assert (err.value.reason, err.value.input_index) == (expected, 1)
    with pytest.raises(ValidationError) as err:
        connect_block(chain.node, chain.block([good, both]))
    assert (err.value.reason, err.value.tx_index, err.value.input_index) == (expected, 2, 1)
    connect_block(chain.node, chain.block([good]))


def test_non_standard_output_is_valid_in_a_block_only(chain: Chain) -> None:
    """An output script outside every standard template: Elements' mempool refuses it
    (``scriptpubkey``, policy), its consensus accepts it in a block, and spending it runs the
    script like any other (here: 3 + 2 == 5)."""
    tx, (coin,) = fund(chain, [NON_STANDARD])
    with pytest.raises(ValidationError) as err:
        chain.node.accept_transaction(tx.serialize())
    assert (err.value.reason, err.value.output_index) == ("scriptpubkey", 0)
    connect_block(chain.node, chain.block([tx]))

    def push_three(pre: PrecomputedTransaction, n: int, secret: int
                   ) -> tuple[bytes, tuple[bytes, ...]]:
        return b"\x53", ()

    def push_four(pre: PrecomputedTransaction, n: int, secret: int
                  ) -> tuple[bytes, tuple[bytes, ...]]:
        return b"\x54", ()

    with pytest.raises(ValidationError) as err:
        connect_block(chain.node, chain.block([spend([coin], [push_four])]))
    assert err.value.reason == "mandatory-script-verify-flag-failed (" + EVAL_FALSE + ")"
    connect_block(chain.node, chain.block([spend([coin], [push_three])]))


def test_spending_a_p2pkh_output_needs_its_key(chain: Chain) -> None:
    """The script is run, not matched: a P2PKH scriptSig with another key's hash fails the
    EQUALVERIFY, in a block as in the mempool."""
    tx, (coin,) = fund(chain, [SCRIPTS["p2pkh"]])
    connect_block(chain.node, chain.block([tx]))

    def wrong_key(pre: PrecomputedTransaction, n: int, secret: int
                  ) -> tuple[bytes, tuple[bytes, ...]]:
        sig = _legacy_sig(pre, n, SCRIPTS["p2pkh"], OTHER)
        return push(sig) + push(pub(OTHER)), ()

    bad = spend([coin], [wrong_key])
    expected = "mandatory-script-verify-flag-failed (Script failed an OP_EQUALVERIFY operation)"
    with pytest.raises(ValidationError) as err:
        chain.node.accept_transaction(bad.serialize())
    assert err.value.reason == expected
    with pytest.raises(ValidationError) as err:
        connect_block(chain.node, chain.block([bad]))
    assert (err.value.reason, err.value.tx_index, err.value.input_index) == (expected, 1, 0)
