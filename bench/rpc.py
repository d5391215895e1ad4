"""RPC benchmark: the regtest node as a subprocess (``rpc.process``), driven over HTTP.

- ``rpc_getblockcount``: 8 client threads, each with one keep-alive connection, call
  ``getblockcount`` back to back; ``us`` = wall time / calls (the server's throughput cost per
  call), the note gives each client's mean latency. Target ≤ 1 ms (reference_t = 1 ms in t).
- (the wallet's sends on both chains are ``bench.rpcsend``'s rows)
- ``rpc_generate_1000``: ``generatetoaddress 1`` with the 1000 transactions of the block
  benchmark's block in the mempool (``--quick``: 100), so the block is connected from the proof
  cache, called on a keep-alive connection (the one that asked for the address, as test
  frameworks call); the median of five (the mined block is invalidated after each, which puts its
  transactions back). Reference: ``block_warm`` of ``bench.block``, one warm connect in the
  benchmark's process before each generate, so that both see the same load; target ≤ 1.1 ×
  (reference_t = 1.1 × block_warm).

Each row is expressed in the t measured around its own measurement (the machine is shared).
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

from bench import block as block_bench
from bench.common import Row, make_row
from ctplugin.elements import parse_block
from ctplugin.timing import measure_t_us
from rpc.process import NodeProcess

CLIENTS = 8
GENERATE_REPEATS = 5


def bench_getblockcount(node: NodeProcess, calls_per_client: int) -> tuple[float, float]:
    """(wall seconds per call over all clients, mean latency per call of one client)."""
    barrier = threading.Barrier(CLIENTS + 1)
    latencies: list[float] = []
    lock = threading.Lock()

    def client() -> None:
        with node.client(timeout=60) as rpc:  # one keep-alive connection per client
            rpc.call("getblockcount")  # connect, read the cookie, warm up
            barrier.wait()
            start = time.perf_counter()
            for _ in range(calls_per_client):
                rpc.call("getblockcount")  # an HTTP or RPC error raises
            elapsed = time.perf_counter() - start
        with lock:
            latencies.append(elapsed / calls_per_client)

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    return wall / (CLIENTS * calls_per_client), sum(latencies) / len(latencies)


class Generator:
    """``generatetoaddress 1`` on a node holding the block benchmark's transactions in its
    mempool, one timed call at a time; after each call the mined block is invalidated, which
    returns its transactions to the mempool (re-accepted: their proofs are verified and cached
    again, untimed)."""

    def __init__(self, node: NodeProcess, blocks: list[bytes]) -> None:
        if node.call("submitblock", blocks[1].hex()) is not None:
            raise RuntimeError("the fan-out block was refused")
        self.node = node
        txs = parse_block(blocks[2]).transactions[1:]
        self.offered = len(txs)
        for tx in txs:
            node.call("sendrawtransaction", tx.hex())

    def once(self) -> tuple[float, int]:
        """(seconds of one generatetoaddress 1, transactions it mined), on a keep-alive
        connection (as the Elements test framework's clients call)."""
        node = self.node
        with node.client("/wallet/") as client:
            address = client.call("getnewaddress")
            start = time.perf_counter()
            [block_hash] = client.call("generatetoaddress", 1, address)
            seconds = time.perf_counter() - start
        mined = len(node.call("getblock", block_hash)["tx"]) - 1
        node.call("invalidateblock", block_hash)
        if len(node.call("getrawmempool")) != self.offered:
            raise RuntimeError("invalidateblock did not return the transactions to the mempool")
        return seconds, mined


def _node(root: Path, name: str) -> NodeProcess:
    return NodeProcess(root / name).start()  # default -rpcthreads 16, -rpcworkqueue 64


def run(quick: bool, t_us: float) -> list[Row]:
    n_tx = 100 if quick else 1000
    calls = 300 if quick else 2000
    rows = []
    with tempfile.TemporaryDirectory(prefix="ctplugin-bench-rpc-") as tmp:
        root = Path(tmp)
        node = _node(root, "calls")
        try:
            t_before = measure_t_us(300)
            per_call, latency = bench_getblockcount(node, calls)
            t_here = (t_before + measure_t_us(300)) / 2
            rows.append(make_row("rpc_getblockcount", CLIENTS * calls, per_call, t_here,
                                 target_t=1000 / t_here,
                                 note=f"{CLIENTS} keep-alive clients; each saw "
                                      f"{latency * 1e6:.0f} us per call; target <= 1 ms"))
        finally:
            node.stop()
        blocks = block_bench.load_blocks(n_tx)
        sync = os.environ.get("CTPLUGIN_BENCH_SYNC", "1") != "0"
        node = _node(root, "mine")
        try:
            generator = Generator(node, blocks)
            # one warm connect in this process, then one generate on the node, in turns: both
            # see the same load
            t_before = measure_t_us(300)
            warms, generates, mined = [], [], []
            for i in range(GENERATE_REPEATS):
                warms += block_bench.measure(n_tx, repeats=0, sync=sync, warm_repeats=1,
                                             warm_up=i == 0).warm
                seconds, n = generator.once()
                generates.append(seconds)
                mined.append(n)
            t_here = (t_before + measure_t_us(300)) / 2
        finally:
            node.stop()
        warm = sorted(r.seconds for r in warms)[len(warms) // 2]
        seconds = sorted(generates)[len(generates) // 2]
        rows.append(make_row("rpc_generate_1000", min(mined), seconds, t_here,
                             reference_t=warm * 1e6 / t_here,
                             target_t=1.1 * warm * 1e6 / t_here,
                             note=f"{min(mined)}/{generator.offered} mempool transactions mined; "
                                  f"block_warm {warm * 1e3:.1f} ms, in turns with it; "
                                  f"generate/warm = {seconds / warm:.2f} (target <= 1.1); "
                                  f"medians of {GENERATE_REPEATS}"))
    return rows
