"""Crash consistency of the chainstate: SIGKILL a writer at random moments, then reopen.

A forked child process (fork keeps the start-up cost at a millisecond) extends a deterministic
synthetic chain forever: each block spends the even-numbered outputs of the block two below it
on the current chain, creates new ones (one of them spent inside the same block), and at every
sixth height it reorganizes (disconnects two blocks, connects their alternative variants); on
reaching ``MAX_HEIGHT`` it disconnects back down to ``MAX_HEIGHT // 2`` (so kills also land in
long runs of disconnects, and checks stay fast). The parent kills it at random moments and,
after each kill, checks that the reopened chainstate

- walks from its tip back to genesis through undo records: undo data is present for every block
  on the chain and for no other block, and
- holds exactly the UTXO set that an in-memory replay of that chain produces.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import SLOW_SCALE
from validator.store import BlockRef, Chainstate, Outpoint, UtxoEntry

NULL = bytes(32)
REORG_EVERY = 6
IN_BLOCK_INDEX = 99  # created and spent inside its own block
MAX_HEIGHT = 160


def block_hash(height: int, variant: int) -> bytes:
    """A hash that spells out its block: 27 pseudo-random bytes ‖ height ‖ variant."""
    tail = height.to_bytes(4, "little") + bytes([variant])
    return hashlib.sha256(b"crash-block" + tail).digest()[:27] + tail


def block_id(hash_: bytes) -> tuple[int, int]:
    height, variant = int.from_bytes(hash_[27:31], "little"), hash_[31]
    assert block_hash(height, variant) == hash_, "unknown block hash"
    return height, variant


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


def chain_from_tip(cs: Chainstate) -> list[tuple[int, int]]:
    """(height, variant) of every block from genesis to the tip, following undo records."""
    chain: list[tuple[int, int]] = []
    tip = cs.best_block()
    current = None if tip is None else tip.hash
    while current is not None:
        height, variant = block_id(current)
        undo = cs.undo(current)
        assert undo is not None, f"undo data missing for block at height {height}"
        assert undo.height == height
        chain.append((height, variant))
        current = None if height == 0 else undo.prev_hash
    chain.reverse()
    assert [h for h, _ in chain] == list(range(len(chain)))
    return chain


def connect(cs: Chainstate, chain: list[tuple[int, int]], variant: int) -> None:
    height = len(chain)
    spent, created = block_content(height, variant, chain)
    prev = block_hash(*chain[-1]) if chain else NULL
    cs.connect_block(block_hash(height, variant), height, prev, spent, created)
    chain.append((height, variant))


def child_main(path: str, sync: bool, ready_fd: int) -> None:  # pragma: no cover - child
    with Chainstate.open(path, sync=sync) as cs:
        chain = chain_from_tip(cs)
        os.write(ready_fd, b"r")
        while True:
            if len(chain) > MAX_HEIGHT:
                while len(chain) > MAX_HEIGHT // 2:
                    cs.disconnect_tip()
                    chain.pop()
            elif chain and chain[-1][0] % REORG_EVERY == REORG_EVERY - 1 and chain[-1][1] == 0:
                for _ in range(2):
                    cs.disconnect_tip()
                    chain.pop()
                connect(cs, chain, 1)
                connect(cs, chain, 1)
            else:
                connect(cs, chain, 0)


def replay(chain: list[tuple[int, int]]) -> dict[Outpoint, UtxoEntry]:
    utxos: dict[Outpoint, UtxoEntry] = {}
    for height, variant in chain:
        spent, created = block_content(height, variant, chain)
        utxos.update(created)
        for outpoint in spent:
            del utxos[outpoint]
    return utxos


def check_consistent(path: str) -> int:
    with Chainstate.open(path) as cs:
        chain = chain_from_tip(cs)
        assert sorted(cs.undo_block_hashes()) == sorted(block_hash(*b) for b in chain)
        assert cs.utxo_snapshot() == replay(chain)
        if chain:
            assert cs.best_block() == BlockRef(block_hash(*chain[-1]), len(chain) - 1)
        return len(chain)


def run_kills(path: str, kills: int, seed: int, sync: bool) -> list[int]:
    rng = random.Random(seed)
    heights = []
    for _ in range(kills):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the writer; it only ever ends by SIGKILL
            try:
                os.close(read_fd)
                child_main(path, sync, write_fd)
            finally:
                os._exit(1)
        os.close(write_fd)
        try:
            assert os.read(read_fd, 1) == b"r", "the writer failed to start"
            time.sleep(rng.uniform(0.0, 0.08))
            done, _ = os.waitpid(pid, os.WNOHANG)
            assert done == 0, "the writer died on its own"
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_fd)
        heights.append(check_consistent(path))
    return heights


def test_replay_rules_are_self_consistent() -> None:
    """The in-process writer and the replay agree (so a crash-test failure is the store's)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, Chainstate.open(tmp, sync=False) as cs:
        chain: list[tuple[int, int]] = []
        for _ in range(40):
            connect(cs, chain, 0)
            if chain[-1][0] % REORG_EVERY == REORG_EVERY - 1:
                cs.disconnect_tip()
                chain.pop()
                connect(cs, chain, 1)
            assert cs.utxo_snapshot() == replay(chain)
        for _ in range(40):
            cs.disconnect_tip()
            chain.pop()
            assert cs.utxo_snapshot() == replay(chain)
        assert cs.best_block() is None and cs.undo_block_hashes() == []


def test_sigkill_at_random_moments(tmp_path: Path) -> None:
    heights = run_kills(str(tmp_path / "cs"), kills=24, seed=1, sync=False)
    assert max(heights) > 0


def test_sigkill_with_sync_writes(tmp_path: Path) -> None:
    heights = run_kills(str(tmp_path / "cs"), kills=8, seed=2, sync=True)
    assert max(heights) > 0


@pytest.mark.slow
def test_sigkill_many_times(tmp_path: Path) -> None:
    kills = max(1, int(150 * SLOW_SCALE))
    heights = run_kills(str(tmp_path / "cs"), kills=kills, seed=3, sync=False)
    assert max(heights) > 0
