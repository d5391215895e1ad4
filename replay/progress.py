"""Replay progress: a rich progress bar (blocks, transactions and proofs per second, ETA), or with
``--quiet`` periodic Core-style ``UpdateTip`` log lines (docs/replay.md §4.4)::

    UpdateTip: new best=<hash> height=<n> version=0x<8 hex> log2_work=<f> tx=<n>
      date='<ISO-8601 block time>' progress=<0..1> cache=<MiB>MiB(<n>txo)

On our signed-block chain every block adds one unit of work (Elements' GetBlockProof for
signed blocks), so ``log2_work`` = log2(height + 1). As in Core, ``tx`` is the chain's
transaction count up to that block (nChainTx, a resumed replay included) and ``cache`` the coins
cache's memory use, with the UTXO count.
"""

from __future__ import annotations

import math
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from regtest import corelog


def peak_rss_mib() -> float:
    """Peak resident set size of this process (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mib() -> float:
    """Resident set size of this process now (Linux: ``/proc/self/statm``, in pages); where
    that file does not exist, the peak (the best figure the platform gives)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            resident_pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return peak_rss_mib()
    return resident_pages * resource.getpagesize() / (1024 * 1024)


@dataclass(frozen=True, slots=True)
class TipInfo:
    """What an UpdateTip line says about a connected block."""

    hash_hex: str
    height: int
    version: int
    time: int
    transactions: int
    proofs: int
    utxo_delta: int


def update_tip_line(tip: TipInfo, total_tx: int, progress: float, utxos: int | None,
                    cache_mib: float) -> str:
    return corelog.update_tip_line(tip.hash_hex, tip.height, tip.version, tip.time, total_tx,
                                   progress, cache_mib, utxos)


class ReplayProgress:
    """Shows a replay's progress; ``block_done`` after every connected (verified) block."""

    def __init__(self, *, quiet: bool, first_height: int, last_height: int | None,
                 enabled: bool = True,
                 chain_height: int | None = None, start_tx: int = 0,
                 utxos: int | None = None, log_every: float = 1.0,
                 cache_mib: Callable[[], float] | None = None,
                 stream: TextIO | None = None, console: Console | None = None) -> None:
        self.quiet = quiet
        self.enabled = enabled
        self.first_height = first_height
        self.last_height = last_height  # where this replay stops (the bar's end)
        self.chain_height = chain_height if chain_height is not None else last_height
        self.total_tx = start_tx  # the chain's transactions up to the tip (nChainTx)
        self.cache_mib = cache_mib if cache_mib is not None else peak_rss_mib
        self.utxos = utxos
        self.log_every = log_every
        self.stream = stream if stream is not None else sys.stderr
        self.blocks = 0
        self.transactions = 0
        self.proofs = 0
        self._started = time.perf_counter()
        self._last_line = -math.inf
        self._pending: TipInfo | None = None
        self._bar: Progress | None = None
        self._task = None
        if enabled and not quiet:
            total = None if last_height is None else max(last_height - first_height + 1, 0)
            self._bar = Progress(
                TextColumn("[bold]replay"), BarColumn(), MofNCompleteColumn(),
                TextColumn("blocks"), TextColumn("{task.fields[tx_rate]} tx/s"),
                TextColumn("{task.fields[proof_rate]} proofs/s"), TimeElapsedColumn(),
                TextColumn("eta"), TimeRemainingColumn(),
                console=console or Console(file=self.stream), transient=False)
            self._task = self._bar.add_task("replay", total=total, tx_rate="0",
                                            proof_rate="0")

    def __enter__(self) -> ReplayProgress:
        self._started = time.perf_counter()
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def restart_clock(self) -> None:
        """Rates count from now: starting workers or a cluster is not replay speed (the
        report's ``startup_seconds`` holds it)."""
        self._started = time.perf_counter()
        if self._bar is not None and self._task is not None:
            self._bar.reset(self._task, tx_rate="0", proof_rate="0")

    def block_done(self, tip: TipInfo) -> None:
        self.blocks += 1
        self.transactions += tip.transactions
        self.total_tx += tip.transactions
        self.proofs += tip.proofs
        if self.utxos is not None:
            self.utxos += tip.utxo_delta
        elapsed = max(time.perf_counter() - self._started, 1e-9)
        if self._bar is not None:
            assert self._task is not None
            self._bar.update(self._task, advance=1,
                             tx_rate=f"{self.transactions / elapsed:,.0f}",
                             proof_rate=f"{self.proofs / elapsed:,.0f}")
            return
        if not self.enabled:
            return
        now = time.perf_counter()
        self._pending = tip
        if now - self._last_line >= self.log_every:
            self._flush_line()
            self._last_line = now

    def _flush_line(self) -> None:
        tip = self._pending
        if tip is None:
            return
        self._pending = None
        # Core's progress: the share of the source's chain connected so far.
        progress = min(tip.height / self.chain_height, 1.0) if self.chain_height else 1.0
        print(update_tip_line(tip, self.total_tx, progress, self.utxos, self.cache_mib()),
              file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        else:
            self._flush_line()  # the last block always gets its line
