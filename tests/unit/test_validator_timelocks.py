"""Timelocks as Elements (docs/design.md §3; Elements src/consensus/tx_verify.cpp IsFinalTx,
CalculateSequenceLocks, EvaluateSequenceLocks; BIP68, BIP113): nLockTime time locks against the
median time past of the previous 11 blocks, BIP68 relative locks by time (512-second units from
the median time past of the block before the coin's), in the mempool (``non-final``,
``non-BIP68-final``) and in blocks (``bad-txns-nonfinal``). Height-based locks:
test_validator_scripts.py::test_nlocktime_and_bip68."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ctplugin.elements import Transaction, TxIn, TxOut
from ctplugin.elements.consensus import COIN
from ctplugin.errors import ValidationError
from ctplugin.script.sighash import PrecomputedTransaction
from regtest.builder import genesis_claim, make_block
from regtest.elements import elements_chain, elements_chain_options
from regtest.params import GENESIS_TIME, POLICY_ASSET
from tests.conftest import connect_block
from tests.unit.test_validator_scripts import (
    COIN_VALUE,
    FEE,
    GENESIS,
    Chain,
    Coin,
    key_path_sig,
)
from validator import Node
from validator.timelocks import check_sequence_locks

TYPE_FLAG = 1 << 22  # a time-based relative lock, in units of 512 seconds
DISABLE_FLAG = 1 << 31
NON_FINAL_SEQUENCE = 0xFFFF_FFFE  # nLockTime applies, BIP68 disabled


def spend(coin: Coin, sequence: int = NON_FINAL_SEQUENCE, locktime: int = 0) -> Transaction:
    """A key-path (or bare OP_TRUE) spend of the explicit ``coin`` to OP_TRUE."""
    unsigned = Transaction(version=2, inputs=[replace(coin.txin, sequence=sequence)], outputs=[
        TxOut(asset=coin.out.asset, value=coin.out.value - FEE, script_pubkey=b"\x51"),
        TxOut(asset=coin.out.asset, value=FEE)], locktime=locktime)
    if coin.out.script_pubkey == b"\x51":
        return unsigned
    pre = PrecomputedTransaction(unsigned, [coin.out], GENESIS.hash)
    return replace(unsigned, inputs=[replace(unsigned.inputs[0], script_witness=(
        key_path_sig(pre, 0),))])


def mine(chain: Chain, time: int, txs: list[Transaction] | None = None) -> None:
    tip = chain.node.tip
    connect_block(chain.node, make_block(tip.hash, tip.height + 1, time, txs or [], b"\x51"))


def refused(chain: Chain, tx: Transaction, mempool_reason: str) -> None:
    """Refused by the mempool with ``mempool_reason`` and in the next block (at the time the
    test chain gives it) with ``bad-txns-nonfinal``, naming the transaction."""
    with pytest.raises(ValidationError) as err:
        chain.node.accept_transaction(tx.serialize())
    assert err.value.reason == mempool_reason
    with pytest.raises(ValidationError) as err:
        connect_block(chain.node, chain.block([tx]))
    assert (err.value.reason, err.value.tx_index) == ("bad-txns-nonfinal", 1)


@pytest.fixture
def chain(node: Node) -> Chain:
    return Chain(node, copies=3)  # block 1 at GENESIS_TIME + 60


def test_lock_time_cutoff_is_the_median_time_past(chain: Chain) -> None:
    """BIP113: a time lock the next block's own time has passed but its parent's median time
    past has not is not final — in the mempool (the tip's median time past, Core's
    CheckFinalTxAtTip) and in the block."""
    mine(chain, GENESIS_TIME + 10_000)  # block 2
    mtp = chain.node.median_time_past()
    assert mtp == GENESIS_TIME + 60  # the median of the genesis, block 1 and block 2
    # block 3 is made at GENESIS_TIME + 180 by chain.block: after the lock, yet not final
    locked = spend(chain.take("keypath"), locktime=mtp)
    refused(chain, locked, "non-final")
    passed = spend(chain.take("keypath"), locktime=mtp - 1)
    chain.node.accept_transaction(passed.serialize())
    connect_block(chain.node, chain.block([passed]))


def test_final_sequences_ignore_the_lock_time(chain: Chain) -> None:
    tx = spend(chain.take("keypath"), sequence=0xFFFF_FFFF, locktime=GENESIS_TIME + 10 ** 6)
    chain.node.accept_transaction(tx.serialize())
    connect_block(chain.node, chain.block([tx]))


def test_time_based_relative_lock_counts_from_the_block_before_the_coins(chain: Chain) -> None:
    """The coin is from block 1: its time is the median time past of the genesis (its block's
    parent), GENESIS_TIME; one 512-second unit is reached once the tip's median time past is
    GENESIS_TIME + 512 (counting from block 1's own median time past, GENESIS_TIME + 60,
    it would take until + 572)."""
    tx = spend(chain.take("keypath"), sequence=TYPE_FLAG | 1)
    refused(chain, tx, "non-BIP68-final")
    mine(chain, GENESIS_TIME + 540)  # block 2
    assert chain.node.median_time_past() == GENESIS_TIME + 60
    refused(chain, tx, "non-BIP68-final")
    mine(chain, GENESIS_TIME + 600)  # block 3
    assert chain.node.median_time_past() == GENESIS_TIME + 540
    chain.node.accept_transaction(tx.serialize())
    mine(chain, GENESIS_TIME + 660, [tx])


def test_time_based_lock_on_an_output_of_the_same_block(chain: Chain) -> None:
    """A coin created earlier in the block counts at the block's height: its time is the
    tip's median time past, so a lock of 0 units passes and one of 1 unit does not."""
    for units, ok in ((1, False), (0, True)):
        parent = spend(chain.take("keypath"))
        child = spend(Coin(parent.txid, 0, parent.outputs[0]), sequence=TYPE_FLAG | units)
        block = chain.block([parent, child])
        if ok:
            connect_block(chain.node, block)
        else:
            with pytest.raises(ValidationError) as err:
                connect_block(chain.node, block)
            assert (err.value.reason, err.value.tx_index, err.value.input_index) == (
                "bad-txns-nonfinal", 2, 0)


# --- check_sequence_locks on its own --------------------------------------------------------

def _tx(sequence: int, version: int = 2) -> Transaction:
    return Transaction(version=version, inputs=[
        TxIn(prevout_hash=bytes([1]) * 32, prevout_index=0, sequence=DISABLE_FLAG),
        TxIn(prevout_hash=bytes([2]) * 32, prevout_index=0, sequence=sequence)],
        outputs=[TxOut(asset=POLICY_ASSET, value=COIN_VALUE)])


def _times(height: int) -> int:
    """A chain whose median time past grows 1000 s a block."""
    return GENESIS_TIME + 1000 * height


def test_time_lock_boundary() -> None:
    """The coin at height 5 has the time of block 4 (GENESIS_TIME + 4000); in a block at height
    10 (parent's median time past + 9000) a lock of 9 units (4608 s) has passed, 10 units
    (5120 s) have not: the block must be after coin time + lock - 1."""
    check_sequence_locks(_tx(TYPE_FLAG | 9), 1, lambda n: 5, 10, _times)
    with pytest.raises(ValidationError) as err:
        check_sequence_locks(_tx(TYPE_FLAG | 10), 1, lambda n: 5, 10, _times)
    assert (err.value.reason, err.value.input_index) == ("bad-txns-nonfinal", 1)
    # exactly at the edge: coin time + 512 * units - 1 must be below the block's time
    edge = {0: GENESIS_TIME, 1: GENESIS_TIME + 512}
    check_sequence_locks(_tx(TYPE_FLAG | 1), None, lambda n: 1, 2, edge.__getitem__)
    edge[1] -= 1
    with pytest.raises(ValidationError):
        check_sequence_locks(_tx(TYPE_FLAG | 1), None, lambda n: 1, 2, edge.__getitem__)


def test_a_genesis_coin_takes_the_genesis_time() -> None:
    check_sequence_locks(_tx(TYPE_FLAG | 1), 1, lambda n: 0, 2, _times)  # 1000 > 0 + 511


def test_median_times_and_coin_heights_are_read_only_where_a_lock_is_set() -> None:
    """Disabled locks read nothing, height locks only the coin's height: the per-input work
    stays with the inputs that have a relative lock."""
    def unread(value: int) -> int:
        raise AssertionError("read")

    check_sequence_locks(_tx(DISABLE_FLAG | TYPE_FLAG | 5000), 1, unread, 10, unread)
    asked: list[int] = []
    check_sequence_locks(_tx(3), 1, lambda n: asked.append(n) or 7, 10, unread)
    assert asked == [1]  # input 0's lock is disabled
    with pytest.raises(ValidationError):
        check_sequence_locks(_tx(4), 1, lambda n: 7, 10, unread)  # 7 + 4 - 1 >= 10


def test_bip68_reads_the_version_as_unsigned() -> None:
    """Elements casts nVersion to uint32 before ``>= 2``: a negative version is locked, version
    1 is not."""
    with pytest.raises(ValidationError):
        check_sequence_locks(_tx(5, version=-1), 1, lambda n: 7, 10, _times)
    check_sequence_locks(_tx(5, version=1), 1, lambda n: 7, 10, _times)


# --- before the CSV height: the block's own time, no BIP68 ------------------------------------

@pytest.mark.parametrize("csv_height", [1, 5])
def test_bip113_and_bip68_start_at_the_csv_height(tmp_path: Path, csv_height: int) -> None:
    """elementsregtest with ``-con_csv_deploy_start``: below it a time lock is judged against
    the block's own time and a relative lock is not enforced (Elements' ContextualCheckBlock
    and ConnectBlock set LOCKTIME_MEDIAN_TIME_PAST and LOCKTIME_VERIFY_SEQUENCE with the CSV
    deployment); from it, against the parent's median time past, and BIP68 holds."""
    params = elements_chain(elements_chain_options({
        "initialfreecoins": str(100 * COIN), "con_csv_deploy_start": str(csv_height)}))
    assert params.csv_height == csv_height
    claim = genesis_claim(params, b"\x51", 1000)
    assert claim is not None
    start = params.genesis.header.time + 10_000
    free = Coin(claim.txid, 0, claim.outputs[0])
    with Node.open(tmp_path / "node", params) as node:
        def block(txs: list[Transaction], time: int) -> ValidationError | None:
            tip = node.tip
            made = make_block(tip.hash, tip.height + 1, time, txs, b"\x51", params=params)
            result = node.submit_block(made.serialize())
            return None if result.accepted else result.error

        assert block([claim], start) is None
        # the parent's median time past is ``start``; the block's own time is later still
        time_locked = spend(free, locktime=start + 5_000)
        error = block([time_locked], start + 10_000)
        assert (error is None) == (csv_height > 2), error
        tip = node.tip
        coin = Coin(time_locked.txid, 0, time_locked.outputs[0]) if error is None else free
        height_locked = spend(coin, sequence=10)  # ten blocks after its coin's
        error = block([height_locked], start + 20_000)
        assert (error is None) == (csv_height > tip.height + 1), error
        if error is not None:
            assert (error.reason, error.tx_index, error.input_index) == (
                "bad-txns-nonfinal", 1, 0)
