"""Scripts and signatures through the validator (docs/design.md §3): rejections named by
transaction and input in the mempool AND in blocks, one bad Schnorr signature among 1000, the
script-execution cache, policy vs consensus flags, and the real Elements transactions of the
shared vectors. Legacy and P2SH scripts: test_validator_legacy_scripts.py; time-based locks:
test_validator_timelocks.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest

from ctplugin.elements import Block, Transaction, TxIn, TxOut, parse_transaction
from ctplugin.elements.script import script_num
from ctplugin.errors import ValidationError
from ctplugin.hashes import hash160, sha256
from ctplugin.script.interpreter import p2wpkh_script_code
from ctplugin.script.sighash import PrecomputedTransaction, segwit_v0_sighash, taproot_sighash
from ctplugin.script.taproot import Leaf, TaprootOutput, tweak_hash
from ctplugin.secp256k1 import ct
from regtest.builder import make_block
from regtest.params import CTREGTEST, GENESIS_TIME, POLICY_ASSET, select_chain
from regtest.wallet.signing import finalize_multisig, sign_multisig_input, sign_tapscript_input
from tests.conftest import FIXTURES, connect_block, load_json, signed_by_regtest_key
from validator import Node, PolicySettings

GENESIS = select_chain(CTREGTEST).genesis
COIN_VALUE = 1_000_000
FEE = 1000
AUX = bytes(32)


def push(data: bytes) -> bytes:
    return bytes((len(data),)) + data


def xonly(secret: int) -> bytes:
    return ct.xonly_public_key(secret)


def pub(secret: int) -> bytes:
    return ct.base_mul(secret).to_bytes()


@dataclass
class Coin:
    """A funded output and how to spend it."""

    txid: bytes
    index: int
    out: TxOut

    @property
    def txin(self) -> TxIn:
        return TxIn(prevout_hash=self.txid, prevout_index=self.index, sequence=0xFFFF_FFFE)


KEY = 0x5EC12E7
OTHER = 0x07E12
KEY_PATH_SECRET = int.from_bytes(ct.taproot_tweak_secret(KEY, tweak_hash(xonly(KEY), None)),
                                 "big")
KEY_PATH_SPK = TaprootOutput(xonly(KEY)).script_pubkey
LEAF = push(xonly(KEY)) + b"\xac"
REPEAT = push(xonly(KEY))
OVER_BUDGET_LEAF = (b"\x76" + REPEAT + b"\xad") * 12 + REPEAT + b"\xac"
TREE = TaprootOutput(xonly(OTHER), (Leaf(LEAF), Leaf(OVER_BUDGET_LEAF)))
CLTV_LOCK = 1  # a height below the test blocks', so the spending transactions are final
CLTV_SCRIPT = script_num(CLTV_LOCK) + b"\xb1\x75" + push(pub(KEY)) + b"\xac"
MULTISIG = b"\x52" + push(pub(KEY)) + push(pub(OTHER)) + b"\x52\xae"
P2WPKH_SPK = b"\x00\x14" + hash160(pub(KEY))


def p2wsh(script: bytes) -> bytes:
    return b"\x00\x20" + sha256(script)


SCRIPTS = {"keypath": KEY_PATH_SPK, "tree": TREE.script_pubkey, "cltv": p2wsh(CLTV_SCRIPT),
           "multisig": p2wsh(MULTISIG), "p2wpkh": P2WPKH_SPK}


class Chain:
    """A node on our genesis, with block 1 funding coins of every template."""

    def __init__(self, node: Node, copies: int = 4) -> None:
        self.node = node
        coin = GENESIS.transactions[0]
        total = coin.outputs[0].value
        outs = [TxOut(asset=POLICY_ASSET, value=COIN_VALUE, script_pubkey=spk)
                for spk in SCRIPTS.values() for _ in range(copies)]
        change = total - COIN_VALUE * len(outs) - FEE
        outs += [TxOut(asset=POLICY_ASSET, value=change, script_pubkey=b"\x51"),
                 TxOut(asset=POLICY_ASSET, value=FEE)]
        fund = signed_by_regtest_key(Transaction(version=2, inputs=[
            TxIn(prevout_hash=coin.txid, prevout_index=0)], outputs=outs))
        self.coins: dict[str, list[Coin]] = {name: [] for name in SCRIPTS}
        names = [name for name in SCRIPTS for _ in range(copies)]
        for j, name in enumerate(names):
            self.coins[name].append(Coin(fund.txid, j, fund.outputs[j]))
        self.block1 = make_block(GENESIS.hash, 1, GENESIS_TIME + 60, [fund], b"\x51")
        connect_block(node, self.block1.serialize())

    def take(self, name: str) -> Coin:
        return self.coins[name].pop()

    def block(self, txs: Sequence[Transaction]) -> Block:
        tip = self.node.tip
        assert tip is not None
        return make_block(tip.hash, tip.height + 1, GENESIS_TIME + 60 * (tip.height + 1),
                          list(txs), b"\x51")


def spend(coins: Sequence[Coin], witnesses: Callable[[PrecomputedTransaction], list[tuple]],
          locktime: int = 0) -> Transaction:
    """A transaction spending ``coins`` to OP_TRUE; ``witnesses`` signs it."""
    value = sum(c.out.value for c in coins)
    unsigned = Transaction(version=2, inputs=[c.txin for c in coins], outputs=[
        TxOut(asset=POLICY_ASSET, value=value - FEE, script_pubkey=b"\x51"),
        TxOut(asset=POLICY_ASSET, value=FEE)], locktime=locktime)
    pre = PrecomputedTransaction(unsigned, [c.out for c in coins], GENESIS.hash)
    wits = witnesses(pre)
    return replace(unsigned, inputs=[replace(txin, script_witness=w)
                                     for txin, w in zip(unsigned.inputs, wits)])


def key_path_sig(pre: PrecomputedTransaction, n: int, secret: int = KEY_PATH_SECRET,
                 hash_type: int = 0) -> bytes:
    sig = ct.schnorr_sign(secret, taproot_sighash(pre, n, hash_type), AUX)
    return sig + (bytes((hash_type,)) if hash_type else b"")


def flip(data: bytes, i: int) -> bytes:
    out = bytearray(data)
    out[i] ^= 0x01
    return bytes(out)


# --- the rejection cases: (name, coin kind, witness maker, locktime, expected error) ------------

def _unsigned(pre: PrecomputedTransaction, n: int) -> tuple:
    return ()


def _wrong_sighash(pre: PrecomputedTransaction, n: int) -> tuple:
    sig = ct.schnorr_sign(KEY_PATH_SECRET, taproot_sighash(pre, n, 1), AUX)
    return (sig + b"\x02",)  # signed with ALL, presented as NONE


def _other_key(pre: PrecomputedTransaction, n: int) -> tuple:
    return (key_path_sig(pre, n, secret=OTHER),)


def _flipped(pre: PrecomputedTransaction, n: int) -> tuple:
    return (flip(key_path_sig(pre, n), 40),)


def _flipped_r(pre: PrecomputedTransaction, n: int) -> tuple:
    return (flip(key_path_sig(pre, n), 3),)


def _wrong_control_block(pre: PrecomputedTransaction, n: int) -> tuple:
    block = TREE.control_block(LEAF)
    bad = replace(block, parity=block.parity ^ 1).serialize()
    return (sign_tapscript_input(pre, n, LEAF, KEY, AUX), LEAF, bad)


def _over_budget(pre: PrecomputedTransaction, n: int) -> tuple:
    control = TREE.control_block(OVER_BUDGET_LEAF).serialize()
    return (sign_tapscript_input(pre, n, OVER_BUDGET_LEAF, KEY, AUX), OVER_BUDGET_LEAF, control)


def _cltv(pre: PrecomputedTransaction, n: int) -> tuple:
    digest = segwit_v0_sighash(pre, n, CLTV_SCRIPT, COIN_VALUE, 1, True)
    return (ct.ecdsa_sign(KEY, digest) + b"\x01", CLTV_SCRIPT)


def _p2wpkh_other_signer(pre: PrecomputedTransaction, n: int) -> tuple:
    code = p2wpkh_script_code(hash160(pub(KEY)))
    digest = segwit_v0_sighash(pre, n, code, COIN_VALUE, 1, True)
    return (ct.ecdsa_sign(OTHER, digest) + b"\x01", pub(KEY))


MANDATORY = "mandatory-script-verify-flag-failed ({})"
CASES: list[tuple[str, str, Callable[..., tuple], int, str]] = [
    ("unsigned spend", "keypath", _unsigned, 0, "Witness program was passed an empty witness"),
    ("wrong sighash", "keypath", _wrong_sighash, 0, "Invalid Schnorr signature"),
    ("another key", "keypath", _other_key, 0, "Invalid Schnorr signature"),
    ("flipped bit in s", "keypath", _flipped, 0, "Invalid Schnorr signature"),
    ("flipped bit in r", "keypath", _flipped_r, 0, "Invalid Schnorr signature"),
    ("wrong control block", "tree", _wrong_control_block, 0, "Witness program hash mismatch"),
    ("over-budget tapscript", "tree", _over_budget, 0,
     "Too much signature validation relative to witness weight"),
    ("CLTV before its locktime", "cltv", _cltv, 0, "Locktime requirement not satisfied"),
    ("ECDSA by another key", "p2wpkh", _p2wpkh_other_signer, 0,
     "Script evaluated without error but finished with a false/empty top stack element"),
]


def bad_spend(chain: Chain, case: tuple[str, str, Callable[..., tuple], int, str]
              ) -> Transaction:
    """A two-input spend: input 0 a good key-path spend, input 1 the case under test."""
    _, kind, witness, locktime, _ = case
    good, bad = chain.take("keypath"), chain.take(kind)
    return spend([good, bad], lambda pre: [(key_path_sig(pre, 0),), witness(pre, 1)],
                 locktime=locktime)


@pytest.fixture
def chain(node: Node) -> Chain:
    return Chain(node, copies=2 * len(CASES) + 4)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_rejected_in_the_mempool_and_in_a_block_naming_tx_and_input(
        chain: Chain, case: tuple[str, str, Callable[..., tuple], int, str]) -> None:
    expected = MANDATORY.format(case[4])
    tx = bad_spend(chain, case)
    with pytest.raises(ValidationError) as err:
        chain.node.accept_transaction(tx.serialize())
    assert (err.value.reason, err.value.input_index) == (expected, 1)
    ok = spend([chain.take("keypath")], lambda pre: [(key_path_sig(pre, 0),)])
    block = chain.block([ok, tx])  # the bad transaction is at index 2
    with pytest.raises(ValidationError) as err:
        connect_block(chain.node, block.serialize())
    assert (err.value.reason, err.value.tx_index, err.value.input_index) == (expected, 2, 1)
    assert chain.node.tip.height == 1
    # the good transaction alone connects
    connect_block(chain.node, chain.block([ok]).serialize())


def test_every_template_spends(chain: Chain) -> None:
    def witnesses(pre: PrecomputedTransaction) -> list[tuple]:
        code = p2wpkh_script_code(hash160(pub(KEY)))
        ecdsa = ct.ecdsa_sign(KEY, segwit_v0_sighash(pre, 4, code, COIN_VALUE, 1, True))
        multisig = finalize_multisig(MULTISIG, {
            pub(KEY): sign_multisig_input(pre, 3, MULTISIG, KEY),
            pub(OTHER): sign_multisig_input(pre, 3, MULTISIG, OTHER)})
        assert multisig is not None
        return [(key_path_sig(pre, 0),),
                (sign_tapscript_input(pre, 1, LEAF, KEY, AUX), LEAF,
                 TREE.control_block(LEAF).serialize()),
                _cltv(pre, 2), multisig, (ecdsa + b"\x01", pub(KEY))]

    coins = [chain.take(k) for k in ("keypath", "tree", "cltv", "multisig", "p2wpkh")]
    tx = spend(coins, witnesses, locktime=CLTV_LOCK)
    entry = chain.node.accept_transaction(tx.serialize())
    assert entry.tx.txid == tx.txid
    report = connect_block(chain.node, chain.block([tx]).serialize())
    assert report.cached["script"] == 1  # the mempool vouched for its scripts


def test_partial_multisig_is_not_enough(chain: Chain) -> None:
    coin = chain.take("multisig")

    def witnesses(pre: PrecomputedTransaction) -> list[tuple]:
        only_one = {pub(KEY): sign_multisig_input(pre, 0, MULTISIG, KEY)}
        assert finalize_multisig(MULTISIG, only_one) is None
        return [(b"", only_one[pub(KEY)], MULTISIG)]

    with pytest.raises(ValidationError) as err:
        chain.node.accept_transaction(spend([coin], witnesses).serialize())
    assert err.value.reason == MANDATORY.format("Operation not valid with the current stack size")


# --- policy vs consensus -----------------------------------------------------------------------

def _der(r: int, s: int) -> bytes:
    def integer(x: int) -> bytes:
        raw = x.to_bytes(33, "big").lstrip(b"\x00") or b"\x00"
        return b"\x02" + push(b"\x00" + raw if raw[0] & 0x80 else raw)
    body = integer(r) + integer(s)
    return b"\x30" + push(body)


def test_policy_only_failure_is_non_mandatory_and_valid_in_a_block(chain: Chain) -> None:
    """A high-S ECDSA signature: Elements' mempool refuses it (LOW_S is policy) with
    non-mandatory-script-verify-flag, a block accepts it (consensus normalizes S)."""
    from ctplugin.secp256k1.params import N

    coin = chain.take("p2wpkh")

    def witnesses(pre: PrecomputedTransaction) -> list[tuple]:
        code = p2wpkh_script_code(hash160(pub(KEY)))
        der = ct.ecdsa_sign(KEY, segwit_v0_sighash(pre, 0, code, COIN_VALUE, 1, True))
        len_r = der[3]
        r = int.from_bytes(der[4:4 + len_r], "big")
        s = int.from_bytes(der[6 + len_r:], "big")
        return [(_der(r, N - s) + b"\x01", pub(KEY))]

    tx = spend([coin], witnesses)
    with pytest.raises(ValidationError) as err:
        chain.node.accept_transaction(tx.serialize())
    assert err.value.reason == (
        "non-mandatory-script-verify-flag (Non-canonical signature: S value is unnecessarily high)")
    report = connect_block(chain.node, chain.block([tx]).serialize())
    assert report.cached["script"] == 0 and report.items["ecdsa"] == 1


def test_consensus_failure_under_policy_flags_is_mandatory(chain: Chain) -> None:
    """An invalid ECDSA signature fails the policy run with NULLFAIL (policy), but fails the
    consensus-only re-run too: Elements reports the mandatory failure, with the consensus
    run's error (EVAL_FALSE), in the mempool and in a block."""
    tx = spend([chain.take("p2wpkh")], lambda pre: [_p2wpkh_other_signer(pre, 0)])
    expected = MANDATORY.format(
        "Script evaluated without error but finished with a false/empty top stack element")
    with pytest.raises(ValidationError) as err:
        chain.node.accept_transaction(tx.serialize())
    assert err.value.reason == expected
    with pytest.raises(ValidationError) as err:
        connect_block(chain.node, chain.block([tx]).serialize())
    assert err.value.reason == expected


def test_undefined_hash_type_is_policy_only(chain: Chain) -> None:
    """An ECDSA signature with hash type 0x04: consensus signs it as ALL, policy (STRICTENC)
    refuses it."""
    def odd_type(pre: PrecomputedTransaction) -> list[tuple]:
        digest = segwit_v0_sighash(pre, 0, CLTV_SCRIPT, COIN_VALUE, 0x04, True)
        return [(ct.ecdsa_sign(KEY, digest) + b"\x04", CLTV_SCRIPT)]

    tx = spend([chain.take("cltv")], odd_type, locktime=CLTV_LOCK)
    with pytest.raises(ValidationError) as err:
        chain.node.accept_transaction(tx.serialize())
    assert err.value.reason == (
        "non-mandatory-script-verify-flag (Signature hash type missing or not understood)")
    connect_block(chain.node, chain.block([tx]).serialize())


# --- timelocks --------------------------------------------------------------------------------

def test_nlocktime_and_bip68(chain: Chain) -> None:
    future = spend([chain.take("keypath")], lambda pre: [(key_path_sig(pre, 0),)], locktime=5)
    for submit, reason in ((lambda t: chain.node.accept_transaction(t.serialize()), "non-final"),
                           (lambda t: connect_block(chain.node, chain.block([t]).serialize()),
                            "bad-txns-nonfinal")):
        with pytest.raises(ValidationError) as err:
            submit(future)
        assert err.value.reason == reason

    def relative(blocks: int) -> Transaction:
        coin = chain.take("keypath")
        unsigned = Transaction(version=2, inputs=[replace(coin.txin, sequence=blocks)], outputs=[
            TxOut(asset=POLICY_ASSET, value=COIN_VALUE - FEE, script_pubkey=b"\x51"),
            TxOut(asset=POLICY_ASSET, value=FEE)])
        pre = PrecomputedTransaction(unsigned, [coin.out], GENESIS.hash)
        return replace(unsigned, inputs=[replace(unsigned.inputs[0], script_witness=(
            key_path_sig(pre, 0),))])

    waiting = relative(2)  # the coin is from block 1: spendable from block 3
    with pytest.raises(ValidationError) as err:
        chain.node.accept_transaction(waiting.serialize())
    assert (err.value.reason, err.value.input_index) == ("non-BIP68-final", 0)
    with pytest.raises(ValidationError) as err:
        connect_block(chain.node, chain.block([waiting]).serialize())
    assert (err.value.reason, err.value.tx_index) == ("bad-txns-nonfinal", 1)
    connect_block(chain.node, chain.block([relative(1)]).serialize())  # one block: satisfied


def test_one_bad_schnorr_signature_among_1000_is_named(node: Node) -> None:
    chain = Chain(node, copies=0)  # block 1: the genesis coin to OP_TRUE (and the fee)
    change = Coin(chain.block1.transactions[1].txid, 0, chain.block1.transactions[1].outputs[0])
    secrets = range(1, 1001)
    spks = [TaprootOutput(xonly(k)).script_pubkey for k in secrets]
    tweaked = [int.from_bytes(ct.taproot_tweak_secret(k, tweak_hash(xonly(k), None)), "big")
               for k in secrets]
    outs = [TxOut(asset=POLICY_ASSET, value=COIN_VALUE, script_pubkey=spk) for spk in spks]
    rest = change.out.value - COIN_VALUE * len(outs) - FEE
    fund = Transaction(version=2, inputs=[change.txin], outputs=[
        *outs, TxOut(asset=POLICY_ASSET, value=rest, script_pubkey=b"\x51"),
        TxOut(asset=POLICY_ASSET, value=FEE)])
    connect_block(node, chain.block([fund]).serialize())  # OP_TRUE needs no signature
    txs = [spend([Coin(fund.txid, i, fund.outputs[i])],
                 lambda pre, s=secret: [(key_path_sig(pre, 0, s),)])
           for i, secret in enumerate(tweaked)]
    bad = 617
    txs[bad] = replace(txs[bad], inputs=[replace(txs[bad].inputs[0], script_witness=(
        flip(txs[bad].inputs[0].script_witness[0], 50),))])
    with pytest.raises(ValidationError) as err:
        connect_block(node, chain.block(txs).serialize())
    assert (err.value.reason, err.value.tx_index, err.value.input_index) == (
        MANDATORY.format("Invalid Schnorr signature"), bad + 1, 0)
    report = connect_block(node, chain.block(txs[:bad] + txs[bad + 1:]).serialize())
    assert report.items["schnorr"] == 999


# --- real Elements transactions -------------------------------------------------------------------

def _spent_output(record: dict[str, Any]) -> TxOut:
    asset = (bytes.fromhex(record["assetcommitment"]) if record.get("assetcommitment")
             else bytes.fromhex(record["asset"])[::-1])
    value = (bytes.fromhex(record["amountcommitment"]) if record.get("amountcommitment")
             else round(record["amount_btc"] * 100_000_000))
    return TxOut(asset=asset, value=value, script_pubkey=bytes.fromhex(record["scriptPubKey"]))


REAL = load_json(FIXTURES / "validator_realdata.json")["transactions"]


@pytest.mark.parametrize("entry", REAL, ids=[e["id"] for e in REAL])
def test_real_elements_transactions_pass_their_script_checks(entry: dict[str, Any]) -> None:
    from ctplugin.script.flags import BLOCK
    from validator.scripts import items_of, run_scripts
    from validator.verify import ProofWork, verify

    tx = parse_transaction(bytes.fromhex(entry["hex"]))
    spent = [_spent_output(r) for r in entry["spent"]]
    # the genesis hash only matters to taproot digests (none here: v0 and legacy spends)
    pre, results = run_scripts(tx, 1, spent, bytes(32), int(BLOCK))
    for result in results:  # P2WPKH and P2PKH alike: the full interpreter verifies both
        assert not isinstance(result, ValidationError), result
    work = items_of([(1, pre, [r for r in results if not isinstance(r, ValidationError)])],
                    int(BLOCK))
    verify(ProofWork([], list(work.batch), list(work.checks)))


def test_ecdsa_signatures_of_a_block_are_checked_together(chain: Chain) -> None:
    """Enough P2WPKH spends for the threaded path: one bad signature is named by tx and input,
    and the good ones connect (their verdicts computed together, timed as "ecdsa")."""
    code = p2wpkh_script_code(hash160(pub(KEY)))

    def signed(coin: Coin, signer: int) -> Transaction:
        def witnesses(pre: PrecomputedTransaction) -> list[tuple]:
            digest = segwit_v0_sighash(pre, 0, code, COIN_VALUE, 1, True)
            return [(ct.ecdsa_sign(signer, digest) + b"\x01", pub(KEY))]
        return spend([coin], witnesses)

    coins = [chain.take("p2wpkh") for _ in range(20)]
    txs = [signed(c, KEY) for c in coins]
    bad = signed(coins[13], OTHER)
    with pytest.raises(ValidationError) as err:
        connect_block(chain.node, chain.block([*txs[:13], bad, *txs[14:]]).serialize())
    assert (err.value.reason, err.value.tx_index, err.value.input_index) == (MANDATORY.format(
        "Script evaluated without error but finished with a false/empty top stack element"),
        14, 0)
    report = connect_block(chain.node, chain.block(txs).serialize())
    assert report.items["ecdsa"] == 20 and "ecdsa" in report.timings


# --- signature-operation cost -----------------------------------------------------------------

def test_sigop_counting() -> None:
    from ctplugin.script.sigops import sigop_count, transaction_sigop_cost

    assert sigop_count(MULTISIG, accurate=True) == 2
    assert sigop_count(MULTISIG, accurate=False) == 20
    assert sigop_count(b"\xac\xad\xc1\xc2\xae", accurate=True) == 24
    assert sigop_count(b"\x4c", accurate=False) == 0  # a truncated push stops the count
    coins = [TxOut(asset=POLICY_ASSET, value=1, script_pubkey=spk)
             for spk in (P2WPKH_SPK, p2wsh(MULTISIG), KEY_PATH_SPK)]
    tx = Transaction(version=2, inputs=[TxIn(prevout_hash=bytes(32), prevout_index=i,
                                             script_witness=(b"", MULTISIG))
                                        for i in range(3)],
                     outputs=[TxOut(asset=POLICY_ASSET, value=0, script_pubkey=b"\x6a\xac")])
    assert transaction_sigop_cost(tx, coins) == 4 + 1 + 2  # legacy x4, P2WPKH, P2WSH 2-of-2


def test_too_many_sigops(chain: Chain) -> None:
    def with_op_return(n_multisig: int) -> Transaction:
        coin = chain.take("keypath")
        unsigned = Transaction(version=2, inputs=[coin.txin], outputs=[
            TxOut(asset=POLICY_ASSET, value=COIN_VALUE - FEE, script_pubkey=b"\x51"),
            TxOut(asset=POLICY_ASSET, value=0, script_pubkey=b"\x6a" + b"\xae" * n_multisig),
            TxOut(asset=POLICY_ASSET, value=FEE)])
        pre = PrecomputedTransaction(unsigned, [coin.out], GENESIS.hash)
        return replace(unsigned, inputs=[replace(coin.txin,
                                                 script_witness=(key_path_sig(pre, 0),))])

    with pytest.raises(ValidationError) as err:  # OP_RETURN then non-pushes: not standard
        chain.node.accept_transaction(with_op_return(201).serialize())
    assert err.value.reason == "scriptpubkey"
    # the sigop limit stays with -acceptnonstdtxn, as in Elements' PreChecks
    chain.node.mempool.settings = PolicySettings(acceptnonstdtxn=True)
    with pytest.raises(ValidationError) as err:  # 201 x 20 x 4 > 16,000 (policy)
        chain.node.accept_transaction(with_op_return(201).serialize())
    assert err.value.reason == "bad-txns-too-many-sigops"
    heavy = with_op_return(1001)  # 1001 x 20 x 4 > 80,000 (consensus)
    with pytest.raises(ValidationError) as err:
        connect_block(chain.node, chain.block([heavy]).serialize())
    assert (err.value.reason, err.value.tx_index) == ("bad-blk-sigops", 1)
    connect_block(chain.node, chain.block([with_op_return(999)]).serialize())
