"""``make demo``: build a regtest chain of confidential transactions, validate it block by block
with batching and the proof cache, and print a report.

Steps:

1. the wallet builds a reproducible regtest chain (``regtest.builder.build_demo_chain``: payments
   with two blinded outputs, an asset issuance, a transfer of it and a reissuance) and writes it
   to a chain file;
2. a fresh node (LevelDB data directory in a temporary directory) reads the file and connects
   every block cold: one batch (one MSM) per block for all range proofs and balances, surjection
   proofs after it;
3. the node disconnects the last block, accepts its transactions into the mempool (which verifies
   and caches their proofs), and connects the block again warm: every proof is a cache hit;
4. a deliberately corrupted copy of a block (one range proof altered, witness commitment redone)
   is rejected, naming the transaction and the output.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from apps.extras import Extra, missing_message
from apps.tempdirs import scratch_directory
from ctplugin.elements import Block, Transaction, parse_block
from ctplugin.secp256k1 import kernel
from ctplugin.secp256k1.params import N
from ctplugin.timing import measure_t_us
from regtest.builder import build_demo_chain, make_block
from regtest.params import DEFAULT_CHAIN, NETWORK_MAGIC, select_chain
from rpc.helpformat import UserHelpFormatter
from validator import ConnectReport, Node, read_chain, write_chain

DESCRIPTION = """\
Build a small regtest chain of confidential transactions in a temporary directory and
validate it, then print what it cost:

1. a wallet makes the chain: payments with two blinded outputs, an asset issuance, a
   transfer of it and a reissuance;
2. a fresh node connects every block "cold": all range proofs and balances of a block in one
   batch, then its surjection proofs;
3. the last block is taken back, its transactions enter the mempool (their proofs are checked
   and cached there), and the block connects again "warm": every proof is a cache hit;
4. a copy of a block with one range proof altered is rejected, naming the transaction and
   the output.

Times are in milliseconds and in t, the time of one secp256k1 point multiplication measured
in the same run (so the figures compare across machines). Nothing is left on disk.
"""


def corrupt_range_proof(block: Block, tx_index: int, output_index: int) -> Block:
    """The block with one range proof's stored −τx scalar bumped (still well-formed) and the
    coinbase, Merkle root and witness commitment recomputed, so only the proof is wrong."""
    txs = list(block.transactions[1:])
    tx = txs[tx_index - 1]
    outs = list(tx.outputs)
    proof = bytearray(outs[output_index].range_proof)
    proof[0:32] = ((int.from_bytes(proof[0:32], "big") + 1) % N).to_bytes(32, "big")
    outs[output_index] = replace(outs[output_index], range_proof=bytes(proof))
    txs[tx_index - 1] = Transaction(version=tx.version, inputs=tx.inputs, outputs=tuple(outs),
                                    locktime=tx.locktime)
    miner = block.transactions[0].outputs[0].script_pubkey
    return make_block(block.header.prev_hash, block.header.height, block.header.time, txs, miner)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.1f}"


Say = Callable[[str], None]


def run(n_blocks: int, txs_per_block: int, out: TextIO = sys.stdout) -> int:
    """The four steps of the module docstring; 0 when every block was judged as expected."""
    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    t_us = measure_t_us()
    say(f"ctplugin demo  (native kernel: {kernel.IS_NATIVE}; t = {t_us:.1f} µs, the time of one "
        "secp256k1 point multiplication (coincurve's PublicKey.multiply) on this machine now)")
    with scratch_directory("ctplugin-demo-") as tmp:
        raw_blocks = _build_chain(tmp / "regtest-chain.dat", n_blocks, txs_per_block, say)
        if raw_blocks is None:
            return 1
        with Node.open(tmp / "node", select_chain(DEFAULT_CHAIN)) as node:
            reports = _connect_cold(node, raw_blocks[1:], t_us, say)
            if reports is None:
                return 1
            last = parse_block(raw_blocks[-1])
            _reconnect_warm(node, last, reports[-1], say)
            named = _reject_forgeries(node, last, say)
            if named is None:
                return 1
            node.reconsider_block(last.hash)
            stats = node.stats()
            # A hit is consumed when its block commits (the proof is in the chain now, never
            # checked again), so the cache ends empty however many proofs went through it.
            say(f"tip {stats.tip.hash[::-1].hex()[:16]}… at height {stats.tip.height}; proof "
                f"cache: {stats.cache.inserts} proofs stored, {stats.cache.hits} lookups hit, "
                f"{stats.cache.misses} missed; each hit is consumed when its block connects, "
                f"so {stats.cache.entries} are left")
            return 0 if named else 1


def _build_chain(chain_file: Path, n_blocks: int, txs_per_block: int,
                 say: Say) -> list[bytes] | None:
    """Step 1: the wallet's chain, written to ``chain_file`` and read back (genesis first)."""
    start = time.perf_counter()
    chain = build_demo_chain(n_blocks, txs_per_block)
    write_chain(chain_file, chain.blocks, NETWORK_MAGIC)
    build_s = time.perf_counter() - start
    raw_blocks = list(read_chain(chain_file, NETWORK_MAGIC))
    # The file is in the run's temporary directory, gone when the demo ends: its size only.
    say(f"built {len(raw_blocks) - 1} blocks on genesis with the wallet in {build_s:.1f} s "
        f"(a chain file of {chain_file.stat().st_size:,} bytes, read back by the node)")
    if parse_block(raw_blocks[0]).hash != select_chain(DEFAULT_CHAIN).genesis_hash:
        say("chain file does not start with our genesis")
        return None
    return raw_blocks


def _connect_cold(node: Node, raw_blocks: list[bytes], t_us: float,
                  say: Say) -> list[ConnectReport] | None:
    """Step 2: every block submitted to the fresh node, one table row each."""
    say("")
    say("each block: its input scripts run (signed spends: taproot key path by default), "
        "then ONE multi-scalar multiplication for all its range proofs, balance equations "
        "and Schnorr signatures (claims), then its surjection proofs and ECDSA "
        "signatures, then one coins-cache update (flushed to LevelDB in atomic batches, "
        "Core's -dbcache model)")
    say(f"{'':<{COUNTS_WIDTH}} {'---------------------- milliseconds ----------------------':^62}"
        "  per range")
    say(f"{'height':>6} {'txs':>4} {'ranges':>6} {'sigs':>5} {'claims':>6} {'surj':>5} "
        f"{'cached':>6} {'total':>8} {'parse':>8} {'inputs':>8} {'scripts':>8} "
        f"{'batch':>8} {'surj':>8} {'commit':>8}  {'proof':>8}")
    reports: list[ConnectReport] = []
    for raw in raw_blocks:
        result = node.submit_block(raw)
        if result.report is None:
            say(f"block rejected (bug!): {result.error}")
            return None
        reports.append(result.report)
        say(_row(result.report, t_us))
    totals = _totals(reports)
    say("counts: transactions, range proofs, signatures, claims in the block's one batch, "
        "surjection proofs, proofs found in the cache; milliseconds: the whole block, then "
        "its stages; per range proof: the block's total time divided by its range proofs, "
        "in t")
    say("")
    say(f"cold: {len(reports)} blocks, {totals['txs']} transactions, "
        f"{totals['ranges']} range proofs, {totals['surj']} surjection proofs; "
        f"{totals['seconds'] * 1e3 / len(reports):.1f} ms per block; "
        f"{totals['seconds'] * 1e6 / max(totals['ranges'], 1) / t_us:.1f} t per range "
        "proof (everything included)")
    return reports


def _reconnect_warm(node: Node, last: Block, cold: ConnectReport, say: Say) -> None:
    """Step 3: invalidate the tip (its transactions return to the mempool, which verifies and
    caches their proofs), then reconsider it: it reconnects from the cache."""
    start = time.perf_counter()
    node.invalidate_block(last.hash)
    mempool_s = time.perf_counter() - start
    hits_before = node.data.proof_cache.hits
    warm = node.reconsider_block(last.hash)[0]
    say(f"warm: block {warm.height} after mempool acceptance "
        f"({len(last.transactions) - 1} txs in {mempool_s * 1e3:.1f} ms): "
        f"{warm.total_seconds * 1e3:.1f} ms (cold: {cold.total_seconds * 1e3:.1f} "
        f"ms; batch {warm.batch_seconds * 1e3:.1f} vs "
        f"{cold.batch_seconds * 1e3:.1f} ms), range proofs cached "
        f"{warm.n_range_cached}/{warm.n_range_proofs}, surjection proofs cached "
        f"{warm.n_surjection_cached}/{warm.n_surjection_proofs}, scripts cached "
        f"{warm.cached.get('script', 0)}/{warm.items.get('script', 0)} transactions, "
        f"cache hits {node.data.proof_cache.hits - hits_before}")


def _reject_forgeries(node: Node, last: Block, say: Say) -> bool | None:
    """Step 4: the tip invalidated again, then two corrupted copies of it submitted: one range
    proof altered, one signature altered. None when one was accepted; else whether both
    rejections named the culprit."""
    node.invalidate_block(last.hash)
    tx_index = len(last.transactions) // 2 or 1
    bad = corrupt_range_proof(last, tx_index, 1)
    start = time.perf_counter()
    exc = node.submit_block(bad.serialize()).error
    if exc is None:
        say("corrupted block was ACCEPTED (bug!)")
        return None
    reject_ms = (time.perf_counter() - start) * 1e3
    say(f"corrupted block {bad.header.height} (range proof of tx {tx_index} output 1 "
        f"altered): rejected in {reject_ms:.1f} ms: {exc}")
    named = (exc.tx_index, exc.output_index) == (tx_index, 1)
    say("culprit named correctly" if named else "culprit NOT named correctly")
    # A forged signature: one bit of a taproot key-path signature flipped.
    forged = corrupt_signature(last, tx_index)
    exc = node.submit_block(forged.serialize()).error
    if exc is None:
        say("block with a forged signature was ACCEPTED (bug!)")
        return None
    say(f"block {forged.header.height} with tx {tx_index}'s input 0 signature altered: "
        f"rejected: {exc}")
    forged_named = (exc.tx_index, exc.input_index) == (tx_index, 0)
    say("culprit named correctly" if forged_named else "culprit NOT named correctly")
    return named and forged_named


def _row(r: ConnectReport, t_us: float) -> str:
    t = r.timings
    per_range = r.total_seconds * 1e6 / max(r.n_range_proofs, 1) / t_us
    sigs = r.items.get("schnorr", 0) + r.items.get("ecdsa", 0)
    return (f"{r.height:>6} {r.n_transactions:>4} {r.n_range_proofs:>6} {sigs:>5} "
            f"{r.n_msm_items:>6} {r.n_surjection_proofs:>5} "
            f"{r.n_range_cached + r.n_surjection_cached:>6} "
            f"{_ms(r.total_seconds)} {_ms(t['parse'])} {_ms(t['resolve'])} "
            f"{_ms(t.get('scripts', 0.0))} {_ms(r.batch_seconds)} "
            f"{_ms(t.get('surjection', 0.0))} {_ms(t['commit'])}  {per_range:6.1f} t")


COUNTS_WIDTH = 6 + 1 + 4 + 1 + 6 + 1 + 5 + 1 + 6 + 1 + 5 + 1 + 6  # height ... cached


def corrupt_signature(block: Block, tx_index: int) -> Block:
    """``block`` with one bit of transaction ``tx_index``'s input 0 signature flipped (the
    first witness item: a BIP340 or DER signature), everything else recomputed."""
    txs = list(block.transactions)
    txin = txs[tx_index].inputs[0]
    sig = bytearray(txin.script_witness[0])
    sig[len(sig) // 2] ^= 0x01
    inputs = (replace(txin, script_witness=(bytes(sig), *txin.script_witness[1:])),
              *txs[tx_index].inputs[1:])
    txs[tx_index] = replace(txs[tx_index], inputs=inputs)
    miner = block.transactions[0].outputs[0].script_pubkey
    return make_block(block.header.prev_hash, block.header.height, block.header.time, txs[1:],
                      miner)


def _totals(reports: list[ConnectReport]) -> dict[str, float]:
    return {"txs": sum(r.n_transactions for r in reports),
            "ranges": sum(r.n_range_proofs for r in reports),
            "surj": sum(r.n_surjection_proofs for r in reports),
            "seconds": sum(r.total_seconds for r in reports)}


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["dlc"]:
        if (message := missing_message("ctplugin demo dlc", Extra.NODE)) is not None:
            print(message, file=sys.stderr)  # it starts a node
            return 2
        from apps import demo_dlc  # ``ctplugin demo dlc``: a contract's life on the node

        return demo_dlc.main(args_in[1:])
    parser = argparse.ArgumentParser(prog="ctplugin demo", description=DESCRIPTION,
                                     formatter_class=UserHelpFormatter,
                                     epilog="ctplugin demo dlc: a DLC's life, on a regtest node "
                                            "it starts itself")
    parser.add_argument("--blocks", type=int, default=8, help="blocks after genesis")
    parser.add_argument("--txs", type=int, default=6, help="wallet transactions per block")
    args = parser.parse_args(args_in)
    if args.blocks < 1 or args.txs < 1:
        parser.error("--blocks and --txs must be positive")
    return run(args.blocks, args.txs)


if __name__ == "__main__":
    sys.exit(main())
