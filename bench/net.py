"""P2P benchmark (docs/p2p.md §4, §5): what the network adds to validation.

Two nodes in this process, each with its own ``Node`` (a fresh data directory holding
genesis and the block benchmark's fan-out block, ``bench.block``), its own chain lock and its
own ``ConnectionManager``, connected over TCP on 127.0.0.1 and handshaken. Both managers run
on one event loop, each node's validation on a worker thread: the two share the GIL, so the
serving node's work competes with the receiving node's validation (no better than two
processes).

- ``net_block``: the block benchmark's block of 1000 confidential transactions (``--quick``:
  100) is connected on A; from the moment A's ``submit_block`` returns (the new tip is
  announced) until B has connected it (B's ``block_connected`` event): A's headers
  announcement, B's getdata, A reading the block from its block files, the transfer, B's
  parse and its cold ``submit_block`` (empty proof cache: nothing was relayed before). Per
  block. Reference: ``block_cold`` of the same block on a fresh node, timed in the same run,
  the runs alternating; target ≤ 1.15 × (reference_t = block_cold, target_t = 1.15 ×).
- ``net_tx``: transactions of that block (each spending its own fan-out coins: two blinded
  outputs with Bulletproofs and surjection proofs, a signed input) relayed one at a time: from
  the moment A's mempool accepted one (``accept_transaction`` returned: the inv goes out)
  until it is in B's mempool (B's ``transaction_added``): inv by wtxid, getdata, tx, B's
  acceptance. Per transaction, the median. Reference: the mempool acceptance of the same
  transactions on A (cold, timed around each call); target ≤ 2 × (reference_t = acceptance,
  target_t = 2 ×).

Each row is expressed in the t measured around its own runs (the machine is shared). Chainstate
flushes are synced unless ``CTPLUGIN_BENCH_SYNC=0``, as in ``bench.block``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bench import block as block_bench
from bench.common import Row, make_row
from ctplugin.elements import Block, Transaction, parse_block
from ctplugin.timing import measure_t_us
from net import ConnectionManager, NetSettings
from net.permissions import Whitelist
from regtest.params import DEFAULT_CHAIN
from rpc.process import free_port
from validator import ChainListener, Node

TX_SAMPLES = 30


class _Arrival(ChainListener):
    """Records when B connected a block / accepted a transaction (B's worker thread)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiters: dict[bytes, asyncio.Future[float]] = {}

    def expect(self, key: bytes) -> asyncio.Future[float]:
        future: asyncio.Future[float] = self.loop.create_future()
        self.waiters[key] = future
        return future

    def _arrived(self, key: bytes) -> None:
        now = time.perf_counter()
        future = self.waiters.pop(key, None)
        if future is not None:
            self.loop.call_soon_threadsafe(_resolve, future, now)

    def block_connected(self, block: Block, height: int) -> None:
        self._arrived(block.hash)

    def transaction_added(self, tx: Transaction) -> None:
        self._arrived(tx.txid)


def _resolve(future: asyncio.Future[float], value: float) -> None:
    if not future.done():
        future.set_result(value)


class _Pair:
    """Nodes A (serving) and B (receiving), B connected to A, both handshaken."""

    def __init__(self, a: Node, b: Node) -> None:
        self.a, self.b = a, b
        self.a_lock, self.b_lock = threading.RLock(), threading.RLock()
        self.port = free_port()
        magic = a.params.network_magic
        # B is noban at A, as Core's functional tests whitelist their peers for fast relay
        # (noban_tx_relay): the row measures the transfer, not the trickle delay that hides a
        # transaction's origin (a Poisson timer of 5 s mean for inbound peers)
        self.a_net = ConnectionManager(a, self.a_lock, NetSettings(
            magic=magic, user_agent="/bench-a/", listen=True, bind=(("127.0.0.1", self.port),),
            whitelist=(Whitelist.parse("noban@127.0.0.1"),)), self.port)
        self.b_net = ConnectionManager(b, self.b_lock, NetSettings(
            magic=magic, user_agent="/bench-b/"), self.port)

    async def __aenter__(self) -> _Pair:
        await self.a_net.start()
        await self.b_net.start()
        await self.b_net.connect(f"127.0.0.1:{self.port}")
        deadline = time.monotonic() + 30
        while not (self._ready(self.a_net) and self._ready(self.b_net)):
            if time.monotonic() > deadline:
                raise AssertionError("the bench nodes did not complete their handshake")
            await asyncio.sleep(0.01)
        return self

    @staticmethod
    def _ready(manager: ConnectionManager) -> bool:
        return any(p.got_verack and p.pingtime is not None for p in manager.peers.values())

    async def __aexit__(self, *_: object) -> None:
        await self.b_net.close()
        await self.a_net.close()

    async def on_a(self, fn: Callable[[], object]) -> float:
        """Run ``fn`` on a worker thread under A's lock; when it returned (perf_counter)."""
        def call() -> float:
            with self.a_lock:
                fn()
            return time.perf_counter()
        return await asyncio.get_running_loop().run_in_executor(None, call)


async def _propagate_block(a: Node, b: Node, raw: bytes, block: Block) -> float:
    """Seconds from A's connect returning to B's connect of ``block``."""
    async with _Pair(a, b) as pair:
        arrival = _Arrival(asyncio.get_running_loop())
        b.subscribe(arrival)
        try:
            arrived = arrival.expect(block.hash)
            gc.collect()
            gc.disable()
            try:
                sent = await pair.on_a(lambda: a.submit_block(raw, block).connected())
                done = await asyncio.wait_for(arrived, 600)
            finally:
                gc.enable()
        finally:
            b.unsubscribe(arrival)
    return done - sent


async def _relay_transactions(a: Node, b: Node, txs: list[Transaction]
                              ) -> tuple[list[float], list[float]]:
    """(relay seconds, A's acceptance seconds) of each of ``txs``, one at a time."""
    relays, accepts = [], []
    async with _Pair(a, b) as pair:
        arrival = _Arrival(asyncio.get_running_loop())
        b.subscribe(arrival)
        try:
            for tx in txs:
                arrived = arrival.expect(tx.txid)
                started = 0.0

                def accept(tx: Transaction = tx) -> None:
                    nonlocal started
                    started = time.perf_counter()
                    a.accept_transaction(tx)

                accepted = await pair.on_a(accept)
                done = await asyncio.wait_for(arrived, 60)
                relays.append(done - accepted)
                accepts.append(accepted - started)
        finally:
            b.unsubscribe(arrival)
    return relays, accepts


def run(quick: bool, t_us: float) -> list[Row]:
    n_tx = 100 if quick else 1000
    repeats = 3
    sync = os.environ.get("CTPLUGIN_BENCH_SYNC", "1") != "0"
    blocks = block_bench.load_blocks(n_tx, DEFAULT_CHAIN)
    raw = blocks[2]
    block = parse_block(raw)
    params = block_bench.bench_params(DEFAULT_CHAIN)
    cold: list[tuple[float, float]] = []  # (seconds, t_us)
    net: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="ctplugin-bench-net-") as tmp:
        root = Path(tmp)

        def fresh(name: str) -> Node:
            return block_bench._fresh_node(root, name, blocks, sync, params)

        with fresh("warm-up") as node:
            node.submit_block(raw)  # generator tables, lazy imports, caches
        for i in range(repeats):  # cold and over-the-network runs take turns
            with fresh(f"cold-{i}") as node:
                timed = block_bench._timed_submit(node, raw)
                cold.append((timed.seconds, timed.t_us))
            with fresh(f"a-{i}") as a, fresh(f"b-{i}") as b:
                before = measure_t_us(300)
                seconds = asyncio.run(_propagate_block(a, b, raw, block))
                net.append((seconds, (before + measure_t_us(300)) / 2))
        samples = block.transactions[1:1 + (10 if quick else TX_SAMPLES)]
        with fresh("tx-a") as a, fresh("tx-b") as b:
            before = measure_t_us(300)
            relays, accepts = asyncio.run(_relay_transactions(a, b, samples))
            tx_t_us = (before + measure_t_us(300)) / 2
    cold_s, cold_t_us = sorted(cold, key=lambda r: r[0] / r[1])[len(cold) // 2]
    net_s, net_t_us = sorted(net, key=lambda r: r[0] / r[1])[len(net) // 2]
    cold_t = cold_s * 1e6 / cold_t_us
    n_proofs = sum(1 for tx in block.transactions for o in tx.outputs if o.range_proof)
    relay_s, accept_s = statistics.median(relays), statistics.median(accepts)
    accept_t = accept_s * 1e6 / tx_t_us
    return [
        make_row("net_block", n_proofs, net_s, net_t_us, reference_t=cold_t,
                 target_t=1.15 * cold_t,
                 note=f"{len(block.transactions) - 1} txs, {len(raw)} bytes, A connects -> B "
                      f"connected over P2P (headers, getdata, block); ref block_cold "
                      f"{cold_s * 1e3:.0f} ms this run; medians of {repeats}; sync={sync}"),
        make_row("net_tx", len(samples), relay_s, tx_t_us, reference_t=accept_t,
                 target_t=2 * accept_t,
                 note=f"in A's mempool -> in B's (inv wtxid, getdata, tx, B accepts); ref "
                      f"A's acceptance {accept_s * 1e3:.2f} ms; medians over "
                      f"{len(samples)} txs"),
    ]
