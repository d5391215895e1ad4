"""Node-level crash test: SIGKILL a process connecting (and sometimes disconnecting, through
invalidate / reconsider) real confidential regtest blocks at random moments, restart it many
times, and check after every kill that the data directory reopens at a consistent tip whose UTXO
set equals a clean replay's at that height (docs/design.md "Chainstate": the coins cache is flushed
every two blocks in small batches with the HEAD_BLOCKS protocol; a restart finishes an
interrupted flush and replays the blocks accepted since the last one).

The worker is this file run as a script: ``python tests/crash/test_validator_crash.py DATADIR CHAIN
SEED CHURN``.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # when run as the worker script
    sys.path.insert(0, str(REPO))

from ctplugin.elements import parse_block  # noqa: E402
from regtest.builder import build_demo_chain  # noqa: E402
from regtest.params import CTREGTEST, NETWORK_MAGIC, select_chain  # noqa: E402
from tests.conftest import SLOW_SCALE  # noqa: E402
from validator import read_chain, write_chain  # noqa: E402
from validator.node import Node  # noqa: E402


def utxo_digest(node: Node) -> str:
    h = hashlib.sha256()
    for outpoint, entry in node.data.chainstate.iter_utxos():
        h.update(outpoint.txid + outpoint.index.to_bytes(4, "little") + entry.encode())
    return h.hexdigest()


OPTIONS = {"max_unflushed_blocks": 2, "batch_bytes": 4096}


def open_node(datadir: str | Path) -> Node:
    return Node.open(datadir, select_chain(CTREGTEST), **OPTIONS)  # type: ignore[arg-type]


def worker(datadir: str, chain_file: str, seed: int, churn: int) -> None:
    """Submit the chain file's blocks, then ``churn`` times step back 1-3 blocks (invalidate)
    and reconnect (reconsider), so kills land in block connection, flushes and disconnects."""
    rng = random.Random(seed)
    blocks = list(read_chain(chain_file, NETWORK_MAGIC))
    with open_node(datadir) as node:
        print("ready", flush=True)
        for raw in blocks[1:]:
            node.submit_block(raw)
        node.reconsider_block(parse_block(blocks[1]).hash)  # undo a killed run's invalidation
        for _ in range(churn):
            back = min(rng.randint(1, 3), node.tip.height - 1)
            if back > 0:
                victim = node.block_hash(node.tip.height - back + 1)
                assert victim is not None
                node.invalidate_block(victim)
                node.reconsider_block(victim)
            assert node.tip.height == len(blocks) - 1
        print("done", flush=True)


@pytest.fixture(scope="module")
def chain_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], list[bytes]]:
    """The chain file, the clean replay's UTXO digest per height, and the block hashes."""
    chain = build_demo_chain(n_blocks=10, txs_per_block=2, seed=b"crash test wallet seed")
    path = tmp_path_factory.mktemp("crash") / "chain.dat"
    write_chain(path, chain.blocks, NETWORK_MAGIC)
    digests = []
    with Node.open(path.parent / "clean", select_chain(CTREGTEST)) as node:
        digests.append(utxo_digest(node))
        for block in chain.blocks[1:]:
            assert node.submit_block(block.serialize()).accepted
            digests.append(utxo_digest(node))
    return path, digests, [b.hash for b in chain.blocks]


@pytest.mark.slow
def test_sigkill_at_random_moments_leaves_a_consistent_tip(
        chain_file: tuple[Path, list[str], list[bytes]], tmp_path: Path) -> None:
    path, digests, hashes = chain_file
    datadir = tmp_path / "node"
    rng = random.Random(20261130)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    kills = 0
    heights = set()
    runs = max(8, int(20 * SLOW_SCALE))
    for run in range(runs):
        proc = subprocess.Popen(
            [sys.executable, __file__, str(datadir), str(path), str(run), "1000"], cwd=REPO,
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None
        proc.stdout.readline()  # "ready": the data directory is open, blocks are flowing
        time.sleep(rng.uniform(0.0, 0.8))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, -signal.SIGKILL), err.decode()[-2000:]
        with open_node(datadir) as node:
            tip = node.tip
            heights.add(tip.height)
            assert tip.hash == hashes[tip.height], f"run {run}: tip is not a chain block"
            assert utxo_digest(node) == digests[tip.height], \
                f"run {run}: UTXO set at height {tip.height} differs from a clean replay"
    assert kills == runs  # every run was interrupted mid-work ...
    assert len(heights) >= 3  # ... at different points of the chain
    # finally let it finish: the full chain, equal to the clean replay
    proc = subprocess.run([sys.executable, __file__, str(datadir), str(path), "999", "0"],
                          cwd=REPO, env=env, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    with open_node(datadir) as node:
        assert node.tip.height == len(hashes) - 1
        assert utxo_digest(node) == digests[-1]


if __name__ == "__main__":
    worker(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
