"""Block validator: one batch per block, culprits named, proof cache, chainstate undo.

Every test opens a real LevelDB data directory in a temporary directory. The regtest chain is
built once per module (proving costs ~30 ms per range proof).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from ctplugin.bulletproofs import prove_output
from ctplugin.elements import Block, Transaction, TxIn, TxOut
from ctplugin.elements.consensus import COIN
from ctplugin.errors import ValidationError
from ctplugin.pedersen import Commitment, Generator, commit
from ctplugin.secp256k1 import KIND_PEDERSEN, Point
from ctplugin.secp256k1.params import N
from regtest.builder import ChainBuilder, build_demo_chain, make_block
from regtest.params import CTREGTEST, GENESIS_TIME, POLICY_ASSET, REGTEST_SEED, select_chain
from regtest.wallet import Issuance, Payment, Reissuance, Wallet, WalletError
from regtest.wallet.blinding import rewind_nonce
from tests.conftest import (
    connect_block,
    connect_upto,
    rebuild,
    signed_by_regtest_key,
    with_output,
)
from validator.node import Node
from validator.store import DataDirLockedError

PARAMS = select_chain(CTREGTEST)


@pytest.fixture(scope="module")
def demo():
    """A 5-block chain: 3 wallet txs per block (two blinded outputs each), an issuance at 3 and
    a transfer of the issued asset at 4."""
    return build_demo_chain(n_blocks=5, txs_per_block=3, seed=b"test_validator wallet seed")


def opening(wallets: list[Wallet], tx: Transaction, j: int):
    """(asset, value, abf, vbf, nonce) of output j from whichever wallet owns it."""
    out = tx.outputs[j]
    for w in wallets:
        opened = w.unblind(out)
        if opened is not None:
            pair = w.keys.owner_of(out.script_pubkey)
            return (*opened, rewind_nonce(pair.blinding_secret, out.nonce))
    raise AssertionError("no wallet owns this output")


# ------------------------------------------------------------------------------------------------
# The valid chain
# ------------------------------------------------------------------------------------------------


def test_demo_chain_connects_with_one_batch_per_block(node: Node, demo: ChainBuilder) -> None:
    for block in demo.blocks[1:]:
        report = connect_block(node, block.serialize())
        assert report.n_range_proofs >= 6 and report.n_range_cached == 0
        # one claim per balance equation, range proof and Schnorr signature (the wallet spends
        # taproot key path by default), all in the block's one batch
        assert report.items.get("schnorr", 0) >= 1
        assert report.n_msm_items == (report.n_balance + report.n_range_proofs
                                      + report.items["schnorr"])
    assert node.tip.hash == demo.tip.hash


def test_disconnect_restores_the_exact_utxo_set(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 2)
    before = node.data.chainstate.utxo_snapshot()
    tip_before = node.tip
    connect_block(node, demo.blocks[3].serialize())
    assert node.data.chainstate.utxo_snapshot() != before
    node.invalidate_block(demo.blocks[3].hash)
    assert node.tip == tip_before
    assert node.data.chainstate.utxo_snapshot() == before
    assert len(node.mempool) == len(demo.blocks[3].transactions) - 1  # back in the mempool
    assert [r.hash for r in node.reconsider_block(demo.blocks[3].hash)] == [demo.blocks[3].hash]
    assert node.tip.hash == demo.blocks[3].hash  # and it connects again
    assert len(node.mempool) == 0


def test_second_opener_of_the_data_directory_gets_a_clear_error(tmp_path: Path) -> None:
    with Node.open(tmp_path / "d", PARAMS), pytest.raises(DataDirLockedError):
        Node.open(tmp_path / "d", PARAMS)


# ------------------------------------------------------------------------------------------------
# Done-when: culprits
# ------------------------------------------------------------------------------------------------


def test_one_bad_range_proof_among_many_is_named(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    assert sum(len(t.outputs) for t in txs) >= 9
    victim_tx, victim_out = 2, 1  # index among non-coinbase txs, output index
    proof = bytearray(txs[victim_tx].outputs[victim_out].range_proof)
    # Bump the stored −τx scalar: the proof stays well-formed, its equation no longer holds.
    proof[0:32] = ((int.from_bytes(proof[0:32], "big") + 1) % N).to_bytes(32, "big")
    txs[victim_tx] = with_output(txs[victim_tx], victim_out, range_proof=bytes(proof))
    with pytest.raises(ValidationError) as err:
        connect_block(node, rebuild(block, txs).serialize())
    assert err.value.reason == "bad-txns-rangeproof-invalid"
    assert (err.value.tx_index, err.value.output_index) == (victim_tx + 1, victim_out)
    assert node.tip.hash == demo.blocks[1].hash  # nothing written
    connect_block(node, block.serialize())  # the genuine block still connects


def test_malformed_range_proof_is_named(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    txs[0] = with_output(txs[0], 0, range_proof=txs[0].outputs[0].range_proof[:-1])
    with pytest.raises(ValidationError) as err:
        connect_block(node, rebuild(block, txs).serialize())
    assert (err.value.reason, err.value.tx_index, err.value.output_index) == \
        ("bad-txns-rangeproof-invalid", 1, 0)


def _inflate(demo: ChainBuilder, tx: Transaction, j: int, delta: int) -> Transaction:
    """Output j re-committed to value + delta (same blinds) with a VALID new range proof."""
    asset, value, _abf, vbf, nonce = opening(demo.wallets, tx, j)
    out = tx.outputs[j]
    gen = Generator.parse(out.asset)
    new_commit = commit(value + delta, vbf, gen).serialize()
    proof = prove_output(value + delta, vbf, gen, nonce, out.script_pubkey, message=asset[:20])
    return with_output(tx, j, value=new_commit, range_proof=proof)


def test_inflating_an_output_by_one_unit_is_bad_txns_in_ne_out(node: Node,
                                                                demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    txs[1] = _inflate(demo, txs[1], 0, +1)
    with pytest.raises(ValidationError) as err:
        connect_block(node, rebuild(block, txs).serialize())
    assert err.value.reason == "bad-txns-in-ne-out"
    assert err.value.tx_index == 2
    # and in the mempool too
    with pytest.raises(ValidationError) as err:
        node.accept_transaction(txs[1].serialize())
    assert err.value.reason == "bad-txns-in-ne-out"


def test_cached_proof_reattached_to_another_commitment_is_rejected(
        node: Node, demo: ChainBuilder) -> None:
    """Grin's 2021 bug: a cache keyed on the proof alone accepts a cached proof on a shifted
    commitment. Shift value t from output 1 to output 0 (the balance still holds, output 1 goes
    'negative', i.e. wraps mod n) and keep both cached proofs."""
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    for tx in txs:
        entry = node.accept_transaction(tx.serialize())
        assert entry.n_range_verified == 2
    assert len(node.data.proof_cache) >= 2 * len(txs)
    tx = txs[0]
    shift = Generator.parse(tx.outputs[0].asset).point.mul_var(10**15)
    c0 = Point.decode(tx.outputs[0].value, KIND_PEDERSEN) + shift
    c1 = Point.decode(tx.outputs[1].value, KIND_PEDERSEN) - shift
    forged = with_output(with_output(tx, 0, value=_commitment_bytes(c0)), 1,
                         value=_commitment_bytes(c1))
    # the forged outputs keep their (cached) range proofs and surjection proofs
    with pytest.raises(ValidationError) as err:
        connect_block(node, rebuild(block, [forged, *txs[1:]]).serialize())
    assert (err.value.reason, err.value.tx_index, err.value.output_index) == \
        ("bad-txns-rangeproof-invalid", 1, 0)


def _commitment_bytes(point: Point) -> bytes:
    return Commitment(point).serialize()


# ------------------------------------------------------------------------------------------------
# Done-when: the cache
# ------------------------------------------------------------------------------------------------


def test_mempool_then_block_skips_cached_proofs(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 2)
    block = demo.blocks[3]
    for tx in block.transactions[1:]:
        node.accept_transaction(tx.serialize())
    cache = node.data.proof_cache
    hits_before = cache.hits
    entries_before = len(cache)
    report = connect_block(node, block.serialize())
    assert report.n_range_proofs > 0 and report.n_range_cached == report.n_range_proofs
    assert report.n_surjection_cached == report.n_surjection_proofs
    # the script-execution cache vouched for every transaction's scripts: none ran
    n_txs = len(block.transactions) - 1
    assert report.items["script"] == report.cached["script"] == n_txs
    assert "schnorr" not in report.items and "ecdsa" not in report.items
    # ... and the balance-equation cache for every balance (mempool verified the same ones)
    assert report.cached["balance"] == n_txs == report.n_balance
    assert cache.hits - hits_before == (report.n_range_proofs + report.n_surjection_proofs
                                        + 2 * n_txs)
    # block connection consumed what it used (deleted with a later batch): nothing left to batch
    assert len(cache) == (entries_before - report.n_range_proofs - report.n_surjection_proofs
                          - 2 * n_txs)
    assert report.n_msm_items == 0
    assert len(node.mempool) == 0


def test_garbage_in_the_cache_directory_rebuilds_an_empty_cache(tmp_path: Path,
                                                                 demo: ChainBuilder) -> None:
    path = tmp_path / "node"
    with Node.open(path, PARAMS) as node:
        connect_upto(node, demo, 1)
        for tx in demo.blocks[2].transactions[1:]:
            node.accept_transaction(tx.serialize())
        assert len(node.data.proof_cache) > 0
    cache_dir = path / "indexes" / "proofcache"
    for name in os.listdir(cache_dir):  # scribble over every LevelDB file
        if name.endswith((".log", ".ldb")) or name.startswith("MANIFEST"):
            (cache_dir / name).write_bytes(os.urandom(300))
    (cache_dir / "junk").write_bytes(b"garbage")
    with Node.open(path, PARAMS) as node:
        cache = node.data.proof_cache
        assert len(cache) == 0 and cache.stats().wipes >= 1
        # a forged block is still rejected (nothing trusted from the old cache) ...
        block = demo.blocks[2]
        txs = list(block.transactions[1:])
        txs[0] = _inflate(demo, txs[0], 1, +1)
        with pytest.raises(ValidationError):
            connect_block(node, rebuild(block, txs).serialize())
        # ... and the genuine one is verified in full
        report = connect_block(node, block.serialize())
        assert report.n_range_cached == 0 and report.n_surjection_cached == 0


# ------------------------------------------------------------------------------------------------
# Other consensus rules
# ------------------------------------------------------------------------------------------------


def _reject(node: Node, block: Block) -> ValidationError:
    with pytest.raises(ValidationError) as err:
        connect_block(node, block.serialize())
    return err.value


def test_missing_and_double_spent_inputs(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    ghost = TxIn(prevout_hash=b"\x42" * 32, prevout_index=0)
    missing = Transaction(version=2, inputs=[ghost, *txs[0].inputs[1:]], outputs=txs[0].outputs)
    err = _reject(node, rebuild(block, [missing, *txs[1:]]))
    assert (err.reason, err.tx_index, err.input_index) == ("bad-txns-inputs-missingorspent", 1, 0)
    # spend tx 0's first input again from another tx
    twin = Transaction(version=2, inputs=[txs[0].inputs[0]], outputs=txs[1].outputs)
    err = _reject(node, rebuild(block, [txs[0], twin]))
    assert (err.reason, err.tx_index) == ("bad-txns-inputs-missingorspent", 2)
    # a spent output stays spent in the next block
    connect_block(node, block.serialize())
    err = _reject(node, rebuild(demo.blocks[3], [txs[0]]))
    assert err.reason == "bad-txns-inputs-missingorspent"


def test_duplicate_transaction_and_header_rules(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    assert _reject(node, rebuild(block, [*txs, txs[0]])).reason in (
        "bad-txns-duplicate", "bad-txns-inputs-missingorspent")
    bad_root = Block(replace(block.header, merkle_root=b"\x00" * 32), block.transactions)
    assert _reject(node, bad_root).reason == "bad-txnmrklroot"
    wrong_prev = Block(replace(block.header, prev_hash=b"\x11" * 32), block.transactions)
    assert _reject(node, wrong_prev).reason == "prev-blk-not-found"  # Core's: unknown parent
    solution = Block(replace(block.header, solution=b"\x01"), block.transactions)
    assert _reject(node, solution).reason == "block-proof-invalid"
    # a witness change without recomputing the commitment
    tampered = list(block.transactions)
    tampered[1] = with_output(tampered[1], 0, surjection_proof=tampered[1].outputs[0]
                              .surjection_proof[:-1] + b"\x00")
    assert _reject(node, Block(block.header, tampered)).reason == "bad-witness-merkle-match"
    # the tampered copies share the genuine block's hash: none of them marked it invalid
    assert connect_block(node, block).hash == block.hash


def test_coinbase_may_claim_only_the_fees(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    coinbase = block.transactions[0]
    greedy = with_output(coinbase, 0, value=coinbase.outputs[0].value + 1)
    rebuilt = Block(block.header, (greedy, *block.transactions[1:]))
    root, _ = rebuilt.compute_merkle_root()
    rebuilt = Block(replace(block.header, merkle_root=root), rebuilt.transactions)
    err = _reject(node, rebuilt)
    assert (err.reason, err.tx_index, err.output_index) == ("bad-cb-amount", 0, 0)


def _explicit_tx(spend: TxIn, value: int, fee: int, script: bytes) -> Transaction:
    return Transaction(version=2, inputs=[spend], outputs=[
        TxOut(asset=POLICY_ASSET, value=value - fee, script_pubkey=script),
        TxOut(asset=POLICY_ASSET, value=fee)])


def test_fee_peg_in_and_explicit_rules(node: Node) -> None:
    genesis = select_chain(CTREGTEST).genesis
    coin = genesis.transactions[0]
    spend = TxIn(prevout_hash=coin.txid, prevout_index=0)
    total = coin.outputs[0].value
    script = coin.outputs[0].script_pubkey

    def block_of(*txs: Transaction) -> Block:
        return make_block(genesis.hash, 1, GENESIS_TIME + 60, list(txs), script)

    ok = _explicit_tx(spend, total, 1000, script)
    zero_fee = Transaction(version=2, inputs=[spend], outputs=[
        TxOut(asset=POLICY_ASSET, value=total, script_pubkey=script),
        TxOut(asset=POLICY_ASSET, value=0)])
    err = _reject(node, block_of(zero_fee))
    assert (err.reason, err.tx_index, err.output_index) == ("bad-txns-fee-outofrange", 1, 1)
    pegin = Transaction(version=2, inputs=[replace(spend, is_pegin=True)], outputs=ok.outputs)
    assert _reject(node, block_of(pegin)).reason == "bad-pegin-unsupported"
    with_proof = with_output(ok, 0, range_proof=b"\x01")
    err = _reject(node, block_of(with_proof))
    assert (err.reason, err.output_index) == ("bad-txns-rangeproof-unexpected", 0)
    zero_spendable = Transaction(version=2, inputs=[spend], outputs=[
        *ok.outputs, TxOut(asset=POLICY_ASSET, value=0, script_pubkey=script)])
    assert _reject(node, block_of(zero_spendable)).reason == "bad-txns-vout-zero-spendable"
    other_asset = with_output(ok, 0, asset=b"\x07" * 32)  # amounts match, assets do not
    assert _reject(node, block_of(other_asset)).reason == "bad-txns-in-ne-out"
    too_much = _explicit_tx(spend, total + 1, 1000, script)  # the genesis coin is MAX_MONEY
    assert _reject(node, block_of(too_much)).reason == "bad-txns-txouttotal-toolarge"
    err = _reject(node, block_of(ok))  # unsigned: the genesis coin is the regtest key's
    assert (err.reason, err.tx_index, err.input_index) == (
        "mandatory-script-verify-flag-failed (Witness program hash mismatch)", 1, 0)
    connect_block(node, block_of(signed_by_regtest_key(ok)).serialize())


def test_mempool_rules(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    txs = demo.blocks[2].transactions[1:]
    node.accept_transaction(txs[0].serialize())
    with pytest.raises(ValidationError) as err:
        node.accept_transaction(txs[0].serialize())
    assert err.value.reason == "txn-already-in-mempool"
    conflict = Transaction(version=2, inputs=[txs[0].inputs[0]], outputs=txs[1].outputs)
    with pytest.raises(ValidationError) as err:
        node.accept_transaction(conflict.serialize())
    assert err.value.reason == "txn-mempool-conflict"
    with pytest.raises(ValidationError) as err:
        node.accept_transaction(demo.blocks[1].transactions[0].serialize())
    assert err.value.reason == "coinbase"


def test_issuance_and_reissuance_rules(tmp_path: Path) -> None:
    alice = Wallet(REGTEST_SEED)
    chain = ChainBuilder([alice])
    issue = chain.add(alice.build_transaction([], fee=500, height=1,
                                              issuance=Issuance(amount=5000, tokens=2)))
    chain.mine()
    asset = next(a for a, t in alice.token_of.items())
    reissue = alice.build_transaction([], fee=500, height=2,
                                      reissuance=Reissuance(asset, 700))
    with Node.open(tmp_path / "n", PARAMS) as node:
        connect_block(node, chain.blocks[1].serialize())
        assert issue.inputs[0].issuance is not None
        # a reissuance whose blinding nonce is not the token's asset blinding factor
        bad_nonce = replace(reissue.inputs[0].issuance, asset_blinding_nonce=b"\x01" * 32)
        forged = Transaction(version=2, inputs=[replace(reissue.inputs[0], issuance=bad_nonce),
                                                *reissue.inputs[1:]], outputs=reissue.outputs)
        with pytest.raises(ValidationError) as err:
            node.accept_transaction(forged.serialize())
        assert (err.value.reason, err.value.input_index) == ("bad-txns-reissuance-token", 0)
        # issuing more than declared breaks the balance
        greedy = replace(reissue.inputs[0].issuance, amount=699)
        forged = Transaction(version=2, inputs=[replace(reissue.inputs[0], issuance=greedy),
                                                *reissue.inputs[1:]], outputs=reissue.outputs)
        with pytest.raises(ValidationError) as err:
            node.accept_transaction(forged.serialize())
        assert err.value.reason == "bad-txns-in-ne-out"
        node.accept_transaction(reissue.serialize())
        chain.add(reissue)
        connect_block(node, chain.mine().serialize())
    assert alice.balance(asset) == 5700


def test_wallet_pays_and_receives_through_the_validator(tmp_path: Path) -> None:
    alice, bob = Wallet(REGTEST_SEED), Wallet(b"bob's seed for the validator test")
    chain = ChainBuilder([alice, bob])
    chain.add(alice.build_transaction([Payment(3 * COIN, bob.new_address())], fee=700,
                                      height=1))
    chain.mine()
    chain.add(bob.build_transaction([Payment(COIN, alice.new_address())], fee=300, height=2))
    chain.mine()
    with Node.open(tmp_path / "n", PARAMS) as node:
        for block in chain.blocks[1:]:
            connect_block(node, block.serialize())
    assert bob.balance(POLICY_ASSET) == 3 * COIN - COIN - 300


def test_blinded_issuance_amount_is_range_checked(tmp_path: Path) -> None:
    alice = Wallet(REGTEST_SEED)
    chain = ChainBuilder([alice])
    issue = alice.build_transaction([], fee=400, height=1,
                                    issuance=Issuance(amount=9_999, tokens=1, blind_amount=True))
    record = issue.inputs[0].issuance
    assert record is not None and record.amount_is_blinded
    assert len(issue.inputs[0].issuance_amount_rangeproof) == 675
    genesis = chain.tip
    with Node.open(tmp_path / "n", PARAMS) as node:
        proof = bytearray(issue.inputs[0].issuance_amount_rangeproof)
        proof[40] ^= 1  # inside the stored μ scalar: well-formed, wrong
        bad_in = replace(issue.inputs[0], issuance_amount_rangeproof=bytes(proof))
        bad = Transaction(version=2, inputs=[bad_in, *issue.inputs[1:]], outputs=issue.outputs)
        block = make_block(genesis.hash, 1, GENESIS_TIME + 60, [bad],
                           genesis.transactions[0].outputs[0].script_pubkey)
        err = _reject(node, block)
        assert (err.reason, err.tx_index, err.input_index) == ("bad-txns-rangeproof-invalid", 1, 0)
        chain.add(issue)
        report = connect_block(node, chain.mine().serialize())
        # the asset amount's proof and the token amount's (both blinded, as elementsd's wallet)
        assert report.n_range_proofs == 2 + sum(1 for o in issue.outputs if not o.is_fee)
    (asset, token), = alice.token_of.items()
    assert alice.balance(asset) == 9_999 and alice.balance(token) == 1


def test_an_issuance_needs_witness_data(tmp_path: Path) -> None:
    """Elements' VerifyAmounts fails an issuance in a transaction with no witness data at all,
    explicit amounts too (the bug its feature_issuance test relies on): a fully explicit
    issuance whose input's witness is stripped is refused for that, not for its script."""
    alice = Wallet(REGTEST_SEED)
    chain = ChainBuilder([alice])
    plain = alice.new_address().script_pubkey
    coin_tx = chain.add(alice.build_transaction([Payment(COIN, script_pubkey=plain)], fee=500,
                                                height=1))
    chain.mine()
    coin = alice.coins[(coin_tx.txid, 0)]
    issue = alice.build_transaction([], fee=400, height=2, blind_change=False, inputs=[coin],
                                    issuance=Issuance(amount=5, tokens=1))
    assert not any(o.range_proof or o.surjection_proof for o in issue.outputs)
    bare = replace(issue, inputs=tuple(replace(t, script_witness=()) for t in issue.inputs))
    assert not bare.has_witness
    with Node.open(tmp_path / "n", PARAMS) as node:
        connect_block(node, chain.blocks[1].serialize())
        with pytest.raises(ValidationError) as err:
            node.accept_transaction(bare.serialize())
        assert (err.value.reason, err.value.input_index) == ("bad-txns-issuance-invalid", 0)
        node.accept_transaction(issue.serialize())


@pytest.mark.parametrize("blind", [False, True])
def test_token_only_issuance(tmp_path: Path, blind: bool) -> None:
    """Elements' wallet issues tokens alone: unblinded the asset amount is null, blinded it is a
    commitment to 0 with its proof (src/wallet/spend.cpp); the validator takes both."""
    alice = Wallet(REGTEST_SEED)
    chain = ChainBuilder([alice])
    issue = chain.add(alice.build_transaction(
        [], fee=400, height=1, issuance=Issuance(amount=0, tokens=6, blind_amount=blind)))
    record = issue.inputs[0].issuance
    assert record is not None
    if blind:
        assert record.amount_is_blinded and record.inflation_keys_are_blinded
        assert issue.inputs[0].issuance_amount_rangeproof
        assert issue.inputs[0].inflation_keys_rangeproof
    else:
        assert record.amount is None and record.inflation_keys == 6
    with Node.open(tmp_path / "n", PARAMS) as node:
        connect_block(node, chain.mine().serialize())
    (asset, token), = alice.token_of.items()
    assert alice.balance(asset) == 0 and alice.balance(token) == 6
    with pytest.raises(WalletError):
        Issuance(amount=0, tokens=0)


def test_several_bad_items_name_the_first(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    for t, j in ((2, 0), (1, 1)):
        proof = bytearray(txs[t].outputs[j].range_proof)
        proof[0:32] = ((int.from_bytes(proof[0:32], "big") + 5) % N).to_bytes(32, "big")
        txs[t] = with_output(txs[t], j, range_proof=bytes(proof))
    txs[2] = _inflate(demo, txs[2], 1, +1)  # and a balance failure after them
    txs[2] = with_output(txs[2], 0, range_proof=txs[2].outputs[0].range_proof[:100])  # malformed
    err = _reject(node, rebuild(block, txs))
    assert (err.reason, err.tx_index, err.output_index) == ("bad-txns-rangeproof-invalid", 2, 1)


def test_same_txid_with_other_witness_does_not_reuse_mempool_keys(node: Node,
                                                                   demo: ChainBuilder) -> None:
    """Keys computed at mempool acceptance are reused only for the same wtxid: a block carrying
    the same transaction with another (bad) range proof has the same txid but is re-checked."""
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    for tx in txs:
        node.accept_transaction(tx.serialize())
    proof = bytearray(txs[0].outputs[1].range_proof)
    proof[0:32] = ((int.from_bytes(proof[0:32], "big") + 1) % N).to_bytes(32, "big")
    twin = with_output(txs[0], 1, range_proof=bytes(proof))
    assert twin.txid == txs[0].txid and twin.wtxid != txs[0].wtxid
    err = _reject(node, rebuild(block, [twin, *txs[1:]]))
    assert (err.reason, err.tx_index, err.output_index) == ("bad-txns-rangeproof-invalid", 1, 1)
    # the rejected block's cache hits were put back: the genuine block finds every proof
    report = connect_block(node, block.serialize())
    assert report.n_range_cached == report.n_range_proofs
    assert report.n_surjection_cached == report.n_surjection_proofs


def test_cache_keys_cover_every_verification_input(node: Node) -> None:
    """Changing any input of a range or surjection verification changes its cache key."""
    from validator.items import ItemLabel, RangeItem, SurjectionItem, SurjectionTargets

    cache = node.data.proof_cache
    label = ItemLabel(1, "output", 0)
    base = RangeItem(label, b"p" * 675, b"\x08" + b"c" * 32, b"\x0a" + b"g" * 32, b"script")
    keys = {base.cache_key(cache)}
    for field, value in (("proof", b"q" * 675), ("commitment", b"\x09" + b"c" * 32),
                         ("value_gen", b"\x0b" + b"g" * 32), ("extra_commit", b"scripu"),
                         ("extra_commit", b"")):
        keys.add(base._replace(**{field: value}).cache_key(cache))
    assert len(keys) == 6
    targets = SurjectionTargets((b"\x01" + b"a" * 32, b"\x0a" + b"b" * 32))
    sbase = SurjectionItem(label, b"s" * 67, b"\x0a" + b"o" * 32, targets)
    skeys = {sbase.cache_key(cache)}
    for changed in (sbase._replace(proof=b"t" * 67),
                    sbase._replace(output_encoding=b"\x0b" + b"o" * 32),
                    sbase._replace(targets=SurjectionTargets(targets.encodings[::-1])),
                    sbase._replace(targets=SurjectionTargets(targets.encodings[:1]))):
        skeys.add(changed.cache_key(cache))
    assert len(skeys) == 5


def test_coinbase_outputs_mature_after_100_blocks(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    coinbase = demo.blocks[1].transactions[0]
    fee = coinbase.outputs[0]
    spend = Transaction(version=2, inputs=[TxIn(prevout_hash=coinbase.txid, prevout_index=0)],
                        outputs=[TxOut(asset=fee.asset, value=fee.value - 10,
                                       script_pubkey=fee.script_pubkey),
                                 TxOut(asset=fee.asset, value=10)])
    err = _reject(node, rebuild(demo.blocks[2], [spend]))
    assert (err.reason, err.tx_index, err.input_index) == \
        ("bad-txns-premature-spend-of-coinbase", 1, 0)
    with pytest.raises(ValidationError) as exc:
        node.accept_transaction(spend.serialize())
    assert exc.value.reason == "bad-txns-premature-spend-of-coinbase"


def test_mempool_records_reused_without_their_plans(node: Node, demo: ChainBuilder) -> None:
    """A mempool record keeps its transaction's fees, item counts and cache keys, not its
    amount plan; a block whose proofs are all cached never plans it again."""
    connect_upto(node, demo, 1)
    txs = demo.blocks[2].transactions[1:]
    for tx in txs:
        node.accept_transaction(tx.serialize())
    known = node.mempool.known_transaction(txs[1])
    assert known is not None and known.keys is not None
    assert not hasattr(known, "plan")
    range_keys, check_keys = known.keys
    n_ranges, n_surjections, n_borromeans = known.counts
    assert (len(range_keys), len(check_keys)) == (n_ranges, n_surjections + n_borromeans) != (0, 0)
    assert known.fees == node.mempool.entries[txs[1].txid].fees
    report = connect_block(node, demo.blocks[2].serialize())
    assert report.n_range_cached == report.n_range_proofs
    # the balances mempool acceptance verified are cached too: nothing is left to batch
    assert report.n_balance == report.cached["balance"] == len(txs)
    assert report.n_msm_items == 0


def test_evicted_cache_entries_of_one_mempool_transaction(node: Node,
                                                          demo: ChainBuilder) -> None:
    """The cache lost one mempool transaction's entries: that transaction alone is planned
    again, its proofs and balance verified in the block's batch (labelled with its position),
    the others stay cached."""
    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = block.transactions[1:]
    for tx in txs:
        node.accept_transaction(tx.serialize())
    victim = len(txs)  # the last transaction
    known = node.mempool.known_transaction(txs[-1])
    assert known is not None and known.keys is not None and known.balance_key is not None
    cache = node.validator.cache
    assert cache is not None
    range_keys, check_keys = known.keys
    cache.lookup_and_erase_many([*range_keys, *check_keys, known.balance_key])
    v = node.validator
    knowns = v.known_transactions(block)
    inputs = v.resolve_inputs(block, knowns)
    plan = v.plan(block, inputs.spent, knowns)
    assert plan.txs == [None] * len(txs)  # no mempool plan made in the plan stage
    work = v.cache_pass(plan, v.balance_keys(block, inputs, knowns)).work
    assert [c.label.tx_index for c in work.claims] == [victim]
    assert {i.label.tx_index for i in (*work.batch, *work.checks)} == {victim}
    assert len(work.batch) == len(range_keys) and len(work.checks) == len(check_keys)
    report = connect_block(node, block.serialize())
    assert report.n_range_cached == report.n_range_proofs - len(range_keys)
    assert report.cached["balance"] == len(txs) - 1


def test_confirmed_transaction_is_already_known(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 2)
    with pytest.raises(ValidationError) as err:
        node.accept_transaction(demo.blocks[2].transactions[1].serialize())
    assert err.value.reason == "txn-already-known"


def test_reused_plan_with_an_emptied_cache_verifies_everything(node: Node,
                                                               demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    for tx in demo.blocks[2].transactions[1:]:
        node.accept_transaction(tx.serialize())
    node.data.proof_cache.clear("test: evicted between mempool and block")
    report = connect_block(node, demo.blocks[2].serialize())
    assert report.n_range_cached == 0 and report.n_surjection_cached == 0
    assert report.cached["script"] == 0  # the cleared cache also held the script entries
    assert report.n_msm_items == (report.n_balance + report.n_range_proofs
                                  + report.items["schnorr"])


def test_test_accept_has_no_side_effects(node: Node, demo: ChainBuilder) -> None:
    connect_upto(node, demo, 1)
    tx = demo.blocks[2].transactions[1]
    entry = node.mempool.test_accept(tx)
    assert entry.n_range_verified == 2 and entry.fees
    assert len(node.mempool) == 0 and len(node.data.proof_cache) == 0
    inflated = _inflate(demo, tx, 0, +1)
    with pytest.raises(ValidationError) as err:
        node.mempool.test_accept(inflated)
    assert err.value.reason == "bad-txns-in-ne-out" and err.value.tx_index is None


def test_utxo_records_round_trip(node: Node, demo: ChainBuilder) -> None:
    from validator.coins import decode_txout, encode_txout
    from validator.store import ChainstateCorruptError

    connect_upto(node, demo, 1)
    for _outpoint, entry in node.data.chainstate.iter_utxos():
        out = decode_txout(entry.txout)
        assert encode_txout(out) == entry.txout
    for bad in (b"", b"\x05" + bytes(40), entry.txout[:-1], entry.txout + b"\x00"):
        with pytest.raises(ChainstateCorruptError):
            decode_txout(bad)


def _not_on_curve_x() -> bytes:
    from ctplugin.secp256k1.params import P
    x = 5
    while pow(x**3 + 7, (P - 1) // 2, P) == 1:  # x^3 + 7 is a square: a point exists
        x += 1
    return x.to_bytes(32, "big")


def test_block_wide_commitment_decoding_names_a_bad_commitment(node: Node,
                                                               demo: ChainBuilder) -> None:
    """The block's value commitments are decoded in one kernel call; one that does not decode
    (late in the block) still names its own transaction and output, and the others plan as if
    decoded one by one."""
    from validator.rules import decode_commitments, value_commitments

    connect_upto(node, demo, 1)
    block = demo.blocks[2]
    txs = list(block.transactions[1:])
    values = [c for tx in txs for c in value_commitments(tx, [])]
    assert len(values) >= 6
    decoded = decode_commitments(values)
    assert decoded == {c: Commitment.parse(c).point.packed for c in values}
    bad = b"\x09" + _not_on_curve_x()
    assert decode_commitments([*values, bad]) == {}
    txs[2] = with_output(txs[2], 1, value=bad)
    with pytest.raises(ValidationError) as err:
        connect_block(node, rebuild(block, txs).serialize())
    assert (err.value.reason, err.value.tx_index, err.value.output_index) == \
        ("bad-txns-value-invalid", 3, 1)
    connect_block(node, block.serialize())
