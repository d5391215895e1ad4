"""What a replay did: totals, the per-phase split, one record per block; as a table and as JSON.

JSON (``ReplayReport.to_json``), stable keys::

    {"mode", "source", "blocks", "transactions", "range_proofs", "surjection_proofs",
     "balances", "seconds", "height", "tip", "utxo_set_hash", "start_height", "workers",
     "window", "kernel_threads", "worker_kernel_threads", "phases": {PHASE: seconds},
     "worker_phases": {PHASE: cpu seconds},
     "blocks_per_second", "transactions_per_second", "proofs_per_second", "peak_rss_mib",
     "startup_seconds", "worker_restarts", "task_retries",
     "per_block": [{"height", "transactions", "range_proofs", "surjection_proofs", "seconds",
                    "blocks", "balances", "rss_mib"}]}

``tip`` is the block hash in elementsd's hex order; ``seconds`` is wall time from the first
block to the last (``startup_seconds``, starting workers or a cluster, comes before it);
``phases`` are the driver's own time (``read`` = waiting for the source, ``wait`` = waiting for
workers' verdicts); ``worker_phases`` the CPU time workers spent (workers and dask modes:
concurrent with the driver, so the two do not add up to ``seconds``). In the batch modes (block,
window, workers, dask) balances are verified inside the range-proof batch (one multi-scalar
multiplication), so their time is under ``range_proofs``; ``balances`` counts the balance
equations verified in every mode (one per transaction with confidential amounts, as the
validator plans them). ``per_block`` seconds add up to (at most) ``seconds``: blocks verified
together (a window) share the wall time since the previous ones, by proofs; in the workers and
dask modes, whose verdicts arrive while the driver connects later blocks, a block's time is the
driver's time on it, and the wait for the last verdicts is shared by the blocks they verified.
``rss_mib`` is the driver's resident memory when the block was connected (the largest of a
merged record's). Past ``MAX_RECORDS`` blocks, neighbouring records are merged two by two
(``blocks`` says how many each covers), so a replay of millions of blocks keeps a bounded report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PHASES = ("read", "parse", "checks", "utxo", "range_proofs", "surjection_proofs", "balances",
          "write", "pack", "wait")
PHASE_TITLES = {
    "read": "read (source)", "parse": "parse", "checks": "checks (rules, fees)",
    "utxo": "UTXO lookups", "range_proofs": "range proofs", "surjection_proofs":
    "surjection proofs", "balances": "balances", "write": "database write",
    "pack": "packing tasks", "wait": "waiting for verdicts",
    "scripts": "scripts and signatures",
}
REPORT_KEYS = ("mode", "blocks", "transactions", "range_proofs", "seconds", "height", "tip",
               "utxo_set_hash")


class ReportError(Exception):
    """A report file that is not a replay report."""


MAX_RECORDS = 50_000  # per_block entries kept: a longer replay merges neighbours (bounded)


@dataclass(slots=True)
class BlockRecord:
    """One block (or, on a long replay, ``blocks`` consecutive blocks ending at ``height``)."""

    height: int
    transactions: int
    range_proofs: int
    surjection_proofs: int
    seconds: float = 0.0
    blocks: int = 1
    balances: int = 0
    rss_mib: float = 0.0

    def absorb(self, later: BlockRecord) -> None:
        self.height = later.height
        self.transactions += later.transactions
        self.range_proofs += later.range_proofs
        self.surjection_proofs += later.surjection_proofs
        self.seconds += later.seconds
        self.blocks += later.blocks
        self.balances += later.balances
        self.rss_mib = max(self.rss_mib, later.rss_mib)


@dataclass(slots=True)
class ReplayReport:
    mode: str
    source: str
    start_height: int = 0
    workers: int = 0
    window: int = 0
    kernel_threads: int = 0  # threads the driver's kernel calls used
    worker_kernel_threads: int = 0  # threads each worker's kernel calls used (workers / dask)
    blocks: int = 0
    transactions: int = 0
    range_proofs: int = 0
    surjection_proofs: int = 0
    balances: int = 0
    seconds: float = 0.0
    height: int = 0
    tip: str = ""
    utxo_set_hash: str = ""
    phases: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    worker_phases: dict[str, float] = field(default_factory=dict)
    peak_rss_mib: float = 0.0
    startup_seconds: float = 0.0  # starting workers / a cluster, before the first block
    worker_restarts: int = 0  # workers mode: dead workers replaced
    task_retries: int = 0  # workers mode: tasks run again after their worker died
    per_block: list[BlockRecord] = field(default_factory=list)
    _bucket: int = field(default=1, repr=False)  # blocks per record (doubles past MAX_RECORDS)

    # --- accumulation ------------------------------------------------------------------------

    def add_phases(self, timings: Mapping[str, float]) -> None:
        for name, seconds in timings.items():
            self.phases[name] = self.phases.get(name, 0.0) + seconds

    def add_worker_phases(self, timings: Mapping[str, float]) -> None:
        for name, seconds in timings.items():
            self.worker_phases[name] = self.worker_phases.get(name, 0.0) + seconds

    def add_block(self, record: BlockRecord) -> None:
        records = self.per_block
        if records and records[-1].blocks < self._bucket:
            records[-1].absorb(record)
        else:
            records.append(record)
            if len(records) > MAX_RECORDS:
                self._bucket *= 2
                merged = records[0::2]
                for first, second in zip(merged, records[1::2]):
                    first.absorb(second)
                records[:] = merged
        self.blocks += 1
        self.transactions += record.transactions
        self.range_proofs += record.range_proofs
        self.surjection_proofs += record.surjection_proofs
        self.balances += record.balances

    @staticmethod
    def share_time(records: Iterable[BlockRecord], seconds: float) -> None:
        """Spread ``seconds`` of wall time over blocks that finished together (a window, a
        task), in proportion to their proofs (equally if none has any)."""
        group = list(records)
        weights = [r.range_proofs + r.surjection_proofs for r in group]
        total = sum(weights)
        for record, weight in zip(group, weights, strict=True):
            record.seconds += seconds * (weight / total if total else 1 / len(group))

    # --- derived figures -----------------------------------------------------------------------

    def rate(self, count: int) -> float:
        return count / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["_bucket"]
        data["blocks_per_second"] = self.rate(self.blocks)
        data["transactions_per_second"] = self.rate(self.transactions)
        data["proofs_per_second"] = self.rate(self.range_proofs + self.surjection_proofs)
        return data

    def write_json(self, path: str | os.PathLike[str]) -> None:
        tmp = Path(f"{os.fspath(path)}.tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        os.replace(tmp, path)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReplayReport:
        missing = [k for k in REPORT_KEYS if k not in data]
        if missing:
            raise ReportError(f"not a replay report: missing {', '.join(missing)}")
        try:
            per_block = [BlockRecord(**b) for b in data.get("per_block", [])]
            fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
            fields["per_block"] = per_block
            return cls(**fields)
        except TypeError as exc:
            raise ReportError(f"not a replay report: {exc}") from None

    @classmethod
    def read_json(cls, path: str | os.PathLike[str]) -> ReplayReport:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise ReportError(f"{path}: {exc}") from None
        if not isinstance(data, dict):
            raise ReportError(f"{path}: not a JSON object")
        try:
            return cls.from_json(data)
        except ReportError as exc:
            raise ReportError(f"{path}: {exc}") from None

    # --- the table -----------------------------------------------------------------------------

    def table(self) -> Any:
        """A rich Table: totals, rates and the per-phase split."""
        from rich.table import Table

        title = (f"replay ({self.mode}) of {self.source}: heights {self.start_height}–"
                 f"{self.height}")
        table = Table(title=title, show_edge=False)
        table.add_column("phase")
        table.add_column("seconds", justify="right")
        table.add_column("share", justify="right")
        table.add_column("ms/block", justify="right")
        driver_total = sum(self.phases.values())
        blocks = max(self.blocks, 1)
        extra = [name for name in self.phases if name not in PHASES]  # e.g. new check families
        for name in (*PHASES, *extra):
            seconds = self.phases.get(name, 0.0)
            if seconds == 0.0 and name in ("wait", "balances", "pack"):
                continue
            share = seconds / driver_total if driver_total else 0.0
            table.add_row(PHASE_TITLES.get(name, name), f"{seconds:.3f}", f"{share:.1%}",
                          f"{1000 * seconds / blocks:.2f}")
        for name, seconds in self.worker_phases.items():
            table.add_row(f"workers: {PHASE_TITLES.get(name, name)} (cpu)", f"{seconds:.3f}",
                          "", f"{1000 * seconds / blocks:.2f}")
        table.add_section()
        table.add_row("total (wall)", f"{self.seconds:.3f}", "",
                      f"{1000 * self.seconds / blocks:.2f}")
        return table

    def summary(self) -> list[str]:
        """Totals, rates, the tip and the UTXO-set hash, one line each."""
        proofs = self.range_proofs + self.surjection_proofs
        return [
            f"{self.blocks} blocks, {self.transactions} transactions, {self.range_proofs} "
            f"range proofs, {self.surjection_proofs} surjection proofs in {self.seconds:.2f} s: "
            f"{self.rate(self.blocks):.1f} blocks/s, {self.rate(self.transactions):.0f} tx/s, "
            f"{self.rate(proofs):.0f} proofs/s (peak RSS {self.peak_rss_mib:.0f} MiB)",
            f"tip {self.tip} at height {self.height}",
            f"UTXO set hash {self.utxo_set_hash}",
        ]
