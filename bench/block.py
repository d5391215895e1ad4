"""Block validation benchmark (issue 6): one block of two-output confidential transactions.

The block: 1000 transactions (``--quick``: 100), each spending two explicit coins of the policy
asset into two blinded outputs (Bulletproof + surjection proof each, 2000 range proofs) and an
explicit fee output. A fan-out block before it creates the coins. Both blocks are made by the
regtest wallet once and kept in a cache file (``$CTPLUGIN_BENCH_CACHE`` or
``~/.cache/ctplugin``), since proving 2000 Bulletproofs takes about a minute.

Measured on a real LevelDB data directory (sync writes), median of the repeats:

- ``block_cold``: connect the block with an empty proof cache: parse, checks, UTXO lookups, one
  batch (claims + one MSM) for every range proof and balance, surjection proofs, the atomic
  write. Reference: 1.25 × what the C references spend on the proofs alone,
  1.25 × (2000 × 6.6 t + 2000 × 3.2 t) = 24500 t (scaled by the block's size with --quick).
- ``block_warm``: the same block after its transactions went through mempool acceptance (which
  verifies and caches every proof): only the balances are batched. Target: 20× faster than cold
  (its reference_t is the measured cold t / 20).
- ``block_*_<phase>``: the split of each (per block).

Rows are per block; n = range proofs in the block.
"""

from __future__ import annotations

import gc
import os
import statistics
import tempfile
from pathlib import Path

from bench.common import Row, make_row
from ctplugin.elements import parse_block
from regtest.chain import ChainBuilder, read_chain, write_chain
from regtest.params import COIN, REGTEST_SEED, chain_params, genesis_block
from regtest.wallet import Payment, Wallet
from validator.block import ConnectReport
from validator.node import Node

CACHE_VERSION = 1
RANGE_T_REF = 6.6  # C reference: batch of 1000 single proofs, t per range (design.md)
SURJECTION_T_REF = 3.2  # C reference: one surjection proof with two inputs



def cache_dir() -> Path:
    root = os.environ.get("CTPLUGIN_BENCH_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "ctplugin"


def build_blocks(n_tx: int) -> list[bytes]:
    """[genesis, fan-out, benchmark block] as raw blocks (deterministic from the seeds)."""
    alice = Wallet(REGTEST_SEED)
    bob = Wallet(b"bench/block receiver seed")
    chain = ChainBuilder([alice], miner_script=alice.new_address().script_pubkey)
    coin_value = 2 * COIN
    fanout = [Payment(coin_value, script_pubkey=alice.new_address().script_pubkey)
              for _ in range(2 * n_tx)]
    chain.add(alice.build_transaction(fanout, fee=10_000, height=1, blind_change=False))
    chain.mine()
    fanned = chain.blocks[1].transactions[1]
    coins = [alice.coins[(fanned.txid, j)] for j in range(2 * n_tx)]
    receiver = bob.new_address()
    for i in range(n_tx):
        chain.add(alice.build_transaction([Payment(3 * COIN, receiver)], fee=1000, height=2,
                                          inputs=coins[2 * i: 2 * i + 2]))
    chain.mine()
    return [b.serialize() for b in chain.blocks]


def load_blocks(n_tx: int) -> list[bytes]:
    path = cache_dir() / f"bench-block-v{CACHE_VERSION}-{n_tx}.dat"
    if path.exists():
        try:
            blocks = list(read_chain(path))
            if len(blocks) == 3 and parse_block(blocks[0]).hash == genesis_block().hash:
                return blocks
        except Exception:  # a stale or damaged cache file is rebuilt
            pass
    blocks = build_blocks(n_tx)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_chain(path, [parse_block(b) for b in blocks])
    return blocks


def _timed_connect(node: Node, raw: bytes) -> ConnectReport:
    gc.collect()
    gc.disable()
    try:
        return node.submit_block(raw)
    finally:
        gc.enable()


def _phases(report: ConnectReport) -> dict[str, float]:
    t = dict(report.timings)
    t.pop("batch")
    t.update(report.batch_split)
    return t


def measure(n_tx: int, repeats: int) -> tuple[list[ConnectReport], list[ConnectReport]]:
    blocks = load_blocks(n_tx)
    cold: list[ConnectReport] = []
    warm: list[ConnectReport] = []
    with tempfile.TemporaryDirectory(prefix="ctplugin-bench-block-") as tmp, \
            Node.open(Path(tmp) / "node", genesis_block(), chain_params()) as node:
        node.submit_block(blocks[1])
        bench_block = parse_block(blocks[2])
        node.submit_block(blocks[2])  # warm-up: generator tables, lazy imports, caches
        node.disconnect_tip()
        for _ in range(repeats):
            cold.append(_timed_connect(node, blocks[2]))
            node.disconnect_tip()
        for _ in range(repeats):
            for tx in bench_block.transactions[1:]:
                node.accept_transaction(tx)
            report = _timed_connect(node, blocks[2])
            if report.n_range_cached != report.n_range_proofs:
                raise AssertionError("warm block did not hit the cache for every proof")
            warm.append(report)
            node.disconnect_tip()
    return cold, warm


def _median_report(reports: list[ConnectReport]) -> ConnectReport:
    ordered = sorted(reports, key=lambda r: r.total_seconds)
    return ordered[len(ordered) // 2]


def run(quick: bool, t_us: float) -> list[Row]:
    n_tx = 100 if quick else 1000
    cold, warm = measure(n_tx, repeats=3)
    c, w = _median_report(cold), _median_report(warm)
    n = c.n_range_proofs
    proofs_ref = n * RANGE_T_REF + c.n_surjection_proofs * SURJECTION_T_REF
    cold_total = statistics.median(r.total_seconds for r in cold)
    warm_total = statistics.median(r.total_seconds for r in warm)
    cold_t = cold_total * 1e6 / t_us
    rows = [make_row("block_cold", n, cold_total, t_us, reference_t=1.25 * proofs_ref,
                     note=f"{c.n_transactions} txs, {c.n_surjection_proofs} surjection proofs, "
                          f"{c.n_msm_items} batch claims in one MSM")]
    for phase, seconds in _phases(c).items():
        ref = None
        note = ""
        if phase == "msm":
            note = f"batch (claims+msm) C ref = {n * RANGE_T_REF:.0f} t"
        if phase == "surjection":
            ref = c.n_surjection_proofs * SURJECTION_T_REF
        rows.append(make_row(f"block_cold_{phase}", n, seconds, t_us, reference_t=ref,
                             note=note))
    rows.append(make_row("block_warm", n, warm_total, t_us, reference_t=cold_t / 20,
                         note=f"cold/warm = {cold_total / warm_total:.1f}x (target >= 20x); "
                              f"{w.n_range_cached}/{w.n_range_proofs} range proofs cached"))
    for phase, seconds in _phases(w).items():
        rows.append(make_row(f"block_warm_{phase}", n, seconds, t_us))
    return rows
