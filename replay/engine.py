"""The replay driver's one view of the validator (its public surface only) and of the data
directory it owns.

- ``Engine.open(datadir)``: a ``validator.Node`` on our regtest chain, proof cache off (a replay
  measures verification; design.md "Proof caches"), chainstate writes without fsync (as Core,
  which does not sync per block: LevelDB appends each block's batch to its log with one write(),
  which survives a killed process).
- ``connect`` (a block, all stages), ``prepare`` (stages 1–4: checks, inputs, plan, cache
  pass → the block's ``ProofWork``, nothing verified or written) and ``commit`` (stage 6),
  ``disconnect_tip``, ``tip``, ``utxo_summary``. Stage 5 is ``validator.verify`` /
  ``verify_blocks`` on the ``ProofWork`` — wherever the mode runs it.
- The *verified marker* ``<datadir>/replay-verified`` (``height hash``): the modes that commit a
  block before its proofs are verified (window, workers, dask) write it before their first such
  commit and move it forward as verdicts arrive. ``recover`` — run by every mode on open — rolls
  the chainstate back to it, so a replay killed at any moment never leaves an unverified block
  behind: it resumes from the last verified block.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctplugin.closing import Closeable
from ctplugin.elements import Block, parse_block
from regtest.params import chain_params, genesis_block
from validator import BlockRef, ConnectReport, Node, ProofWork, StageTimer, StoreError

MARKER = "replay-verified"


@dataclass(slots=True)
class Prepared:
    """A block after stages 1–4: its proof work and what committing it needs."""

    block: Block
    work: ProofWork
    items: dict[str, int]  # items per family ("range", "surjection", ...)
    timer: StageTimer
    inputs: Any  # the validator's resolved inputs, handed back to ``commit``

    @property
    def n_range(self) -> int:
        return self.items.get("range", 0)

    @property
    def n_surjection(self) -> int:
        return self.items.get("surjection", 0)

    @property
    def n_proofs(self) -> int:
        return sum(self.items.values())


@dataclass(frozen=True, slots=True)
class UtxoSummary:
    count: int
    hash_hex: str


class Engine(Closeable):
    """One open data directory, driven by the replay (see the module docstring)."""

    def __init__(self, node: Node, datadir: Path) -> None:
        self.node = node
        self.datadir = datadir

    @classmethod
    def open(cls, datadir: str | os.PathLike[str]) -> Engine:
        node = Node.open(datadir, genesis_block(), chain_params(), sync=False, use_cache=False)
        return cls(node, Path(datadir))

    @property
    def tip(self) -> BlockRef:
        tip = self.node.tip
        assert tip is not None  # Node.open connects genesis into an empty chainstate
        return tip

    def connect(self, raw: bytes) -> ConnectReport:
        """Every stage of one block, verified before it is written (block mode)."""
        return self.node.submit_block(raw)

    # Stages 1–4 and 6 one by one. The node's public surface has only submit_block (all six);
    # until it exposes Node.prepare_block / commit_block (requested, interfaces.md §6), this is
    # the one place that calls the node's BlockValidator stage methods (the same sequence as
    # BlockValidator.connect, without stage 5).

    def prepare(self, raw: bytes) -> Prepared:
        """Stages 1–4 of ``raw`` on the current tip; ``ValidationError`` / ``ParseError`` as
        connect would raise them. Nothing is verified or written."""
        validator = self.node.validator
        timer = StageTimer()
        with timer.stage("parse"):
            block = parse_block(raw)
        with timer.stage("check"):
            knowns = validator.known_transactions(block)
            validator.check_block(block, self.tip, knowns)
        with timer.stage("resolve"):
            inputs = validator.resolve_inputs(block)
        with timer.stage("plan"):
            plan = validator.plan(block, inputs.spent, knowns)
        with timer.stage("cache"):
            cached = validator.cache_pass(plan)
        return Prepared(block, cached.work, cached.items, timer, inputs)

    def commit(self, prepared: Prepared) -> None:
        """Stage 6: the block's one atomic chainstate write (it must extend the tip)."""
        with prepared.timer.stage("commit"):
            self.node.validator.commit(prepared.block, prepared.inputs)

    def disconnect_tip(self) -> BlockRef:
        return self.node.disconnect_tip()

    def rollback_to(self, height: int) -> int:
        """Disconnect blocks until the tip is at ``height``; returns how many."""
        rolled = 0
        while self.tip.height > height:
            self.disconnect_tip()
            rolled += 1
        return rolled

    def utxo_summary(self) -> UtxoSummary:
        """Count and hash of the whole UTXO set: SHA256 over every entry's (outpoint key ‖
        stored entry) in key order, so identical sets hash the same whatever the history.
        (Replaced by the store's ``Node.utxo_stats()`` once it lands, interfaces.md §6.)"""
        digest = hashlib.sha256()
        count = 0
        for outpoint, entry in self.node.data.chainstate.iter_utxos():
            key = outpoint.key()
            value = entry.encode()
            digest.update(len(key).to_bytes(4, "little") + key)
            digest.update(len(value).to_bytes(4, "little") + value)
            count += 1
        return UtxoSummary(count, digest.hexdigest())

    # --- the verified marker ---------------------------------------------------------------

    @property
    def marker_path(self) -> Path:
        return self.datadir / MARKER

    def read_marker(self) -> BlockRef | None:
        try:
            text = self.marker_path.read_text().split()
        except FileNotFoundError:
            return None
        if len(text) != 2 or not text[0].isdigit():
            raise StoreError(f"{self.marker_path} is malformed (expected 'HEIGHT HASH')")
        try:
            block_hash = bytes.fromhex(text[1])[::-1]
        except ValueError:
            raise StoreError(f"{self.marker_path} is malformed (expected 'HEIGHT HASH')") from None
        return BlockRef(block_hash, int(text[0]))

    def write_marker(self, ref: BlockRef) -> None:
        """Atomically (temporary file, rename): the marker is old or new, never partial."""
        tmp = self.marker_path.with_suffix(".tmp")
        tmp.write_text(f"{ref.height} {ref.hash[::-1].hex()}\n")
        os.replace(tmp, self.marker_path)

    def clear_marker(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.marker_path.unlink()

    def recover(self) -> int:
        """Roll back blocks committed after the last verified one (a killed window / workers /
        dask replay); returns how many were disconnected. The marker is then removed: every
        block left in the chainstate is verified."""
        marker = self.read_marker()
        if marker is None:
            return 0
        rolled = self.rollback_to(marker.height)
        if self.tip != marker:
            raise StoreError(f"{self.marker_path} names block {marker.hash[::-1].hex()} at "
                             f"height {marker.height}, but the chainstate's tip is "
                             f"{self.tip.hash[::-1].hex()} at height {self.tip.height}")
        self.clear_marker()
        return rolled

    # --- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        self.node.close()

