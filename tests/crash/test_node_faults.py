"""The node process under storage faults (docs/durability.md §7): a full disk while mining stops it
with Core's "Disk space is too low!" and the next start is consistent; a damaged block file
makes the start refuse, naming the store and -reindex, and ``-reindex`` brings it back."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from rpc.process import NodeProcess
from rpcclient import RPCClientError
from validator.store import FAULT_ENV


def wait_exit(node: NodeProcess, timeout: float = 60) -> int:
    assert node.process is not None
    deadline = time.monotonic() + timeout
    while node.process.poll() is None:
        assert time.monotonic() < deadline, "the node did not stop"
        time.sleep(0.1)
    return node.process.returncode


def debug_log(node: NodeProcess) -> str:
    return (node.netdir / "debug.log").read_text(errors="replace")


@pytest.mark.parametrize("fault", ["block files:4", "chainstate:1", "wallet:3"])
def test_full_disk_while_mining_stops_the_node_and_it_restarts_consistent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str) -> None:
    node = NodeProcess(tmp_path / "node")
    node.start()
    try:
        address = node.call("getnewaddress")
        node.call("generatetoaddress", 3, address)
    finally:
        node.stop()
    monkeypatch.setenv(FAULT_ENV, fault)
    node.start()
    monkeypatch.delenv(FAULT_ENV)
    mined = 3
    try:
        with pytest.raises((RPCClientError, OSError)):  # the error, or the node gone
            for _ in range(1000):  # the chainstate is written at the flush after 1000
                node.call("generatetoaddress", 1, address)
                mined += 1
        assert wait_exit(node) == 1  # it shuts itself down, status 1 (Core's AbortNode)
    finally:
        if node.process is not None and node.process.poll() is None:
            node.kill()
    assert "Disk space is too low!" in debug_log(node)
    node.start()  # room again: never bricked
    try:
        assert node.call("getblockcount") >= mined
        info = node.call("gettxoutsetinfo")
        assert info["height"] == node.call("getblockcount")
        # the wallet's balance is the sum of its unspent coins (nothing lost or doubled)
        trusted = node.call("getbalances")["mine"]["trusted"]["bitcoin"]
        assert trusted == sum(coin["amount"] for coin in node.call("listunspent"))
    finally:
        node.stop()


def test_damaged_block_file_refuses_the_start_and_reindex_recovers(tmp_path: Path) -> None:
    node = NodeProcess(tmp_path / "node", "--txindex")
    node.start()
    try:
        hashes = node.call("generatetoaddress", 8, node.call("getnewaddress"))
        height = node.call("getblockcount")
        lost_tx = node.call("getblock", hashes[-1])["tx"][0]
        kept_tx = node.call("getblock", hashes[-2])["tx"][0]
        assert node.call("getrawtransaction", lost_tx)
    finally:
        node.stop()
    blk = node.netdir / "blocks" / "blk00000.dat"
    raw = blk.read_bytes()
    os.truncate(blk, len(raw) - 50)  # the tip's record cut
    node.start(wait=False)
    code = wait_exit(node)
    assert code != 0
    text = node.stderr_text()
    assert "Corrupted block database detected" in text and "-reindex" in text, text
    assert "block files" in text
    node.start("--reindex")
    try:
        assert node.call("getblockcount") == height - 1
        assert node.call("getblockhash", height - 1) == hashes[-2]
        assert node.call("getrawtransaction", kept_tx)  # the txindex was rebuilt with it
        with pytest.raises(RPCClientError):
            node.call("getrawtransaction", lost_tx)
    finally:
        node.stop()
    node.start()  # and a plain start afterwards
    try:
        assert node.call("getblockcount") == height - 1
    finally:
        node.stop()
