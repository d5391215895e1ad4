"""Crash safety of the chain manager: SIGKILL a node process while it accepts a tree of blocks
(forks, reorganisations, invalid blocks and fall-backs, invalidate / reconsider churn) with a
tiny flush window and multi-batch flushes, restart it, repeat; also kill it inside a flush and
inside the replay that a restart runs. After every kill the reopened data directory must

- have lost nothing: every block the worker reported as submitted is in the block index with
  its data;
- be at the best block of its own index: the most blocks among the valid, connectable,
  not-invalidated entries, first seen winning ties (the model decides validity);
- hold exactly the UTXO set of a replay of the chain to that tip.

The worker is this file run as a script: ``python tests/crash/test_chain_crash.py DATADIR TREE SEED
MODE`` where TREE is a chain file of the tree's blocks in submission order and MODE is
``run`` (submit + churn until killed), ``flush:N:B`` (kill itself after partial batch B of its
N-th flush), ``leave:U`` (flush at height 1, reconnect the chain, kill itself with at least U
connected blocks unflushed, so the next start has blocks to replay) or ``replay:K`` (kill itself
at the K-th block its start-up replay connects).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # when run as the worker script
    sys.path.insert(0, str(REPO))

from regtest.params import CTREGTEST, NETWORK_MAGIC, select_chain  # noqa: E402
from tests.chaintrees import TreeBuilder, utxo_model  # noqa: E402
from tests.conftest import SLOW_SCALE  # noqa: E402
from validator import Node, read_chain, write_chain  # noqa: E402
from validator.chain import Chain, FlushPolicy  # noqa: E402
from validator.store import FAILED_MASK  # noqa: E402

OPTIONS = {"sync": False, "max_unflushed_blocks": 3, "batch_bytes": 400}


def open_node(datadir: str | Path) -> Node:
    return Node.open(datadir, select_chain(CTREGTEST), **OPTIONS)  # type: ignore[arg-type]


def worker(datadir: str, tree_file: str, seed: int, mode: str) -> None:  # pragma: no cover
    rng = random.Random(seed)
    if mode.startswith("replay:"):
        target = int(mode.split(":")[1])
        connect = Chain._connect
        count = 0

        def counting(self: Chain, *args: object) -> bool:
            nonlocal count
            count += 1
            if count >= target:
                os.kill(os.getpid(), signal.SIGKILL)
            return connect(self, *args)  # type: ignore[arg-type]

        Chain._connect = counting  # type: ignore[method-assign]
    node = open_node(datadir)
    if mode.startswith("flush:"):
        _, f, b = mode.split(":")
        flushes = 0

        def hook(batch: int) -> None:
            nonlocal flushes
            flushes += batch == 1
            if flushes > int(f) or (flushes == int(f) and batch >= int(b)):
                os.kill(os.getpid(), signal.SIGKILL)

        node.data.chainstate.after_partial_batch = hook
    print("ready", flush=True)
    blocks = list(read_chain(tree_file, NETWORK_MAGIC))
    leave = int(mode.split(":")[1]) if mode.startswith("leave:") else None
    for _ in range(3 if mode != "run" else 1_000_000):
        for raw in blocks:
            result = node.submit_block(raw)
            print(f"submitted {result.hash.hex()} {result.status}", flush=True)
            if rng.random() < 0.15 and node.tip.height > 2:
                victim = node.block_hash(rng.randint(2, node.tip.height))
                assert victim is not None
                node.invalidate_block(victim)
                print(f"invalidated {victim.hex()}", flush=True)
                if rng.random() < 0.8:
                    node.reconsider_block(victim)
                    print(f"reconsidered {victim.hex()}", flush=True)
        if leave is not None and node.tip.height > 2:
            # leave the restart something to replay: flush at height 1, reconnect the chain
            # (its index entries are written, the chainstate is not flushed), die
            node.chain.policy = FlushPolicy(interval=1e9, max_unflushed_blocks=10**9)
            victim = node.block_hash(2)
            assert victim is not None
            node.invalidate_block(victim)
            node.flush()
            node.reconsider_block(victim)
            if node.stats().unflushed_blocks >= leave:
                os.kill(os.getpid(), signal.SIGKILL)
        # again from the start (duplicates), with every invalidation undone
        fanout = node.block_hash(1)
        assert fanout is not None
        node.reconsider_block(fanout)
    print("fallback", flush=True)  # the planned self-kill did not come: die anyway
    os.kill(os.getpid(), signal.SIGKILL)


def expected_best(node: Node, tree: TreeBuilder) -> tuple[int, bytes]:
    """(height, hash) of the best entry of the node's own index, validity from the model."""
    valid = {tb.hash: tb.valid for tb in tree.blocks}
    chain = node.chain
    best = (0, 0, select_chain(CTREGTEST).genesis_hash)
    for entry in chain.entries.values():
        path = list(chain._ancestry(entry))
        if entry.height == 0 or not all(valid.get(e.hash, e.height == 0) for e in path):
            continue
        if any(e.status & FAILED_MASK and valid.get(e.hash, False) for e in path):
            continue  # invalidated by the worker (a model-invalid block fails by itself)
        if not all(e.has_data for e in path):
            continue
        key = (entry.height, -entry.seq, entry.hash)
        if key[:2] > best[:2]:
            best = key
    return best[0], best[2]


def check(datadir: Path, tree: TreeBuilder, reported: set[bytes]) -> int:
    """Reopen a copy (the next worker must find the directory as the kill left it)."""
    copy = datadir.with_name(datadir.name + ".check")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(datadir, copy)
    try:
        return _check(copy, tree, reported)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _check(datadir: Path, tree: TreeBuilder, reported: set[bytes]) -> int:
    by_hash = {tb.hash: i for i, tb in enumerate(tree.blocks)}
    with open_node(datadir) as node:
        for block_hash in reported:
            entry = node.chain.entries.get(block_hash)
            assert entry is not None, "a submitted block was lost"
            assert entry.has_data or entry.status & FAILED_MASK or \
                not tree.blocks[by_hash[block_hash]].valid
        height, best = expected_best(node, tree)
        assert (node.tip.height, node.tip.hash) == (height, best)
        chain = [] if height == 0 else [tb.block for tb in tree.branch(by_hash[best])]
        utxos = {(o.txid, o.index): (e.height, e.coinbase, e.txout)
                 for o, e in node.data.chainstate.iter_utxos()}
        assert utxos == utxo_model(chain)
        return height


def run(datadir: Path, tree_file: Path, tree: TreeBuilder, modes: list[str], seed: int
        ) -> tuple[list[int], int]:
    """Heights after each kill, and how many runs died before they were ready (in start-up
    recovery or replay)."""
    rng = random.Random(seed)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    heights = []
    early = 0
    reported: set[bytes] = set()
    for i, mode in enumerate(modes):
        proc = subprocess.Popen(
            [sys.executable, __file__, str(datadir), str(tree_file), str(seed + i), mode],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert proc.stdout is not None
            if mode == "run":
                line = proc.stdout.readline()
                assert line == b"ready\n", (line, proc.stderr.read() if proc.stderr else b"")
                time.sleep(rng.uniform(0.0, 0.6))
                proc.send_signal(signal.SIGKILL)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == -signal.SIGKILL, err.decode()[-3000:]
        early += mode.startswith("replay:") and not out.startswith(b"ready")
        for line in out.decode().splitlines():
            if line.startswith("submitted ") and \
                    line.split()[2] not in ("invalid", "duplicate-invalid"):
                reported.add(bytes.fromhex(line.split()[1]))
        heights.append(check(datadir, tree, reported))
    return heights, early


@pytest.fixture(scope="module")
def tree_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, TreeBuilder]:
    tree = TreeBuilder.random(60, seed=11, p_invalid=0.1)
    path = tmp_path_factory.mktemp("tree") / "tree.dat"
    write_chain(path, [tb.block for tb in tree.blocks], NETWORK_MAGIC)  # parents before children
    return path, tree


def test_sigkill_while_following_a_tree_of_blocks(tree_file: tuple[Path, TreeBuilder],
                                                  tmp_path: Path) -> None:
    path, tree = tree_file
    heights, _ = run(tmp_path / "node", path, tree, ["run"] * 6, seed=1)
    assert max(heights) > 2


def test_sigkill_inside_flushes_and_inside_replays(tree_file: tuple[Path, TreeBuilder],
                                                   tmp_path: Path) -> None:
    path, tree = tree_file
    modes = ["leave:2", "replay:1", "flush:2:2", "leave:2", "replay:2", "flush:1:3", "run",
             "leave:1", "replay:1"]
    heights, early = run(tmp_path / "node", path, tree, modes, seed=2)
    assert max(heights) > 2
    assert early == 3  # every start-up replay after a "leave" was killed inside it


@pytest.mark.slow
def test_sigkill_many_times_at_random_points(tree_file: tuple[Path, TreeBuilder],
                                             tmp_path: Path) -> None:
    path, tree = tree_file
    rng = random.Random(3)
    n = max(4, int(12 * SLOW_SCALE))
    modes = [rng.choice(["run", "run", f"flush:{rng.randint(1, 4)}:{rng.randint(1, 3)}",
                         f"replay:{rng.randint(1, 3)}"]) for _ in range(n)]
    heights, _ = run(tmp_path / "node", path, tree, modes, seed=3)
    assert len(set(heights)) >= 2


if __name__ == "__main__":
    worker(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
