"""Verification modes: where and when each block's stateless proof work (stage 5) is verified.
The driver feeds blocks in height order; every mode ends in the same chainstate and names the
same culprit (``validator.verify`` / ``verify_blocks`` name the first failing item of the
first failing block exactly as connecting the blocks one by one would).

- ``single``: each range proof, balance and surjection proof verified on its own (one MSM per
  proof, Elements' way) — the baseline.
- ``block``: the node's connect: one batch (one MSM) per block for every range proof and
  balance, then its surjection proofs.
- ``window``: blocks are connected in order (inputs, amounts, coinbase, the UTXO write) while
  their proof work waits; every W blocks ONE batch covers the range proofs and balances of all
  of them, then their surjection proofs. A failure names the first failing block; it and the
  blocks after it are disconnected.
- ``workers`` / ``dask``: the same pipeline, with each task (the work of blocks holding about
  ``task_proofs`` proofs, one packed buffer) verified in a worker process / on a Dask cluster
  while the driver connects the next blocks. Verdicts are applied in height order; at most
  ``max_in_flight`` tasks are out (back-pressure).

The deferred modes commit a block before its proofs are verified as *pending* in the node
(``replay.engine``): never indexed or flushed until verified, so a killed replay never trusts
such a block.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from operator import itemgetter
from typing import cast

import validator
from ctplugin.closing import Closeable
from ctplugin.errors import ParseError, ValidationError
from replay.config import ReplayConfig, ReplayError, ReplayMode, block_hash_hex, tip_info
from replay.engine import Engine
from replay.progress import ReplayProgress, TipInfo, current_rss_mib
from replay.report import BlockRecord, ReplayReport
from replay.sources import SourceBlock
from replay.tasks import pack_works, unpack_verdict
from replay.workers import TaskPool, TaskResult, WorkerPool, default_workers
from validator import PreparedBlock, ProofWork, StageTimer, verify_blocks

Label = tuple[int, str, int]
"""An item's label (validator's ItemLabel: transaction index, kind, position): culprit order."""

# The validator's stage names (ConnectReport.timings, StageTimer) → the report's phases.
PHASE_OF_STAGE = {
    "parse": "parse", "check": "checks", "plan": "checks", "cache": "checks",
    "resolve": "utxo", "claims": "range_proofs", "msm": "range_proofs",
    "range": "range_proofs", "borromean": "range_proofs", "surjection": "surjection_proofs",
    "commit": "write",
    "store": "write",
}


def phases_of(timings: dict[str, float]) -> dict[str, float]:
    """Stage seconds summed into report phases (a stage without a phase keeps its name)."""
    out: dict[str, float] = {}
    for stage, seconds in timings.items():
        phase = PHASE_OF_STAGE.get(stage, stage)
        out[phase] = out.get(phase, 0.0) + seconds
    return out


@dataclass(slots=True)
class Pending:
    """The replay's bookkeeping for a committed block (its report record and progress line)
    and, in the deferred modes, the ``PreparedBlock.work`` still to verify. Not the prepared
    block itself: once committed, its inputs and cache hits are garbage, and a mode holds
    hundreds of these while workers verify (``work`` is dropped too once a task holds it)."""

    source: SourceBlock
    hash: bytes
    record: BlockRecord
    tip: TipInfo
    work: ProofWork | None  # None once handed to a task

    def proof_work(self) -> ProofWork:
        assert self.work is not None, "this block's proof work was already handed out"
        return self.work


class Mode(Closeable, ABC):
    """A verification strategy fed blocks in height order by the driver."""

    workers = 0

    def __init__(self, config: ReplayConfig, engine: Engine, report: ReplayReport,
                 progress: ReplayProgress) -> None:
        self.config = config
        self.engine = engine
        self.report = report
        self.progress = progress
        self._last_done = time.perf_counter()

    def restart_clock(self) -> None:
        """Block times count from now (after workers / clusters started)."""
        self._last_done = time.perf_counter()

    def describe(self, report: ReplayReport) -> None:
        """Add what the mode knows to the report (worker restarts, task retries)."""

    @abstractmethod
    def feed(self, block: SourceBlock) -> None:
        """Connect ``block`` (the next height), verifying its proofs now or later."""

    def finish(self) -> None:
        """After the last block (or before reporting a source error): settle what is
        pending."""

    def close(self) -> None:
        """Release workers / clusters (also after an error)."""

    # --- shared steps ------------------------------------------------------------------------

    def rejected(self, block: SourceBlock, exc: ValidationError | ParseError,
                 block_hash: str | None = None) -> ReplayError:
        if isinstance(exc, ParseError):
            return ReplayError(block.height, block.where, None, "block-undecodable",
                               detail=str(exc))
        return ReplayError.from_validation(
            block, block_hash if block_hash is not None else block_hash_hex(block.raw), exc)

    def prepare(self, block: SourceBlock) -> PreparedBlock:
        """Stages 1–4 of ``block`` on the tip; its rejection as a ``ReplayError``."""
        try:
            return self.engine.node.prepare_block(block.raw)
        except (ValidationError, ParseError) as exc:
            self.settle()  # an earlier block's proofs may be the first failure
            raise self.rejected(block, exc) from None

    def settle(self) -> None:
        """Verify everything pending (deferred modes); raise its culprit if one fails."""

    def pending(self, block: SourceBlock, prepared: PreparedBlock) -> Pending:
        parsed = prepared.block
        record = BlockRecord(block.height, len(parsed.transactions), prepared.n_range_proofs,
                             prepared.n_surjection_proofs, balances=prepared.n_balance)
        return Pending(block, parsed.hash, record, tip_info(parsed, prepared.n_proofs),
                       prepared.work)

    def done(self, blocks: list[Pending]) -> None:
        """These blocks are verified and connected: the wall time since the previous ones
        finished is theirs (shared by proofs), and the progress moves on."""
        now = time.perf_counter()
        ReplayReport.share_time([p.record for p in blocks], now - self._last_done)
        self._last_done = now
        for p in blocks:
            self._record(p)
            self.progress.block_done(p.tip)

    def _record(self, block: Pending) -> None:
        """``block`` into the report, with the driver's resident memory now."""
        block.record.rss_mib = current_rss_mib()
        self.report.add_block(block.record)

    def fail(self, failed: Pending, exc: ValidationError) -> ReplayError:
        """``failed``'s proofs failed: the blocks before it verified (verdicts name the first
        failing block); take it and everything after it out (their proofs were never
        accepted), leaving the last verified block as the tip."""
        unverified: list[Pending] = getattr(self, "unverified", [])
        before = [p for p in unverified if p.source.height < failed.source.height]
        if before:
            self.engine.node.mark_verified(before[-1].hash)
        self.engine.node.reject_block(failed.hash)
        return self.rejected(failed.source, exc, failed.tip.hash_hex)


# ------------------------------------------------------------------------------------------------
# One block at a time
# ------------------------------------------------------------------------------------------------


class BlockMode(Mode):
    """``block``: the node's own connect, one block at a time."""

    def feed(self, block: SourceBlock) -> None:
        try:
            connected = self.engine.node.submit_block(block.raw).connected()
        except (ValidationError, ParseError) as exc:
            raise self.rejected(block, exc) from None
        parsed = connected.block
        assert parsed is not None
        n_proofs = connected.n_range_proofs + connected.n_surjection_proofs
        record = BlockRecord(block.height, connected.n_transactions, connected.n_range_proofs,
                             connected.n_surjection_proofs, balances=connected.n_balance)
        self.report.add_phases(phases_of(connected.timings))
        self.done([Pending(block, parsed.hash, record, tip_info(parsed, n_proofs), None)])


def verify_single(work: ProofWork, timer: StageTimer) -> None:
    """Every item of ``work`` verified on its own, in the order that names the same culprit
    as the block's ``verify``: ascending label over every kind — balances, range proofs,
    signatures and checks together — so the first that fails is the lowest failing label,
    which is what ``verify`` reports (a failing check below the batch's culprit wins there too).
    Balances are timed as "balance", range proofs and signatures as "claims" / "msm"."""
    singles: list[tuple[Label, ProofWork]] = [
        (cast(Label, claim.label), ProofWork(claims=[claim])) for claim in work.claims]
    singles += [(item.label, ProofWork(batch=[item])) for item in work.batch]
    singles += [(item.label, ProofWork(checks=[item])) for item in work.checks]
    singles.sort(key=itemgetter(0))
    balance = StageTimer()
    for _, one in singles:
        # validator.verify, the function (``from validator import verify`` reads to the import
        # linter as the validator.verify module, which layers above may not import)
        validator.verify(one, balance if one.claims else timer)
    timer.seconds["balance"] = timer.seconds.get("balance", 0.0) + balance.total


class SingleMode(Mode):
    """``single``: each proof on its own (the baseline)."""

    def feed(self, block: SourceBlock) -> None:
        prepared = self.prepare(block)
        try:
            verify_single(prepared.work, prepared.timer)
        except ValidationError as exc:
            raise self.rejected(block, exc, prepared.block.hash_hex) from None
        self.engine.node.commit_block(prepared)
        self.report.add_phases(phases_of(prepared.timer.seconds))
        self.done([self.pending(block, prepared)])


# ------------------------------------------------------------------------------------------------
# Deferred proof work: windows, worker processes, Dask
# ------------------------------------------------------------------------------------------------


class DeferredMode(Mode):
    """Connect in order, verify later: the shared bookkeeping of window / workers / dask."""

    def __init__(self, config: ReplayConfig, engine: Engine, report: ReplayReport,
                 progress: ReplayProgress) -> None:
        super().__init__(config, engine, report, progress)
        self.unverified: list[Pending] = []  # committed, proofs not verified, height order

    def commit_unverified(self, block: SourceBlock, prepared: PreparedBlock) -> Pending:
        self.engine.node.commit_block(prepared, verified=False)
        self.report.add_phases(phases_of(prepared.timer.seconds))
        entry = self.pending(block, prepared)
        self.unverified.append(entry)
        return entry

    def verified(self, count: int) -> None:
        """The first ``count`` unverified blocks are verified."""
        blocks, self.unverified = self.unverified[:count], self.unverified[count:]
        self.engine.node.mark_verified(blocks[-1].hash)
        self.done(blocks)

    def finish(self) -> None:
        self.settle()


class WindowMode(DeferredMode):
    """``window``: ONE batch per W consecutive blocks."""

    def feed(self, block: SourceBlock) -> None:
        prepared = self.prepare(block)
        self.commit_unverified(block, prepared)
        if len(self.unverified) >= self.config.window:
            self.settle()

    def settle(self) -> None:
        if not self.unverified:
            return
        timer = StageTimer()
        failure = verify_blocks([p.proof_work() for p in self.unverified], timer)
        self.report.add_phases(phases_of(timer.seconds))
        if failure is not None:
            k, exc = failure
            raise self.fail(self.unverified[k], exc)
        self.verified(len(self.unverified))


class PoolMode(DeferredMode):
    """``workers`` / ``dask``: tasks of about ``task_proofs`` proofs, verified elsewhere."""

    MAX_TASK_BLOCKS = 64

    def __init__(self, config: ReplayConfig, engine: Engine, report: ReplayReport,
                 progress: ReplayProgress) -> None:
        super().__init__(config, engine, report, progress)
        self.pool = self.make_pool()
        self.group: list[Pending] = []  # committed, not yet in a task
        self.tasks: dict[int, int] = {}  # task id → number of blocks, submitted, not applied
        self.verdicts: dict[int, TaskResult] = {}
        self.next_task = 0  # the oldest task not applied
        self.submitted = 0
        self.draining: list[Pending] | None = None  # blocks verified while settle() waits

    @abstractmethod
    def make_pool(self) -> TaskPool:
        """Start the workers (before the clock starts)."""

    def feed(self, block: SourceBlock) -> None:
        prepared = self.prepare(block)
        entry = self.commit_unverified(block, prepared)
        self.group.append(entry)
        proofs = sum(p.record.range_proofs + p.record.surjection_proofs for p in self.group)
        submitted: list[Pending] = []
        if proofs >= self.config.task_proofs or len(self.group) >= self.MAX_TASK_BLOCKS:
            submitted = self.group
            self.submit_group()
        self.collect(block=False)
        # Workers verify while the driver connects the next blocks, so a verdict's arrival
        # says nothing about a block's cost (the first task's blocks would take all the time
        # until then, the last ones none): a block's wall time is the driver's time on it;
        # handing a task over (packing, waiting for room in the pool) is shared by the task's
        # blocks, by proofs; the drain after the last block is shared in settle().
        now = time.perf_counter()
        if submitted:
            ReplayReport.share_time([p.record for p in submitted], now - self._last_done)
        else:
            entry.record.seconds += now - self._last_done
        self._last_done = now

    def done(self, blocks: list[Pending]) -> None:
        """Verified blocks: their wall time was credited when they were fed (``feed``), or
        is the drain's share (``settle``)."""
        for p in blocks:
            self.progress.block_done(p.tip)
            if self.draining is not None:
                self.draining.append(p)
            else:
                self._record(p)

    def submit_group(self) -> None:
        if not self.group:
            return
        start = time.perf_counter()
        payload = pack_works([p.proof_work() for p in self.group], self.config.worker_par)
        self.report.phases["pack"] = self.report.phases.get("pack", 0.0) + (
            time.perf_counter() - start)
        for p in self.group:
            p.work = None  # the task holds it now
        task_id = self.submitted
        self.submitted += 1
        self.tasks[task_id] = len(self.group)
        self.group = []
        start = time.perf_counter()
        self.pool.submit(task_id, payload)  # blocks while the pool is full
        self.report.phases["wait"] += time.perf_counter() - start

    def collect(self, block: bool) -> None:
        start = time.perf_counter()
        for result in self.pool.completed(block=block):
            self.verdicts[result.task_id] = result
        if block:
            self.report.phases["wait"] += time.perf_counter() - start
        self.apply()

    def apply(self) -> None:
        """Apply verdicts in task (height) order: the first failure is the first failing
        block whatever order the tasks finished in."""
        while self.next_task in self.verdicts:
            result = self.verdicts.pop(self.next_task)
            n_blocks = self.tasks.pop(self.next_task)
            self.next_task += 1
            failure, seconds = unpack_verdict(result.result)
            self.report.add_worker_phases(phases_of(seconds))
            if failure is not None:
                k, exc = failure
                raise self.fail(self.unverified[k], exc)
            self.verified(n_blocks)

    def settle(self) -> None:
        """Wait for every task; the wait is shared, by proofs, by the blocks it verified."""
        drained: list[Pending] = []
        self.draining = drained
        try:
            self.submit_group()
            while self.tasks:
                self.collect(block=True)
        finally:
            self.draining = None
            now = time.perf_counter()
            ReplayReport.share_time([p.record for p in drained], now - self._last_done)
            self._last_done = now
            for p in drained:
                self._record(p)

    def describe(self, report: ReplayReport) -> None:
        report.worker_restarts = getattr(self.pool, "replaced", 0)
        report.task_retries = getattr(self.pool, "retried", 0)

    def close(self) -> None:
        self.pool.close()


class WorkersMode(PoolMode):
    def make_pool(self) -> TaskPool:
        self.workers = self.config.workers or default_workers()
        return WorkerPool(self.workers, self.config.task_target,
                          max_in_flight=self.config.max_in_flight, warmup="replay.tasks:warm")


class DaskMode(PoolMode):
    def make_pool(self) -> TaskPool:
        from replay.cluster import DaskPool

        pool = DaskPool(self.config.task_target, scheduler=self.config.scheduler,
                        n_workers=self.config.workers or default_workers(),
                        processes=self.config.dask_processes,
                        max_in_flight=self.config.max_in_flight, warmup="replay.tasks:warm")
        self.workers = pool.n_workers
        self.report.source += f" (verified on {pool.description})"
        return pool


MODE_CLASSES: dict[ReplayMode, type[Mode]] = {
    ReplayMode.SINGLE: SingleMode, ReplayMode.BLOCK: BlockMode, ReplayMode.WINDOW: WindowMode,
    ReplayMode.WORKERS: WorkersMode, ReplayMode.DASK: DaskMode,
}


def make_mode(config: ReplayConfig, engine: Engine, report: ReplayReport,
              progress: ReplayProgress) -> Mode:
    return MODE_CLASSES[config.mode](config, engine, report, progress)
