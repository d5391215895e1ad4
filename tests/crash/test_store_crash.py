"""Crash consistency of the chainstate: SIGKILL a writer at random moments, then reopen.

A forked child process (fork keeps the start-up cost at a millisecond) extends a deterministic
synthetic chain forever: each block spends the even-numbered outputs of the block two below it
on the current chain, creates new ones (one of them spent inside the same block), and at every
sixth height it reorganizes (disconnects two blocks, connects their alternative variants); on
reaching ``MAX_HEIGHT`` it disconnects back down to ``MAX_HEIGHT // 2`` (so kills also land in
long runs of disconnects, and checks stay fast). Changes stay in the coins cache and are flushed
every few blocks in tiny batches, so most kills land between flushes or inside one (with
HEAD_BLOCKS on disk); a child that finds an interrupted flush recovers it first (so kills also
land inside a recovery). After each kill the parent checks, on a copy of the directory it
recovers itself if needed, that

- the tip is a block of the synthetic chain and every flush either completed or is recoverable,
- the UTXO set is exactly what an in-memory replay of the chain to that tip produces.

Undo data comes from an oracle (the replay), as the block files provide it in the node.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import SLOW_SCALE
from validator.store import BlockRef, BlockUndo, Chainstate, Outpoint, UtxoEntry, net_changes

NULL = bytes(32)
REORG_EVERY = 6
IN_BLOCK_INDEX = 99  # created and spent inside its own block
MAX_HEIGHT = 160
FLUSH_EVERY = 5
BATCH_BYTES = 300  # a handful of coins per flush batch: most flushes take several batches


def block_hash(height: int, variant: int) -> bytes:
    """A hash that spells out its block: 27 pseudo-random bytes ‖ height ‖ variant."""
    tail = height.to_bytes(4, "little") + bytes([variant])
    return hashlib.sha256(b"crash-block" + tail).digest()[:27] + tail


def block_id(hash_: bytes) -> tuple[int, int]:
    height, variant = int.from_bytes(hash_[27:31], "little"), hash_[31]
    assert block_hash(height, variant) == hash_, "unknown block hash"
    return height, variant


def parent_of(height: int, variant: int) -> tuple[int, int]:
    """The writer's chains are fixed: variant 1 exists at heights 6k+4 and 6k+5 only."""
    if height % REORG_EVERY == REORG_EVERY - 1:
        return height - 1, variant
    return height - 1, 1 if (height - 1) % REORG_EVERY in (4, 5) else 0


def chain_to(hash_: bytes) -> list[tuple[int, int]]:
    block = block_id(hash_)
    chain = [block]
    while chain[-1][0] > 0:
        chain.append(parent_of(*chain[-1]))
    chain.reverse()
    return chain


def block_content(height: int, variant: int, chain: list[tuple[int, int]]
                  ) -> tuple[list[Outpoint], list[tuple[Outpoint, UtxoEntry]]]:
    """(spent, created) of block (height, variant) on top of ``chain`` (genesis first; only
    ``chain[height - 2]`` is read, so any list agreeing on that prefix will do)."""
    txid = hashlib.sha256(b"crash-tx" + block_hash(height, variant)).digest()
    n_out = 1 + (height + variant) % 4
    created = [(Outpoint(txid, i), UtxoEntry(height, i == 0,
                                             hashlib.sha256(txid + bytes([i])).digest()[:i + 3]))
               for i in [*range(n_out), IN_BLOCK_INDEX]]
    spent = [Outpoint(txid, IN_BLOCK_INDEX)]
    if height >= 2:
        old_h, old_v = chain[height - 2]
        old_txid = hashlib.sha256(b"crash-tx" + block_hash(old_h, old_v)).digest()
        spent += [Outpoint(old_txid, i) for i in range(0, 1 + (old_h + old_v) % 4, 2)]
    return spent, created


def replay(chain: list[tuple[int, int]]) -> dict[Outpoint, UtxoEntry]:
    utxos: dict[Outpoint, UtxoEntry] = {}
    for height, variant in chain:
        spent, created = block_content(height, variant, chain)
        utxos.update(created)
        for outpoint in spent:
            del utxos[outpoint]
    return utxos


def undo_of(chain: list[tuple[int, int]]) -> BlockUndo:
    """The undo data of the last block of ``chain`` (what the node's rev files hold)."""
    height, variant = chain[-1]
    before = replay(chain[:-1])
    spent, created = block_content(height, variant, chain)
    spent, created = net_changes(spent, created)
    prev = block_hash(*chain[-2]) if height else NULL
    return BlockUndo(height, prev, tuple((o, before[o]) for o in spent),
                     tuple(o for o, _ in created))


def recover(cs: Chainstate) -> None:
    """Finish an interrupted flush the way the chain manager does, from the oracle."""
    head = cs.interrupted_flush
    assert head is not None
    new = chain_to(head.new.hash)
    old = chain_to(head.old.hash) if head.old is not None else []
    fork = 0
    while fork < min(len(new), len(old)) and new[fork] == old[fork]:
        fork += 1
    rollback = [undo_of(old[:n]) for n in range(len(old), fork, -1)]
    forward = [net_changes(*block_content(*new[n], new)) for n in range(fork, len(new))]
    assert cs.recover(rollback, forward) == head.new


def connect(cs: Chainstate, chain: list[tuple[int, int]], variant: int) -> None:
    height = len(chain)
    spent, created = block_content(height, variant, chain)
    prev = block_hash(*chain[-1]) if chain else NULL
    cs.connect_block(block_hash(height, variant), height, prev, spent, created)
    cs.take_undo(block_hash(height, variant))
    chain.append((height, variant))


def disconnect(cs: Chainstate, chain: list[tuple[int, int]]) -> None:
    cs.disconnect_block(block_hash(*chain[-1]), undo_of(chain))
    chain.pop()


def child_main(path: str, sync: bool, ready_fd: int,
               kill_in_flush: tuple[int, int] | None) -> None:  # pragma: no cover - child
    with Chainstate.open(path, sync=sync, batch_bytes=BATCH_BYTES) as cs:
        if kill_in_flush is not None:
            # SIGKILL ourselves after partial batch b of flush f (1-based), or in the first
            # partial batch after it if that flush had fewer
            flushes = 0
            f, b = kill_in_flush

            def hook(batch: int) -> None:
                nonlocal flushes
                flushes += batch == 1
                if flushes > f or (flushes == f and batch >= b):
                    os.kill(os.getpid(), signal.SIGKILL)

            cs.after_partial_batch = hook
        os.write(ready_fd, b"r")
        if cs.interrupted_flush is not None:
            recover(cs)
        tip = cs.best_block()
        chain = chain_to(tip.hash) if tip is not None else []
        steps = 0
        while True:
            if len(chain) > MAX_HEIGHT:
                while len(chain) > MAX_HEIGHT // 2:
                    disconnect(cs, chain)
            elif chain and chain[-1][0] % REORG_EVERY == REORG_EVERY - 1 and chain[-1][1] == 0:
                for _ in range(2):
                    disconnect(cs, chain)
                connect(cs, chain, 1)
                connect(cs, chain, 1)
            else:
                connect(cs, chain, 0)
            steps += 1
            if steps % FLUSH_EVERY == 0:
                cs.flush()


def check_consistent(path: str) -> tuple[int, bool]:
    """(tip height, whether a flush was interrupted) of the directory, checked on a copy."""
    copy = path + ".check"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(path, copy)
    try:
        with Chainstate.open(copy, batch_bytes=BATCH_BYTES) as cs:
            interrupted = cs.interrupted_flush is not None
            if interrupted:
                recover(cs)
            tip = cs.best_block()
            chain = chain_to(tip.hash) if tip is not None else []
            assert cs.utxo_snapshot() == replay(chain)
            if chain:
                assert tip == BlockRef(block_hash(*chain[-1]), len(chain) - 1)
        with Chainstate.open(copy) as cs:  # the recovery itself was flushed
            assert cs.interrupted_flush is None and cs.utxo_snapshot() == replay(chain)
        return len(chain), interrupted
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def run_kills(path: str, kills: int, seed: int, sync: bool,
              in_flush: bool = False) -> list[tuple[int, bool]]:
    """``in_flush``: the writer kills itself inside a random partial batch of one of its first
    flushes (a recovery's flush included) instead of being killed at a random time."""
    rng = random.Random(seed)
    outcomes = []
    for _ in range(kills):
        plan = (rng.randint(1, 3), rng.randint(1, 4)) if in_flush else None
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the writer; it only ever ends by SIGKILL
            try:
                os.close(read_fd)
                child_main(path, sync, write_fd, plan)
            finally:
                os._exit(1)
        os.close(write_fd)
        status = None
        try:
            assert os.read(read_fd, 1) == b"r", "the writer failed to start"
            if plan is None:
                time.sleep(rng.uniform(0.0, 0.08))
                done, _ = os.waitpid(pid, os.WNOHANG)
                assert done == 0, "the writer died on its own"
            else:  # it kills itself within its first flushes: give it a bounded time
                deadline = time.monotonic() + 60
                while status is None and time.monotonic() < deadline:
                    done, code = os.waitpid(pid, os.WNOHANG)
                    status = code if done else None
                    time.sleep(0.005)
        finally:
            if status is None:
                os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
            os.close(read_fd)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        outcomes.append(check_consistent(path))
    return outcomes


def test_replay_rules_are_self_consistent() -> None:
    """The in-process writer, the undo oracle and the replay agree (so a crash-test failure is
    the store's), through flushes in tiny batches and a reopen."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        with Chainstate.open(tmp, sync=False, batch_bytes=BATCH_BYTES) as cs:
            chain: list[tuple[int, int]] = []
            for step in range(40):
                connect(cs, chain, 0)
                if chain[-1][0] % REORG_EVERY == REORG_EVERY - 1:
                    for _ in range(2):
                        disconnect(cs, chain)
                    connect(cs, chain, 1)
                    connect(cs, chain, 1)
                assert cs.utxo_snapshot() == replay(chain)
                if step % 7 == 0:
                    cs.flush()
            assert chain_to(block_hash(*chain[-1])) == chain
            for _ in range(30):
                disconnect(cs, chain)
                assert cs.utxo_snapshot() == replay(chain)
            cs.flush()
        with Chainstate.open(tmp) as cs:
            assert cs.utxo_snapshot() == replay(chain)


def test_sigkill_at_random_moments(tmp_path: Path) -> None:
    outcomes = run_kills(str(tmp_path / "cs"), kills=24, seed=1, sync=False)
    assert max(h for h, _ in outcomes) > 0


def test_sigkill_with_sync_writes(tmp_path: Path) -> None:
    outcomes = run_kills(str(tmp_path / "cs"), kills=8, seed=2, sync=True)
    assert max(h for h, _ in outcomes) > 0


def test_sigkill_inside_flushes_and_recoveries(tmp_path: Path) -> None:
    """Every run dies inside a flush (HEAD_BLOCKS on disk); the next run recovers it first and
    some of those recoveries are killed inside their own flush."""
    outcomes = run_kills(str(tmp_path / "cs"), kills=16, seed=4, sync=False, in_flush=True)
    assert all(interrupted for _, interrupted in outcomes)
    assert len({h for h, _ in outcomes}) >= 3


@pytest.mark.slow
def test_sigkill_many_times(tmp_path: Path) -> None:
    kills = max(2, int(80 * SLOW_SCALE))
    outcomes = run_kills(str(tmp_path / "cs"), kills=kills, seed=3, sync=False)
    assert max(h for h, _ in outcomes) > 0
    outcomes = run_kills(str(tmp_path / "cs"), kills=kills // 2, seed=5, sync=False,
                         in_flush=True)
    assert all(interrupted for _, interrupted in outcomes)
