"""Chain manager: block index with side branches, best chain, reorganisations, invalid-branch
fallback, invalidate/reconsider, mempool return, events, BIP22 answers, queries and restarts,
against an independent model (``tests.chaintrees``), on real LevelDB data directories."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin.elements import Block
from ctplugin.errors import ValidationError
from regtest.params import CTREGTEST, select_chain
from tests.chaintrees import TreeBuilder, expected_tip, fanout_block, spend, utxo_model
from tests.conftest import SLOW_SCALE
from validator import ChainListener, Node, UnknownBlockError
from validator.store import FAILED_VALID, BlockFileError

PARAMS = select_chain(CTREGTEST)


def open_node(path: Path, **options: object) -> Node:
    return Node.open(path, PARAMS, sync=False, **options)  # type: ignore[arg-type]


def node_utxos(node: Node) -> dict[tuple[bytes, int], tuple[int, bool, bytes]]:
    return {(o.txid, o.index): (e.height, e.coinbase, e.txout)
            for o, e in node.data.chainstate.iter_utxos()}


def best_chain(tree: TreeBuilder, seen: list[int], invalidated: set[int]) -> list[Block]:
    best = expected_tip(tree, seen, invalidated)
    return [] if best is None else [tb.block for tb in tree.branch(best)]


def check_state(node: Node, tree: TreeBuilder, seen: list[int], invalidated: set[int]) -> None:
    chain = best_chain(tree, seen, invalidated)
    tip = chain[-1] if chain else select_chain(CTREGTEST).genesis
    assert node.tip.hash == tip.hash and node.tip.height == tip.header.height
    assert node_utxos(node) == utxo_model(chain)
    for block in chain:
        assert node.block_hash(block.header.height) == block.hash


class Recorder(ChainListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def block_connected(self, block: object, height: int) -> None:
        self.events.append(("connected", block.hash))  # type: ignore[attr-defined]

    def block_disconnected(self, block: object, height: int) -> None:
        self.events.append(("disconnected", block.hash))  # type: ignore[attr-defined]

    def transaction_added(self, tx: object) -> None:
        self.events.append(("added", tx.txid))  # type: ignore[attr-defined]

    def transaction_removed(self, tx: object, reason: str) -> None:
        self.events.append((f"removed:{reason}", tx.txid))  # type: ignore[attr-defined]

    def mempool_removed_for_block(self, txs: Sequence[Any], height: int) -> None:
        self.events.append(("confirmed", tuple(tx.txid for tx in txs)))


# --- the property test --------------------------------------------------------------------

_ops = st.lists(st.tuples(st.sampled_from(["submit", "submit", "submit", "invalidate",
                                           "reconsider", "restart", "duplicate"]),
                          st.integers(0, 10_000)), min_size=5, max_size=40)


@settings(max_examples=int(12 * SLOW_SCALE), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n_blocks=st.integers(3, 18), ops=_ops,
       max_unflushed=st.sampled_from([1, 3, 1000]))
def test_random_trees_follow_the_best_valid_chain(tmp_path_factory: pytest.TempPathFactory,
                                                  seed: int, n_blocks: int,
                                                  ops: list[tuple[str, int]],
                                                  max_unflushed: int) -> None:
    """Random trees of blocks (forks, invalid blocks, their descendants) submitted in random
    order, with invalidate / reconsider / restart / resubmission mixed in: after every step
    the tip is the model's best valid block and the UTXO set equals a replay of its chain.

    The model keeps the failure marks as Core does: ``invalidate`` marks the block and every
    known descendant, a block refused for its invalid parent is remembered marked, and
    ``reconsider`` clears the block, its descendants and its ancestors only (a sibling branch
    marked through a common ancestor stays marked until a reconsider covers it)."""
    tree = TreeBuilder.random(n_blocks, seed)
    path = tmp_path_factory.mktemp("chain") / "node"
    pending = list(range(len(tree.blocks)))
    random.Random(seed).shuffle(pending)
    seen: list[int] = []
    header_only: set[int] = set()
    marked: set[int] = set()

    def known() -> set[int]:
        return set(seen) | header_only

    def descendants(index: int) -> set[int]:
        return {i for i in known()
                if index in {tree.blocks.index(t) for t in tree.branch(i)[:-1]}}

    node = open_node(path, max_unflushed_blocks=max_unflushed)
    try:
        for op, pick in ops + [("submit", 0)] * len(pending):
            if op == "submit" and pending:
                index = pending[pick % len(pending)]
                tb = tree.blocks[index]
                result = node.submit_block(tb.block.serialize())
                parent = tb.parent if tb.parent is not None else -1
                if parent >= 0 and parent not in seen and parent not in header_only:
                    assert result.bip22 == "prev-blk-not-found" and not result.accepted
                    continue
                if result.reason == "bad-prevblk" or result.status == "duplicate-invalid":
                    # an ancestor is known invalid (the header is remembered as such): it can
                    # be stored once that ancestor is reconsidered
                    ancestors = {tree.blocks.index(t) for t in tree.branch(index)[:-1]}
                    assert not tb.valid or (ancestors | {index}) & marked
                    header_only.add(index)
                    marked.add(index)
                else:
                    pending.remove(index)
                    seen.append(index)
                    assert result.status in ("connected", "stored", "invalid")
                    assert (result.status == "invalid") <= (not tb.valid)
                    assert (result.bip22 is None) == result.accepted
            elif op == "duplicate" and seen:
                index = seen[pick % len(seen)]
                result = node.submit_block(tree.blocks[index].block.serialize())
                assert result.status in ("duplicate", "duplicate-invalid")
                assert result.bip22 in ("duplicate", "duplicate-invalid")
            elif op == "invalidate" and seen:
                index = seen[pick % len(seen)]
                node.invalidate_block(tree.blocks[index].hash)
                marked |= {index} | descendants(index)
            elif op == "reconsider" and marked:
                index = sorted(marked)[pick % len(marked)]
                node.reconsider_block(tree.blocks[index].hash)
                # Core clears the marks of the block, its ancestors and its descendants
                branch = {tree.blocks.index(tb) for tb in tree.branch(index)}
                marked -= branch | descendants(index)
            elif op == "restart":
                node.close()
                node = open_node(path, max_unflushed_blocks=max_unflushed)
            check_state(node, tree, seen, marked)
        # the UTXO set hash equals that of a node that only ever saw the best chain
        stats = node.utxo_stats()
        with open_node(path.parent / "clean") as clean:
            for block in best_chain(tree, seen, marked):
                assert clean.submit_block(block.serialize()).accepted
            assert clean.utxo_stats().utxo_set_hash == stats.utxo_set_hash
            assert clean.utxo_stats().txouts == stats.txouts
    finally:
        node.close()


# --- focused behaviour ----------------------------------------------------------------------

@pytest.fixture
def node(tmp_path: Path):
    with open_node(tmp_path / "node") as n:
        assert n.submit_block(fanout_block().serialize()).accepted
        yield n


def test_longer_branch_wins_and_reorg_returns_transactions_to_the_mempool(node: Node) -> None:
    tree = TreeBuilder()
    rng = random.Random(1)
    a1 = tree.add(0, "spend", rng)
    a2 = tree.add(a1, "spend", rng)
    b1 = tree.add(0, "empty", rng)
    b2 = tree.add(b1, "empty", rng)
    b3 = tree.add(b2, "empty", rng)
    recorder = Recorder()
    node.subscribe(recorder)
    for index in (a1, a2):
        assert node.submit_block(tree.blocks[index].block.serialize()).accepted
    moved = [tx.txid for i in (a1, a2) for tx in tree.blocks[i].block.transactions[1:]]
    assert node.submit_block(tree.blocks[b1].block.serialize()).bip22 == "inconclusive"
    # a tie: first wins
    assert node.submit_block(tree.blocks[b2].block.serialize()).bip22 == "inconclusive"
    assert node.tip.hash == tree.blocks[a2].hash
    recorder.events.clear()
    result = node.submit_block(tree.blocks[b3].block.serialize())
    assert result.accepted and result.bip22 is None and node.tip.hash == tree.blocks[b3].hash
    assert sorted(node.mempool.entries) == sorted(moved)  # still valid: back in the pool
    hashes = {tree.blocks[i].hash: i for i in (a1, a2, b1, b2, b3)}
    blocks = [(kind, hashes[h]) for kind, h in recorder.events if kind.endswith("connected")]
    assert blocks == [("disconnected", a2), ("disconnected", a1), ("connected", b1),
                      ("connected", b2), ("connected", b3)]
    assert sorted(t for kind, t in recorder.events if kind == "added") == sorted(moved)
    # the old branch is a valid fork now
    tips = {t.hash: t for t in node.chain_tips()}
    assert tips[tree.blocks[b3].hash].status == "active"
    assert tips[tree.blocks[a2].hash].status == "valid-fork"
    assert tips[tree.blocks[a2].hash].branchlen == 2
    info = node.block_info(tree.blocks[a1].hash)
    assert not info.in_active_chain and info.confirmations == -1


def test_a_block_confirming_pool_transactions_is_one_event_before_its_own(node: Node) -> None:
    """The pool transactions a block confirms are reported once, together, just before the
    block (Core's MempoolTransactionsRemovedForBlock), never as one transaction_removed
    ("block") each; the mempool sequence counts each of them."""
    tree = TreeBuilder()
    a1 = tree.add(0, "spend", random.Random(4))
    block = tree.blocks[a1].block
    for tx in block.transactions[1:]:
        node.accept_transaction(tx.serialize())
    sequence = node.mempool.sequence
    recorder = Recorder()
    node.subscribe(recorder)
    assert node.submit_block(block.serialize()).accepted
    txids = tuple(tx.txid for tx in block.transactions[1:])
    assert txids and recorder.events == [("confirmed", txids), ("connected", block.hash)]
    assert node.mempool.sequence == sequence + len(txids)


def test_conflicting_branch_drops_the_conflicts(node: Node) -> None:
    tree = TreeBuilder()
    rng = random.Random(2)
    a1 = tree.add(0, "spend", rng)
    coin = tree.blocks[a1].block.transactions[1].inputs[0].prevout
    # the other branch spends the same coin differently
    fan = fanout_block().transactions[1]
    double = spend([(coin[0], coin[1], fan.outputs[coin[1]].value)], 99)  # type: ignore[list-item]
    b_blocks = []
    from regtest.builder import make_block
    from regtest.params import GENESIS_TIME
    prev = fanout_block()
    for height, txs in ((2, [double]), (3, [])):
        block = make_block(prev.hash, height, GENESIS_TIME + 60 * height + 7, txs, b"\x51")
        b_blocks.append(block)
        prev = block
    assert node.submit_block(tree.blocks[a1].block.serialize()).accepted
    recorder = Recorder()
    node.subscribe(recorder)
    assert node.submit_block(b_blocks[0].serialize()).status == "stored"
    assert node.submit_block(b_blocks[1].serialize()).accepted
    assert len(node.mempool) == 0  # a1's transaction conflicts with the winning branch
    assert not any(kind == "added" for kind, _ in recorder.events)


def test_failing_block_in_the_new_branch_falls_back(node: Node) -> None:
    tree = TreeBuilder()
    rng = random.Random(3)
    a1 = tree.add(0, "spend", rng)
    a2 = tree.add(a1, "empty", rng)
    b1 = tree.add(0, "empty", rng)
    b2 = tree.add(b1, "invalid", rng)
    b3 = tree.add(b2, "empty", rng)
    assert node.submit_block(tree.blocks[a1].block.serialize()).accepted
    assert node.submit_block(tree.blocks[a2].block.serialize()).accepted
    node.submit_block(tree.blocks[b1].block.serialize())
    # a tie: not tried
    assert node.submit_block(tree.blocks[b2].block.serialize()).status == "stored"
    recorder = Recorder()
    node.subscribe(recorder)
    # longer: tried, b2 fails, fall back
    result = node.submit_block(tree.blocks[b3].block.serialize())
    assert result.status == "stored" and result.bip22 == "inconclusive"
    assert node.tip.hash == tree.blocks[a2].hash
    assert sorted(node.mempool.entries) == []  # a1's transaction is confirmed again
    names = {tree.blocks[i].hash: i for i in (a1, a2, b1)}
    assert [(kind, names[h]) for kind, h in recorder.events if kind.endswith("connected")] == [
        ("disconnected", a2), ("disconnected", a1), ("connected", b1), ("disconnected", b1),
        ("connected", a1), ("connected", a2)]
    assert node.block_info(tree.blocks[b2].hash).status == "invalid"
    assert node.submit_block(tree.blocks[b2].block.serialize()).bip22 == "duplicate-invalid"
    tips = {t.hash: t.status for t in node.chain_tips()}
    assert tips[tree.blocks[b3].hash] == "invalid"
    assert node.data.block_index is not None
    entry = node.chain.entry(tree.blocks[b2].hash)
    assert entry.status & FAILED_VALID
    # a child of a known-invalid block is refused at once
    b4 = tree.add(b3, "empty", rng)
    assert node.submit_block(tree.blocks[b4].block.serialize()).bip22 == "bad-prevblk"


def test_invalidate_and_reconsider(node: Node) -> None:
    tree = TreeBuilder()
    rng = random.Random(4)
    a1 = tree.add(0, "spend", rng)
    a2 = tree.add(a1, "empty", rng)
    for i in (a1, a2):
        node.submit_block(tree.blocks[i].block.serialize())
    moved = sorted(tx.txid for tx in tree.blocks[a1].block.transactions[1:])
    node.invalidate_block(tree.blocks[a1].hash)
    assert node.tip.hash == fanout_block().hash
    assert sorted(node.mempool.entries) == moved
    assert node.block_info(tree.blocks[a2].hash).status == "invalid"
    reports = node.reconsider_block(tree.blocks[a2].hash)  # clears a1 too (an ancestor)
    assert [r.hash for r in reports] == [tree.blocks[a1].hash, tree.blocks[a2].hash]
    assert node.tip.hash == tree.blocks[a2].hash and len(node.mempool) == 0
    with pytest.raises(UnknownBlockError):
        node.invalidate_block(b"\x42" * 32)
    with pytest.raises(Exception, match="genesis"):
        node.invalidate_block(select_chain(CTREGTEST).genesis_hash)


def test_queries(node: Node) -> None:
    tree = TreeBuilder()
    rng = random.Random(5)
    a1 = tree.add(0, "spend", rng)
    block = tree.blocks[a1].block
    node.submit_block(block.serialize())
    assert node.read_block(block.hash) == block.serialize()
    info = node.block_info(block.hash)
    assert (info.height, info.n_tx, info.size, info.in_active_chain, info.confirmations) == \
        (2, len(block.transactions), len(block.serialize()), True, 1)
    assert info.weight == block.weight and info.status == "active" and info.next_hash is None
    assert node.block_info(fanout_block().hash).next_hash == block.hash
    assert node.block_hash(2) == block.hash and node.block_hash(3) is None
    assert node.block_hash(-1) is None
    undo = node.block_undo(block.hash)
    assert undo is not None
    assert [o for o, _ in undo.spent] == [txin.prevout for tx in block.transactions[1:]
                                          for txin in tx.inputs]
    tx = block.transactions[1]
    assert node.utxo((tx.txid, 0)) is not None and node.utxo((tx.txid, 5)) is None
    assert node.utxo(tx.inputs[0].prevout) is None
    stats = node.utxo_stats()
    assert stats.height == 2 and stats.txouts == len(utxo_model([fanout_block(), block]))
    assert node.median_time_past() == fanout_block().header.time
    assert node.block_info(b"\x00" * 32) is None
    with pytest.raises(UnknownBlockError):
        node.read_block(b"\x00" * 32)
    spent = node.block_spent_outputs(block.hash)
    assert spent is not None and [len(s) for s in spent] == [len(tx.inputs)
                                                           for tx in block.transactions[1:]]
    assert all(coin.txout == fanout_block().transactions[1].outputs[coin_index].serialize()
               for coins, tx in zip(spent, block.transactions[1:], strict=True)
               for coin, coin_index in zip(coins, [t.prevout_index for t in tx.inputs],
                                           strict=True))


def test_restart_keeps_everything_and_blocks_are_in_blk_files(tmp_path: Path) -> None:
    from validator import RecordReader

    tree = TreeBuilder.random(12, seed=7, p_invalid=0)
    with open_node(tmp_path / "n") as node:
        for tb in tree.blocks:
            node.submit_block(tb.block.serialize())
        tip, tips = node.tip, node.chain_tips()
    with open_node(tmp_path / "n") as node:
        assert node.tip == tip and node.chain_tips() == tips
    records = [r.payload for r in RecordReader(tmp_path / "n" / "blocks" / "blk00000.dat",
                                               PARAMS.network_magic, strict=False)]
    assert records[0] == select_chain(CTREGTEST).genesis.serialize()
    assert records[1:] == [tb.block.serialize() for tb in tree.blocks]  # arrival order


def test_damaged_block_data_is_dropped_not_trusted(tmp_path: Path) -> None:
    tree = TreeBuilder()
    rng = random.Random(8)
    a1 = tree.add(0, "spend", rng)
    b1 = tree.add(0, "empty", rng)
    b2 = tree.add(b1, "empty", rng)
    with open_node(tmp_path / "n") as node:
        for i in (0, a1, b1):
            node.submit_block(tree.blocks[i].block.serialize())
        pos = node.chain.entry(tree.blocks[b1].hash).data_pos
    assert pos is not None
    blk = tmp_path / "n" / "blocks" / f"blk{pos.file:05d}.dat"
    data = bytearray(blk.read_bytes())
    data[pos.offset + 5] ^= 0xFF  # inside b1's header: the bytes are no longer b1
    blk.write_bytes(bytes(data))
    with open_node(tmp_path / "n") as node:
        with pytest.raises(BlockFileError):
            node.chain.read_block(node.chain.entry(tree.blocks[b1].hash))
        # longer: b1 cannot be read → data dropped
        node.submit_block(tree.blocks[b2].block.serialize())
        assert node.tip.hash == tree.blocks[a1].hash
        assert not node.block_info(tree.blocks[b1].hash).has_data
        # the genuine bytes again: b1 is stored and b2's longer branch connects through it
        assert node.submit_block(tree.blocks[b1].block.serialize()).accepted
        assert node.tip.hash == tree.blocks[b2].hash


def test_header_height_contradicting_the_parent_never_enters_the_index(node: Node) -> None:
    """QA: a block whose header claims height 99 on top of height 2 is "bad-blk-height" and
    must not be indexed with the claimed height (getchaintips listed height 99): on the tip and
    on a side branch alike, the block is refused and not remembered."""
    from dataclasses import replace

    tree = TreeBuilder()
    rng = random.Random(9)
    a1 = tree.add(0, "empty", rng)
    b1 = tree.add(0, "empty", rng)
    for index in (a1, b1):  # a1's parent is the tip; b1's is not, once a1 is connected
        block = tree.blocks[index].block
        lying = replace(block, header=replace(block.header, height=99))
        result = node.submit_block(lying.serialize())
        assert not result.accepted and result.bip22 == "bad-blk-height"
        assert node.block_info(lying.hash) is None
        assert all(t.height < 99 for t in node.chain_tips())
        if index == a1:
            assert node.submit_block(block.serialize()).accepted
    assert node.tip.hash == tree.blocks[a1].hash


def test_header_times_follow_cores_contextual_rules(node: Node) -> None:
    """QA: a block timed 1000, or 3 hours ahead, was stored and could become the tip. As Core:
    time <= the parent's median time past is "time-too-old" and invalid for good (remembered);
    more than MAX_FUTURE_BLOCK_TIME ahead of the node's clock is "time-too-new", not a verdict
    (not remembered: the same block is accepted once the clock has caught up). The replay
    stage API (prepare_block) applies the same rule."""
    from dataclasses import replace

    from ctplugin.elements.consensus import MAX_FUTURE_BLOCK_TIME

    tree = TreeBuilder()
    rng = random.Random(11)
    a1 = tree.add(0, "empty", rng)
    block = tree.blocks[a1].block
    parent_mtp = node.median_time_past()
    old = replace(block, header=replace(block.header, time=parent_mtp))
    result = node.submit_block(old.serialize())
    assert not result.accepted and result.bip22 == "time-too-old"
    assert node.submit_block(old.serialize()).status == "duplicate-invalid"
    with pytest.raises(ValidationError, match="time-too-old"):
        node.prepare_block(old.serialize())
    clock = [float(block.header.time - MAX_FUTURE_BLOCK_TIME - 1)]
    node.set_clock(lambda: clock[0])
    result = node.submit_block(block.serialize())
    assert not result.accepted and result.bip22 == "time-too-new"
    assert node.block_info(block.hash) is None
    with pytest.raises(ValidationError, match="time-too-new"):
        node.prepare_block(block.serialize())
    clock[0] += 1  # exactly MAX_FUTURE_BLOCK_TIME ahead is allowed
    assert node.submit_block(block.serialize()).accepted and node.tip.hash == block.hash
