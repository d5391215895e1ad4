"""Fault injection into every store of a data directory (docs/durability.md §7).

A data directory holding a short chain of cheap blocks (``tests.chaintrees``) is damaged the
way a failing disk, a full disk or a power cut would damage it — bit flips and truncations in
every store (chainstate, block index, blk and rev files, proof cache, with LevelDB's data in
its log or compacted into tables), a write that fails at every write site (ENOSPC, EIO, EROFS
through the ``CTPLUGIN_FAULT_WRITE`` seam of ``validator.store.durability``), unsynced writes
dropped store by store — and restarted. Each restart must either

- come back consistent: the tip is a block of the chain (the same tip when nothing
  acknowledged was lost), the UTXO set and its hash equal an independent replay of the chain to
  that tip (``tests.chaintrees.utxo_model``), every active block reads back as written or is an
  error (never other bytes); or
- refuse with a ``CorruptDatabaseError`` naming the damaged store and the recovery command,
  which then recovers the directory to what an independent replay of the surviving blk files
  gives, and a plain restart after it is consistent again.

The wallet database is covered by its own cases (a damaged record refuses the wallet, a power
cut keeps every synced change). Every fault is counted (``TALLY``; printed with ``-s``). The
``slow`` part repeats the random sweeps at ``CTPLUGIN_SLOW_SCALE``.
"""

from __future__ import annotations

import errno
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import plyvel
import pytest

from ctplugin.elements import Block, parse_block
from ctplugin.errors import ValidationError
from regtest.params import CTREGTEST, NETWORK_MAGIC, REGTEST_SEED, select_chain
from regtest.wallet import Wallet
from regtest.wallet.db import Changes, WalletDB, WalletDBError
from tests.chaintrees import TreeBuilder, utxo_model
from tests.conftest import SLOW_SCALE
from validator import (
    BlockFileError,
    CorruptDatabaseError,
    DiskWriteError,
    Node,
    RecordReader,
    StoreFatalError,
    UtxoEntry,
    block_files,
)
from validator.coins import decode_txout, utxo_hash_record
from validator.store import FAULT_ENV, UnwritableDataDirError

CHAIN_LENGTH = 14  # blocks after genesis: the fan-out block and 13 spending blocks
OPTIONS: dict[str, Any] = {"sync": True, "max_unflushed_blocks": 4}
STORES = ("chainstate", "block index", "block files", "undo files", "proof cache")
LAYOUTS = ("log", "table")  # LevelDB data in its write-ahead log, or compacted into tables
TALLY: Counter[str] = Counter()


def scaled(n: int) -> int:
    return max(1, int(n * SLOW_SCALE))


# --- the chain and its data directories ---------------------------------------------------------


def make_chain() -> list[Block]:
    rng = random.Random(23)
    tree = TreeBuilder()
    while len(tree.blocks) < CHAIN_LENGTH:
        tree.add(len(tree.blocks) - 1, "spend", rng)
    return [tb.block for tb in tree.blocks]


CHAIN = make_chain()
RAW = [block.serialize() for block in CHAIN]
HEIGHT_OF = {block.hash: block.header.height for block in CHAIN}


def open_node(datadir: Path, **options: Any) -> Node:
    return Node.open(datadir, select_chain(CTREGTEST), **{**OPTIONS, **options})


def store_files(datadir: Path, store: str) -> list[Path]:
    """The files of one store (LevelDB's LOCK and its text LOG excluded: not data)."""
    if store in ("block files", "undo files"):
        prefix = "blk" if store == "block files" else "rev"
        return sorted((datadir / "blocks").glob(f"{prefix}*.dat"))
    directory = {"chainstate": datadir / "chainstate", "block index": datadir / "blocks" / "index",
                 "proof cache": datadir / "indexes" / "proofcache"}[store]
    return sorted(p for p in directory.iterdir()
                  if p.is_file() and p.name not in ("LOCK", "LOG", "LOG.old"))


def compact(datadir: Path) -> None:
    for path in ("chainstate", "blocks/index", "indexes/proofcache"):
        db = plyvel.DB(str(datadir / path))
        db.compact_range()
        db.close()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Per layout: a directory with the whole chain, and one with only its first 4 blocks."""
    made = {}
    for layout in LAYOUTS:
        for name, count in ((layout, len(CHAIN)), (f"{layout}-short", 4)):
            datadir = tmp_path_factory.mktemp(name) / "node"
            with open_node(datadir) as node:
                for block, raw in zip(CHAIN[:count], RAW[:count], strict=True):
                    assert node.submit_block(raw, block).status == "connected"
            if layout == "table":
                compact(datadir)
            made[name] = datadir
    return made


@pytest.fixture(scope="module", autouse=True)
def report_tally() -> Iterator[None]:
    yield
    print(f"\nfault suite: {sum(v for k, v in TALLY.items() if k.startswith('fault:'))} faults "
          f"injected; outcomes {dict(sorted(TALLY.items()))}")


def copy(source: Path, tmp_path: Path, name: str = "node") -> Path:
    target = tmp_path / name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("LOCK"))
    return target


# --- the two acceptable outcomes ----------------------------------------------------------------


def model_hash(height: int) -> bytes:
    """The UTXO-set hash of an independent replay of the chain to ``height``
    (``Node.utxo_stats``'s definition: every entry in key order)."""
    utxos = utxo_model(CHAIN[:height])
    digest = hashlib.sha256()
    for (txid, n), (h, coinbase, txout) in sorted(
            utxos.items(), key=lambda item: item[0][0] + item[0][1].to_bytes(4, "little")):
        digest.update(utxo_hash_record(txid, n, UtxoEntry(h, coinbase, txout).encode()))
    return digest.digest()


def check_consistent(node: Node) -> int:
    """The node's state is a replay of the chain to its tip (module docstring); its height."""
    tip = node.tip
    height = HEIGHT_OF.get(tip.hash, 0 if tip.hash == select_chain(CTREGTEST).genesis_hash
                           else -1)
    assert height == tip.height, "the tip is not a block of the chain"
    utxos = {(o.txid, o.index): (e.height, e.coinbase, e.txout)
             for o, e in node.data.chainstate.iter_utxos()}
    model = utxo_model(CHAIN[:height])
    assert utxos == model
    stats = node.utxo_stats()
    assert stats.utxo_set_hash == model_hash(height)
    supply: Counter[bytes] = Counter()  # the money: the sum of the unspent coins
    for _, _, txout in model.values():
        out = decode_txout(txout)
        if isinstance(out.value, int):
            supply[out.asset] += out.value
    assert stats.explicit_amounts == dict(supply)
    for h in range(1, height + 1):
        try:
            raw = node.read_block(CHAIN[h - 1].hash)
        except BlockFileError:
            continue  # damaged where nothing checked yet: an error, never other bytes
        block = parse_block(raw)
        assert block.hash == CHAIN[h - 1].hash
        if raw != RAW[h - 1]:  # bytes the hash does not cover: the block's checks fail
            with pytest.raises(ValidationError):
                node.validator.check_block(block, None)
    return height


def check_refusal(exc: StoreFatalError, store: str | None = None) -> None:
    text = str(exc)
    assert text.startswith("Corrupted block database detected: "), text
    assert exc.store in text and exc.recovery in text and "to recover" in text
    assert "-reindex" in exc.recovery
    if store is not None:
        assert exc.store.startswith(store) or store.startswith(exc.store), (store, text)


def restart(datadir: Path) -> tuple[str, CorruptDatabaseError | None, int]:
    """("consistent", None, height) or ("refused", the error, -1)."""
    try:
        node = open_node(datadir)
    except CorruptDatabaseError as exc:
        check_refusal(exc)
        return "refused", exc, -1
    with node:
        try:
            return "consistent", None, check_consistent(node)
        except CorruptDatabaseError as exc:  # found by a read after start-up: never served
            check_refusal(exc)
            return "refused", exc, -1


def replay_height(datadir: Path) -> int:
    """What an independent replay of the blk files gives: the longest prefix of the chain
    whose blocks are all still there, byte for byte."""
    present = set()
    for path in block_files(datadir / "blocks"):
        present |= {record.payload for record in RecordReader(path, NETWORK_MAGIC, strict=False)}
    height = 0
    while height < len(RAW) and RAW[height] in present:
        height += 1
    return height


def recover(datadir: Path, error: CorruptDatabaseError) -> int:
    """Run the recovery the refusal names; the result is the replay's, and stays so."""
    expected = replay_height(datadir)
    chainstate_only = error.recovery == "-reindex-chainstate"
    with open_node(datadir, reindex=not chainstate_only,
                   reindex_chainstate=chainstate_only) as node:
        height = check_consistent(node)
    if not chainstate_only:
        assert height == expected
    else:  # the block files are intact (the index chose it): at most what they hold
        assert height <= expected
    with open_node(datadir) as node:
        assert check_consistent(node) == height
    TALLY["recovered"] += 1
    return height


def judge(datadir: Path, kind: str, *, keeps_tip: bool = True) -> str:
    """Restart after a fault: consistent (at the full tip when ``keeps_tip``) or refused and
    then recovered."""
    TALLY[f"fault:{kind}"] += 1
    outcome, error, height = restart(datadir)
    TALLY[outcome] += 1
    if outcome == "consistent":
        if keeps_tip:
            assert height == len(CHAIN), f"{kind}: a block was lost silently"
        return outcome
    assert error is not None
    recover(datadir, error)
    return outcome


# --- damage -------------------------------------------------------------------------------------


def flip_bit(path: Path, rng: random.Random) -> None:
    data = bytearray(path.read_bytes())
    if not data:
        return
    at = rng.randrange(len(data))
    data[at] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))


def truncate(path: Path, rng: random.Random) -> None:
    size = path.stat().st_size
    if size:
        os.truncate(path, rng.randrange(size))


DAMAGE: dict[str, Callable[[Path, random.Random], None]] = {"bit flip": flip_bit,
                                                            "truncation": truncate}


def damage_cases(count: int) -> list[tuple[str, str, str, int]]:
    return [(damage, store, layout, seed) for damage in DAMAGE for store in STORES
            for layout in LAYOUTS for seed in range(count)]


def inflict(pristine: dict[str, Path], tmp_path: Path, damage: str, store: str, layout: str,
            seed: int) -> Path:
    datadir = copy(pristine[layout], tmp_path)
    rng = random.Random(f"{damage}/{store}/{layout}/{seed}")
    DAMAGE[damage](rng.choice(store_files(datadir, store)), rng)
    return datadir


@pytest.mark.parametrize(("damage", "store", "layout", "seed"), damage_cases(3))
def test_damage_to_a_store_is_survived_or_refused(pristine: dict[str, Path], tmp_path: Path,
                                                  damage: str, store: str, layout: str,
                                                  seed: int) -> None:
    datadir = inflict(pristine, tmp_path, damage, store, layout, seed)
    # A truncated LevelDB log is an older, complete state (batches are atomic in it): blocks
    # accepted since are reconnected from the blk files or, when the index lost them, gone —
    # then the directory is refused and rebuilt, never different from a replay.
    judge(datadir, f"{damage} {store}", keeps_tip=damage == "bit flip")


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(scaled(4)))
def test_damage_sweep(pristine: dict[str, Path], tmp_path: Path, round_: int) -> None:
    rng = random.Random(round_)
    for i in range(12):
        damage, store = rng.choice(list(DAMAGE)), rng.choice(STORES)
        layout = rng.choice(LAYOUTS)
        datadir = inflict(pristine, tmp_path / str(i), damage, store, layout,
                          1000 + 12 * round_ + i)
        judge(datadir, f"{damage} {store}", keeps_tip=damage == "bit flip")


# --- item 2: a flipped bit in a coin is never served -------------------------------------------


def test_flipped_coin_in_the_chainstate_is_never_served(pristine: dict[str, Path],
                                                        tmp_path: Path) -> None:
    """A fan-out coin (height 1, below the start-up check's six blocks) with one bit of its key
    flipped in a compacted chainstate table: reading it is a refusal naming the chainstate and
    -reindex-chainstate, never "no such coin" (which made the node reject a valid spend)."""
    # Compacted here without Snappy: the coins carry random blinding, so a compressed table
    # can encode part of the txid as a back-reference to earlier bytes, and then no byte
    # search finds it (one full run in a few). Opening the log layout recovers its log into
    # a table written with the opener's options.
    datadir = copy(pristine["log"], tmp_path)
    db = plyvel.DB(str(datadir / "chainstate"), compression=None)
    db.compact_range()
    db.close()
    fanout = CHAIN[0].transactions[1].txid
    # The coin's record in a table (where a compaction put it), else in the log: in a table
    # a key keeps only what it does not share with the key before it, so look for the txid's
    # tail; in either place one flipped bit must be a refusal, never a missing coin.
    files = store_files(datadir, "chainstate")
    tables = [p for p in files if p.suffix == ".ldb"] + [p for p in files if p.suffix == ".log"]
    tail = fanout[4:]
    hits = [(p, p.read_bytes().find(tail)) for p in tables]
    path, at = next((p, at) for p, at in hits if at >= 0)
    data = bytearray(path.read_bytes())
    data[at + 1] ^= 0x10
    path.write_bytes(bytes(data))
    TALLY["fault:regression coin bit flip"] += 1
    try:
        node = open_node(datadir)
    except CorruptDatabaseError as exc:
        check_refusal(exc, "chainstate")
    else:
        with node, pytest.raises(CorruptDatabaseError) as caught:
            for n in range(48):
                node.utxo((fanout, n))
        check_refusal(caught.value, "chainstate")
        assert caught.value.recovery == "-reindex-chainstate"
        assert node.data.guard.failure is caught.value  # the node stops writing
    TALLY["refused"] += 1
    with open_node(datadir, reindex_chainstate=True) as node:
        assert check_consistent(node) == len(CHAIN)
    TALLY["recovered"] += 1


# --- item 6: damaged block files are caught -----------------------------------------------------


def test_truncated_block_file_is_refused_and_reindex_recovers(pristine: dict[str, Path],
                                                              tmp_path: Path) -> None:
    datadir = copy(pristine["log"], tmp_path)
    blk = datadir / "blocks" / "blk00000.dat"
    os.truncate(blk, blk.read_bytes().find(RAW[-3]) + 10)  # the last three blocks cut
    TALLY["fault:regression blk truncation"] += 1
    with pytest.raises(CorruptDatabaseError) as caught:
        open_node(datadir)
    check_refusal(caught.value, "block files")
    assert caught.value.recovery == "-reindex"
    TALLY["refused"] += 1
    assert recover(datadir, caught.value) == len(CHAIN) - 3


def test_flipped_header_bit_makes_getblock_an_error(pristine: dict[str, Path],
                                                    tmp_path: Path) -> None:
    """One bit of the stored header of block 2 (below the start-up check): reading that block
    is an error, never a block whose hash is not the one asked for."""
    datadir = copy(pristine["log"], tmp_path)
    blk = datadir / "blocks" / "blk00000.dat"
    data = bytearray(blk.read_bytes())
    at = data.find(RAW[1])
    data[at + 40] ^= 0x04  # inside the previous-block hash of the header
    blk.write_bytes(bytes(data))
    TALLY["fault:regression header bit flip"] += 1
    with open_node(datadir) as node:
        with pytest.raises(BlockFileError):
            node.read_block(CHAIN[1].hash)
        TALLY["consistent"] += 1


def test_check_blocks_zero_checks_every_block(pristine: dict[str, Path], tmp_path: Path) -> None:
    datadir = copy(pristine["log"], tmp_path)
    blk = datadir / "blocks" / "blk00000.dat"
    data = bytearray(blk.read_bytes())
    data[data.find(RAW[1]) + 40] ^= 0x04
    blk.write_bytes(bytes(data))
    for level in range(5):
        with pytest.raises(CorruptDatabaseError) as caught:
            open_node(datadir, check_blocks=0, check_level=level)
        check_refusal(caught.value, "block files")
    with open_node(datadir, check_blocks=6, check_level=4) as node:  # not among the last six
        assert node.checked_blocks == 6


def test_start_up_check_level_three_catches_a_coin_the_block_did_not_make(
        pristine: dict[str, Path], tmp_path: Path) -> None:
    """A coin of the tip block rewritten (a valid record, so only a cross-check can tell):
    level 3 disconnects the tip on a scratch view and finds it; level 2 cannot."""
    datadir = copy(pristine["log"], tmp_path)
    tip = CHAIN[-1]
    db = plyvel.DB(str(datadir / "chainstate"))
    key = b"c" + tip.transactions[1].txid + (0).to_bytes(4, "little")
    value = db.get(key)
    assert value is not None
    db.put(key, value[:-1] + bytes([value[-1] ^ 1]))
    db.close()
    with open_node(datadir, check_level=2):
        pass
    with pytest.raises(CorruptDatabaseError) as caught:
        open_node(datadir, check_level=3)
    check_refusal(caught.value, "chainstate")
    TALLY["fault:regression coin rewritten"] += 1
    TALLY["refused"] += 1
    recover(datadir, caught.value)


# --- item 3: a failed write stops the node, and the next start is consistent --------------------


def fill_until_failure(datadir: Path, monkeypatch: pytest.MonkeyPatch, fault: str
                       ) -> tuple[int, StoreFatalError | None]:
    """Open with the fault armed and submit the rest of the chain until a write fails;
    (highest acknowledged height, the failure). Flushes are split into small batches (more
    chainstate writes, the HEAD_BLOCKS protocol) and a proof-cache key is inserted before each
    block, as mempool acceptance does (the cheap blocks carry no proofs)."""
    monkeypatch.setenv(FAULT_ENV, fault)
    acknowledged = 0
    failure: StoreFatalError | None = None
    try:
        node = open_node(datadir, batch_bytes=400)
    except DiskWriteError as exc:
        return acknowledged, exc
    finally:
        monkeypatch.delenv(FAULT_ENV)
    try:
        acknowledged = node.tip.height
        for block, raw in zip(CHAIN, RAW, strict=True):
            if block.header.height <= node.tip.height:
                continue
            try:
                node.data.proof_cache.insert(hashlib.sha256(raw).digest())
                result = node.submit_block(raw, block)
            except DiskWriteError as exc:
                failure = exc
                break
            assert result.status == "connected"
            acknowledged = block.header.height
        if failure is not None:
            # nothing more is written: the next write is refused with the same error
            with pytest.raises(StoreFatalError) as again:
                node.submit_block(RAW[-1], CHAIN[-1])
            assert again.value is failure
    finally:
        try:
            node.close()
        except DiskWriteError as exc:  # the final flush hit the full disk
            failure = exc
    return acknowledged, failure


def test_transient_full_disk_under_block_writes_never_bricks_the_directory(
        pristine: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk is full for two writes of block-file records, then has room again (the real
    ``pwritev``, not the seam). Before the guard the node went on — later blocks "invalid" or
    "duplicate", and the next start refused for good ("has no undo data"); now the first
    failure stops every write and the restart is consistent with everything acknowledged."""
    datadir = copy(pristine["log-short"], tmp_path)
    real = os.pwritev
    calls = 0

    def full_disk(fd: int, parts: list[bytes], offset: int) -> int:
        nonlocal calls
        calls += 1
        if calls in (2, 3):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, parts, offset)

    monkeypatch.setattr(os, "pwritev", full_disk)
    acknowledged = 4
    with open_node(datadir) as node:
        for block, raw in zip(CHAIN[4:], RAW[4:], strict=True):
            try:
                assert node.submit_block(raw, block).status == "connected"
            except DiskWriteError as exc:
                assert str(exc).startswith("Disk space is too low!")
                break
            acknowledged = block.header.height
        with pytest.raises(DiskWriteError):
            node.submit_block(RAW[-1], CHAIN[-1])
    monkeypatch.setattr(os, "pwritev", real)
    TALLY["fault:regression transient full disk"] += 1
    with open_node(datadir) as node:
        assert check_consistent(node) >= acknowledged
    TALLY["consistent"] += 1


WRITE_FAULTS = [f"{site}:{n}" for site in ("block files", "undo files", "block index",
                                           "chainstate", "proof cache")
                for n in (1, 2, 3, 5, 8)] + ["any:4:EIO", "any:7:EROFS", "block files:3:EIO"]


@pytest.mark.parametrize("fault", WRITE_FAULTS)
def test_failed_write_stops_the_node_and_the_next_start_is_consistent(
        pristine: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        fault: str) -> None:
    datadir = copy(pristine["log-short"], tmp_path)
    acknowledged, failure = fill_until_failure(datadir, monkeypatch, fault)
    TALLY["fault:write " + fault.split(":")[0]] += 1
    assert failure is not None, "the fault was never reached"
    text = str(failure)
    if ":" in fault[fault.index(":") + 1:]:
        assert text.startswith("A fatal internal error occurred"), text
    else:
        assert text.startswith("Disk space is too low!"), text
    assert failure.store in text
    with open_node(datadir) as node:  # the disk has room again: never bricked
        height = check_consistent(node)
    assert height >= acknowledged, "an acknowledged block was lost"
    TALLY["consistent"] += 1


# --- power loss: unsynced writes dropped --------------------------------------------------------


GROUPS = {"chainstate": ["chainstate"], "block index": ["blocks/index"],
          "block files": ["blocks/blk*.dat"], "undo files": ["blocks/rev*.dat"],
          "proof cache": ["indexes/proofcache"]}


def restore_group(datadir: Path, image: Path, group: str) -> None:
    for pattern in GROUPS[group]:
        if "*" in pattern:
            for path in datadir.glob(pattern):
                path.unlink()
            for path in image.glob(pattern):
                shutil.copy2(path, datadir / path.relative_to(image))
        else:
            shutil.rmtree(datadir / pattern)
            shutil.copytree(image / pattern, datadir / pattern,
                            ignore=shutil.ignore_patterns("LOCK"))


@pytest.mark.parametrize("seed", range(6))
def test_power_cut_drops_unsynced_writes_store_by_store(pristine: dict[str, Path],
                                                        tmp_path: Path, seed: int) -> None:
    """Flush (everything synced), copy the directory: what a power cut must keep. Accept more
    blocks without a flush (their writes unsynced), stop without closing, then put back the
    synced image of a random subset of the stores (the others keep their unsynced writes: the
    disk may have written any of them). The restart is consistent, at least at the flushed
    tip."""
    rng = random.Random(seed)
    datadir = copy(pristine["log-short"], tmp_path)
    image = tmp_path / "image"
    node = open_node(datadir, max_unflushed_blocks=1000, flush_interval=1e9)
    node.flush()
    synced = node.tip.height
    shutil.copytree(datadir, image, ignore=shutil.ignore_patterns("LOCK"))
    for block, raw in zip(CHAIN[synced:], RAW[synced:], strict=True):
        assert node.submit_block(raw, block).status == "connected"
    node.data.close()  # the power cut: no flush, no close of the node
    lost = [group for group in GROUPS if rng.random() < 0.5] or [rng.choice(list(GROUPS))]
    for group in lost:
        restore_group(datadir, image, group)
    TALLY["fault:power cut"] += 1
    with open_node(datadir) as node:
        assert check_consistent(node) >= synced
    TALLY["consistent"] += 1


# --- the wallet database (items 4 and 7) --------------------------------------------------------


class PowerLossDB:
    """A plyvel database that keeps, after every synced write, a copy of its directory: the
    image a power cut leaves (unsynced writes are the ones it may drop)."""

    def __init__(self, db: plyvel.DB, path: str, image: Path) -> None:
        self._db = db
        self._path = path
        self._image = image
        self.synced_writes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    def durable(self) -> None:
        self.synced_writes += 1
        shutil.rmtree(self._image, ignore_errors=True)
        shutil.copytree(self._path, self._image, ignore=shutil.ignore_patterns("LOCK"))

    def put(self, key: bytes, value: bytes, *, sync: bool = False) -> None:
        self._db.put(key, value, sync=sync)
        if sync:
            self.durable()

    def write_batch(self, *, sync: bool = False, **options: Any) -> _Batch:
        return _Batch(self, self._db.write_batch(sync=sync, **options), sync,
                      bool(options.get("transaction")))


class _Batch:
    def __init__(self, owner: PowerLossDB, batch: Any, sync: bool, transaction: bool) -> None:
        self._owner, self._batch, self._sync = owner, batch, sync
        self._transaction = transaction

    def put(self, key: bytes, value: bytes) -> None:
        self._batch.put(key, value)

    def delete(self, key: bytes) -> None:
        self._batch.delete(key)

    def write(self) -> None:
        self._batch.write()
        if self._sync:
            self._owner.durable()

    def __enter__(self) -> _Batch:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        if kind is None or not self._transaction:  # plyvel's rule
            self.write()


def test_wallet_changes_to_keys_and_coins_survive_a_power_cut(tmp_path: Path) -> None:
    """Key counters handed out (25 change keys: beyond a 20-key lookahead), a label and a
    locked coin, each committed without asking for sync, as the wallet commits most batches:
    every one is synced, so the power cut's image has them all."""
    path = str(tmp_path / "wallet")
    image = tmp_path / "image"
    wallet = Wallet(REGTEST_SEED)
    db = WalletDB.open(path, create=True)
    db.commit(Changes(state=wallet.state()), sync=True)
    recorder = PowerLossDB(db.db, path, image)
    db.db = recorder  # type: ignore[assignment]
    for _ in range(25):
        wallet.new_address(change=True)
        db.commit(Changes(state=wallet.state()))
    db.commit(Changes(labels={b"\x51": "kept"}, locked=[(bytes(32), 1)]))
    db.commit(Changes(best_block=(bytes(32), 7)))  # moving the best block alone: not synced
    assert recorder.synced_writes == 26
    expected = wallet.state()
    db.close()
    shutil.rmtree(path)
    shutil.copytree(image, path)  # the power cut
    TALLY["fault:wallet power cut"] += 1
    with WalletDB.open(path, create=False) as reopened:
        state, _ = reopened.load_state()
        assert state == expected
        assert reopened.labels() == {b"\x51": "kept"}
        assert reopened.locked() == {(bytes(32), 1)}
    TALLY["consistent"] += 1


def test_wallet_batch_that_fails_half_way_writes_nothing(tmp_path: Path) -> None:
    """An error while a batch is being filled (here a value that is not bytes, after a label)
    leaves the database as it was: never half a change."""
    path = str(tmp_path / "wallet")
    db = WalletDB.open(path, create=True)
    db.commit(Changes(state=Wallet(REGTEST_SEED).state()), sync=True)
    with pytest.raises(TypeError):
        db.commit(Changes(labels={b"\x51": "half"}, extra={b"d1": 5}))  # type: ignore[dict-item]
    assert db.labels() == {}
    db.close()


def test_damaged_wallet_record_refuses_the_wallet(tmp_path: Path) -> None:
    """One bit flipped inside a record of the wallet's log: the wallet is refused with a
    message naming its database, never loaded without the record."""
    path = tmp_path / "wallet"
    db = WalletDB.open(str(path), create=True)
    db.commit(Changes(state=Wallet(REGTEST_SEED).state()), sync=True)
    label = "L" * 200
    db.commit(Changes(labels={b"\x51": label}))
    db.close()
    log = next(p for p in path.iterdir() if p.suffix == ".log")
    data = bytearray(log.read_bytes())
    data[data.find(label.encode()) + 100] ^= 0x01
    log.write_bytes(bytes(data))
    TALLY["fault:wallet bit flip"] += 1
    with pytest.raises(WalletDBError, match=r"wallet database .* (is damaged|is corrupt)"), \
            WalletDB.open(str(path), create=False) as reopened:
        reopened.labels()
    TALLY["refused"] += 1


@pytest.mark.parametrize("seed", range(8))
def test_wallet_bit_flips_load_identically_or_refuse(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "wallet"
    wallet = Wallet(REGTEST_SEED)
    db = WalletDB.open(str(path), create=True)
    db.commit(Changes(state=wallet.state()), sync=True)
    labels = {bytes([0x51, i]): f"label {i}" for i in range(30)}
    db.commit(Changes(labels=labels, locked=[(bytes([i]) * 32, i) for i in range(10)]))
    db.close()
    if seed % 2:  # compacted into a table
        raw = plyvel.DB(str(path))
        raw.compact_range()
        raw.close()
    files = [p for p in path.iterdir() if p.name not in ("LOCK", "LOG", "LOG.old")]
    flip_bit(rng.choice(files), rng)
    TALLY["fault:wallet bit flip"] += 1
    try:
        with WalletDB.open(str(path), create=False) as reopened:
            got = (reopened.load_state()[0], reopened.labels(), reopened.locked())
    except WalletDBError as exc:
        assert str(path) in str(exc)
        TALLY["refused"] += 1
        return
    assert got == (wallet.state(), labels, {(bytes([i]) * 32, i) for i in range(10)})
    TALLY["consistent"] += 1


def test_fault_seam_rejects_a_malformed_plan(pristine: dict[str, Path], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from validator import StoreValueError
    monkeypatch.setenv(FAULT_ENV, "disk:1")
    with pytest.raises(StoreValueError, match=FAULT_ENV):
        open_node(copy(pristine["log-short"], tmp_path))



def test_failed_wallet_write_stops_the_wallet_and_keeps_the_last_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "wallet")
    wallet = Wallet(REGTEST_SEED)
    monkeypatch.setenv(FAULT_ENV, "wallet:2")
    db = WalletDB.open(path, create=True)
    monkeypatch.delenv(FAULT_ENV)
    db.commit(Changes(state=wallet.state()), sync=True)
    kept = wallet.state()
    wallet.new_address()
    with pytest.raises(DiskWriteError, match=r"Disk space is too low!.*wallet"):
        db.commit(Changes(state=wallet.state()))
    with pytest.raises(DiskWriteError):  # nothing more is written
        db.commit(Changes(labels={b"\x51": "late"}))
    db.close()
    TALLY["fault:write wallet"] += 1
    with WalletDB.open(path, create=False) as reopened:
        assert reopened.load_state()[0] == kept
        assert reopened.labels() == {}
    TALLY["consistent"] += 1


# --- -reindex itself ----------------------------------------------------------------------------


def test_reindex_cut_short_is_resumed_at_the_next_start(pristine: dict[str, Path],
                                                        tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A reindex stopped half-way (here: an exception after five blocks) leaves
    ``blocks.reindex/``; the next start, without the option, starts it again from those files
    and ends where a full reindex ends."""
    datadir = copy(pristine["log"], tmp_path)
    submit = Node.submit_block
    count = 0

    def interrupted(self: Node, raw: bytes, block: Block | None = None) -> Any:
        nonlocal count
        count += 1
        if count > 5:
            raise KeyboardInterrupt
        return submit(self, raw, block)

    monkeypatch.setattr(Node, "submit_block", interrupted)
    with pytest.raises(KeyboardInterrupt):
        open_node(datadir, reindex=True)
    monkeypatch.setattr(Node, "submit_block", submit)
    assert (datadir / "blocks.reindex").is_dir()
    with open_node(datadir) as node:
        assert node.reindexed == len(CHAIN)
        assert check_consistent(node) == len(CHAIN)
    assert not (datadir / "blocks.reindex").exists()
    assert not (datadir / "blocks.reindex.done").exists()
    with open_node(datadir) as node:
        assert node.reindexed == 0 and check_consistent(node) == len(CHAIN)


def test_reindex_of_an_intact_directory_gives_the_same_state(pristine: dict[str, Path],
                                                             tmp_path: Path) -> None:
    datadir = copy(pristine["table"], tmp_path)
    with open_node(datadir) as node:
        before = node.utxo_stats().utxo_set_hash
    with open_node(datadir, reindex=True) as node:
        assert node.reindexed == len(CHAIN)
        assert node.utxo_stats().utxo_set_hash == before == model_hash(len(CHAIN))
    with open_node(datadir, reindex_chainstate=True) as node:
        assert node.utxo_stats().utxo_set_hash == before


# --- read-only data directories -----------------------------------------------------------------


def chattr(*args: str | Path) -> bool:
    """``chattr`` (the immutable attribute stops even root from writing); False if the file
    system or the container does not allow it."""
    result = subprocess.run(["chattr", *map(str, args)], capture_output=True, check=False)
    return result.returncode == 0


READ_ONLY = {"everything": "", "chainstate": "chainstate", "block index": "blocks/index",
             "blocks directory": "blocks", "proof cache": "indexes/proofcache"}


@pytest.mark.parametrize("which", list(READ_ONLY))
def test_read_only_data_directory_refuses_or_stops_and_nothing_changes(
        pristine: dict[str, Path], tmp_path: Path, which: str) -> None:
    datadir = copy(pristine["log-short"], tmp_path)
    where = READ_ONLY[which]
    options: list[str | Path] = ["-R"] if not where else []  # everything: every file too
    target = datadir / where
    if shutil.which("chattr") is None or not chattr(*options, "+i", target):
        pytest.skip("no immutable attribute here (chattr)")
    TALLY["fault:read-only " + which] += 1
    acknowledged = 4
    try:
        try:
            node = open_node(datadir)
        except UnwritableDataDirError as exc:
            assert str(exc).startswith("Cannot write to data directory '")
            assert "check permissions" in str(exc)
            TALLY["refused"] += 1
        else:
            with node:
                for block, raw in zip(CHAIN[4:], RAW[4:], strict=True):
                    try:
                        node.submit_block(raw, block)
                    except DiskWriteError as exc:
                        assert str(exc).startswith("A fatal internal error occurred")
                        break
                    acknowledged = block.header.height
            TALLY["stopped"] += 1
    finally:
        chattr(*options, "-i", target)
    with open_node(datadir) as node:
        assert check_consistent(node) >= acknowledged
    TALLY["consistent"] += 1


REINDEX_WORKER = """
import sys
from pathlib import Path
from tests.crash.test_faults import open_node
print("ready", flush=True)
open_node(Path(sys.argv[1]), reindex=True).close()
print("done", flush=True)
"""


@pytest.mark.parametrize("seed", range(3))
def test_sigkill_during_reindex_then_the_next_start_finishes_it(pristine: dict[str, Path],
                                                                tmp_path: Path,
                                                                seed: int) -> None:
    """A reindex killed at random moments, several times over (renames, deletions, block
    submission, flushes): the next plain start resumes it and ends at the full chain."""
    rng = random.Random(seed)
    datadir = copy(pristine["log"], tmp_path)
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))
    # One reindex left to finish says how long one takes on this machine now, so the kills
    # below land inside one however fast or loaded the machine is.
    whole = subprocess.Popen([sys.executable, "-c", REINDEX_WORKER, str(datadir)], cwd=root,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert whole.stdout is not None
    assert whole.stdout.readline() == b"ready\n"
    started = time.monotonic()
    assert whole.stdout.readline() == b"done\n", whole.communicate()[1].decode()[-2000:]
    duration = time.monotonic() - started
    whole.communicate()
    inside = 0
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, "-c", REINDEX_WORKER, str(datadir)], cwd=root,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0, 0.9 * duration))
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate()
        assert proc.returncode in (0, -signal.SIGKILL), err.decode()[-2000:]
        if b"done" not in out:
            inside += 1
            TALLY["fault:sigkill during reindex"] += 1
    assert inside, "no kill landed inside a reindex"
    with open_node(datadir) as node:
        assert check_consistent(node) == len(CHAIN)
    assert not (datadir / "blocks.reindex").exists()
    TALLY["consistent"] += 1


def test_damaged_undo_record_is_an_error_for_queries_and_fatal_for_a_disconnect(
        pristine: dict[str, Path], tmp_path: Path) -> None:
    """The undo record of block 3 (below the start-up check) with one bit flipped: getblock's
    prevouts are an error and the node goes on; disconnecting through it (invalidateblock)
    stops the node with the undo store named, and the directory is then refused or
    consistent, and recovered by -reindex."""
    datadir = copy(pristine["log"], tmp_path)
    with open_node(datadir) as node:
        pos = node.chain.entries[CHAIN[2].hash].undo_pos
    assert pos is not None
    rev = datadir / "blocks" / f"rev{pos.file:05d}.dat"
    data = bytearray(rev.read_bytes())
    data[pos.offset + 40] ^= 0x08
    rev.write_bytes(bytes(data))
    TALLY["fault:undo bit flip, then a disconnect"] += 1
    with open_node(datadir) as node:
        with pytest.raises(BlockFileError, match="Can't read undo data from disk"):
            node.block_spent_outputs(CHAIN[2].hash)
        assert node.data.guard.failure is None
        with pytest.raises(CorruptDatabaseError) as caught:
            node.invalidate_block(CHAIN[1].hash)
        check_refusal(caught.value, "undo data")
        assert caught.value.recovery == "-reindex"
        assert node.data.guard.failure is caught.value  # the close below writes nothing
    TALLY["refused"] += 1
    recover(datadir, caught.value)


def test_wallet_power_cut_after_many_spends_keeps_the_balance(tmp_path: Path) -> None:
    """The wallet spends 25 times, each change to a new change key (more than a 20-key
    lookahead), every spend confirmed; then a power cut drops what was not synced and the
    wallet catches up from the blocks again. Its balance is what it was: before every batch
    changing keys or coins was synced, the change keys past the lookahead were lost and the
    balance read 0."""
    from ctplugin.elements.consensus import COIN
    from regtest.builder import make_block
    from regtest.wallet import Payment
    from regtest.wallet.node_wallet import NodeWallet

    params = select_chain(CTREGTEST)
    path = str(tmp_path / "wallet")
    image = tmp_path / "image"
    wallet = NodeWallet.create(path, "", REGTEST_SEED, params)
    recorder = PowerLossDB(wallet.db.db, path, image)
    wallet.db.db = recorder  # type: ignore[assignment]
    wallet.db.commit(Changes(state=wallet.wallet.state()), sync=True)  # the created wallet
    blocks = [params.genesis]
    wallet.block_connected(params.genesis, 0)
    elsewhere = Wallet(b"power cut receiver").new_address()
    for _ in range(25):
        height = len(blocks)
        built = wallet.wallet.build([Payment(COIN, elsewhere)], fee=1000, height=height)
        wallet.add_own(built)
        block = make_block(blocks[-1].hash, height, blocks[-1].header.time + 60, [built.tx],
                           b"\x51")
        wallet.transaction_removed(built.tx, "block")
        wallet.block_connected(block, height)
        blocks.append(block)
    before = wallet.ledger.balances(len(blocks) - 1).trusted
    wallet.db.db = recorder._db  # type: ignore[assignment]
    wallet.close()
    shutil.rmtree(path)
    shutil.copytree(image, path)  # the power cut: only synced writes are left
    TALLY["fault:wallet power cut after spends"] += 1
    reopened = NodeWallet.load(path, "", params)
    try:
        for height, block in enumerate(blocks):
            if height > reopened.tip_height:
                reopened.block_connected(block, height)
        assert reopened.ledger.balances(len(blocks) - 1).trusted == before
    finally:
        reopened.close()
    TALLY["consistent"] += 1
