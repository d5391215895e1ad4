"""LevelDB stores on real LevelDB in tmp_path: chainstate, proof cache, data directory."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import plyvel
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from validator.store import (
    BlockRef,
    BlockUndo,
    Chainstate,
    ChainstateConflictError,
    ChainstateCorruptError,
    DataDir,
    DataDirLockedError,
    DuplicateOutputError,
    MissingInputError,
    Outpoint,
    ProofCache,
    StoreError,
    StoreValueError,
    UtxoEntry,
    cache_key,
    net_changes,
)
from validator.store.leveldb import is_leveldb_file

NULL = bytes(32)


def h(label: object) -> bytes:
    return hashlib.sha256(repr(label).encode()).digest()


def op(label: object, index: int = 0) -> Outpoint:
    return Outpoint(h(("tx", label)), index)


def entry(height: int, payload: bytes = b"out", coinbase: bool = False) -> UtxoEntry:
    return UtxoEntry(height, coinbase, payload)


@pytest.fixture
def cs(tmp_path: Path) -> Chainstate:
    with Chainstate.open(str(tmp_path / "chainstate"), sync=False) as chainstate:
        yield chainstate


def _genesis(cs: Chainstate) -> list[Outpoint]:
    outs = [op("g", i) for i in range(4)]
    cs.connect_block(h("b0"), 0, NULL, [], [(o, entry(0, b"g%d" % o.index, True)) for o in outs])
    return outs


def _state(cs: Chainstate) -> tuple[object, ...]:
    return cs.best_block(), cs.utxo_snapshot()


# --- chainstate ------------------------------------------------------------------------------

def test_connect_get_flush_and_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "cs")
    with Chainstate.open(path) as cs:
        assert cs.best_block() is None and cs.utxo_snapshot() == {}
        outs = _genesis(cs)
        new = op("t1")
        tip = cs.connect_block(h("b1"), 1, h("b0"), [outs[0], outs[2]], [(new, entry(1, b"x"))])
        assert tip == BlockRef(h("b1"), 1) == cs.best_block()
        assert cs.get(outs[0]) is None and cs.get(outs[1]) == entry(0, b"g1", True)
        assert cs.get(new) == entry(1, b"x")
        assert cs.get_many([outs[0], new]) == {outs[0]: None, new: entry(1, b"x")}
        assert new in cs and outs[0] not in cs
        undo = cs.take_undo(h("b1"))
        assert undo.prev_hash == h("b0") and undo.created == (new,)
        assert dict(undo.spent) == {outs[0]: entry(0, b"g0", True),
                                    outs[2]: entry(0, b"g2", True)}
        assert BlockUndo.decode(undo.encode()) == undo
        with pytest.raises(ChainstateConflictError):
            cs.take_undo(h("b1"))  # handed over once
        assert cs.flushed_block() is None  # nothing written yet: the cache holds it all
        snapshot = cs.utxo_snapshot()
        stats = cs.flush()
        assert (stats.coins_written, stats.coins_deleted, stats.batches) == (3, 0, 1)
        assert cs.flushed_block() == tip and cs.utxo_snapshot() == snapshot
    with Chainstate.open(path) as cs:
        assert cs.best_block() == BlockRef(h("b1"), 1) == cs.flushed_block()
        assert cs.utxo_snapshot() == snapshot and cs.interrupted_flush is None


def test_unflushed_changes_are_lost_and_the_flushed_tip_stays(tmp_path: Path) -> None:
    path = str(tmp_path / "cs")
    with Chainstate.open(path) as cs:
        outs = _genesis(cs)
        cs.flush()
        flushed = _state(cs)
        cs.connect_block(h("b1"), 1, h("b0"), [outs[0]], [(op("t1"), entry(1))])
        assert _state(cs) != flushed
    with Chainstate.open(path) as cs:  # closed without a flush: as after a crash
        assert _state(cs) == flushed


def test_coins_created_and_spent_between_flushes_never_reach_leveldb(tmp_path: Path) -> None:
    path = str(tmp_path / "cs")
    with Chainstate.open(path, sync=False) as cs:
        outs = _genesis(cs)
        cs.flush()
        cs.connect_block(h("b1"), 1, h("b0"), [outs[0]], [(op("t1"), entry(1))])
        cs.connect_block(h("b2"), 2, h("b1"), [op("t1")], [(op("t2"), entry(2))])
        stats = cs.flush()
        # t1 was fresh: spending it just forgot it; g0 deleted, t2 written.
        assert (stats.coins_written, stats.coins_deleted) == (1, 1)
        db = cs.db
        assert db.get(op("t1").key()) is None and db.get(outs[0].key()) is None
        assert db.get(op("t2").key()) == entry(2).encode()


def test_first_block_and_tip_rules(cs: Chainstate) -> None:
    with pytest.raises(ChainstateConflictError):
        cs.connect_block(h("b0"), 1, NULL, [], [])
    with pytest.raises(ChainstateConflictError):
        cs.connect_block(h("b0"), 0, h("x"), [], [])
    with pytest.raises(ChainstateConflictError):
        cs.flush()  # nothing to flush before a first block
    _genesis(cs)
    before = _state(cs)
    with pytest.raises(ChainstateConflictError, match="does not extend"):
        cs.connect_block(h("b1"), 1, h("not-the-tip"), [], [(op("n"), entry(1))])
    with pytest.raises(ChainstateConflictError, match="does not extend"):
        cs.connect_block(h("b1"), 2, h("b0"), [], [(op("n"), entry(2))])
    assert _state(cs) == before


@pytest.mark.parametrize("case", ["missing", "double-in-block", "spent-earlier", "dup-created",
                                  "created-exists", "spend-then-create-same"])
@pytest.mark.parametrize("with_view", [False, True])
@pytest.mark.parametrize("flushed", [False, True])
def test_invalid_block_changes_nothing(tmp_path: Path, case: str, with_view: bool,
                                       flushed: bool) -> None:
    path = str(tmp_path / "cs")
    with Chainstate.open(path) as cs:
        outs = _genesis(cs)
        cs.connect_block(h("b1"), 1, h("b0"), [outs[3]], [(op("t1"), entry(1))])
        if flushed:  # the checks read LevelDB, not only the cache
            cs.flush()
        before = _state(cs)
        spent: list[Outpoint] = [outs[0]]
        created = [(op("t2", 0), entry(2)), (op("t2", 1), entry(2))]
        error: type[Exception] = MissingInputError
        if case == "missing":
            spent.append(op("nowhere"))
        elif case == "double-in-block":
            spent.append(outs[0])
        elif case == "spent-earlier":
            spent.append(outs[3])
        elif case == "dup-created":
            created.append((op("t2", 0), entry(2, b"other")))
            error = DuplicateOutputError
        elif case == "created-exists":
            created.append((outs[1], entry(2)))
            error = DuplicateOutputError
        else:
            spent.append(outs[1])
            created.append((outs[1], entry(2)))
            error = DuplicateOutputError
        # With a view (the validator's path) the spent entries come from the caller's snapshot
        # read; every check must still apply to them.
        view = cs.read_view(spent) if with_view else None
        with pytest.raises(error) as info:
            cs.connect_block(h("b2"), 2, h("b1"), spent, created, view)
        assert isinstance(info.value, ChainstateConflictError)  # a store error, not a verdict
        assert _state(cs) == before
        cs.flush()
    with Chainstate.open(path) as cs:  # and nothing reached the disk
        assert _state(cs) == before


def test_spend_inside_block_nets_out_and_disconnects_cleanly(cs: Chainstate) -> None:
    outs = _genesis(cs)
    before = _state(cs)
    child = op("child")
    grandchild = op("grandchild")
    cs.connect_block(h("b1"), 1, h("b0"), [outs[0], child],
                     [(child, entry(1)), (grandchild, entry(1))])
    assert cs.get(child) is None and cs.get(grandchild) == entry(1)
    undo = cs.take_undo(h("b1"))
    assert undo.created == (grandchild,)
    assert [o for o, _ in undo.spent] == [outs[0]]
    assert cs.disconnect_block(h("b1"), undo) == BlockRef(h("b1"), 1)
    assert _state(cs) == before


def test_connect_with_a_view_uses_its_entries_and_refuses_a_stale_one(cs: Chainstate) -> None:
    outs = _genesis(cs)
    stale = cs.read_view([outs[0]])
    cs.connect_block(h("b1"), 1, h("b0"), [outs[1]], [(op("t1"), entry(1))],
                     cs.read_view([outs[1]]))
    with pytest.raises(ChainstateConflictError):  # read before b1 was written
        cs.connect_block(h("b2"), 2, h("b1"), [outs[0]], [], stale)
    partial = cs.read_view([outs[0]])  # outs[2] is not in the view: connect reads it
    cs.connect_block(h("b2"), 2, h("b1"), [outs[0], outs[2]], [], partial)
    undo = cs.take_undo(h("b2"))
    assert list(undo.spent) == [(outs[0], entry(0, b"g0", True)), (outs[2], entry(0, b"g2", True))]
    assert cs.disconnect_block(h("b2"), undo) == BlockRef(h("b2"), 2)
    assert cs.get(outs[0]) == entry(0, b"g0", True) and cs.get(outs[2]) == entry(0, b"g2", True)


def test_disconnect_to_empty_and_errors(cs: Chainstate) -> None:
    with pytest.raises(ChainstateConflictError):
        cs.disconnect_block(h("b0"), BlockUndo(0, NULL, (), ()))
    _genesis(cs)
    undo = cs.take_undo(h("b0"))
    with pytest.raises(ChainstateConflictError, match="not the tip"):
        cs.disconnect_block(h("other"), undo)
    with pytest.raises(ChainstateCorruptError):
        cs.disconnect_block(h("b0"), BlockUndo(1, NULL, (), ()))
    assert cs.disconnect_block(h("b0"), undo) == BlockRef(h("b0"), 0)
    assert _state(cs) == (None, {})
    _genesis(cs)  # the same genesis connects again


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4), st.booleans(),
                               st.booleans()), min_size=1, max_size=12),
       disconnects=st.integers(0, 12), budget=st.sampled_from([1, 2000, 1 << 30]))
def test_disconnect_restores_exact_previous_sets(tmp_path_factory: pytest.TempPathFactory,
                                                 plan: list[tuple[int, int, bool, bool]],
                                                 disconnects: int, budget: int) -> None:
    """Connect random blocks (spends of random live outputs, creates, in-block spends), flushing
    at random points with caches from tiny (every flush trims it) to unbounded; every
    disconnect must give back exactly the set that existed before that block, reads always
    agree with the set, and what a reopen finds equals the state at the last flush."""
    path = str(tmp_path_factory.mktemp("cs"))
    touched: set[Outpoint] = set()

    def reads_agree(cs: Chainstate) -> None:
        now = cs.utxo_snapshot()
        truth = {o: now.get(o) for o in touched}
        assert cs.get_many(touched) == truth
        assert all(cs.get(o) == e for o, e in truth.items())

    last_flushed: tuple[object, ...] = (None, {})
    with Chainstate.open(path, sync=False, cache_budget=budget) as cs:
        history = [_state(cs)]
        undos = []
        prev = NULL
        for height, (n_spend, n_create, in_block, flush) in enumerate(plan):
            live = sorted(cs.utxo_snapshot(), key=lambda o: (o.txid, o.index))
            spent = [live[(height * 7 + 3 * k) % len(live)] for k in range(n_spend)] if live else []
            spent = list(dict.fromkeys(spent))
            created = [(op((height, "c"), i), entry(height, bytes([i]) * i, i == 0))
                       for i in range(n_create + (1 if in_block else 0))]
            if in_block:
                spent.append(created[-1][0])
            touched.update(spent)
            touched.update(o for o, _ in created)
            block = h(("block", height))
            view = cs.read_view(spent) if height % 2 else None  # both connect paths
            cs.connect_block(block, height, prev, spent, created, view)
            undos.append((block, cs.take_undo(block)))
            prev = block
            history.append(_state(cs))
            reads_agree(cs)
            if flush:
                cs.flush()
                last_flushed = _state(cs)
                reads_agree(cs)
        for _ in range(min(disconnects, len(plan))):
            cs.disconnect_block(*undos.pop())
            history.pop()
            assert _state(cs) == history[-1]
            reads_agree(cs)
        if history[-1][0] is not None:
            cs.flush()
            last_flushed = history[-1]
    with Chainstate.open(path) as cs:
        assert _state(cs) == last_flushed


# --- flush protocol: HEAD_BLOCKS and recovery -----------------------------------------------

class _Killed(Exception):
    pass


def _branch(cs: Chainstate, base: list[Outpoint], tag: str, start: int, n: int,
            prev: bytes) -> list[tuple[bytes, list[Outpoint], list[tuple[Outpoint, UtxoEntry]]]]:
    """Connect n blocks from height ``start`` on ``prev``: each spends one base output and
    creates three (one spent by the next block). Returns (hash, spent, created) per block."""
    blocks = []
    carry: Outpoint | None = None
    for i in range(n):
        height = start + i
        spent = [base[height]] + ([carry] if carry else [])
        spent = list(dict.fromkeys(spent))
        created = [(op((tag, height), j), entry(height, bytes([j, height]) * 20)) for j in range(3)]
        carry = created[0][0]
        block = h((tag, height))
        cs.connect_block(block, height, prev, spent, created)
        blocks.append((block, spent, created))
        prev = block
    return blocks


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(old_len=st.integers(1, 4), new_len=st.integers(0, 5), kill_at=st.integers(1, 40),
       kill_again=st.integers(0, 40))
def test_interrupted_flush_recovers_to_the_new_tip(tmp_path_factory: pytest.TempPathFactory,
                                                   old_len: int, new_len: int, kill_at: int,
                                                   kill_again: int) -> None:
    """A flush cut after any partial batch (tiny batches: one coin each) leaves HEAD_BLOCKS;
    recovery from the old branch's undo data and the new branch's changes ends exactly at the
    state a clean run reaches — even when the recovery's own flush is cut too."""
    path = str(tmp_path_factory.mktemp("cs"))
    with Chainstate.open(path, sync=False, batch_bytes=1) as cs:
        outs = base = [op("g", i) for i in range(10)]
        cs.connect_block(h("b0"), 0, NULL, [], [(o, entry(0, b"g%d" % o.index)) for o in outs])
        old = _branch(cs, base, "old", 1, old_len, h("b0"))
        undo_old = [cs.take_undo(b) for b, _, _ in old]
        cs.flush()
        # reorg: disconnect the old branch down to height 1 (keeping block 1), connect new
        keep = 1
        for (block, _, _), undo in reversed(list(zip(old, undo_old, strict=True))[keep:]):
            cs.disconnect_block(block, undo)
        new = _branch(cs, base, "new", keep + 1, new_len, old[keep - 1][0])
        expected = _state(cs)
        batches = []

        def kill(n: int) -> None:
            batches.append(n)
            if n == kill_at:
                raise _Killed

        cs.after_partial_batch = kill
        try:
            cs.flush()
            killed = False
        except _Killed:
            killed = True
    with Chainstate.open(path, sync=False, batch_bytes=1) as cs:
        if not killed:
            assert cs.interrupted_flush is None and _state(cs) == expected
            return
        head = cs.interrupted_flush
        assert head is not None and head.new == expected[0]
        assert head.old == BlockRef(old[-1][0], old_len)
        assert cs.best_block() is None
        with pytest.raises(ChainstateConflictError):
            cs.get(outs[0])  # unusable until recovered
        rollback = list(reversed(undo_old[keep:]))
        forward = [net_changes(spent, created) for _, spent, created in new]
        if kill_again:
            def kill_recovery(n: int) -> None:
                if n == kill_again:
                    raise _Killed
            cs.after_partial_batch = kill_recovery
            try:
                cs.recover(rollback, forward)
            except _Killed:
                cs.close()
                cs = Chainstate.open(path, sync=False, batch_bytes=1)
                assert cs.interrupted_flush == head  # the same old tip is still recorded
        if cs.interrupted_flush is not None:
            assert cs.recover(rollback, forward) == head.new
        assert _state(cs) == expected
        cs.close()
    with Chainstate.open(path) as cs:
        assert cs.interrupted_flush is None and _state(cs) == expected


def test_chainstate_refuses_unknown_format(tmp_path: Path) -> None:
    path = str(tmp_path / "cs")
    db = plyvel.DB(path, create_if_missing=True)
    db.put(b"V", b"\x09")
    db.close()
    with pytest.raises(ChainstateCorruptError, match="format version"):
        Chainstate.open(path)
    db = plyvel.DB(path)
    db.delete(b"V")
    db.put(b"c" + bytes(36), b"\x00")
    db.close()
    with pytest.raises(ChainstateCorruptError, match="no format version"):
        Chainstate.open(path)


def test_closed_chainstate_raises_typed_error(tmp_path: Path) -> None:
    cs = Chainstate.open(str(tmp_path / "cs"))
    cs.close()
    cs.close()
    with pytest.raises(StoreError):
        cs.get(op("x"))


def test_outpoint_and_entry_validation() -> None:
    """Values a store cannot hold are store errors (they were bare ValueErrors)."""
    with pytest.raises(StoreValueError):
        Outpoint(b"\x00" * 31, 0)
    with pytest.raises(StoreValueError):
        Outpoint(NULL, 2**32)
    with pytest.raises(StoreValueError):
        UtxoEntry(-1, False, b"")
    o = Outpoint(h("t"), 7)
    assert Outpoint.from_key(o.key()) == o
    assert UtxoEntry.decode(entry(5, b"abc", True).encode()) == entry(5, b"abc", True)
    with pytest.raises(ChainstateCorruptError):
        UtxoEntry.decode(b"\x00\x00\x00\x00\x02")


# --- data directory --------------------------------------------------------------------------

MAGIC = bytes.fromhex("fabfb5da")


def test_second_opener_in_process_is_refused(tmp_path: Path) -> None:
    with DataDir.open(tmp_path / "node", MAGIC) as node:
        with pytest.raises(DataDirLockedError) as info:
            DataDir.open(tmp_path / "node", MAGIC)
        assert str(tmp_path / "node") in str(info.value)
        _genesis(node.chainstate)  # the owner is unaffected
        node.chainstate.flush()
    with DataDir.open(tmp_path / "node", MAGIC) as node:  # free again after close
        assert node.chainstate.best_block() == BlockRef(h("b0"), 0)


def test_second_opener_in_another_process_is_refused(tmp_path: Path) -> None:
    code = ("import sys\nfrom validator.store import DataDir, DataDirLockedError\n"
            "try:\n    DataDir.open(sys.argv[1], b'abcd')\n"
            "except DataDirLockedError:\n    sys.exit(42)\n"
            "sys.exit(0)\n")
    with DataDir.open(tmp_path / "node", MAGIC):
        result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "node")],
                                cwd=REPO, timeout=60)
        assert result.returncode == 42
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "node")], cwd=REPO,
                            timeout=60)
    assert result.returncode == 0


def test_salt_is_random_persistent_and_atomic(tmp_path: Path) -> None:
    with DataDir.open(tmp_path / "a", MAGIC) as a:
        salt_a, created = a.salt, a.salt_created
    assert created and len(salt_a) == 32
    with DataDir.open(tmp_path / "a", MAGIC) as a:
        assert a.salt == salt_a and not a.salt_created
    with DataDir.open(tmp_path / "b", MAGIC) as b:
        assert b.salt != salt_a
    assert sorted(os.listdir(tmp_path / "a")) == ["blocks", "chainstate", "indexes", "salt"]
    assert os.listdir(tmp_path / "a" / "indexes") == ["proofcache"]


def test_wallet_paths_stay_inside_the_wallets_directory(tmp_path: Path) -> None:
    with DataDir.open(tmp_path / "n", MAGIC) as node:
        wallets = os.path.join(node.path, "wallets")
        names = ["", "alice", "../../etc", "a/b", "@default", "%40default", ".", "..", "ü"]
        paths = [node.wallet_path(name) for name in names]
        assert len(set(paths)) == len(names)
        assert all(os.path.dirname(p) == wallets for p in paths)
        assert all(os.path.basename(p) not in ("", ".", "..") for p in paths)
        with pytest.raises(StoreError):
            node.wallet_path("a\x00b")


def test_damaged_salt_is_replaced_and_cache_rebuilt(tmp_path: Path) -> None:
    with DataDir.open(tmp_path / "n", MAGIC) as node:
        node.proof_cache.insert(h("k"))
        old = node.salt
    (tmp_path / "n" / "salt").write_bytes(b"short")
    with DataDir.open(tmp_path / "n", MAGIC) as node:
        assert node.salt != old and node.salt_created
        assert len(node.proof_cache) == 0 and node.proof_cache.wipes == 1
        assert not node.proof_cache.contains(h("k"))


def test_datadir_path_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(StoreError):
        DataDir.open(tmp_path / "f", MAGIC)


# --- proof cache -----------------------------------------------------------------------------

SALT = bytes(range(32))


def _cache(tmp_path: Path, max_entries: int = 1000, salt: bytes = SALT) -> ProofCache:
    return ProofCache.open(str(tmp_path / "cache"), salt, max_entries=max_entries)


def test_cache_insert_lookup_erase_and_counters(tmp_path: Path) -> None:
    with _cache(tmp_path) as cache:
        k1, k2 = h(1), h(2)
        assert not cache.contains(k1)
        cache.insert(k1)
        cache.insert(k1)  # idempotent
        assert k1 in cache and len(cache) == 1
        assert cache.lookup_and_erase(k1) is True
        assert cache.lookup_and_erase(k1) is False  # consumed by the block
        assert cache.lookup_and_erase(k2) is False
        stats = cache.stats()
        assert (stats.hits, stats.misses, stats.inserts, stats.entries) == (1, 2, 1, 0)
        cache.insert(k2)
    with _cache(tmp_path) as cache:
        assert cache.contains(k2) and len(cache) == 1 and cache.wipes == 0
    with pytest.raises(StoreValueError):
        cache.insert(b"short")
    with pytest.raises(StoreValueError):
        _cache(tmp_path / "other", salt=bytes(31))
    with pytest.raises(StoreValueError):
        _cache(tmp_path / "other", max_entries=0)


def test_cache_batch_lookup_erases_hits_in_one_write(tmp_path: Path) -> None:
    with _cache(tmp_path) as cache:
        cache.insert_many([h(1), h(2), h(3)])
        assert cache.lookup_and_erase_many([h(2), h(9), h(2), h(3)]) == [True, False, False, True]
        assert len(cache) == 1 and cache.contains(h(1))
        assert (cache.hits, cache.misses) == (2, 2)
        assert cache.lookup_and_erase_many([]) == []
    with _cache(tmp_path) as cache:
        assert cache.wipes == 0 and len(cache) == 1 and cache.contains(h(1))


def test_cache_insert_many_is_one_batch_with_oldest_first_eviction(tmp_path: Path) -> None:
    with _cache(tmp_path, max_entries=3) as cache:
        cache.insert_many([h(1), h(2)])
        cache.insert_many([h(2), h(3), h(4), h(3)])  # h(2) already in: not renewed
        assert [cache.contains(h(i)) for i in range(1, 5)] == [False, True, True, True]
        cache.insert_many([h(5), h(6), h(7), h(8)])  # more new keys than room: their oldest go
        assert [cache.contains(h(i)) for i in range(1, 9)] == [False] * 5 + [True] * 3
        assert (len(cache), cache.inserts, cache.evictions) == (3, 8, 5)
    with _cache(tmp_path, max_entries=3) as cache:  # the records on disk agree with the count
        assert cache.wipes == 0 and len(cache) == 3 and cache.contains(h(8))


class _CacheModel:
    """What the proof cache must answer: live keys by sequence number, consumed keys whose
    records are not deleted yet (a re-insert revives them at their old place)."""

    def __init__(self, max_entries: int, consumed_max: int) -> None:
        self.max_entries = max_entries
        self.consumed_max = consumed_max
        self.live: dict[bytes, int] = {}
        self.pending: dict[bytes, int] = {}
        self.seq = 0

    def insert_many(self, keys: list[bytes]) -> None:
        new = []
        for key in dict.fromkeys(keys):
            if key in self.live:
                continue
            if key in self.pending:
                self.live[key] = self.pending.pop(key)
                continue
            new.append(key)
        if not new and not self.pending:
            return
        self.pending.clear()
        first = self.seq
        self.seq += len(new)
        excess = max(len(self.live) + len(new) - self.max_entries, 0)
        for key in sorted(self.live, key=self.live.__getitem__)[:excess]:
            del self.live[key]
        dropped = max(len(self.live) + len(new) - self.max_entries, 0)
        for i, key in enumerate(new):
            if i >= dropped:
                self.live[key] = first + i

    def lookup_and_erase_many(self, keys: list[bytes]) -> list[bool]:
        hits = []
        for key in keys:
            hit = key in self.live
            hits.append(hit)
            if hit:
                self.pending[key] = self.live.pop(key)
        if len(self.pending) > self.consumed_max:
            self.pending.clear()
        return hits

    def flush(self) -> None:
        self.pending.clear()


_cache_ops = st.lists(st.tuples(st.sampled_from(["insert", "erase", "flush", "reopen"]),
                                st.lists(st.integers(0, 15), max_size=6)), max_size=25)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_cache_ops, max_entries=st.integers(1, 6), front_max=st.integers(1, 8),
       consumed_max=st.integers(0, 5))
def test_cache_agrees_with_a_model_through_front_lazy_erasure_and_reopen(
        tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, list[int]]],
        max_entries: int, front_max: int, consumed_max: int) -> None:
    """Inserts, block lookups (hits consumed lazily), flushes and reopens in any order, with a
    tiny in-memory front (it drops keys, so LevelDB answers too) and a tiny bound on pending
    deletions: every answer, count and reopened state equals the model's."""
    import validator.store.proofcache as proofcache

    path = tmp_path_factory.mktemp("pc")
    keys = [h(("m", i)) for i in range(16)]
    model = _CacheModel(max_entries, consumed_max)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(proofcache, "FRONT_MAX", front_max)
        mp.setattr(proofcache, "CONSUMED_MAX", consumed_max)
        cache = _cache(path, max_entries=max_entries)
        try:
            for op_name, picks in ops:
                chosen = [keys[i] for i in picks]
                if op_name == "insert":
                    cache.insert_many(chosen)
                    model.insert_many(chosen)
                elif op_name == "erase":
                    assert cache.lookup_and_erase_many(chosen) == \
                        model.lookup_and_erase_many(chosen)
                elif op_name == "flush":
                    cache.flush()
                    model.flush()
                else:
                    cache.close()
                    model.flush()
                    cache = _cache(path, max_entries=max_entries)
                    assert cache.wipes == 0
                assert len(cache) == len(model.live)
                assert [cache.contains(k) for k in keys] == [k in model.live for k in keys]
        finally:
            cache.close()
        with _cache(path, max_entries=max_entries) as cache:
            assert cache.wipes == 0 and len(cache) == len(model.live)
            assert [cache.contains(k) for k in keys] == [k in model.live for k in keys]


def test_block_lookups_write_nothing_until_a_later_batch(tmp_path: Path) -> None:
    """Consuming hits is memory-only: the records go with the next insert batch (or flush)."""
    with _cache(tmp_path) as cache:
        cache.insert_many([h(1), h(2), h(3)])
        db = cache.db
        before = dict(db.iterator())
        assert cache.lookup_and_erase_many([h(1), h(2), h(9)]) == [True, True, False]
        assert dict(db.iterator()) == before  # no write for the block
        assert len(cache) == 1 and not cache.contains(h(1)) and cache.contains(h(3))
        cache.insert(h(4))  # the next batch carries the deletions
        assert db.get(b"k" + h(1)) is None and db.get(b"k" + h(2)) is None
        assert len(cache) == 2
        cache.lookup_and_erase(h(3))
        assert db.get(b"k" + h(3)) is not None
        cache.flush()
        assert db.get(b"k" + h(3)) is None and len(cache) == 1


def test_cache_eviction_bound_oldest_first(tmp_path: Path) -> None:
    keys = [h(("k", i)) for i in range(40)]
    with _cache(tmp_path, max_entries=10) as cache:
        for i, key in enumerate(keys):
            cache.insert(key)
            assert len(cache) == min(i + 1, 10)
        assert [cache.contains(k) for k in keys] == [False] * 30 + [True] * 10
        assert cache.stats().evictions == 30
        cache.lookup_and_erase(keys[35])
        cache.insert(h("new"))  # room again: nothing evicted
        assert cache.contains(keys[30]) and len(cache) == 10
        cache.insert(h("newer"))
        assert not cache.contains(keys[30]) and cache.contains(keys[31])
    with _cache(tmp_path, max_entries=4) as cache:  # a smaller bound on reopen shrinks it
        assert len(cache) == 4 and cache.wipes == 0
        assert cache.contains(h("newer")) and not cache.contains(keys[33])
    db = plyvel.DB(str(tmp_path / "cache"))
    assert sum(1 for _ in db.iterator(prefix=b"k")) == 4
    assert sum(1 for _ in db.iterator(prefix=b"q")) == 4
    db.close()


def _corrupt_and_reopen(tmp_path: Path, damage: object) -> ProofCache:
    with _cache(tmp_path) as cache:
        for i in range(5):
            cache.insert(h(i))
    damage(tmp_path / "cache")  # type: ignore[operator]
    return _cache(tmp_path)


def _put(path: Path, key: bytes, value: bytes) -> None:
    db = plyvel.DB(str(path))
    db.put(key, value)
    db.close()


def _delete(path: Path, key: bytes) -> None:
    db = plyvel.DB(str(path))
    db.delete(key)
    db.close()


@pytest.mark.parametrize("damage", [
    pytest.param(lambda p: (p / "garbage.txt").write_bytes(b"junk"), id="garbage-file"),
    pytest.param(lambda p: (p / "subdir").mkdir(), id="garbage-dir"),
    pytest.param(lambda p: (p / "CURRENT").write_bytes(b"MANIFEST-999999\n"), id="bad-current"),
    pytest.param(lambda p: [f.write_bytes(os.urandom(f.stat().st_size or 64))
                            for f in p.iterdir() if f.name.startswith("MANIFEST")],
                 id="garbled-manifest"),
    pytest.param(lambda p: _put(p, b"V", b"\x07" + bytes(32)), id="bad-version"),
    pytest.param(lambda p: _put(p, b"N", b"\x00"), id="bad-count-record"),
    pytest.param(lambda p: _put(p, b"N", (9).to_bytes(8, "big") + (5).to_bytes(8, "big")),
                 id="count-mismatch"),
    pytest.param(lambda p: _put(p, b"k" + h(0), b"\x01"), id="unparsable-entry"),
    pytest.param(lambda p: _delete(p, b"q" + (2).to_bytes(8, "big")), id="missing-seq-record"),
    pytest.param(lambda p: _put(p, b"zz", b""), id="unknown-record"),
])
def test_corrupt_cache_is_wiped_and_rebuilt_empty(tmp_path: Path, damage: object) -> None:
    with _corrupt_and_reopen(tmp_path, damage) as cache:
        assert cache.wipes == 1 and cache.last_wipe_reason
        assert len(cache) == 0 and not any(cache.contains(h(i)) for i in range(5))
        cache.insert(h("after"))  # usable afterwards
    with _cache(tmp_path) as cache:
        assert cache.wipes == 0 and cache.contains(h("after")) and len(cache) == 1
        assert all(is_leveldb_file(name) for name in os.listdir(tmp_path / "cache"))


def test_cache_with_another_salt_is_not_trusted(tmp_path: Path) -> None:
    with _cache(tmp_path) as cache:
        cache.insert(h(1))
    with _cache(tmp_path, salt=bytes(32)) as cache:
        assert cache.wipes == 1 and len(cache) == 0


def test_corruption_during_operation_wipes(tmp_path: Path) -> None:
    with _cache(tmp_path) as cache:
        cache.insert(h(1))
        cache.db.put(b"k" + h(2), b"bad")  # a record that cannot be parsed
        assert cache.lookup_and_erase(h(2)) is False
        assert cache.wipes == 1 and len(cache) == 0 and not cache.contains(h(1))


def test_locked_cache_is_reported_not_wiped(tmp_path: Path) -> None:
    with _cache(tmp_path) as cache:
        cache.insert(h(1))
        (tmp_path / "cache" / "garbage").write_bytes(b"x")
        with pytest.raises(DataDirLockedError):
            _cache(tmp_path)
        assert cache.contains(h(1))


# --- cache keys ------------------------------------------------------------------------------

RP_ARGS = dict(proof=b"proof", commitment=b"\x08" + bytes(32), value_generator=b"\x0a" + bytes(32),
               extra_commit=b"\x51", nbits=64, n_gens=256)


def test_rangeproof_key_commits_to_every_input(tmp_path: Path) -> None:
    with _cache(tmp_path) as cache:
        base = cache.rangeproof_key(**RP_ARGS)
        assert base == cache.rangeproof_key(**RP_ARGS)
        changed = {
            "proof": b"proog", "commitment": b"\x09" + bytes(32),
            "value_generator": b"\x0b" + bytes(32), "extra_commit": b"",
            "nbits": 32, "n_gens": 128,
        }
        keys = {cache.rangeproof_key(**{**RP_ARGS, name: value})
                for name, value in changed.items()}
        assert len(keys) == len(changed) and base not in keys
        # Length prefixes: moving bytes between adjacent fields changes the key.
        assert cache.rangeproof_key(**{**RP_ARGS, "proof": b"proof\x51", "extra_commit": b""}) \
            != cache.rangeproof_key(**{**RP_ARGS, "proof": b"proof", "extra_commit": b"\x51"})
    with _cache(tmp_path / "other", salt=bytes(32)) as other:
        assert other.rangeproof_key(**RP_ARGS) != base


def test_surjection_key_commits_to_the_whole_target_list(tmp_path: Path) -> None:
    from ctplugin.pedersen import generator_generate

    gens = [generator_generate(bytes([i]) * 32) for i in range(3)]
    out = generator_generate(b"\x09" * 32)
    with _cache(tmp_path) as cache:
        base = cache.surjection_key(b"proof", out, gens)
        assert base == cache.surjection_key(b"proof", out.serialize(),
                                            [g.serialize() for g in gens])
        variants = [cache.surjection_key(b"proog", out, gens),
                    cache.surjection_key(b"proof", gens[0], gens),
                    cache.surjection_key(b"proof", out, gens[::-1]),
                    cache.surjection_key(b"proof", out, gens[:2]),
                    cache.surjection_key(b"proof", out, [*gens, gens[0]]),
                    cache.surjection_key(b"proof", out, [])]
        assert len(set(variants)) == len(variants) and base not in variants
        # Domain separation: a surjection key never equals a range proof key of similar bytes.
        assert cache_key(SALT, b"a", [b"bc"]) != cache_key(SALT, b"ab", [b"c"])
        with pytest.raises(StoreValueError):
            cache.surjection_key(b"proof", 5, gens)  # type: ignore[arg-type]


def test_balance_key_commits_to_the_transaction_and_every_spent_output(tmp_path: Path) -> None:
    """A balance verdict is bound to the wtxid (every output commitment, issuance and fee) and
    to the exact spent outputs in input order (every input commitment and generator)."""
    with _cache(tmp_path) as cache:
        wtxid, a, b = h("wtxid"), b"\x0a" + bytes(40), b"\x0b" + bytes(40)
        base = cache.balance_key(wtxid, [a, b])
        assert base == cache.balance_key(wtxid, [a, b])
        variants = [cache.balance_key(h("other"), [a, b]), cache.balance_key(wtxid, [b, a]),
                    cache.balance_key(wtxid, [a]), cache.balance_key(wtxid, [a, b, b]),
                    cache.balance_key(wtxid, [a + b"\x00", b]),
                    cache.balance_key(wtxid, [a + b[:1], b[1:]]),  # bytes moved across fields
                    cache.script_key(wtxid, 0)]
        assert len(set(variants)) == len(variants) and base not in variants


def test_block_files_refuse_values_they_cannot_hold(tmp_path: Path) -> None:
    from validator.store import BlockFiles, FileCursor

    with pytest.raises(StoreValueError):
        BlockFiles(str(tmp_path / "a"), b"abc", FileCursor(), FileCursor())
    with pytest.raises(StoreValueError):
        BlockFiles(str(tmp_path / "b"), b"abcd", FileCursor(), FileCursor(), max_file_size=8)
    files = BlockFiles(str(tmp_path / "c"), b"abcd", FileCursor(), FileCursor())
    with pytest.raises(StoreValueError):
        files.undo.append(b"undo", b"short checksum")
