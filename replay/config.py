"""What a replay is asked to do and how it fails: the mode, the options, the error naming the
rejected block, and the per-block facts the progress line shows. The driver (``replay.driver``)
and the modes (``replay.modes``) both read these, so they sit below both.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ctplugin.elements import Block
from ctplugin.elements.script import is_unspendable
from ctplugin.errors import CtpluginError, ParseError, ValidationError
from regtest.params import DEFAULT_CHAIN
from replay.progress import TipInfo
from replay.report import ReplayReport
from replay.sources import SourceBlock


class ReplayMode(StrEnum):
    """Where and when a block's proof work is verified (``replay.modes``, one class each)."""

    SINGLE = "single"
    BLOCK = "block"
    WINDOW = "window"
    WORKERS = "workers"
    DASK = "dask"


@dataclass(frozen=True, slots=True)
class ReplayConfig:
    """How to replay (``ctplugin replay`` options)."""

    mode: ReplayMode = ReplayMode.BLOCK
    window: int = 10
    workers: int | None = None  # None: one per core
    scheduler: str | None = None  # dask: tcp://HOST:PORT, or None for a LocalCluster
    dask_processes: bool = True  # LocalCluster worker processes (False: threads, for tests)
    stop_at_height: int | None = None
    quiet: bool = False
    log_every: float = 1.0  # seconds between UpdateTip lines with quiet
    show_progress: bool = True  # False: neither bar nor lines (benchmarks, library callers)
    task_proofs: int = 1000  # workers / dask: proofs per task (about 0.1 s of work)
    max_in_flight: int | None = None  # workers / dask: tasks in flight (None: 2-3 per worker)
    task_target: str = "replay.tasks:verify_task"  # what workers run (tests inject faults)
    par: int = 0  # kernel threads of the driver's own verification (0: all cores, Core's -par)
    worker_par: int = 1  # kernel threads inside each worker process / Dask worker
    prefetch: int = 8  # blocks read ahead of validation
    chain: str = DEFAULT_CHAIN  # which of our chains (regtest.params.select_chain)
    chain_options: tuple[str, ...] = ()  # elementsd's chain options of elementsregtest

    def __post_init__(self) -> None:
        # A caller's plain string ("window") becomes the member; an unknown one is refused here,
        # before a data directory is opened.
        try:
            object.__setattr__(self, "mode", ReplayMode(self.mode))
        except ValueError:
            raise ValueError(f"unknown mode {self.mode!r} (one of {', '.join(ReplayMode)})") \
                from None


class ReplayError(CtpluginError):
    """A block the replay could not connect: its height, hash, location and the reason."""

    def __init__(self, height: int, where: str, block_hash: str | None, reason: str,
                 tx_index: int | None = None, input_index: int | None = None,
                 output_index: int | None = None, detail: str = "") -> None:
        self.height = height
        self.where = where
        self.block_hash = block_hash
        self.reason = reason
        self.tx_index = tx_index
        self.input_index = input_index
        self.output_index = output_index
        self.detail = detail
        self.report: ReplayReport | None = None  # the run up to the failure (set by replay)
        super().__init__(str(self))

    @classmethod
    def from_validation(cls, block: SourceBlock, block_hash: str | None,
                        exc: ValidationError) -> ReplayError:
        return cls(block.height, block.where, block_hash, exc.reason, exc.tx_index,
                   exc.input_index, exc.output_index, exc.detail)

    @property
    def culprit(self) -> tuple[str, int | None, int | None, int | None]:
        """(reason, tx index, input index, output index): what every mode must agree on."""
        return self.reason, self.tx_index, self.input_index, self.output_index

    def __str__(self) -> str:
        where = [f"tx {self.tx_index}"] if self.tx_index is not None else []
        if self.input_index is not None:
            where.append(f"input {self.input_index}")
        if self.output_index is not None:
            where.append(f"output {self.output_index}")
        culprit = f" ({', '.join(where)})" if where else ""
        detail = f": {self.detail}" if self.detail else ""
        name = f" {self.block_hash}" if self.block_hash else ""
        return (f"block {self.height}{name} at {self.where} rejected: "
                f"{self.reason}{culprit}{detail}")


def block_hash_hex(raw: bytes) -> str | None:
    """The block's hash for messages (None if its header does not even parse)."""
    from ctplugin.elements import parse_block

    try:
        return parse_block(raw).hash_hex
    except ParseError:
        return None


def tip_info(block: Block, n_proofs: int) -> TipInfo:
    """What the progress line says about a connected block."""
    header = block.header
    return TipInfo(header.hash_hex, header.height, header.version, header.time,
                   len(block.transactions), n_proofs, utxo_delta(block))


def utxo_delta(block: Block) -> int:
    """UTXOs a block adds: spendable outputs created minus inputs spent (coinbase excluded)."""
    txs = block.transactions
    created = sum(1 for tx in txs for out in tx.outputs
                  if not is_unspendable(out.script_pubkey))
    spent = sum(len(tx.inputs) for tx in txs[1:])
    return created - spent
