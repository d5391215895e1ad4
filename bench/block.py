"""Block validation benchmark: one block of two-output confidential
transactions with signed inputs.

The block: 1000 transactions (``--quick``: 100), each spending two explicit coins of the policy
asset — one a taproot key-path output of the wallet (one BIP340 signature per transaction, in the
block's batch), one a bare ``OP_TRUE`` output (nothing to sign) — into two blinded outputs
(Bulletproof + surjection proof each, 2000 range proofs) and an explicit fee output. A fan-out
block before it creates the coins. Both blocks are made by the
regtest wallet once and kept in a cache file (``$CTPLUGIN_BENCH_CACHE`` or
``~/.cache/ctplugin``), since proving 2000 Bulletproofs takes about a minute.

Each run submits the benchmark block (``Node.submit_block``: parse, store it in the block files
and the block index, connect) to a fresh data directory holding genesis and the fan-out block;
the rows show the median of the repeats:

- ``block_cold``: with an empty proof cache: parse, block storage, checks, UTXO lookups, one
  batch (claims + one MSM) for every range proof, balance and signature, surjection proofs, the
  coins-cache update. Reference: what the C references spend on the proofs and
  signatures alone, 2000 × 6.6 t + 2000 × 3.2 t = 19600 t plus 1000 × one secp256k1-zkp
  ``schnorrsig_verify`` timed in the same run (scaled by the block's size with --quick).
- ``block_warm``: after the block's transactions went through mempool acceptance (which
  verifies and caches every proof, balance equation and script execution): every key is
  found in the cache's in-memory front, consumed hits are only marked (deleted lazily in a
  later batch), and nothing is left to batch; what mempool acceptance computed of each
  transaction (``validator.known``) is reused. Target: 40× faster than cold (its reference_t
  is the measured cold t, its target_t cold t / 40).
- ``block_cold_threads``: the cold connect with the kernel on every core
  (``kernel.set_threads(0)``, Core's ``-par``: MSM windows, Bulletproof setup and the ring
  kernel split across threads with the GIL released), wall time; target <= 0.55 x
  ``block_cold`` (the note gives the ratio; runs alternate with the cold ones);
- ``block_*_<stage>``: the split of each by connection stage (``ConnectReport.timings``);
  ``store`` = writing the block file record and its index entry, ``chain`` = the rest of
  ``submit_block`` (undo record, index update, mempool removal, events): the rows add up to
  the whole call.
- ``block_flush``: writing that block's UTXO changes to LevelDB afterwards (Core's -dbcache
  model: the chainstate is flushed when the coins cache is full, every 1000 blocks or 60 s, so
  this is paid once per flush window, not per block).
- The Borromean twin: the same transactions (at most 300: ``BORROMEAN_TWIN_MAX_TXS``)
  made by the wallet in the Borromean
  chain (``regtest.params`` ``ctregtest-borromean``: Elements' 52-bit proofs),
  connected cold on that profile's node: ``block_cold_borromean`` (per block; reference: the C
  reference's Borromean verify, 3.87 ms per proof (docs/design.md §10) in t, for every proof,
  plus the surjection proofs), and side by side ``block_output_bulletproof`` /
  ``block_output_borromean``:
  cold connect time per blinded output, with range-proof bytes and block bytes per output in the
  note (the seed's claim: Bulletproofs ~6x smaller and much faster).
- ``block_cold_elements``: Elements' own chain, the ``elementsregtest`` profile
  (``regtest.elements``, with ``-initialfreecoins`` so that there are coins: the fan-out block
  first claims the genesis's anyone-can-spend free coins), 300 transactions (``--quick``: 100)
  of Elements' wallet outputs (52-bit Borromean proofs, surjection proofs) spending one P2WPKH
  and one P2SH-P2WPKH input each (ECDSA). Reference: the C references
  verifying the very proofs of the block (secp256k1-zkp ``rangeproof_verify`` and
  ``surjectionproof_verify`` through ``harness.zkp``, parsing included, as Elements calls
  them) plus the block's ECDSA signatures at one ``ecdsa_verify`` each, all timed in the same
  run.

The spent coins come from the chainstate's in-memory coins cache (the fan-out block created
them), as for a node connecting a block on a recent tip.

Flushes are synced (``fsync``, survives power loss) unless ``CTPLUGIN_BENCH_SYNC=0``; a block's
data and index entry are written before it is connected, which survives a killed process.
Rows are per block; n = range proofs in the block. The machine is shared, so t is measured
right before and after every timed connect and each run is expressed in its own t; the rows
show the run with the median cost in t (the harness's t_us argument is not used).
"""

from __future__ import annotations

import gc
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import Row, cache_dir, make_row
from ctplugin.elements import parse_block
from ctplugin.elements.chainparams import RangeProofKind
from ctplugin.secp256k1 import kernel
from ctplugin.timing import measure_t_us, median_time
from regtest.params import CTREGTEST_BORROMEAN, DEFAULT_CHAIN
from regtest.sample_blocks import (
    ELEMENTSREGTEST_BENCH,
    bench_params,
    build_blocks,
    build_elements_blocks,
)
from validator import ChainParams, ConnectReport, Node, read_chain, write_chain

CACHE_VERSION = 2  # 2: signed inputs (one taproot key path + one OP_TRUE per transaction)
RANGE_T_REF = 6.6  # C reference: batch of 1000 single proofs, t per range (docs/design.md)
SURJECTION_T_REF = 3.2  # C reference: one surjection proof with two inputs
BORROMEAN_US_REF = 3870.0  # C reference: one 52-bit Borromean verify (docs/design.md), in us
ELEMENTS_MAX_TXS = 300
ELEMENTS_CACHE_VERSION = 4  # 2: half the inputs P2SH-P2WPKH; 4: the wallet's own P2SH-P2WPKH keys


def ecdsa_ref_us(samples: int = 500) -> float:
    """Microseconds of one secp256k1-zkp ``ecdsa_verify`` (key and DER signature parsed per
    call, as Elements' CPubKey::Verify does), measured now; NaN without wallycore."""
    from ctplugin.secp256k1 import ct
    from harness.zkp import signatures

    ref = signatures()
    if ref is None:
        return float("nan")
    checks = [(ct.base_mul(k).to_bytes(), ct.ecdsa_sign(k, k.to_bytes(32, "big")),
               k.to_bytes(32, "big")) for k in range(1, 65)]

    def loop() -> None:
        for i in range(samples):
            key, sig, msg = checks[i % len(checks)]
            ref.ecdsa_verify(key, sig, msg)

    return median_time(loop, repeat=5) / samples * 1e6


def proofs_ref_us(funding: bytes, raw: bytes) -> tuple[float, int, int] | None:
    """Microseconds the C references take to verify every range proof and surjection proof of
    the block ``raw`` (whose inputs spend explicit coins of the block ``funding``), parsing
    included, and the numbers of each; None without wallycore (or if one of them does not
    verify: not a reference)."""
    from ctplugin.pedersen import generator_generate
    from harness.zkp import rangeproof, surjection

    ranges, surjections = rangeproof(), surjection()
    if ranges is None or surjections is None:
        return None
    block = parse_block(raw)
    spent_assets = {(tx.txid, n): out.asset for tx in parse_block(funding).transactions
                    for n, out in enumerate(tx.outputs)}
    range_checks: list[tuple[bytes, bytes, bytes, bytes]] = []
    surjection_checks: list[tuple[bytes, list[bytes], bytes]] = []
    for tx in block.transactions[1:]:
        inputs = [generator_generate(spent_assets[(t.prevout_hash, t.prevout_index)]).serialize()
                  for t in tx.inputs]
        for out in tx.outputs:
            if isinstance(out.value, bytes):
                range_checks.append((out.range_proof, out.value, out.asset, out.script_pubkey))
                surjection_checks.append((out.surjection_proof, inputs, out.asset))

    def loop() -> None:
        for proof, commitment, generator, script in range_checks:
            if ranges.verify(proof, commitment, generator, script) is None:
                raise AssertionError("a block proof does not verify in the C reference")
        for proof, gens, output in surjection_checks:
            if not surjections.verify(proof, gens, output):
                raise AssertionError("a surjection proof does not verify in the C reference")

    try:
        seconds = median_time(loop, repeat=3)
    except AssertionError:
        return None
    return seconds * 1e6, len(range_checks), len(surjection_checks)


def schnorr_ref_us(samples: int = 500) -> float:
    """Microseconds of one secp256k1-zkp ``schnorrsig_verify`` (key parsed per call, as
    Elements does), measured now; NaN without wallycore."""
    from ctplugin.secp256k1 import ct
    from harness.zkp import signatures

    ref = signatures()
    if ref is None:
        return float("nan")
    checks = [(ct.xonly_public_key(k), k.to_bytes(32, "big"),
               ct.schnorr_sign(k, k.to_bytes(32, "big"), bytes(32))) for k in range(1, 65)]

    def loop() -> None:
        for i in range(samples):
            key, msg, sig = checks[i % len(checks)]
            ref.schnorr_verify(key, msg, sig)

    return median_time(loop, repeat=5) / samples * 1e6


def load_blocks(n_tx: int, chain_name: str = DEFAULT_CHAIN) -> list[bytes]:
    params = bench_params(chain_name)
    proofs = params.wallet_range_proof
    kind = "" if proofs == RangeProofKind.BULLETPROOF else f"-{proofs.value}"
    if chain_name == ELEMENTSREGTEST_BENCH:
        kind = f"-{chain_name}-v{ELEMENTS_CACHE_VERSION}"
    path = cache_dir() / f"bench-block-v{CACHE_VERSION}-{n_tx}{kind}.dat"
    if path.exists():
        try:
            blocks = list(read_chain(path, params.network_magic))
            if len(blocks) == 3 and parse_block(blocks[0]).hash == params.genesis_hash:
                return blocks
        except Exception:  # a stale or damaged cache file is rebuilt
            pass
    blocks = (build_elements_blocks(n_tx) if chain_name == ELEMENTSREGTEST_BENCH
              else build_blocks(n_tx, chain_name))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_chain(path, [parse_block(b) for b in blocks], params.network_magic)
    return blocks


@dataclass(frozen=True, slots=True)
class Timed:
    """One connect, with the t unit measured right around it (the machine is shared: t drifts
    with the load, so each run is normalized by its own t)."""

    report: ConnectReport
    t_us: float

    @property
    def seconds(self) -> float:
        return self.report.total_seconds

    @property
    def t(self) -> float:
        return self.seconds * 1e6 / self.t_us


def _timed_submit(node: Node, raw: bytes) -> Timed:
    before = measure_t_us(300)
    gc.collect()
    gc.disable()
    try:
        result = node.submit_block(raw)
    finally:
        gc.enable()
    return Timed(result.connected(), (before + measure_t_us(300)) / 2)


def _fresh_node(root: Path, name: str, blocks: list[bytes], sync: bool,
                params: ChainParams) -> Node:
    node = Node.open(root / name, params, sync=sync)
    node.submit_block(blocks[1]).connected()  # the fan-out block: the coins to spend
    return node


@dataclass(slots=True)
class Measured:
    """Every run of ``measure``: cold, cold on every core, warm, and the flush after each warm
    run (seconds)."""

    cold: list[Timed]
    cold_threads: list[Timed]
    warm: list[Timed]
    flushes: list[float]


def measure(n_tx: int, repeats: int, sync: bool = True,
            chain_name: str = DEFAULT_CHAIN, warm_repeats: int | None = None,
            threads_repeats: int = 0, warm_up: bool = True) -> Measured:
    """Every run submits the block to a fresh data directory that holds genesis and the fan-out
    block, as the next block on its tip; cold runs on one kernel thread and on every core
    (``kernel.set_threads(0)``) take turns, so both see the same load; warm runs first accept
    the block's transactions into the mempool. ``warm_up=False``: skip the untimed first
    connect (generator tables, lazy imports), for a caller that measured in this process
    before."""
    blocks = load_blocks(n_tx, chain_name)
    bench_block = parse_block(blocks[2])
    params = bench_params(chain_name)
    runs = Measured([], [], [], [])
    cold, warm, flushes = runs.cold, runs.warm, runs.flushes
    with tempfile.TemporaryDirectory(prefix="ctplugin-bench-block-") as tmp:
        root = Path(tmp)
        if warm_up:
            with _fresh_node(root, "warm-up", blocks, sync, params) as node:
                node.submit_block(blocks[2])  # generator tables, lazy imports, caches
        for i in range(max(repeats, threads_repeats)):
            if i < repeats:
                with _fresh_node(root, f"cold-{i}", blocks, sync, params) as node:
                    cold.append(_timed_submit(node, blocks[2]))
            if i < threads_repeats:
                with _fresh_node(root, f"cold-threads-{i}", blocks, sync, params) as node:
                    previous = kernel.set_threads(0)  # every core
                    try:
                        runs.cold_threads.append(_timed_submit(node, blocks[2]))
                    finally:
                        kernel.set_threads(previous)
        for i in range(repeats if warm_repeats is None else warm_repeats):
            with _fresh_node(root, f"warm-{i}", blocks, sync, params) as node:
                for tx in bench_block.transactions[1:]:
                    node.accept_transaction(tx)
                timed = _timed_submit(node, blocks[2])
                if timed.report.n_range_cached != timed.report.n_range_proofs:
                    raise AssertionError("warm block did not hit the cache for every proof")
                warm.append(timed)
                start = time.perf_counter()
                node.flush()
                flushes.append(time.perf_counter() - start)
    return runs


def _median(runs: list[Timed]) -> Timed:
    """The run with the median cost in t."""
    return sorted(runs, key=lambda r: r.t)[len(runs) // 2]


def run(quick: bool, t_us: float) -> list[Row]:
    n_tx = 100 if quick else 1000
    sync = os.environ.get("CTPLUGIN_BENCH_SYNC", "1") != "0"
    runs = measure(n_tx, repeats=3, sync=sync, threads_repeats=3)
    cold, warm, par = _median(runs.cold), _median(runs.warm), _median(runs.cold_threads)
    flushes = runs.flushes
    c, w = cold.report, warm.report
    n = c.n_range_proofs
    n_sigs = c.items.get("schnorr", 0)
    schnorr_t = schnorr_ref_us() / cold.t_us
    proofs_ref = (n * RANGE_T_REF + c.n_surjection_proofs * SURJECTION_T_REF
                  + n_sigs * schnorr_t)
    ratio = cold.t / warm.t
    rows = [make_row("block_cold", n, cold.seconds, cold.t_us, reference_t=proofs_ref,
                     target_t=0.5 * proofs_ref,
                     note=f"{c.n_transactions} txs, {c.n_surjection_proofs} surjection proofs, "
                          f"{n_sigs} Schnorr signatures (ref {schnorr_t:.2f} t each), "
                          f"{c.n_msm_items} batch claims in one MSM; t = {cold.t_us:.1f} us "
                          f"around this run; chainstate sync={sync}")]
    for phase, seconds in c.timings.items():
        ref = c.n_surjection_proofs * SURJECTION_T_REF if phase == "surjection" else None
        note = f"claims+msm C ref = {n * RANGE_T_REF:.0f} t" if phase == "msm" else ""
        rows.append(make_row(f"block_cold_{phase}", n, seconds, cold.t_us, reference_t=ref,
                             note=note))
    cores = os.cpu_count() or 1
    rows.append(make_row("block_cold_threads", n, par.seconds, par.t_us, reference_t=proofs_ref,
                         target_t=0.55 * cold.t,
                         note=f"every core ({cores}), wall: {par.t / cold.t:.2f}x block_cold "
                              "in t (target <= 0.55x); ref = the single-threaded C references"))
    for phase, seconds in par.report.timings.items():
        rows.append(make_row(f"block_cold_threads_{phase}", n, seconds, par.t_us))
    rows.append(make_row("block_warm", n, warm.seconds, warm.t_us, reference_t=cold.t,
                         target_t=cold.t / 40,
                         note=f"cold/warm = {ratio:.1f}x in t (target >= 40x); "
                              f"{w.n_range_cached}/{w.n_range_proofs} range proofs cached; "
                              f"t = {warm.t_us:.1f} us around this run"))
    for phase, seconds in w.timings.items():
        rows.append(make_row(f"block_warm_{phase}", n, seconds, warm.t_us))
    flush = sorted(flushes)[len(flushes) // 2]
    rows.append(make_row("block_flush", n, flush, warm.t_us,
                         note="writing one block's UTXO changes to LevelDB (HEAD_BLOCKS batch "
                              f"protocol, sync={sync}); paid once per flush window (dbcache "
                              "full, every 1000 blocks or 60 s), not per block"))
    return rows + borromean_twin_rows(n_tx, sync, cold) + elements_rows(quick, sync)


def elements_rows(quick: bool, sync: bool) -> list[Row]:
    """``block_cold_elements``: the elementsregtest block, cold, against the C references of
    its own proofs and signatures timed in the same run."""
    n_tx = 100 if quick else ELEMENTS_MAX_TXS
    cold = _median(measure(n_tx, repeats=3, sync=sync, chain_name=ELEMENTSREGTEST_BENCH,
                           warm_repeats=0).cold)
    c = cold.report
    n = c.n_range_proofs
    n_ecdsa = c.items.get("ecdsa", 0)
    ecdsa_t = ecdsa_ref_us() / cold.t_us
    measured = proofs_ref_us(*load_blocks(n_tx, ELEMENTSREGTEST_BENCH)[1:])
    if measured is None:
        reference = None
        ref_note = "no C reference (wallycore missing)"
    else:
        proofs_us, n_ranges, n_surj = measured
        reference = proofs_us / cold.t_us + n_ecdsa * ecdsa_t
        ref_note = (f"C ref: {n_ranges} rangeproof_verify + {n_surj} surjectionproof_verify "
                    f"= {proofs_us / cold.t_us:.0f} t, {n_ecdsa} ecdsa_verify at "
                    f"{ecdsa_t:.2f} t each")
    rows = [make_row("block_cold_elements", n, cold.seconds, cold.t_us, reference_t=reference,
                     target_t=None if reference is None else 0.5 * reference,
                     note=f"elementsregtest, {c.n_transactions} txs of one P2WPKH and one "
                          f"P2SH-P2WPKH input, "
                          f"{c.n_surjection_proofs} surjection proofs; {ref_note}; "
                          f"t = {cold.t_us:.1f} us around this run")]
    for phase, seconds in c.timings.items():
        rows.append(make_row(f"block_cold_elements_{phase}", n, seconds, cold.t_us))
    return rows


def _sizes(raw: bytes) -> tuple[int, int, int]:
    """(blinded outputs, their range-proof bytes, block bytes) of a block."""
    outs = [o for tx in parse_block(raw).transactions for o in tx.outputs
            if isinstance(o.value, bytes)]
    return len(outs), sum(len(o.range_proof) for o in outs), len(raw)


BORROMEAN_TWIN_MAX_TXS = 300
"""A Borromean transaction weighs about 10,250 (two 4174-byte proofs): 1000 of them would break
MAX_BLOCK_WEIGHT (bad-blk-weight), so the full-size twin has 300 (3.1M weight)."""


def borromean_twin_rows(n_tx: int, sync: bool, bullet_cold: Timed) -> list[Row]:
    """The same block with Borromean proofs (at most ``BORROMEAN_TWIN_MAX_TXS`` transactions),
    cold, and both kinds per blinded output."""
    twin_txs = min(n_tx, BORROMEAN_TWIN_MAX_TXS)
    cold = _median(measure(twin_txs, repeats=3, sync=sync, chain_name=CTREGTEST_BORROMEAN,
                           warm_repeats=0).cold)
    c = cold.report
    n = c.n_range_proofs
    proofs_ref = n * BORROMEAN_US_REF / cold.t_us + c.n_surjection_proofs * SURJECTION_T_REF
    rows = [make_row("block_cold_borromean", n, cold.seconds, cold.t_us, reference_t=proofs_ref,
                     note=f"{c.n_transactions} txs, Borromean proofs on the ring kernel "
                          f"({c.timings.get('borromean', 0.0):.3f} s), {c.n_msm_items} batch "
                          f"claims (balances); t = {cold.t_us:.1f} us around this run")]
    for name, timed, chain_name, txs in (
            ("block_output_bulletproof", bullet_cold, DEFAULT_CHAIN, n_tx),
            ("block_output_borromean", cold, CTREGTEST_BORROMEAN, twin_txs)):
        outs, proof_bytes, block_bytes = _sizes(load_blocks(txs, chain_name)[2])
        rows.append(make_row(name, outs, timed.seconds / outs, timed.t_us,
                             note=f"cold connect per blinded output; {proof_bytes / outs:.0f} "
                                  f"range-proof bytes and {block_bytes / outs:.0f} block bytes "
                                  "per output"))
    return rows
