"""The values block connection hands on: stage 2's ``ResolvedInputs``, the ONE
``PreparedBlock`` from ``BlockValidator.prepare`` (stages 1–4) to commit (stage 6), and the
``ConnectReport`` of a connected block (docs/design.md "Data flow").

A ``PreparedBlock`` is what every caller of the stage API holds between "prepared" and
"committed": ``BlockValidator.connect`` (all stages in one call), ``Node.prepare_block`` /
``Node.commit_block`` (the node's stage API) and every replay mode, which verifies its
``work`` (stage 5) wherever it likes. Nothing re-wraps it on the way up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, overload

from ctplugin.elements import Block, TxOut
from validator.items import Family
from validator.rules import SpentOutput
from validator.store import BlockRef, ChainstateConflictError, Outpoint, SpendView, UtxoEntry
from validator.timing import Stage, StageTimer
from validator.verify import Prefetch, ProofWork


class SpentOutputs(Sequence[list[SpentOutput | bytes]]):
    """Per transaction of a block (the coinbase: none) the outputs its inputs spend, in input
    order: an output created earlier in the block as its ``TxOut``, one from the chainstate as
    its stored bytes (``decode_txout`` reads them). Made on demand, once per transaction: the
    block needs them only for transactions the mempool did not vouch for."""

    __slots__ = ("_entries", "_in_block", "_lists", "_points")

    def __init__(self, points: Sequence[Sequence[Outpoint]],
                 entries: Mapping[Outpoint, UtxoEntry | None],
                 in_block: Mapping[Outpoint, TxOut]) -> None:
        self._points = points
        self._entries = entries
        self._in_block = in_block
        self._lists: list[list[SpentOutput | bytes] | None] = [None] * len(points)

    def __len__(self) -> int:
        return len(self._points)

    @overload
    def __getitem__(self, i: int) -> list[SpentOutput | bytes]: ...

    @overload
    def __getitem__(self, i: slice) -> list[list[SpentOutput | bytes]]: ...

    def __getitem__(self, i: int | slice
                    ) -> list[SpentOutput | bytes] | list[list[SpentOutput | bytes]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        outs = self._lists[i]
        if outs is None:
            entries = self._entries
            in_block = self._in_block
            outs = self._lists[i] = [in_block[o] if o in in_block else _stored(entries[o])
                                     for o in self._points[i]]
        return outs


def _stored(entry: UtxoEntry | None) -> bytes:
    if entry is None:  # resolve_inputs names every missing input first
        raise ChainstateConflictError("a resolved input has no UTXO entry")
    return entry.txout




class ResolvedInputs(NamedTuple):
    """Stage 2's answer: per transaction the outputs its inputs spend (``SpentOutputs``), the
    spent outpoints in block order, the UTXO entries the block creates and the snapshot read
    itself (``connect_block`` reuses its entries)."""

    spent: Sequence[Sequence[SpentOutput | bytes]]
    spent_points: list[Outpoint]
    created: list[tuple[Outpoint, UtxoEntry]]
    view: SpendView


@dataclass(slots=True)
class ConnectReport:
    """What connecting one block did: items per family ("range", "surjection", ...) and how
    many the proof cache vouched for, the batch size, and seconds per stage (``timings``)."""

    hash: bytes
    height: int
    n_transactions: int
    block: Block | None = None
    items: dict[str, int] = field(default_factory=dict)
    cached: dict[str, int] = field(default_factory=dict)
    n_balance: int = 0
    n_msm_items: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def total_seconds(self) -> float:
        return sum(self.timings.values())

    @property
    def batch_seconds(self) -> float:
        """Stage 5's batch: building the claims and the multi-scalar multiplication."""
        return self.timings.get(Stage.CLAIMS, 0.0) + self.timings.get(Stage.MSM, 0.0)

    @property
    def n_range_proofs(self) -> int:
        """Range proofs of both kinds (families "range": Bulletproofs, "borromean")."""
        return self.items.get(Family.RANGE, 0) + self.items.get(Family.BORROMEAN, 0)

    @property
    def n_range_cached(self) -> int:
        return self.cached.get(Family.RANGE, 0) + self.cached.get(Family.BORROMEAN, 0)

    @property
    def n_surjection_proofs(self) -> int:
        return self.items.get(Family.SURJECTION, 0)

    @property
    def n_surjection_cached(self) -> int:
        return self.cached.get(Family.SURJECTION, 0)


@dataclass(frozen=True, slots=True)
class PreparedBlock:
    """A block after stages 1–4 on ``tip`` (``BlockValidator.prepare``): ``work`` is what
    stage 5 verifies (anywhere: it pickles), ``inputs`` what stage 6 writes, ``consumed`` the
    cache keys hit (consumed when it commits), ``items`` / ``cached`` the items and cache hits
    per family, ``n_balance`` the number of balance claims, ``timer`` the stages so far.
    ``raw``: the block's bytes when the caller will store them (``Node.prepare_block``); None
    for a block already stored (the chain manager's activation). ``prefetch``: stage 5's
    script-independent kernels already running (``verify.Prefetch``; pass it to ``verify``)."""

    block: Block
    raw: bytes | None
    tip: BlockRef
    timer: StageTimer
    inputs: ResolvedInputs
    work: ProofWork
    consumed: list[bytes]
    items: dict[str, int]
    cached: dict[str, int]
    n_balance: int
    prefetch: Prefetch | None = None

    @property
    def hash(self) -> bytes:
        return self.block.hash

    @property
    def height(self) -> int:
        return self.block.header.height

    @property
    def n_range_proofs(self) -> int:
        """Range proofs of both kinds (families "range": Bulletproofs, "borromean")."""
        return self.items.get(Family.RANGE, 0) + self.items.get(Family.BORROMEAN, 0)

    @property
    def n_surjection_proofs(self) -> int:
        return self.items.get(Family.SURJECTION, 0)

    @property
    def n_proofs(self) -> int:
        """Every item counted, signatures and scripts included (the progress line's count)."""
        return sum(self.items.values())

    def report(self, n_msm_items: int) -> ConnectReport:
        """The ``ConnectReport`` of this block once committed (``n_msm_items``: the claims
        stage 5 put in its batch; 0 when stage 5 ran elsewhere)."""
        block = self.block
        return ConnectReport(block.hash, block.header.height, len(block.transactions), block,
                             self.items, self.cached, self.n_balance, n_msm_items,
                             self.timer.seconds)
