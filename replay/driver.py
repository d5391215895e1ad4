"""The replay driver: stream a source's blocks into the data directory's chainstate, in height
order, with one of the verification modes (``replay.modes``), progress and a report.

The driver is the only writer of the chainstate (``replay.engine``);
modes decide only *where and when* each block's stateless proof work is verified. Whatever the
mode, the chainstate ends identical, and a rejected block stops the replay with the reason and
the transaction / input / output the validator names (``ReplayError``), after every block before
it was connected.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from contextlib import closing

from ctplugin.bulletproofs import consensus_generators
from ctplugin.secp256k1 import kernel
from regtest.elements import chain_from_words
from replay.config import (
    ReplayConfig,
    ReplayError,
    ReplayMode,
    block_hash_hex,
)
from replay.engine import Engine
from replay.modes import make_mode
from replay.progress import ReplayProgress, peak_rss_mib
from replay.report import ReplayReport
from replay.sources import BlockSource, SourceBlock, SourceError, prefetch
from replay.stopping import StopRequest
from validator import tune_collector


def same_chain(source: BlockSource, engine: Engine,
               chain_height: int | None) -> Iterator[SourceBlock]:
    """The source's blocks from the data directory's tip + 1, after checking that the source's
    block at the highest height both have (the tip, or the source's last block) is the data
    directory's block there: resuming skips the source's blocks by height, so a data directory
    of another chain must not be mistaken for a finished or half-done replay of this one.
    ``SourceError`` if they differ."""
    tip = engine.node.tip.height
    height = tip if chain_height is None else max(0, min(tip, chain_height))
    stream = source.blocks(height)
    first = next(stream, None)
    if first is not None:
        theirs, ours = block_hash_hex(first.raw), engine.node.block_hash(first.height)
        if ours is None or theirs != ours[::-1].hex():
            mine = ours[::-1].hex() if ours is not None else "none"
            raise SourceError(f"{source.description}: source block {first.height} {theirs} is "
                              f"not this data directory's block {first.height} ({mine}): "
                              "another chain? (use a fresh --datadir)")
    if first is None or first.height < tip:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
        return iter(())
    return stream


class Timed:
    """Iterate ``blocks`` while adding the time spent waiting for each to a report's "read"."""

    def __init__(self, blocks: Iterator[SourceBlock], report: ReplayReport,
                 stop_at_height: int | None) -> None:
        self.blocks = blocks
        self.report = report
        self.stop = stop_at_height

    def __iter__(self) -> Iterator[SourceBlock]:
        clock = time.perf_counter
        while True:
            start = clock()
            block = next(self.blocks, None)
            self.report.phases["read"] += clock() - start
            if block is None or (self.stop is not None and block.height > self.stop):
                return
            yield block


def replay(source: BlockSource, datadir: str | os.PathLike[str],
           config: ReplayConfig | None = None) -> ReplayReport:
    """Replay ``source`` into ``datadir`` (resuming from its tip); the report of this run.
    ``ReplayError`` for a rejected block, ``SourceError`` / ``StoreError`` for I/O trouble;
    either way every block before the failure stays connected (and verified)."""
    config = config or ReplayConfig()
    # Ctrl-C asks for a stop that is honoured between blocks (replay.stopping)
    with StopRequest() as stop:
        return _replay(source, datadir, config, stop)


def _replay(source: BlockSource, datadir: str | os.PathLike[str], config: ReplayConfig,
            stop: StopRequest) -> ReplayReport:
    last = chain_height = source.last_height()  # an unreachable source fails before the datadir
    with Engine.open(datadir, chain_from_words(config.chain, config.chain_options)) as engine:
        stop.on_force = engine.abandon  # a second Ctrl-C: write nothing more, as a kill
        engine.recover()
        stop.check()
        start = engine.node.tip.height + 1
        if config.stop_at_height is not None:
            last = config.stop_at_height if last is None else min(last, config.stop_at_height)
        report = ReplayReport(mode=config.mode, source=source.description, start_height=start,
                              window=config.window if config.mode is ReplayMode.WINDOW else 0)
        utxos = engine.utxo_summary().count
        progress = ReplayProgress(quiet=config.quiet,
                                  enabled=config.show_progress and (last is None or start <= last),
                                  first_height=start, last_height=last,
                                  chain_height=chain_height,
                                  start_tx=engine.chain_transactions(),
                                  cache_mib=engine.coins_cache_mib,
                                  utxos=utxos, log_every=config.log_every)
        previous_par = kernel.set_threads(config.par)
        previous_gc = tune_collector()
        report.kernel_threads = kernel.threads()
        consensus_generators()  # built once per process: not part of the first block's time
        began = time.perf_counter()
        try:
            with progress, make_mode(config, engine, report, progress) as mode:
                report.workers = mode.workers
                if mode.workers:
                    report.worker_kernel_threads = config.worker_par or os.cpu_count() or 1
                report.startup_seconds = time.perf_counter() - began
                began = time.perf_counter()
                mode.restart_clock()
                progress.restart_clock()
                try:
                    stream = same_chain(source, engine, chain_height)
                    if last is None or start <= last:
                        with closing(prefetch(stream, config.prefetch,
                                              check=stop.check)) as blocks:
                            for block in Timed(blocks, report, config.stop_at_height):
                                stop.check()  # the node is consistent here: stop if asked
                                mode.feed(block)
                except SourceError:
                    mode.finish()  # verify what was connected; an earlier culprit comes first
                    raise
                mode.finish()
                stop.check()  # asked while the last verdicts came in: still a stop (status 130)
                report.seconds = time.perf_counter() - began  # not closing workers / clusters
                mode.describe(report)
        except ReplayError as exc:
            exc.report = report  # the failed block and what follows it are disconnected
            raise
        except BaseException as exc:
            # Workers lost, interrupted, I/O trouble: blocks committed before their proofs
            # were verified must not stay (the node holds them pending: take them out). An
            # abandoned node (a forced Ctrl-C, maybe mid-block) is not touched again: the next
            # open recovers from disk.
            if not engine.abandoned:
                engine.recover()
            if isinstance(exc, SourceError):
                raise SourceError(f"{exc} (replay stopped with the chainstate at height "
                                  f"{engine.node.tip.height})") from None
            raise
        finally:
            if not report.seconds:
                report.seconds = time.perf_counter() - began
            if not engine.abandoned:
                tip = engine.node.tip
                report.height = tip.height
                report.tip = tip.hash[::-1].hex()
                report.utxo_set_hash = engine.utxo_summary().hash_hex
            report.peak_rss_mib = peak_rss_mib()
            kernel.set_threads(previous_par)
            gc.set_threshold(*previous_gc)
    return report
