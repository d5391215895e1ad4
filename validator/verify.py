"""Stage 5 of block connection: the stateless proof work of one or more blocks.

``verify(work)`` is a pure function of a ``ProofWork`` (prebuilt claims + batch items + check
items, ``validator.items``): it reads no chainstate and no cache, so it runs the same in the
validating process, in a worker process (the work pickles) or on a Dask cluster.

1. every prebuilt claim (the balance equations) and every batch item's claim (the items of a
   kind built together: all range proofs in one kernel call) go into ONE ``BatchVerifier`` over
   the Bulletproof fixed base [G, G_i, H_i] → one multi-scalar multiplication; on failure
   ``BatchVerifier.first_failure`` names the first false claim in label order by halving. A
   malformed batch item is kept aside, not raised at once: a claim with a lower label may fail
   the batch, and the culprit is the lowest label (transaction index, then kind and position)
   among malformed items and the first false claim;
2. then the check items, in label order; the first failure is the culprit. The kinds with a
   ``prepare`` classmethod compute their verdicts first, together: the surjection proofs and the
   Borromean range proofs in ONE ring-kernel call each (every ring of every proof in waves, on
   the kernel's threads), the ECDSA signatures over threads; their checks read those verdicts.

``Prefetch(work)``: the part of a block's work that needs nothing from its scripts (the
Bulletproof claims, the check kinds' verdicts) started early on a helper thread (block
connection with more than one kernel thread: right after the block checks, or after the cache
pass); ``verify(work, timer, prefetch)`` uses its results for the items of ``work`` (the batch
waits for the claims; the checks for the verdicts, computed beside the scripts and the MSM);
what it computed for items the cache then vouched for is left out. The verdicts and culprits
are those of ``verify(work)``.

``verify_blocks(works)`` does the same for several blocks in ONE batch (replay windows) and
names the first failing block: its culprit is what ``verify`` would report for it alone.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

from ctplugin.batch import BatchVerifier, Claim, ClaimGroup
from ctplugin.bulletproofs import consensus_generators
from ctplugin.errors import ValidationError
from validator import reasons
from validator.items import (
    BatchItem,
    CheckItem,
    ItemLabel,
    Malformed,
    RangeItem,
    VerifyContext,
)
from validator.timing import StageTimer


@dataclass(slots=True)
class ProofWork:
    """The proof work of one block (or one transaction, in the mempool): what is left after
    the cache pass. ``claims`` are prebuilt batch claims (labelled ``ItemLabel``: the
    balances), always verified."""

    claims: list[Claim] = field(default_factory=list)
    batch: list[BatchItem] = field(default_factory=list)
    checks: list[CheckItem] = field(default_factory=list)

    @property
    def n_claims(self) -> int:
        """Claims in the batch (one per prebuilt claim and per batch item)."""
        return len(self.claims) + len(self.batch)

    def __reduce__(self) -> tuple[Any, tuple[_PlainWork]]:
        """Pickle as plain tuples: each claim's fields, each item as (its class, its label's
        fields, its other fields). Pickling thousands of named tuples calls Python for each
        (``__getnewargs__``), plain tuples pickle in C: a 250-transaction block of ``bench
        replay`` packs for a worker in 2.4 ms instead of 6.6 and unpacks in 2.6 instead of 3.3
        (collector paused, ``replay.tasks``). Items are named tuples with ``label`` first (the
        rule for a kind, ``validator.items``); other field values pickle as they are."""
        return _unreduce_work, ((
            [(tuple(cast(ItemLabel, c.label)), c.base, c.fixed, c.free_scalars, c.free_points,
              c.shared, c.fixed_const) for c in self.claims],
            [(type(i), tuple(i.label), *i[1:]) for i in self.batch],  # type: ignore[index]
            [(type(i), tuple(i.label), *i[1:]) for i in self.checks],  # type: ignore[index]
        ),)


_PlainWork = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]
_new_tuple = tuple.__new__  # a named tuple from its fields, without ``_make``'s Python call


def _unreduce_work(plain: _PlainWork) -> ProofWork:
    claims, batch, checks = plain
    return ProofWork(
        [Claim.trusted(_new_tuple(ItemLabel, c[0]), *c[1:]) for c in claims],
        [_new_tuple(c[0], (_new_tuple(ItemLabel, c[1]), *c[2:])) for c in batch],
        [_new_tuple(c[0], (_new_tuple(ItemLabel, c[1]), *c[2:])) for c in checks])


class BlockLabel(NamedTuple):
    """A claim's label in a batch over several blocks: position of the block, item label."""

    block: int
    item: ItemLabel


class Prefetch:
    """The part of a block's stage 5 that needs nothing from its scripts stage, started early
    on a helper thread: the claims of batch items (``RangeItem.claims``: the Bulletproofs' one
    kernel call), then the verdicts of check items (``prepare``: the surjection and Borromean
    proofs' one ring-kernel call each). The kernels release the GIL, so this runs beside the
    block's Python on another core. ``verify(work, timer, prefetch)`` takes the results for the
    items of ``work``: its verdicts and culprit are those of ``verify(work)``.

    Made by ``BlockValidator.prepare(..., early=True)`` when the kernel may use more than one
    thread. Right after the block checks, from the Bulletproofs of the transactions the mempool
    did not know (the items ``rules.foreseen_ranges`` finds in them), with ``checks_later``
    and ``threads`` one core fewer than the kernel may use, so that the block's Python keeps a
    core: the check items come with ``add_checks`` after the cache pass, which does the Python
    of the kinds that prepare in two parts (``staged``: the surjection proofs) in the caller's
    thread, leaving the helper only their kernels (two threads running Python contend for the
    GIL, and the block's Python is its critical path). Without such Bulletproofs (Elements'
    chain: a ring kernel that wants every core; a block of mempool transactions), from what the
    cache pass left, all of it on the helper. The block's work may hold fewer of the items —
    the cache vouched for some, which ``take`` leaves out — and more: items not foreseen, which
    ``verify`` builds as usual. ``ctx`` is the one ``verify`` continues with (every core); the
    helper's kernels use ``threads`` (None: the kernel setting). ``seconds``: the helper's wall
    time per part ("claims", then each prepared family), for profiles (overlapped, so not a
    stage)."""

    __slots__ = ("_checks_given", "_claimed", "_error", "_jobs", "_thread", "_threads", "batch",
                 "checks", "claims", "ctx", "malformed", "prepared", "seconds")

    def __init__(self, work: ProofWork, threads: int | None = None, *,
                 checks_later: bool = False) -> None:
        self.ctx = VerifyContext()
        self.batch = list(work.batch)
        self.checks: list[CheckItem] = []
        self.prepared: set[type] = set()
        self.claims: list[Claim | ClaimGroup] = []
        self.malformed: Malformed = []
        self.seconds: dict[str, float] = {}
        self._threads = threads
        self._error: BaseException | None = None
        self._claimed = threading.Event()  # the claims are built (the batch may start)
        self._checks_given = threading.Event()
        self._jobs: list[tuple[str, Callable[[int], None]]] = []
        self._thread = threading.Thread(target=self._run, name="ctplugin-verify-prefetch",
                                        daemon=True)
        self._thread.start()
        if not checks_later:
            self._give(work.checks, here=False)

    @property
    def wants_checks(self) -> bool:
        """Made with ``checks_later`` and not given its check items yet."""
        return not self._checks_given.is_set()

    def add_checks(self, checks: Sequence[CheckItem]) -> None:
        """Hand over the check items (once): the helper prepares their verdicts after the
        claims. Kinds that prepare in two parts (``staged``: the surjection proofs) do their
        Python here, in the caller's thread, once the claims are built (they decoded the
        output generators the rings need), so that the helper only runs their kernels."""
        self._give(checks, here=True)

    def _give(self, checks: Sequence[CheckItem], here: bool) -> None:
        """``add_checks``; ``here``: staged kinds do their Python in the caller's thread (else
        all of it on the helper)."""
        if self._checks_given.is_set():
            raise RuntimeError("the prefetch's check items were already given")
        kinds: dict[type[CheckItem], list[CheckItem]] = {}
        for item in checks:
            kinds.setdefault(type(item), []).append(item)
        if kinds and here:
            self._claimed.wait()
        self._jobs = [(items[0].family, _staged(kind, items, self.ctx, here))
                      for kind, items in kinds.items()]
        self.checks = list(checks)
        self.prepared = set(kinds)
        self._checks_given.set()

    def _run(self) -> None:
        timer = StageTimer()
        ctx = self.ctx
        if self._threads is not None:
            ctx = copy.copy(ctx)  # the same decoded points and verdicts, its own core count
            ctx.threads = self._threads
        try:
            with timer.stage("claims"):
                self.claims, self.malformed = _build_claims(ProofWork([], self.batch, []), ctx)
            self._claimed.set()
            self._checks_given.wait()
            for family, job in self._jobs:  # beside the scripts, then the batch's MSM
                with timer.stage(family):
                    job(ctx.threads)
        except BaseException as exc:  # handed to the verifying thread by wait()
            self._error = exc
        finally:
            self._claimed.set()
        self.seconds = timer.seconds

    def wait_claims(self) -> None:
        """Block until the prefetched claims are built; re-raises what building them raised."""
        self._claimed.wait()
        if self._error is not None:
            raise self._error

    def wait(self) -> None:
        """Block until the helper is done; re-raises what it raised."""
        self.join()
        if self._error is not None:
            raise self._error

    def join(self) -> None:
        """Block until the helper is done (its results unused: the block failed earlier; if
        its check items were never given, it has none)."""
        if self.wants_checks:
            self.add_checks(())
        self._thread.join()

    def take(self, batch: Sequence[BatchItem]
             ) -> tuple[list[Claim | ClaimGroup], Malformed, list[BatchItem]]:
        """Once the claims are built: the claims and malformed entries of the items of
        ``batch`` built here, and the items of ``batch`` not built here (in their order). An
        item is built here if one with its label and the same proof inputs was (the fields
        after the label but the decoded commitment, ``RangeItem``'s last, which only saves a
        square root). Claims of items not in ``batch`` are left out (a group keeps only the
        wanted members, over the same prepared data)."""
        self.wait_claims()
        early = {item.label: item for item in self.batch}
        wanted: set[ItemLabel] = set()
        rest: list[BatchItem] = []
        for item in batch:
            mine = early.get(item.label)
            if mine is not None and _proof_inputs(mine) == _proof_inputs(item):
                wanted.add(item.label)
            else:
                rest.append(item)
        if len(wanted) == len(self.batch):  # every item built here is wanted
            return list(self.claims), list(self.malformed), rest
        claims: list[Claim | ClaimGroup] = []
        for claim in self.claims:
            if isinstance(claim, ClaimGroup):
                keep = [k for k, label in enumerate(claim.labels) if label in wanted]
                if keep:
                    claims.append(claim.subset(keep))
            elif claim.label in wanted:
                claims.append(claim)
        return claims, [m for m in self.malformed if m[0] in wanted], rest

    def done_kinds(self, checks: Sequence[CheckItem]) -> set[type]:
        """The check kinds whose verdicts are all in ``ctx``: prepared here, and no item of
        theirs in ``checks`` came after the snapshot."""
        mine = {id(item) for item in self.checks}
        return self.prepared - {type(item) for item in checks if id(item) not in mine}


def _staged(kind: type[CheckItem], items: list[CheckItem], ctx: VerifyContext,
            here: bool) -> Callable[[int], None]:
    """``kind.prepare(items, ctx)`` as a call taking the thread count. ``here`` and a kind with
    ``staged`` (two parts): its Python is done now and the call runs its kernel; otherwise the
    call does all of it."""
    staged = getattr(kind, "staged", None)
    if here and staged is not None:
        return cast(Callable[[int], None], staged(items, ctx))

    def prepare(threads: int) -> None:
        own = copy.copy(ctx)  # the same verdict dictionaries, the given core count
        own.threads = threads
        kind.prepare(items, own)

    return prepare


def _proof_inputs(item: BatchItem) -> tuple[Any, ...]:
    """What a batch item's claim is made of: its fields after the label, up to a
    ``RangeItem``'s decoded commitment (a function of its commitment)."""
    fields: tuple[Any, ...] = tuple(item)  # type: ignore[arg-type]  # named tuples
    return fields[1:5] if isinstance(item, RangeItem) else fields[1:]


def verify(work: ProofWork, timer: StageTimer | None = None,
           prefetch: Prefetch | None = None) -> int:
    """Verify ``work`` (see the module docstring); returns the number of batch claims.
    ``ValidationError`` naming the culprit otherwise. ``timer`` receives "claims" (building
    the claims: parsing proofs, transcripts, scalars; with a ``prefetch``, waiting for it),
    "msm" (the batch, plus the culprit search on failure), "prefetch" (with a ``prefetch``:
    waiting for its check verdicts, computed beside the batch) and one stage per check family
    ("surjection", ...)."""
    timer = timer if timer is not None else StageTimer()
    ctx = prefetch.ctx if prefetch is not None else VerifyContext()
    with timer.stage("claims"):
        if prefetch is None:
            claims, malformed = _build_claims(work, ctx)
        else:
            if prefetch.wants_checks:  # prepared on the helper beside the MSM
                prefetch.add_checks(work.checks)
            # (the check verdicts may still be computing: beside the MSM)
            early, early_malformed, rest = prefetch.take(work.batch)
            claims, malformed = _build_claims(ProofWork(work.claims, rest, []), ctx)
            claims += early
            malformed += early_malformed
    with timer.stage("msm"):
        failing = _first_failing_claim(claims)
    culprits: list[tuple[ItemLabel, ValidationError | None]] = list(malformed)
    if isinstance(failing, ItemLabel):
        culprits.append((failing, _claim_failure(work, failing, ctx)))
    culprit = _lowest(culprits)
    done_kinds: set[type] = set()
    if prefetch is not None:
        with timer.stage("prefetch"):  # waiting for the check verdicts computed beside the MSM
            prefetch.wait()
        done_kinds = prefetch.done_kinds(work.checks)
    if culprit is not None:
        _run_checks(_checks_before(work, culprits), ctx, timer, done_kinds)
        raise culprit
    _run_checks(sorted(work.checks, key=_item_label), ctx, timer, done_kinds)
    return sum(len(c) if isinstance(c, ClaimGroup) else 1 for c in claims)


def verify_blocks(works: Sequence[ProofWork],
                  timer: StageTimer | None = None) -> tuple[int, ValidationError] | None:
    """Verify the work of consecutive blocks with ONE batch for all of them: None if every
    block's work holds, else (position of the first failing block, its culprit).

    A block fails if its batch part or one of its checks fails; the first failing block and
    its culprit are those of verifying each block alone, in order (a block's batch culprit
    before its checks, an earlier block's checks before a later block's batch)."""
    timer = timer if timer is not None else StageTimer()
    contexts = [VerifyContext() for _ in works]
    claims: list[Claim | ClaimGroup] = []
    malformed: list[list[tuple[ItemLabel, ValidationError | None]]] = []
    with timer.stage("claims"):
        for k, (work, ctx) in enumerate(zip(works, contexts)):
            own, bad = _build_claims(work, ctx)
            claims += [_in_block(k, c) for c in own]  # labels ordered by block, then item
            malformed.append(list(bad))
    with timer.stage("msm"):
        failing = _first_failing_claim(claims)
    if isinstance(failing, BlockLabel):
        k = failing.block
        malformed[k].append((failing.item, _claim_failure(works[k], failing.item,
                                                          contexts[k])))
    for k, (work, ctx) in enumerate(zip(works, contexts)):
        culprit = _lowest(malformed[k])
        if culprit is not None:
            try:
                _run_checks(_checks_before(work, malformed[k]), ctx, timer)
            except ValidationError as exc:
                return k, exc
            return k, culprit
        try:
            _run_checks(sorted(work.checks, key=_item_label), ctx, timer)
        except ValidationError as exc:
            return k, exc
    return None


# --- internals ---------------------------------------------------------------------------------


def _item_label(item: CheckItem | Claim) -> ItemLabel:
    return item.label  # type: ignore[return-value]


def _build_claims(work: ProofWork, ctx: VerifyContext
                  ) -> tuple[list[Claim | ClaimGroup], Malformed]:
    """Every claim of ``work`` (the items of each kind built together), and the malformed
    batch items."""
    claims: list[Claim | ClaimGroup] = list(work.claims)
    malformed: Malformed = []
    kinds: dict[type[BatchItem], list[BatchItem]] = {}
    for item in work.batch:
        kinds.setdefault(type(item), []).append(item)
    for kind, items in kinds.items():
        built, bad = kind.claims(items, ctx)
        claims += built
        malformed += bad
    return claims, malformed


def _first_failing_claim(claims: Sequence[Claim | ClaimGroup]) -> ItemLabel | BlockLabel | None:
    """The first false claim in label order (culprit order), None if all hold."""
    batch = BatchVerifier(consensus_generators().fixed)
    batch.extend(claims)
    label = batch.first_failure(key=_label_order)
    return label  # type: ignore[return-value]  # labels are ItemLabel / BlockLabel


def _label_order(label: object) -> Any:
    return label  # ItemLabel / BlockLabel: tuples ordered by block, transaction, kind, position


def _lowest(culprits: Sequence[tuple[ItemLabel, ValidationError | None]],
            ) -> ValidationError | None:
    """The culprit with the lowest label (a false claim's error is made from its label)."""
    if not culprits:
        return None
    label, error = min(culprits, key=lambda pair: pair[0])
    return error if error is not None else label.error(reasons.BAD_TXNS_RANGEPROOF_INVALID)


def _checks_before(work: ProofWork,
                   culprits: Sequence[tuple[ItemLabel, ValidationError | None]]
                   ) -> list[CheckItem]:
    """The check items labelled before the batch's culprit: they come first in Elements'
    serial order (a transaction's proofs before its scripts, earlier transactions first)."""
    first = min(label for label, _ in culprits)
    return sorted((c for c in work.checks if c.label < first), key=_item_label)


def _claim_failure(work: ProofWork, label: ItemLabel, ctx: VerifyContext
                   ) -> ValidationError | None:
    """The error of the false claim labelled ``label``: its batch item's ``failure()``. The
    signatures of one input share a label; the first whose claim is false on its own is the
    culprit. None for a prebuilt claim (a balance: the label says it all)."""
    items = [item for item in work.batch if item.label == label]
    if len(items) > 1:
        fixed = consensus_generators().fixed
        for item in items:
            alone = BatchVerifier(fixed)
            alone.add(item.claim(ctx))
            if not alone.verify():
                return item.failure()
    return items[0].failure() if items else None


def _in_block(k: int, claim: Claim | ClaimGroup) -> Claim | ClaimGroup:
    if isinstance(claim, ClaimGroup):
        return claim.relabelled([BlockLabel(k, label) for label in claim.labels])  # type: ignore[arg-type]
    return Claim.trusted(BlockLabel(k, claim.label), claim.base, claim.fixed,  # type: ignore[arg-type]
                         claim.free_scalars, claim.free_points, claim.shared, claim.fixed_const)


def _prepare_checks(checks: Sequence[CheckItem], ctx: VerifyContext, timer: StageTimer,
                    done: frozenset[type] | set[type] = frozenset()) -> None:
    """Every check kind (except those in ``done``) computes, with its classmethod
    ``prepare(items, ctx)``, all its items' verdicts into ``ctx``, together (the surjection and
    Borromean items in one ring-kernel call each, the ECDSA signatures over threads), timed as
    the family."""
    kinds: dict[type[CheckItem], list[CheckItem]] = {}
    for item in checks:
        kinds.setdefault(type(item), []).append(item)
    for kind, items in kinds.items():
        if kind not in done:
            with timer.stage(items[0].family):
                kind.prepare(items, ctx)


def _run_checks(checks: Sequence[CheckItem], ctx: VerifyContext, timer: StageTimer,
                prepared: frozenset[type] | set[type] = frozenset()) -> None:
    """Check items alone, in the given order (label order), timed per family, after their
    kinds' ``prepare`` (but those already ``prepared`` in ``ctx``) computed their verdicts
    (``_prepare_checks``); their checks read them from ``ctx``."""
    clock = time.perf_counter
    seconds = timer.seconds
    _prepare_checks(checks, ctx, timer, prepared)
    for item in checks:
        start = clock()
        try:
            item.check(ctx)
        finally:
            family = item.family
            seconds[family] = seconds.get(family, 0.0) + clock() - start
