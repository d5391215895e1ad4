"""Replay benchmark: the same chain replayed in every verification mode.

The chain (``regtest.builder.build_transfer_chain``): a funding block, then 40 blocks
(``--quick``: 6) of 250 transactions (``--quick``: 60), each spending two blinded coins into two
blinded outputs (a Bulletproof and a two-input surjection proof each) and a fee. Proving 20000
Bulletproofs takes minutes, so the chain is built once and kept in the benchmark cache
(``$CTPLUGIN_BENCH_CACHE`` or ``~/.cache/ctplugin``), keyed by its size.

Every mode starts from a copy of the same data directory (genesis and the funding block
connected) and replays the transfer blocks from the chain file with ``replay.driver.replay``,
proof cache off, chainstate writes without fsync (the replay's defaults); worker processes and
the Dask LocalCluster are started before the clock starts. Rows, per block (n = range proofs
per block), in the t of this run, the median of the repeats (the modes interleaved):

- ``replay_single``: every proof verified on its own (Elements' way), the baseline;
- ``replay_block``: one batch per block, as the node connects a block. Target ≤ 0.2 × single;
  ``replay_block_threads``: the same with the kernel's threads on every core (``--par 0``, the
  node's default);
- ``replay_window``: one batch per W = 10 blocks. Target ≤ 0.85 × block;
- ``replay_workers``: the proof work in 2 worker processes (2 cores, one kernel thread each),
  wall time. Target ≤ 0.55 × block;
- ``replay_dask``: the same on a Dask LocalCluster of 2 worker processes. Target ≤ 0.65 × block;
- ``replay_single_ref``: what the C reference (secp256k1-zkp) spends on the same proofs one by
  one: 63 t per Bulletproof (docs/design.md; wallycore's secp256k1-zkp has no Bulletproof verifier)
  plus the block's surjection proofs verified through wallycore's secp256k1-zkp in this run
  (about 3.2 t each), or 3.2 t each without wallycore;
- ``replay_block_<phase>``: where block mode's time goes (read, parse, checks, UTXO, range
  proofs + balances (one batch), surjection proofs, write);
- ``replay_rss``: resident memory of the replaying process at block 10 and block 40 of a 40-block
  block-mode replay (``--quick``: a 40 x 20 chain of its own), from the report's per-block
  ``rss_mib``. Target: the later within 10 % of the earlier (memory does not grow with the chain).

As in every benchmark, a row runs on one core unless its name says otherwise: the driver's own
verification (single, block, window) uses one kernel thread (``--par 1``), and the workers and Dask
rows use 2 worker processes of one kernel thread each, so their gain over ``replay_block`` is what
the second core buys. Mode rows' ``reference_t`` is the C reference one by one; the target rows'
``target_t`` is the target (the factor × the measured baseline in t). Each note also gives the
driver process's CPU time per block (its threads included; for workers / Dask the driver's share,
worker start-up included): for the one-process rows the figure that other load on the machine
disturbs least.
"""

from __future__ import annotations

import gc
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from bench.common import Row, cache_dir, make_row
from ctplugin.elements import parse_block
from harness.zkp import surjection as libsecp_surjection
from regtest.builder import build_transfer_chain
from regtest.params import DEFAULT_CHAIN, NETWORK_MAGIC, select_chain
from replay.config import ReplayConfig
from replay.driver import replay
from replay.engine import Engine
from replay.report import ReplayReport
from replay.sources import ChainFileSource
from validator import read_chain, write_chain

CACHE_VERSION = 2  # v2: the wallet signs its inputs (scripts are validated)
RANGE_T_REF = 63.0  # one 64-bit Bulletproof verified alone, secp256k1-zkp (docs/design.md)
SURJECTION_T_REF = 3.2  # one two-input surjection proof, secp256k1-zkp (docs/design.md)
TARGETS = {"replay_block": ("replay_single", 0.2), "replay_window": ("replay_block", 0.85),
           "replay_workers": ("replay_block", 0.55), "replay_dask": ("replay_block", 0.65)}
RSS_BLOCKS = (10, 40)  # resident memory at these blocks of a 40-block replay: flat within 10 %
RSS_TARGET = 1.10


def chain_file(n_blocks: int, n_txs: int) -> Path:
    """The benchmark chain (built on first use, then read from the cache)."""
    path = cache_dir() / f"bench-replay-v{CACHE_VERSION}-{n_blocks}x{n_txs}.dat"
    if path.exists():
        try:
            blocks = list(read_chain(path, NETWORK_MAGIC))
            if len(blocks) == n_blocks + 2 and \
                    parse_block(blocks[0]).hash == select_chain(DEFAULT_CHAIN).genesis_hash:
                return path
        except Exception:  # a stale or damaged cache file is rebuilt
            pass
    print(f"bench replay: building a {n_blocks} x {n_txs} chain once (cached in {path})",
          flush=True)
    chain = build_transfer_chain(n_blocks, n_txs)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_chain(path, chain.blocks, NETWORK_MAGIC)
    return path


@dataclass(frozen=True, slots=True)
class Run:
    report: ReplayReport
    cpu_seconds: float  # this process's CPU time over the run (its threads included)

    @property
    def seconds_per_block(self) -> float:
        return self.report.seconds / self.report.blocks

    @property
    def cpu_per_block(self) -> float:
        return self.cpu_seconds / self.report.blocks


def _template(path: Path, root: Path) -> Path:
    """A data directory with genesis and the funding block connected."""
    template = root / "template"
    with Engine.open(template, select_chain(DEFAULT_CHAIN)) as engine:
        engine.node.submit_block(next(ChainFileSource(path).blocks(1)).raw).connected()
    return template


def _run(path: Path, template: Path, root: Path, config: ReplayConfig) -> Run:
    datadir = root / f"run-{config.mode}"
    shutil.rmtree(datadir, ignore_errors=True)
    shutil.copytree(template, datadir)
    gc.collect()
    cpu = time.process_time()
    report = replay(ChainFileSource(path), datadir, config)
    run = Run(report, time.process_time() - cpu)
    shutil.rmtree(datadir, ignore_errors=True)
    return run


def _median(runs: list[Run]) -> Run:
    return sorted(runs, key=lambda r: r.seconds_per_block)[len(runs) // 2]


def _reference_surjection_t(path: Path, t_us: float) -> tuple[float, int, str]:
    """(C reference t for one block's surjection proofs, their number, how it was got): the
    second transfer block's proofs verified by secp256k1-zkp (wallycore) in this run."""
    blocks = [parse_block(raw) for raw in read_chain(path, NETWORK_MAGIC)]
    block, parent = blocks[3], blocks[2]
    assets = {(tx.txid, n): out.asset for tx in parent.transactions
              for n, out in enumerate(tx.outputs)}
    checks = []
    for tx in block.transactions[1:]:
        targets = [assets[(txin.prevout_hash, txin.prevout_index)] for txin in tx.inputs]
        checks += [(out.surjection_proof, targets, out.asset) for out in tx.outputs
                   if out.surjection_proof]
    zkp = libsecp_surjection()
    if zkp is None:
        return len(checks) * SURJECTION_T_REF, len(checks), "3.2 t each (docs/design.md)"
    parsed = [(zkp.parse_proof(p), zkp.parse_generators(t), len(t), zkp.parse_generators([o]))
              for p, t, o in checks]
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for proof, inputs, n, output in parsed:
            assert proof is not None and inputs is not None and output is not None
            if not zkp.verify_parsed(proof, inputs, n, output):
                raise AssertionError("the C reference rejects a benchmark surjection proof")
        samples.append(time.perf_counter() - start)
    seconds = statistics.median(samples)
    return (seconds * 1e6 / t_us, len(checks),
            f"{seconds * 1e6 / t_us / len(checks):.2f} t each, secp256k1-zkp via wallycore, "
            "this run")


def run(quick: bool, t_us: float) -> list[Row]:
    n_blocks, n_txs = (6, 60) if quick else (40, 250)
    repeats = 1 if quick else 3
    path = chain_file(n_blocks, n_txs)
    cores = len(os.sched_getaffinity(0))
    configs = {
        "replay_single": ReplayConfig(mode="single", par=1),
        "replay_block": ReplayConfig(mode="block", par=1),
        "replay_block_threads": ReplayConfig(mode="block", par=0),
        "replay_window": ReplayConfig(mode="window", window=10, par=1),
        "replay_workers": ReplayConfig(mode="workers", workers=2),
        "replay_dask": ReplayConfig(mode="dask", workers=2),
    }
    runs: dict[str, list[Run]] = {name: [] for name in configs}
    with tempfile.TemporaryDirectory(prefix="ctplugin-bench-replay-") as tmp:
        root = Path(tmp)
        template = _template(path, root)
        for _ in range(repeats):
            for name, config in configs.items():
                silent = replace(config, show_progress=False)
                runs[name].append(_run(path, template, root, silent))
    chosen = {name: _median(r) for name, r in runs.items()}
    # Every row in the run's one t: the modes run interleaved, so load that comes and goes
    # hits them alike, and their ratios are ratios of wall times (dividing each run by a t
    # measured around it, 300 multiplications under the same swings, added noise instead).
    t_of = {name: r.seconds_per_block * 1e6 / t_us for name, r in chosen.items()}
    ref_t = 0.0
    rows = []
    for name, chosen_run in chosen.items():
        report = chosen_run.report
        n = report.range_proofs // report.blocks
        target = TARGETS.get(name)
        target_t = None
        note = (f"{report.blocks} blocks x {report.transactions // report.blocks} txs; "
                f"median of {len(runs[name])}; driver CPU "
                f"{chosen_run.cpu_per_block * 1e6 / t_us:.0f} t")
        if target is not None:
            base, factor = target
            target_t = factor * t_of[base]
            note += (f"; {t_of[name] / t_of[base]:.2f} x {base} (target <= {factor}); "
                     f"startup {report.startup_seconds:.2f} s not counted")
        if name in ("replay_workers", "replay_dask"):
            note += f"; {report.workers} workers on {cores} cores"
        rows.append(make_row(name, n, chosen_run.seconds_per_block, t_us, note=note,
                             target_t=target_t))
        if name == "replay_single":
            surjection_t, n_surj, how = _reference_surjection_t(path, t_us)
            ref_t = n * RANGE_T_REF + surjection_t
            rows.append(make_row(
                "replay_single_ref", n, ref_t * t_us / 1e6, t_us,
                note=f"C reference, proofs one by one: {n} x {RANGE_T_REF:g} t (Bulletproof, "
                     f"docs/design.md) + {n_surj} surjection proofs at {how}"))
    rows.append(_rss_row(chosen["replay_block"].report if n_blocks >= RSS_BLOCKS[1]
                         else _rss_report(), t_us))
    block = chosen["replay_block"]
    for phase, seconds in block.report.phases.items():
        if seconds:
            rows.append(make_row(f"replay_block_{phase}", block.report.range_proofs //
                                 block.report.blocks, seconds / block.report.blocks, t_us))
    return [_with_ref_ratio(r, ref_t) for r in rows]


def _rss_report() -> ReplayReport:
    """A block-mode replay of a 40-block chain of its own (the quick chain is too short)."""
    path = chain_file(RSS_BLOCKS[1], 20)
    with tempfile.TemporaryDirectory(prefix="ctplugin-bench-rss-") as tmp:
        root = Path(tmp)
        config = ReplayConfig(mode="block", par=1, show_progress=False)
        return _run(path, _template(path, root), root, config).report


def _rss_row(report: ReplayReport, t_us: float) -> Row:
    """Memory at block 10 against block 40 (``rss_mib`` of the per-block records, which are
    one block each at this length)."""
    first, last = (report.per_block[n - 1].rss_mib for n in RSS_BLOCKS)
    growth = last / first
    met = "met" if growth <= RSS_TARGET else "MISSED"
    return replace(make_row("replay_rss", report.blocks, report.seconds / report.blocks, t_us,
                            note=f"RSS {first:.0f} MiB at block {RSS_BLOCKS[0]}, {last:.0f} MiB "
                                 f"at block {RSS_BLOCKS[1]}: {growth:.3f}x (target <= "
                                 f"{RSS_TARGET}x, {met}); block mode, one thread"),
                   peak_rss_mib=report.peak_rss_mib)


def _with_ref_ratio(row: Row, ref_t: float) -> Row:
    """Mode rows say how they compare with the C reference's one-by-one cost."""
    if row.name not in TARGETS and row.name != "replay_single":
        return row
    return replace(row, reference_t=ref_t,
                   note=f"{row.note}; {row.t / ref_t:.2f} x the C reference one by one")
