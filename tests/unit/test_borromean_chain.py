"""The Borromean regtest profile: a chain whose wallets make Borromean proofs the way Elements'
wallet does is built, validated block by block (proofs on the ring kernel, balances and
surjection proofs as in the Bulletproof profile), and one bad proof is named by transaction and
output; the proof cache covers Borromean proofs; each profile refuses the other's proofs."""

from __future__ import annotations

import copy
import importlib
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctplugin import borromean
from ctplugin.elements import Transaction
from ctplugin.elements.chainparams import (
    ALL_RANGE_PROOFS,
    CONSENSUS_BULLETPROOF_SIZE,
    RangeProofKind,
)
from ctplugin.elements.script import is_unspendable
from ctplugin.errors import EncodingError, ValidationError
from ctplugin.pedersen import Commitment, Generator
from regtest.builder import ChainBuilder, build_demo_chain
from regtest.params import CTREGTEST, CTREGTEST_BORROMEAN, POLICY_ASSET, select_chain
from regtest.wallet import Issuance, Payment, Wallet
from regtest.wallet.blinding import rewind_nonce
from tests.conftest import connect_block, connect_upto, rebuild, with_output
from validator.ahead import AheadChecks
from validator.node import Node

verify_module = importlib.import_module("ctplugin.borromean.verify")

PARAMS = select_chain(CTREGTEST_BORROMEAN)


@pytest.fixture(scope="module")
def chain() -> ChainBuilder:
    """5 blocks, 2 wallet txs each (two blinded outputs), an issuance at block 3, a transfer of
    the issued asset at 4, a reissuance at 5, then a block with a blinded issuance amount (an
    issuance proof: generator_generate(asset id), empty extra commit)."""
    built = build_demo_chain(n_blocks=5, txs_per_block=2, seed=b"borromean chain seed",
                             params=PARAMS)
    alice = built.wallets[0]
    built.add(alice.build_transaction([], fee=1000, height=built.next_height,
                                      issuance=Issuance(amount=777, tokens=3, blind_amount=True)))
    built.mine()
    return built


@pytest.fixture
def bnode(tmp_path: Path) -> Iterator[Node]:
    with Node.open(tmp_path / "node", PARAMS) as n:
        yield n


def test_the_wallet_makes_elements_proofs(chain: ChainBuilder) -> None:
    proofs = [(o, borromean.info(o.range_proof)) for b in chain.blocks[1:]
              for tx in b.transactions for o in tx.outputs if isinstance(o.value, bytes)]
    assert len(proofs) >= 16
    for out, head in proofs:
        assert head.exp == 0 and head.mantissa == 52
        assert head.min_value == (0 if is_unspendable(out.script_pubkey) else 1)
        assert len(out.range_proof) == 4174  # Liquid's default size
    issuance_proofs = [i.issuance_amount_rangeproof for b in chain.blocks
                       for tx in b.transactions for i in tx.inputs
                       if i.issuance_amount_rangeproof]
    assert issuance_proofs and all(borromean.info(p).min_value == 0 for p in issuance_proofs)


def test_the_chain_validates_block_by_block(bnode: Node, chain: ChainBuilder) -> None:
    for block in chain.blocks[1:]:
        report = connect_block(bnode, block.serialize())
        assert report.items.get("borromean", 0) >= 4 and "range" not in report.items
        assert report.n_range_proofs == report.items["borromean"]
        # no Bulletproofs: the batch holds the balances and the taproot signatures
        assert report.n_msm_items == report.n_balance + report.items.get("schnorr", 0)
        assert "borromean" in report.timings
    assert bnode.tip.hash == chain.tip.hash


def test_one_bad_proof_is_named_by_transaction_and_output(bnode: Node,
                                                          chain: ChainBuilder) -> None:
    connect_upto(bnode, chain, 1)
    block = chain.blocks[2]
    txs = list(block.transactions[1:])
    victim_tx, victim_out = 1, 1
    proof = bytearray(txs[victim_tx].outputs[victim_out].range_proof)
    proof[-1] ^= 1  # the last s value: still well-formed, the ring no longer closes
    txs[victim_tx] = with_output(txs[victim_tx], victim_out, range_proof=bytes(proof))
    with pytest.raises(ValidationError) as err:
        connect_block(bnode, rebuild(block, txs).serialize())
    assert err.value.reason == "bad-txns-rangeproof-invalid"
    assert (err.value.tx_index, err.value.output_index) == (victim_tx + 1, victim_out)
    assert bnode.tip.hash == chain.blocks[1].hash  # nothing written
    connect_block(bnode, block.serialize())  # the genuine block still connects


def test_truncated_proof_and_bulletproof_sized_proof(bnode: Node, chain: ChainBuilder) -> None:
    connect_upto(bnode, chain, 1)
    block = chain.blocks[2]
    for bad in (chain.blocks[2].transactions[1].outputs[0].range_proof[:-1],
                bytes(CONSENSUS_BULLETPROOF_SIZE)):
        txs = list(block.transactions[1:])
        txs[0] = with_output(txs[0], 0, range_proof=bad)
        with pytest.raises(ValidationError) as err:
            connect_block(bnode, rebuild(block, txs).serialize())
        assert (err.value.reason, err.value.tx_index, err.value.output_index) == \
            ("bad-txns-rangeproof-invalid", 1, 0)
        assert "malformed" in err.value.detail


def _resign(chain: ChainBuilder, tx: Transaction, j: int, min_value: int) -> Transaction:
    """Output j with a valid proof of another min_value (same opening)."""
    out = tx.outputs[j]
    for wallet in chain.wallets:
        opened = wallet.unblind(out)
        if opened is None:
            continue
        asset, value, abf, vbf = opened
        pair = wallet.keys.owner_of(out.script_pubkey)
        assert pair is not None
        nonce = rewind_nonce(pair.blinding_secret, out.nonce)
        proof = borromean.elements.output_rangeproof(
            value, nonce, asset, abf.to_bytes(32, "big"), vbf.to_bytes(32, "big"),
            Commitment.parse(out.value), Generator.parse(out.asset), out.script_pubkey,
            min_value=min_value)
        return with_output(tx, j, range_proof=proof)
    raise AssertionError("no wallet owns this output")


def test_min_value_zero_on_a_spendable_output_is_rejected(bnode: Node,
                                                          chain: ChainBuilder) -> None:
    """Elements: a proof from 0 is allowed only for unspendable scripts (no spendable
    zero-value outputs), even though the proof itself verifies."""
    connect_upto(bnode, chain, 1)
    block = chain.blocks[2]
    txs = list(block.transactions[1:])
    txs[1] = _resign(chain, txs[1], 0, min_value=0)
    with pytest.raises(ValidationError) as err:
        connect_block(bnode, rebuild(block, txs).serialize())
    assert (err.value.reason, err.value.tx_index, err.value.output_index) == \
        ("bad-txns-rangeproof-invalid", 2, 0)
    assert "min_value 0" in err.value.detail


def test_the_proof_cache_covers_borromean_proofs(bnode: Node, chain: ChainBuilder) -> None:
    connect_upto(bnode, chain, 1)
    block = chain.blocks[2]
    for tx in block.transactions[1:]:
        entry = bnode.accept_transaction(tx.serialize())
        assert entry.n_range_verified >= 2 and entry.n_range_cached == 0
    report = connect_block(bnode, block.serialize())
    assert report.cached.get("borromean", 0) == report.items["borromean"]


def test_borromean_cache_keys_cover_every_input(bnode: Node, chain: ChainBuilder) -> None:
    cache = bnode.data.proof_cache
    out = chain.blocks[1].transactions[1].outputs[0]
    base = (out.range_proof, out.value, out.asset, out.script_pubkey)
    keys = {cache.borromean_key(*base)}
    for i in range(4):
        changed = list(base)
        changed[i] = changed[i] + b"\x00"
        keys.add(cache.borromean_key(*changed))
    keys.add(cache.borromean_key(out.range_proof + out.value[:1], out.value[1:], out.asset,
                                 out.script_pubkey))  # boundary shift
    keys.add(cache.rangeproof_key(*base, 64, 256))
    assert len(keys) == 7


def test_each_profile_refuses_the_other_kind(tmp_path: Path, chain: ChainBuilder) -> None:
    bullet = build_demo_chain(n_blocks=2, txs_per_block=1, seed=b"borromean chain seed")
    with Node.open(tmp_path / "b", select_chain(CTREGTEST)) as node:
        with pytest.raises(ValidationError) as err:
            connect_block(node, chain.blocks[1].serialize())
        assert err.value.reason == "bad-txns-rangeproof-invalid"
    with Node.open(tmp_path / "r", PARAMS) as node:
        with pytest.raises(ValidationError) as err:
            connect_block(node, bullet.blocks[1].serialize())
        assert err.value.reason == "bad-txns-rangeproof-invalid"
    # a chain taking both kinds takes both chains' blocks
    both = replace(PARAMS, name="both-kinds", range_proofs=ALL_RANGE_PROOFS)
    with Node.open(tmp_path / "both", both) as node:
        connect_block(node, chain.blocks[1].serialize())
    with Node.open(tmp_path / "both2", both) as node:
        connect_block(node, bullet.blocks[1].serialize())


def test_no_borromean_proof_has_the_bulletproof_size() -> None:
    sizes = {borromean.proof_len(m, has_min) for m in range(65) for has_min in (False, True)}
    assert CONSENSUS_BULLETPROOF_SIZE not in sizes
    with pytest.raises(EncodingError):
        replace(PARAMS, range_proofs=frozenset({"snark"}))
    assert select_chain(CTREGTEST).range_proofs == {RangeProofKind.BULLETPROOF}


def test_the_wallet_receives_borromean_payments(chain: ChainBuilder) -> None:
    alice, bob = chain.wallets
    assert alice.range_proofs == bob.range_proofs == RangeProofKind.BORROMEAN
    assert isinstance(bob.balance(POLICY_ASSET), int) and bob.balance(POLICY_ASSET) > 0
    fresh = Wallet(b"another seed", range_proofs=RangeProofKind.BORROMEAN)
    tx = alice.build_transaction([Payment(12_345, fresh.new_address())], fee=1000,
                                 height=chain.next_height)
    fresh.scan_transaction(tx, None)
    assert fresh.balance(POLICY_ASSET) == 12_345


def _ring_calls(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], threading.Event]:
    """The names of the threads that run the ring kernel from now on, and an event set when
    the first call starts."""
    calls: list[str] = []
    started = threading.Event()
    real = borromean.verify_many

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(threading.current_thread().name)
        started.set()
        return real(*args, **kwargs)

    monkeypatch.setattr(borromean, "verify_many", counted)
    return calls, started


def test_proofs_verified_ahead_are_not_verified_again(bnode: Node, chain: ChainBuilder,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A wallet send's ``verify_ahead``: the pool's worker runs the ring kernel over the
    transaction's output proofs; its acceptance then counts them verified without running the
    kernel itself (issuance proofs are left to it)."""
    connect_upto(bnode, chain, 1)
    tx = chain.blocks[2].transactions[1]
    calls, started = _ring_calls(monkeypatch)
    bnode.verify_ahead(tx.outputs)
    assert started.wait(30)  # (an ahead check not started yet is called off: see below)
    entry = bnode.accept_transaction(tx)
    assert entry.n_range_verified == 2 and entry.n_range_cached == 0
    assert calls == ["ctplugin-parallel_0"]  # only the pool's worker ran the kernel


def test_a_bad_proof_verified_ahead_is_named_by_the_acceptance(
        bnode: Node, chain: ChainBuilder, monkeypatch: pytest.MonkeyPatch) -> None:
    """A proof that fails ahead is verified again by the acceptance, which names it and gives
    the reason it gives without ``verify_ahead``; the good proof's verdict is still used."""
    connect_upto(bnode, chain, 1)
    tx = chain.blocks[2].transactions[1]
    proof = bytearray(tx.outputs[1].range_proof)
    proof[-1] ^= 1
    bad = with_output(tx, 1, range_proof=bytes(proof))
    calls, started = _ring_calls(monkeypatch)
    bnode.verify_ahead(bad.outputs)
    assert started.wait(30)
    with pytest.raises(ValidationError) as err:
        bnode.accept_transaction(bad)
    assert (err.value.reason, err.value.output_index) == ("bad-txns-rangeproof-invalid", 1)
    assert calls == ["ctplugin-parallel_0", "MainThread"]
    assert len(bnode.mempool) == 0


def test_an_ahead_check_that_never_ran_or_raised_counts_for_nothing() -> None:
    """Not started (the pool's worker busy elsewhere): called off, the acceptance verifies
    itself; raised: nothing passed."""
    pending: Future[list[bool]] = Future()
    assert AheadChecks([b"k" * 32], pending).valid_keys() == set()
    assert pending.cancelled()
    failed: Future[list[bool]] = Future()
    failed.set_running_or_notify_cancel()
    failed.set_exception(MemoryError())
    assert AheadChecks([b"k" * 32], failed).valid_keys() == set()
    done: Future[list[bool]] = Future()
    done.set_running_or_notify_cancel()
    done.set_result([True, False])
    assert AheadChecks([b"a" * 32, b"b" * 32], done).valid_keys() == {b"a" * 32}


def test_a_sends_ring_points_verify_it_ahead_without_the_ring_kernel(
        bnode: Node, chain: ChainBuilder, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """A wallet's ``proven`` hands the node its proofs with their signer's ring points: the
    pool's worker checks them in one multi-scalar multiplication (no ring kernel anywhere), and
    the acceptance counts them verified; with a wrong point the worker's ring kernel decides."""
    connect_upto(bnode, chain, len(chain.blocks) - 1)
    alice = copy.deepcopy(chain.wallets[0])  # (the fixture's wallet stays as it is)
    handed: list[tuple[list[Any], dict[bytes, bytes]]] = []
    built = alice.build([Payment(5_000, alice.new_address())], fee=1000,
                        height=chain.next_height,
                        proven=lambda outs, points: handed.append((outs, dict(points))))
    [(outputs, points)] = handed
    assert set(points) == {o.range_proof for o in outputs} and len(points) == 2
    ringed: list[str] = []
    real = verify_module.run_rings

    def counted(prepared: Any, *args: Any, **kwargs: Any) -> Any:
        if prepared:
            ringed.append(threading.current_thread().name)
        return real(prepared, *args, **kwargs)

    monkeypatch.setattr(verify_module, "run_rings", counted)
    calls, started = _ring_calls(monkeypatch)
    bnode.verify_ahead(outputs, points)
    assert started.wait(30)
    entry = bnode.accept_transaction(built.tx)
    assert entry.n_range_verified == 2 and entry.n_range_cached == 0
    assert calls == ["ctplugin-parallel_0"] and ringed == []
    # the same outputs with one point wrong, on a node that has not seen them: verified by
    # the worker's ring kernel instead
    proof = outputs[0].range_proof
    wrong = {**points, proof: points[proof][64:128] + points[proof][:64] + points[proof][128:]}
    with Node.open(tmp_path / "other", PARAMS) as other:
        connect_upto(other, chain, len(chain.blocks) - 1)
        ringed.clear()
        started.clear()
        other.verify_ahead(outputs, wrong)
        assert started.wait(30)
        entry = other.accept_transaction(built.tx)
    assert entry.n_range_verified == 2 and entry.n_range_cached == 0
    assert ringed == ["ctplugin-parallel_0"]
