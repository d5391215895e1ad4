"""Block connection and disconnection against the chainstate (design.md "Data flow").

``BlockValidator.connect(raw)`` runs its stages, each one method, timed by one ``StageTimer``
(``ConnectReport.timings``: parse, check, resolve, plan, scripts, cache, claims, msm, then one
per check family (surjection, ecdsa, ...), commit):

1. ``check_block`` — context-free block checks (after parsing with the C walker) and the
   header's link to the tip: prev block, height, challenge ``OP_TRUE`` with an empty solution,
   coinbase position and BIP34 height, duplicate transactions, Merkle root, witness commitment,
   weight, and ``check_transaction`` per tx;
2. ``resolve_inputs`` — every prevout not created earlier in the block is read in ONE snapshot
   read (``Chainstate.read_view``); missing, double-spent and immature spends are named;
3. ``plan`` — per transaction ``plan_amounts`` (fees, encodings, issuance): one balance claim
   and the range-proof / surjection *items* (``validator.items``), nothing verified yet; the
   block's fees per asset; the coinbase may claim at most the fees (subsidy 0);
3b. ``script_pass`` — output templates, timelocks (nLockTime, BIP68), the block's sigop cost,
   then every input script of the transactions the script-execution cache does not vouch for
   (hits consumed when the block commits), their BIP340 signatures and taproot tweaks becoming
   batch items and their ECDSA signatures check items (``validator.scripts``);
4. ``cache_pass`` — each item's salted key is looked up in the proof cache (its in-memory front
   first; the script stage does the same for each transaction's script-execution key); the hits
   are consumed only once the block is committed, in memory, their records deleted with a later
   write batch (as Elements' CuckooCache erases lazily), so an invalid block consumes nothing.
   Keys the mempool computed for the same wtxid are reused. What is left is a ``ProofWork``
   (``prepare`` runs stages 1–4);
5. ``validator.verify.verify`` — stateless: ONE batch (one multi-scalar multiplication) of every
   balance equation and uncached range proof, the culprit named by halving; then the uncached
   surjection proofs;
6. ``commit`` — the chainstate's coins cache: spent outputs removed, new outputs (minus
   unspendable ones) added, the tip moved, undo data kept for the block files
   (``Chainstate.connect_block``; the chain manager flushes it to LevelDB in atomic batches).

Reject reasons: the block-level and transaction constants of ``validator.reasons``, with the
transaction's index in the block.

Header time rules (median time past, future drift) are not checked on our regtest chain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from typing import NamedTuple, cast

from ctplugin.batch import Claim
from ctplugin.elements import Block, Transaction, TxOut, parse_block
from ctplugin.elements.chainparams import ChainParams
from ctplugin.elements.consensus import MAX_BLOCK_WEIGHT, MAX_MONEY
from ctplugin.elements.script import is_unspendable, script_num
from ctplugin.errors import ValidationError
from ctplugin.script.sigops import MAX_BLOCK_SIGOPS_COST, transaction_sigop_cost
from validator import reasons
from validator.coins import decode_txout, encode_txout
from validator.items import KIND_BALANCE, BorromeanItem, Item, ItemLabel, SurjectionItem
from validator.rules import (
    AmountPlan,
    SpentOutput,
    check_coinbase_outputs,
    check_transaction,
    decode_commitments,
    plan_amounts,
    value_commitments,
)
from validator.scripts import (
    BLOCK_FLAGS,
    ScriptWork,
    check_output_scripts,
    items_of,
    run_scripts,
    script_cache_key,
)
from validator.store import (
    BlockRef,
    BlockUndo,
    Chainstate,
    DuplicateOutputError,
    Outpoint,
    ProofCache,
    SpendView,
    UtxoEntry,
)
from validator.timelocks import check_final, check_sequence_locks
from validator.timing import StageTimer
from validator.verify import ProofWork, verify


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
        return self.timings.get("claims", 0.0) + self.timings.get("msm", 0.0)

    @property
    def n_range_proofs(self) -> int:
        """Range proofs of both kinds (families "range": Bulletproofs, "borromean")."""
        return self.items.get("range", 0) + self.items.get("borromean", 0)

    @property
    def n_range_cached(self) -> int:
        return self.cached.get("range", 0) + self.cached.get("borromean", 0)

    @property
    def n_surjection_proofs(self) -> int:
        return self.items.get("surjection", 0)

    @property
    def n_surjection_cached(self) -> int:
        return self.cached.get("surjection", 0)


CacheKeys = tuple[list[bytes], list[bytes]]
"""(batch-item keys, check-item keys) of one transaction, in plan order: the Bulletproofs',
then the surjection proofs' followed by the Borromean proofs'."""


@dataclass(frozen=True, slots=True)
class KnownTransaction:
    """What mempool acceptance computed for a transaction: its amount plan (labelled with
    tx_index 0), the cache keys of its proofs, of its script execution under the block flags
    and of its balance equation (None without a cache)."""

    plan: AmountPlan
    keys: CacheKeys | None
    script_key: bytes | None = None
    balance_key: bytes | None = None


def balance_cache_key(cache: ProofCache, tx: Transaction,
                      spent: Sequence[SpentOutput | bytes]) -> bytes:
    """The balance-equation entry of ``tx`` spending ``spent`` (stored bytes or outputs, in
    input order): ``ProofCache.balance_key`` over its wtxid and the spent outputs' bytes."""
    stored = []
    for out in spent:
        if isinstance(out, TxOut):  # created earlier in the same block
            stored.append(encode_txout(out))
        elif isinstance(out, bytes):
            stored.append(out)
        else:
            raise TypeError("a spent output is stored bytes or a TxOut")
    return cache.balance_key(tx.wtxid, stored)


def relabel(plan: AmountPlan, tx_index: int) -> AmountPlan:
    """The same plan for the transaction at ``tx_index`` of a block. Only the balance claim is
    relabelled here (it is always verified); range and surjection items keep their labels until
    one has to be verified (a cache miss), when ``at_tx`` relabels it: most are cache hits."""
    b = plan.balance
    balance = Claim.trusted(ItemLabel(tx_index, KIND_BALANCE), b.base, b.fixed, b.free_scalars,
                            b.free_points, b.shared, b.fixed_const)
    return AmountPlan(tx_index, plan.fees, balance, plan.ranges, plan.surjections,
                      plan.borromeans)


def cache_keys(cache: ProofCache, plan: AmountPlan) -> CacheKeys:
    return ([r.cache_key(cache) for r in plan.ranges],
            [c.cache_key(cache) for c in check_items(plan)])


def check_items(plan: AmountPlan) -> list[SurjectionItem | BorromeanItem]:
    """A plan's check items in cache-key order: surjection proofs, then Borromean proofs."""
    return [*plan.surjections, *plan.borromeans]


class ResolvedInputs(NamedTuple):
    """Stage 2's answer: per transaction the outputs its inputs spend (coinbase: none; an
    output from the chainstate as its stored bytes, see ``decode_txout``), the spent outpoints
    in block order, the UTXO entries the block creates and the snapshot read itself
    (``connect_block`` reuses its entries)."""

    spent: list[list[SpentOutput | bytes]]
    spent_points: list[Outpoint]
    created: list[tuple[Outpoint, UtxoEntry]]
    view: SpendView


@dataclass(frozen=True, slots=True)
class BlockPlan:
    """Stage 3's answer: the amount plan of every non-coinbase transaction (in block order)
    with the cache keys mempool acceptance already computed for it (None: compute them)."""

    txs: list[AmountPlan]
    known_keys: list[CacheKeys | None]
    fees: dict[bytes, int]


@dataclass(frozen=True, slots=True)
class ScriptPass:
    """The scripts stage's answer: the signature items left to verify, and how many
    transactions had their scripts run or vouched for by the script-execution cache."""

    work: ScriptWork
    n_transactions: int
    n_cached: int


@dataclass(frozen=True, slots=True)
class CachePass:
    """Stage 4's answer: the proof work left, the cache keys hit (consumed when the block is
    committed), and per item family the number of items and of cache hits."""

    work: ProofWork
    consumed: list[bytes]
    items: dict[str, int]
    cached: dict[str, int]


@dataclass(slots=True)
class StagedBlock:
    """Stages 1–4 done (``BlockValidator.prepare``): what stage 5 verifies (``work``), what
    stage 6 writes (``inputs``), the cache keys to consume on commit, the item and cache-hit
    counts per family, the number of balance claims."""

    inputs: ResolvedInputs
    work: ProofWork
    consumed: list[bytes]
    items: dict[str, int]
    cached: dict[str, int]
    n_balance: int


_family = attrgetter("family")


def _known_script_key(knowns: Sequence[KnownTransaction | None], i: int) -> bytes | None:
    known = knowns[i] if i < len(knowns) else None
    return known.script_key if known is not None else None


def _misses(items: list[tuple[Item, int]], hits: Sequence[bool] | None) -> list[Item]:
    """The items the cache did not vouch for, labelled with their transaction's position."""
    kept = items if hits is None else compress(items, [not h for h in hits])
    return [item.at_tx(i) for item, i in kept]


class BlockValidator:
    """Connects and disconnects blocks on a chainstate, with an optional proof cache."""

    def __init__(self, chainstate: Chainstate, cache: ProofCache | None,
                 params: ChainParams,
                 known: Callable[[Transaction], KnownTransaction | None] | None = None) -> None:
        self.chainstate = chainstate
        self.cache = cache
        self.params = params
        self.known = known

    # --- stage 1: block checks ------------------------------------------------------------

    def check_block(self, block: Block, tip: BlockRef | None,
                    checked: Sequence[object | None] = ()) -> None:
        """Context-free block checks plus the header's link to the tip. ``checked[i]`` not
        None: transaction i is byte-identical to one that already passed ``check_transaction``
        (a mempool entry), so it is not checked again (a pure function of those bytes)."""
        header = block.header
        if tip is not None:
            if header.prev_hash != tip.hash:
                raise ValidationError(reasons.BAD_PREVBLK, detail="block does not extend the tip")
            if header.height != tip.height + 1:
                raise ValidationError(reasons.BAD_BLK_HEIGHT)
        if header.is_dynafed or header.challenge != self.params.block_challenge \
                or header.solution != b"":
            raise ValidationError(reasons.BLOCK_PROOF_INVALID)
        txs = block.transactions
        if not txs or not txs[0].is_coinbase:
            raise ValidationError(reasons.BAD_CB_MISSING, tx_index=0)
        for i, tx in enumerate(txs[1:], start=1):
            if tx.is_coinbase:
                raise ValidationError(reasons.BAD_CB_MULTIPLE, tx_index=i)
        root, mutated = block.compute_merkle_root()
        if mutated:
            raise ValidationError(reasons.BAD_TXNS_DUPLICATE, detail="mutated Merkle tree")
        if root != header.merkle_root:
            raise ValidationError(reasons.BAD_TXNMRKLROOT)
        seen: dict[bytes, int] = {}
        for i, tx in enumerate(txs):
            if tx.txid in seen:
                raise ValidationError(reasons.BAD_TXNS_DUPLICATE, tx_index=i)
            seen[tx.txid] = i
        expected_height = script_num(header.height)
        if not txs[0].inputs[0].script_sig.startswith(expected_height):
            raise ValidationError(reasons.BAD_CB_HEIGHT, tx_index=0)
        weight = sum(tx.weight for tx in txs)
        if weight > MAX_BLOCK_WEIGHT:
            raise ValidationError(reasons.BAD_BLK_WEIGHT)
        has_witness = any(tx.serialize()[4] & 1 for tx in txs)
        if block.witness_commitment_index() is not None:
            if not block.check_witness_commitment():
                raise ValidationError(reasons.BAD_WITNESS_MERKLE_MATCH, tx_index=0)
        elif has_witness:
            raise ValidationError(reasons.UNEXPECTED_WITNESS)
        n_checked = len(checked)
        for i, tx in enumerate(txs):
            if i >= n_checked or checked[i] is None:
                check_transaction(tx, i)

    # --- stage 2: inputs ------------------------------------------------------------------

    def resolve_inputs(self, block: Block) -> ResolvedInputs:
        """The spent outputs of every transaction (see ``ResolvedInputs``); missing /
        double-spent / immature inputs are named. Prevouts not created earlier in the block
        are read in one ``read_view`` snapshot read."""
        txs = block.transactions
        height = block.header.height
        position = {tx.txid: i for i, tx in enumerate(txs)}
        n_txs = len(txs)
        trusted = Outpoint.trusted  # the parser bounds prevout hashes (32 B) and indexes (u32)
        spent_points = [trusted(txin.prevout_hash, txin.prevout_index)
                        for tx in txs[1:] for txin in tx.inputs]
        view = self.chainstate.read_view(
            [o for o in spent_points if position.get(o[0], n_txs) >= n_txs])
        from_db = view.entries
        created: dict[Outpoint, tuple[TxOut, bool]] = {}
        spent_outs: list[list[SpentOutput | bytes]] = [[]]
        used: set[Outpoint] = set()
        maturity = self.params.coinbase_maturity
        k = 0
        for i, tx in enumerate(txs):
            if i:
                outs: list[SpentOutput | bytes] = []
                for n in range(len(tx.inputs)):
                    outpoint = spent_points[k]
                    k += 1
                    if outpoint in used:
                        raise ValidationError(reasons.BAD_TXNS_INPUTS_MISSINGORSPENT, tx_index=i,
                                              input_index=n, detail="spent twice in the block")
                    used.add(outpoint)
                    here = created.get(outpoint)
                    if here is not None:
                        outs.append(here[0])
                        continue
                    entry = from_db.get(outpoint)
                    if entry is None:
                        raise ValidationError(reasons.BAD_TXNS_INPUTS_MISSINGORSPENT, tx_index=i,
                                              input_index=n, detail=str(outpoint))
                    if entry.coinbase and height - entry.height < maturity:
                        raise ValidationError(reasons.BAD_TXNS_PREMATURE_SPEND_OF_COINBASE,
                                              tx_index=i, input_index=n)
                    outs.append(entry.txout)  # decoded only if the rules need it
                spent_outs.append(outs)
            txid = tx.txid
            for n, out in enumerate(tx.outputs):
                if not is_unspendable(out.script_pubkey):
                    created[trusted(txid, n)] = (out, i == 0)
        new_entries = [(outpoint, UtxoEntry(height, coinbase, encode_txout(out)))
                       for outpoint, (out, coinbase) in created.items()]
        return ResolvedInputs(spent_outs, spent_points, new_entries, view)

    # --- stage 3: plan --------------------------------------------------------------------

    def plan(self, block: Block, spent: Sequence[Sequence[SpentOutput | bytes]],
             knowns: Sequence[KnownTransaction | None]) -> BlockPlan:
        """Every transaction's amount plan, the block's fees per asset (each within
        MAX_MONEY) and the coinbase's claim on them."""
        txs = block.transactions
        plans: list[AmountPlan] = []
        block_fees: dict[bytes, int] = {}
        outs: list[list[SpentOutput] | None] = [None] * len(txs)
        for i in range(1, len(txs)):
            if knowns[i] is None:
                outs[i] = [decode_txout(o) if isinstance(o, bytes) else o for o in spent[i]]
        # every value commitment the plans decode, decoded together (their square roots in one
        # batch of the kernel)
        decoded = decode_commitments(c for i in range(1, len(txs)) if (o := outs[i]) is not None
                                     for c in value_commitments(txs[i], o))
        for i in range(1, len(txs)):
            plan = self.plan_transaction(txs[i], i, outs[i] or spent[i], knowns[i], decoded)
            for asset, fee in plan.fees.items():
                total = block_fees.get(asset, 0) + fee
                if total > MAX_MONEY:
                    raise ValidationError(reasons.BAD_TXNS_ACCUMULATED_FEE_OUTOFRANGE, tx_index=i)
                block_fees[asset] = total
            plans.append(plan)
        check_coinbase_outputs(txs[0], block_fees)
        known_keys = [None if k is None else k.keys for k in knowns[1:]]
        return BlockPlan(plans, known_keys, block_fees)

    def plan_transaction(self, tx: Transaction, tx_index: int,
                         spent: Sequence[SpentOutput | bytes],
                         known: KnownTransaction | None,
                         decoded: Mapping[bytes, bytes] | None = None) -> AmountPlan:
        """The amount plan of a block transaction. For a transaction the mempool accepted with
        the same wtxid, its plan is reused: ``plan_amounts`` is a pure function of the
        transaction's bytes and of the spent outputs, which its txid fixes (an outpoint's
        content never changes), so it would compute the same plan again. The balance claim is
        still verified in this block's batch; only the decoding work is saved. ``decoded``:
        value commitments the block decoded together (``rules.decode_commitments``)."""
        if known is not None:
            return relabel(known.plan, tx_index)
        outs = [decode_txout(o) if isinstance(o, bytes) else o for o in spent]
        return plan_amounts(tx, tx_index, outs, self.params.policy_asset,
                            self.params.range_proofs, decoded)

    # --- stage 3b: scripts -----------------------------------------------------------------

    def script_pass(self, block: Block, inputs: ResolvedInputs, consumed: list[bytes],
                    knowns: Sequence[KnownTransaction | None] = ()) -> ScriptPass:
        """Every output's template (``bad-txns-script-unsupported``), every transaction's
        timelocks (nLockTime, BIP68: ``validator.timelocks``) and the block's signature-operation
        cost (``bad-blk-sigops``), then every input script of the transactions the
        script-execution cache does not vouch for (hits are consumed: their keys are appended to
        ``consumed``, consumed when the block commits), run under the block flags with their
        signatures deferred to the batch (``validator.scripts``)."""
        txs = block.transactions
        height = block.header.height
        entries = inputs.view.entries
        spent: list[list[SpentOutput]] = [[]]
        sigops = transaction_sigop_cost(txs[0], ())
        k = 0
        for i, tx in enumerate(txs):
            check_output_scripts(tx, i)
            check_final(tx, i, height, block.header.time)
            if not i:
                continue
            points = inputs.spent_points[k:k + len(tx.inputs)]
            k += len(tx.inputs)
            check_sequence_locks(tx, i, [_coin_height(entries.get(p), height) for p in points],
                                 height)
            outs = [decode_txout(o) if isinstance(o, bytes) else o for o in inputs.spent[i]]
            spent.append(outs)
            sigops += transaction_sigop_cost(tx, outs)
            if sigops > MAX_BLOCK_SIGOPS_COST:
                raise ValidationError(reasons.BAD_BLK_SIGOPS, tx_index=i, detail="too many sigops")
        hits = [False] * len(txs)
        cache = self.cache
        if cache is not None and len(txs) > 1:
            keys = [_known_script_key(knowns, i) or script_cache_key(cache, txs[i], BLOCK_FLAGS)
                    for i in range(1, len(txs))]
            found = cache.lookup_many(keys)
            hits[1:] = found
            consumed += compress(keys, found)
        genesis = self.params.genesis_hash
        runs = [(i, *run_scripts(txs[i], i, spent[i], genesis, BLOCK_FLAGS))
                for i in range(1, len(txs)) if not hits[i]]
        return ScriptPass(items_of(runs, BLOCK_FLAGS), len(txs) - 1, sum(hits))

    # --- stage 4: proof cache ---------------------------------------------------------------

    def balance_pass(self, block: Block, inputs: ResolvedInputs,
                     knowns: Sequence[KnownTransaction | None], work: ProofWork,
                     consumed: list[bytes]) -> int:
        """Drop from ``work`` the balance claims the cache vouches for (mempool acceptance
        verified the same equation: same wtxid, same spent outputs); their keys are appended to
        ``consumed``. Returns how many. Without a cache every balance stays in the batch."""
        cache = self.cache
        txs = block.transactions
        if cache is None or len(txs) < 2:
            return 0
        keys = []
        for i in range(1, len(txs)):
            known = knowns[i] if i < len(knowns) else None
            key = known.balance_key if known is not None else None
            keys.append(key if key is not None
                        else balance_cache_key(cache, txs[i], inputs.spent[i]))
        hits = cache.lookup_many(keys)
        if not any(hits):
            return 0
        work.claims = [c for c, hit in zip(work.claims, hits, strict=True) if not hit]
        consumed += compress(keys, hits)
        return sum(hits)

    def cache_pass(self, plan: BlockPlan) -> CachePass:
        """Drop the items the proof cache vouches for, consuming their entries: one lookup
        pass and ONE write batch erasing every hit of the block."""
        batch: list[tuple[Item, int]] = []
        checks: list[tuple[Item, int]] = []
        for p in plan.txs:
            i = p.tx_index
            batch += [(r, i) for r in p.ranges]
            checks += [(c, i) for c in check_items(p)]
        items = Counter(map(_family, (item for item, _ in batch)))
        items.update(map(_family, (item for item, _ in checks)))
        cache = self.cache
        batch_hits: list[bool] | None = None
        check_hits: list[bool] | None = None
        consumed: list[bytes] = []
        cached: Counter[str] = Counter()
        if cache is not None and (batch or checks):
            batch_keys: list[bytes] = []
            check_keys: list[bytes] = []
            for p, known in zip(plan.txs, plan.known_keys):
                keys = known if known is not None else cache_keys(cache, p)
                batch_keys += keys[0]
                check_keys += keys[1]
            hits = cache.lookup_many(batch_keys + check_keys)
            batch_hits, check_hits = hits[:len(batch_keys)], hits[len(batch_keys):]
            consumed = [*compress(batch_keys, batch_hits), *compress(check_keys, check_hits)]
            cached.update(_family(item) for item, _ in compress(batch, batch_hits))
            cached.update(_family(item) for item, _ in compress(checks, check_hits))
        work = ProofWork([p.balance for p in plan.txs],
                         _misses(batch, batch_hits),  # type: ignore[arg-type]
                         _misses(checks, check_hits))  # type: ignore[arg-type]
        return CachePass(work, consumed, dict(items), dict(cached))

    # --- stage 6: commit ------------------------------------------------------------------

    def commit(self, block: Block, inputs: ResolvedInputs) -> None:
        """The block's one atomic chainstate write (UTXO changes, undo data, best block). An
        output the block creates that is already unspent is rejected (BIP30) and nothing is
        written: the chainstate reads every created outpoint for its write anyway."""
        header = block.header
        try:
            self.chainstate.connect_block(block.hash, header.height, header.prev_hash,
                                          inputs.spent_points, inputs.created, inputs.view)
        except DuplicateOutputError as exc:
            txid, index = cast(Outpoint, exc.outpoint)
            tx_index = next((i for i, tx in enumerate(block.transactions) if tx.txid == txid),
                            None)
            raise ValidationError(reasons.BAD_TXNS_BIP30, tx_index=tx_index, output_index=index,
                                  detail=str(exc)) from None

    # --- connect / disconnect ------------------------------------------------------------

    def connect(self, data: bytes | Block) -> ConnectReport:
        """Validate a block on the tip and apply it atomically; ``ValidationError`` naming the
        culprit otherwise (nothing is written then). The stages of the module docstring."""
        timer = StageTimer()
        with timer.stage("parse"):
            block = data if isinstance(data, Block) else parse_block(data)
        tip = self.chainstate.best_block()
        if tip is None:
            raise ValidationError(reasons.BAD_PREVBLK, detail="chainstate has no genesis")
        staged = self.prepare(block, tip, timer)
        n_claims = verify(staged.work, timer)
        with timer.stage("commit"):
            self.commit(block, staged.inputs)
            if self.cache is not None and staged.consumed:
                self.cache.consume(staged.consumed)
        return ConnectReport(block.hash, block.header.height, len(block.transactions), block,
                             staged.items, staged.cached, staged.n_balance, n_claims,
                             timer.seconds)

    def prepare(self, block: Block, tip: BlockRef, timer: StageTimer) -> StagedBlock:
        """Stages 1–4 of ``block`` on ``tip``, timed: the proof and signature work left and
        the cache keys hit; nothing verified, nothing consumed or written."""
        with timer.stage("check"):
            knowns = self.known_transactions(block)
            self.check_block(block, tip, knowns)
        with timer.stage("resolve"):
            inputs = self.resolve_inputs(block)
        with timer.stage("plan"):
            plan = self.plan(block, inputs.spent, knowns)
        consumed: list[bytes] = []
        with timer.stage("scripts"):
            scripts = self.script_pass(block, inputs, consumed, knowns)
        with timer.stage("cache"):
            cached = self.cache_pass(plan)
            balances_cached = self.balance_pass(block, inputs, knowns, cached.work, consumed)
        consumed += cached.consumed
        work = cached.work
        work.batch += scripts.work.batch
        work.checks += scripts.work.checks
        items = dict(cached.items)
        cached_counts = dict(cached.cached)
        items["script"] = scripts.n_transactions
        cached_counts["script"] = scripts.n_cached
        if balances_cached:
            cached_counts["balance"] = balances_cached
        for family, count in Counter(map(_family, scripts.work.batch)).items():
            items[family] = count
        if scripts.work.checks:
            items["ecdsa"] = sum(len(c.checks) for c in scripts.work.checks)
        return StagedBlock(inputs, work, consumed, items, cached_counts, len(plan.txs))

    def known_transactions(self, block: Block) -> list[KnownTransaction | None]:
        """Per transaction, what mempool acceptance computed for it (None: not known; the
        coinbase never is)."""
        knowns: list[KnownTransaction | None] = [None] * len(block.transactions)
        if self.known is not None:
            knowns[1:] = [self.known(tx) for tx in block.transactions[1:]]
        return knowns

    def disconnect(self, block_hash: bytes, undo: BlockUndo) -> BlockRef:
        """Undo the tip block ``block_hash``: its undo data restores the exact previous UTXO
        set (in the chainstate's coins cache)."""
        return self.chainstate.disconnect_block(block_hash, undo)


def _coin_height(entry: UtxoEntry | None, height: int) -> int:
    """The height of a spent coin's block (a coin created in this block: this height)."""
    return height if entry is None else entry.height


def connect_genesis(chainstate: Chainstate, genesis: Block) -> BlockRef:
    """Apply the genesis block unvalidated: its outputs are the chain's initial coins
    (spendable at once: stored as non-coinbase, regtest.params)."""
    created = [(Outpoint(tx.txid, n), UtxoEntry(0, False, encode_txout(out)))
               for tx in genesis.transactions for n, out in enumerate(tx.outputs)
               if not is_unspendable(out.script_pubkey)]
    return chainstate.connect_block(genesis.hash, 0, bytes(32), [], created)
