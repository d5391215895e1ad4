"""Block connection and disconnection against the chainstate (design.md "Data flow").

``BlockValidator.connect(raw)``:

1. parse (the C walker) and the context-free block checks: header (prev block, height, challenge
   ``OP_TRUE`` with an empty solution), coinbase position and BIP34 height, duplicate
   transactions, Merkle root, witness commitment, weight, and ``check_transaction`` per tx;
2. UTXO lookups: every prevout not created earlier in the block is read in ONE snapshot read
   (``Chainstate.get_many``); missing, double-spent and immature spends are named;
3. ``plan_amounts`` per transaction (fees, encodings, issuance) → one balance claim per tx, and
   range-proof / surjection items;
4. proof cache: each range and surjection item's salted key is looked up and erased on a hit
   (block connection consumes mempool-verified proofs, as Elements does); if the block then
   fails, the consumed keys are inserted again, so an invalid block cannot flush the entries of
   valid transactions. Keys the mempool computed for the same wtxid are reused;
5. ONE ``BatchVerifier`` over the Bulletproof fixed base [G, G_i, H_i] with every uncached range
   proof and every balance equation → one multi-scalar multiplication; if it fails, a halving search
   names the first failing item (lowest transaction index, then position);
6. surjection proofs not found in the cache;
7. the coinbase may claim at most the block's fees per asset (subsidy 0);
8. one atomic LevelDB batch: spent outputs removed, new outputs (minus unspendable ones) added,
   undo data and the best-block marker (``Chainstate.connect_block``).

Block-level reject reasons: ``bad-prevblk``, ``bad-blk-height``, ``block-proof-invalid`` (not
our challenge/empty solution, or a dynafed header), ``bad-cb-missing``, ``bad-cb-multiple``,
``bad-cb-height`` (BIP34 push), ``bad-txns-duplicate`` (same txid twice, or a mutated Merkle
tree), ``bad-txnmrklroot``, ``bad-blk-weight``, ``bad-witness-merkle-match``,
``unexpected-witness`` (witness data but no commitment), ``bad-txns-accumulated-fee-outofrange``,
``bad-cb-amount`` / ``bad-cb-witness`` (coinbase), plus the transaction reasons of
``validator.rules`` with the transaction's index in the block.

Header time rules (median time past, future drift) are not checked on our regtest chain.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import cast

from ctplugin.batch import BatchVerifier, Claim
from ctplugin.bulletproofs import (
    CONSENSUS_N_GENS,
    CONSENSUS_NBITS,
    consensus_generators,
    output_range_proof_claim,
)
from ctplugin.elements import Block, Transaction, TxOut, parse_block
from ctplugin.elements.chainparams import ChainParams
from ctplugin.elements.consensus import MAX_BLOCK_WEIGHT, MAX_MONEY
from ctplugin.elements.script import is_unspendable, script_num
from ctplugin.errors import ProofError, ValidationError
from ctplugin.secp256k1 import FixedBase
from ctplugin.surjection import SurjectionProof, verify_prepared
from validator.coins import decode_spent, encode_txout
from validator.rules import (
    KIND_BALANCE,
    AmountPlan,
    ItemLabel,
    RangeItem,
    SpentOutput,
    SurjectionItem,
    check_coinbase_outputs,
    check_transaction,
    plan_amounts,
)
from validator.store import BlockRef, Chainstate, Outpoint, ProofCache, SpendView, UtxoEntry


@dataclass(slots=True)
class ConnectReport:
    """What connecting one block did, with the time of each phase (seconds)."""

    hash: bytes
    height: int
    n_transactions: int
    block: Block | None = None
    n_range_proofs: int = 0
    n_range_cached: int = 0
    n_surjection_proofs: int = 0
    n_surjection_cached: int = 0
    n_balance: int = 0
    n_msm_items: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    batch_split: dict[str, float] = field(default_factory=dict)

    @property
    def total_seconds(self) -> float:
        return sum(self.timings.values())


def range_cache_key(cache: ProofCache, item: RangeItem) -> bytes:
    return cache.rangeproof_key(item.proof, item.commitment, item.value_gen, item.extra_commit,
                                CONSENSUS_NBITS, CONSENSUS_N_GENS)


def surjection_cache_key(cache: ProofCache, item: SurjectionItem) -> bytes:
    return cache.surjection_key(item.proof, item.output_encoding, item.targets.encodings)


CacheKeys = tuple[list[bytes], list[bytes]]
"""(range-proof keys, surjection-proof keys) of one transaction, in plan order."""


@dataclass(frozen=True, slots=True)
class KnownTransaction:
    """What mempool acceptance computed for a transaction: its amount plan (labelled with
    tx_index 0) and the cache keys of its proofs (None without a cache)."""

    plan: AmountPlan
    keys: CacheKeys | None


def relabel(plan: AmountPlan, tx_index: int) -> AmountPlan:
    """The same plan for the transaction at ``tx_index`` of a block. Only the balance claim is
    relabelled here (it is always verified); range and surjection items keep their labels until
    one has to be verified (a cache miss), when ``at_index`` relabels it: most are cache hits."""
    b = plan.balance
    balance = Claim.trusted(ItemLabel(tx_index, KIND_BALANCE), b.base, b.fixed, b.free_scalars,
                            b.free_points, b.shared, b.fixed_const)
    return AmountPlan(tx_index, plan.fees, balance, plan.ranges, plan.surjections)


def at_index(item: RangeItem | SurjectionItem, tx_index: int) -> RangeItem | SurjectionItem:
    """``item`` labelled with the block position of its transaction."""
    if item.label.tx_index == tx_index:
        return item
    return item._replace(label=item.label._replace(tx_index=tx_index))


def cache_keys(cache: ProofCache, plan: AmountPlan) -> CacheKeys:
    return ([range_cache_key(cache, r) for r in plan.ranges],
            [surjection_cache_key(cache, s) for s in plan.surjections])


def range_claim(item: RangeItem) -> Claim:
    """The consensus range-proof equation of one item (ProofError → named as invalid)."""
    try:
        return output_range_proof_claim(item.proof, item.commitment, item.value_gen,
                                        item.extra_commit, label=item.label,
                                        commitment_point=item.commitment_point)
    except ProofError as exc:
        raise item.label.error("bad-txns-rangeproof-invalid", f"malformed: {exc}") from None


def verify_surjection(item: SurjectionItem,
                      decoded_generators: Mapping[bytes, bytes] | None = None) -> None:
    """Verify one surjection item (a ValidationError naming it otherwise).
    ``decoded_generators``: asset encodings the range claims already decoded (``run_batch``),
    so the output's generator is not decoded a second time."""
    output = item.output_point(decoded_generators)
    if output is None:
        raise item.label.error("bad-txns-asset-invalid", "asset commitment does not decode")
    targets = item.targets.prepared()
    if targets is None:
        raise item.label.error("bad-txns-asset-invalid", "a target generator does not decode")
    try:
        proof = SurjectionProof.parse(item.proof)
    except ProofError as exc:
        raise item.label.error("bad-txns-surjectionproof-invalid", f"malformed: {exc}") from None
    if not verify_prepared(proof, targets, output):
        raise item.label.error("bad-txns-surjectionproof-invalid")


def run_batch(plans: Sequence[AmountPlan], ranges: Sequence[RangeItem],
              timings: dict[str, float] | None = None,
              decoded_generators: dict[bytes, bytes] | None = None) -> int:
    """Every balance equation and the given range proofs in ONE batch (one MSM); on failure,
    the first failing item by (tx index, kind, position) as a ValidationError. Returns the
    number of claims. ``timings`` (if given) receives "claims" (parsing proofs, transcripts,
    scalars) and "msm" (the multi-scalar multiplication, plus the search on failure).

    ``decoded_generators`` (if given) receives, for each range claim built, its value
    generator's encoding → the packed point the claim decoded (a range claim's one shared term
    is value_gen·w(δ − t)): a blinded output's asset commitment is both its range proof's value
    generator and its surjection proof's output generator, and is then decoded only once."""
    start = time.perf_counter()
    fixed = consensus_generators().fixed
    claims = [plan.balance for plan in plans]
    malformed: list[tuple[ItemLabel, ValidationError]] = []
    for item in ranges:
        try:
            claim = range_claim(item)
        except ValidationError as exc:  # kept aside: an earlier item may fail the batch
            malformed.append((item.label, exc))
            continue
        claims.append(claim)
        if decoded_generators is not None and len(claim.shared) == 1:
            decoded_generators[item.value_gen] = claim.shared[0][0]
    claims.sort(key=_item_label)  # culprit order: tx index, then position
    batch = BatchVerifier(fixed)
    batch.extend(claims)
    middle = time.perf_counter()
    ok = batch.verify()
    if timings is not None:
        timings["claims"] = middle - start
        timings["msm"] = time.perf_counter() - middle
    failures = [] if ok else [(first_failing(fixed, claims), None)]
    culprits = sorted([*malformed, *failures], key=lambda pair: pair[0])
    if not culprits:
        return len(claims)
    label, error = culprits[0]
    raise error if error is not None else label.error("bad-txns-rangeproof-invalid")


def _item_label(claim: Claim) -> ItemLabel:
    return cast(ItemLabel, claim.label)


def first_failing(fixed: FixedBase, claims: Sequence[Claim]) -> ItemLabel:
    """The first false claim of a failing batch, by halving: if the left half verifies the
    culprit is in the right half, else in the left. O(log n) MSMs of halving size (about two
    batch verifications in all), however many claims are false, so a block full of bad proofs
    costs no more to reject than one with a single bad proof."""
    lo = list(claims)
    while len(lo) > 1:
        mid = len(lo) // 2
        left = BatchVerifier(fixed)
        left.extend(lo[:mid])
        lo = lo[mid:] if left.verify() else lo[:mid]
    # lo[0] is false unless the whole batch was a 2^-128 false negative; check it alone
    single = BatchVerifier(fixed)
    single.add(lo[0])
    if single.verify():
        raise ValidationError("bad-batch-verify", detail="batch failed but no claim did")
    return lo[0].label  # type: ignore[return-value]


class BlockValidator:
    """Connects and disconnects blocks on a chainstate, with an optional proof cache."""

    def __init__(self, chainstate: Chainstate, cache: ProofCache | None,
                 params: ChainParams,
                 known: Callable[[Transaction], KnownTransaction | None] | None = None) -> None:
        self.chainstate = chainstate
        self.cache = cache
        self.params = params
        self.known = known

    # --- block-level checks --------------------------------------------------------------

    def check_block(self, block: Block, tip: BlockRef | None,
                    checked: Sequence[object | None] = ()) -> None:
        """Context-free block checks plus the header's link to the tip. ``checked[i]`` not
        None: transaction i is byte-identical to one that already passed ``check_transaction``
        (a mempool entry), so it is not checked again (a pure function of those bytes)."""
        header = block.header
        if tip is not None:
            if header.prev_hash != tip.hash:
                raise ValidationError("bad-prevblk", detail="block does not extend the tip")
            if header.height != tip.height + 1:
                raise ValidationError("bad-blk-height")
        if header.is_dynafed or header.challenge != self.params.block_challenge \
                or header.solution != b"":
            raise ValidationError("block-proof-invalid")
        txs = block.transactions
        if not txs or not txs[0].is_coinbase:
            raise ValidationError("bad-cb-missing", tx_index=0)
        for i, tx in enumerate(txs[1:], start=1):
            if tx.is_coinbase:
                raise ValidationError("bad-cb-multiple", tx_index=i)
        root, mutated = block.compute_merkle_root()
        if mutated:
            raise ValidationError("bad-txns-duplicate", detail="mutated Merkle tree")
        if root != header.merkle_root:
            raise ValidationError("bad-txnmrklroot")
        seen: dict[bytes, int] = {}
        for i, tx in enumerate(txs):
            if tx.txid in seen:
                raise ValidationError("bad-txns-duplicate", tx_index=i)
            seen[tx.txid] = i
        expected_height = script_num(header.height)
        if not txs[0].inputs[0].script_sig.startswith(expected_height):
            raise ValidationError("bad-cb-height", tx_index=0)
        weight = sum(tx.weight for tx in txs)
        if weight > MAX_BLOCK_WEIGHT:
            raise ValidationError("bad-blk-weight")
        has_witness = any(tx.serialize()[4] & 1 for tx in txs)
        if block.witness_commitment_index() is not None:
            if not block.check_witness_commitment():
                raise ValidationError("bad-witness-merkle-match", tx_index=0)
        elif has_witness:
            raise ValidationError("unexpected-witness")
        n_checked = len(checked)
        for i, tx in enumerate(txs):
            if i >= n_checked or checked[i] is None:
                check_transaction(tx, i)

    # --- UTXO resolution -----------------------------------------------------------------

    def resolve_inputs(self, block: Block) -> tuple[list[list[SpentOutput | bytes]],
                                                    list[Outpoint],
                                                    list[tuple[Outpoint, UtxoEntry]],
                                                    SpendView]:
        """Spent outputs per transaction (coinbase: none; an output from the chainstate as its
        stored bytes, see ``decode_spent``), the spent outpoints in block order, the created
        UTXO entries and the snapshot read itself (``connect_block`` reuses its entries);
        missing / double-spent / immature inputs are named.

        Prevouts not created earlier in the block are read in one ``read_view`` snapshot read.
        """
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
                        raise ValidationError("bad-txns-inputs-missingorspent", tx_index=i,
                                              input_index=n, detail="spent twice in the block")
                    used.add(outpoint)
                    here = created.get(outpoint)
                    if here is not None:
                        outs.append(here[0])
                        continue
                    entry = from_db.get(outpoint)
                    if entry is None:
                        raise ValidationError("bad-txns-inputs-missingorspent", tx_index=i,
                                              input_index=n, detail=str(outpoint))
                    if entry.coinbase and height - entry.height < maturity:
                        raise ValidationError("bad-txns-premature-spend-of-coinbase",
                                              tx_index=i, input_index=n)
                    outs.append(entry.txout)  # decoded only if the rules need it
                spent_outs.append(outs)
            txid = tx.txid
            for n, out in enumerate(tx.outputs):
                if not is_unspendable(out.script_pubkey):
                    created[trusted(txid, n)] = (out, i == 0)
        new_entries = [(outpoint, UtxoEntry(height, coinbase, encode_txout(out)))
                       for outpoint, (out, coinbase) in created.items()]
        return spent_outs, spent_points, new_entries, view

    def _plan(self, tx: Transaction, tx_index: int, spent: Sequence[SpentOutput | bytes],
              known: KnownTransaction | None) -> AmountPlan:
        """The amount plan of a block transaction. For a transaction the mempool accepted with
        the same wtxid, its plan is reused: ``plan_amounts`` is a pure function of the
        transaction's bytes and of the spent outputs, which its txid fixes (an outpoint's
        content never changes), so it would compute the same plan again. The balance claim is
        still verified in this block's batch; only the decoding work is saved."""
        if known is not None:
            return relabel(known.plan, tx_index)
        outs = [decode_spent(o) if isinstance(o, bytes) else o for o in spent]
        return plan_amounts(tx, tx_index, outs, self.params.policy_asset)

    def _cache_keys(self, cache: ProofCache, plan: AmountPlan,
                    known: KnownTransaction | None) -> CacheKeys:
        """The salted cache keys of a transaction's proofs, in plan order (reused from mempool
        acceptance for the same wtxid: same proofs, commitments, scripts and targets)."""
        if known is not None and known.keys is not None:
            return known.keys
        return cache_keys(cache, plan)

    # --- connect / disconnect ------------------------------------------------------------

    def connect(self, data: bytes | Block) -> ConnectReport:
        """Validate a block on the tip and apply it atomically; ``ValidationError`` naming the
        culprit otherwise (nothing is written then)."""
        clock = time.perf_counter
        t0 = clock()
        block = data if isinstance(data, Block) else parse_block(data)
        t1 = clock()
        tip = self.chainstate.best_block()
        if tip is None:
            raise ValidationError("bad-prevblk", detail="chainstate has no genesis")
        txs = block.transactions
        known = self.known
        knowns: list[KnownTransaction | None] = [None] * len(txs)
        if known is not None:
            knowns[1:] = [known(tx) for tx in txs[1:]]
        self.check_block(block, tip, knowns)
        t2 = clock()
        spent_outs, spent_points, created, view = self.resolve_inputs(block)
        t3 = clock()
        report = ConnectReport(block.hash, block.header.height, len(txs), block)
        plans = []
        block_fees: dict[bytes, int] = {}
        for i in range(1, len(txs)):
            plan = self._plan(txs[i], i, spent_outs[i], knowns[i])
            for asset, fee in plan.fees.items():
                total = block_fees.get(asset, 0) + fee
                if total > MAX_MONEY:
                    raise ValidationError("bad-txns-accumulated-fee-outofrange", tx_index=i)
                block_fees[asset] = total
            plans.append(plan)
        check_coinbase_outputs(txs[0], block_fees)
        t4 = clock()
        cache = self.cache
        ranges: list[RangeItem] = []
        surjections: list[SurjectionItem] = []
        consumed: list[bytes] = []
        range_keys: list[bytes] = []
        range_items: list[tuple[RangeItem, int]] = []
        surjection_keys: list[bytes] = []
        surjection_items: list[tuple[SurjectionItem, int]] = []
        for plan in plans:
            i = plan.tx_index
            range_items += [(r, i) for r in plan.ranges]
            surjection_items += [(s, i) for s in plan.surjections]
            if cache is not None:
                rkeys, skeys = self._cache_keys(cache, plan, knowns[i])
                range_keys += rkeys
                surjection_keys += skeys
        report.n_range_proofs = len(range_items)
        report.n_surjection_proofs = len(surjection_items)
        if cache is None:
            ranges = [at_index(r, i) for r, i in range_items]  # type: ignore[misc]
            surjections = [at_index(s, i) for s, i in surjection_items]  # type: ignore[misc]
        elif range_keys or surjection_keys:
            # One lookup pass and ONE write batch erasing every hit of the block.
            hits = cache.lookup_and_erase_many(range_keys + surjection_keys)
            range_hits = hits[:len(range_keys)]
            surjection_hits = hits[len(range_keys):]
            consumed = [*compress(range_keys, range_hits),
                        *compress(surjection_keys, surjection_hits)]
            report.n_range_cached = sum(range_hits)
            report.n_surjection_cached = sum(surjection_hits)
            ranges = [at_index(r, i) for (r, i), hit  # type: ignore[misc]
                      in zip(range_items, range_hits, strict=True) if not hit]
            surjections = [at_index(s, i) for (s, i), hit  # type: ignore[misc]
                           in zip(surjection_items, surjection_hits, strict=True) if not hit]
        t5 = clock()
        try:
            report.n_balance = len(plans)
            batch_split: dict[str, float] = {}
            decoded: dict[bytes, bytes] = {}
            report.n_msm_items = run_batch(plans, ranges, batch_split,
                                           decoded if surjections else None)
            t6 = clock()
            for sitem in surjections:
                verify_surjection(sitem, decoded)
            t7 = clock()
            self.chainstate.connect_block(block.hash, block.header.height,
                                          block.header.prev_hash, spent_points, created,
                                          view)
            t8 = clock()
        except BaseException:
            # The block failed: the proofs it consumed are still verified successes, so put them
            # back (an invalid block must not flush the cache entries of valid transactions).
            if cache is not None and consumed:
                cache.insert_many(consumed)
            raise
        report.timings = {"parse": t1 - t0, "checks": (t2 - t1) + (t4 - t3), "utxo": t3 - t2,
                          "cache": t5 - t4, "batch": t6 - t5, "surjection": t7 - t6,
                          "write": t8 - t7}
        report.batch_split = batch_split
        return report

    def disconnect_tip(self) -> BlockRef:
        """Undo the tip block (its undo data restores the exact previous UTXO set)."""
        return self.chainstate.disconnect_tip()


def connect_genesis(chainstate: Chainstate, genesis: Block) -> BlockRef:
    """Apply the genesis block unvalidated: its outputs are the chain's initial coins
    (spendable at once: stored as non-coinbase, regtest.params)."""
    created = [(Outpoint(tx.txid, n), UtxoEntry(0, False, encode_txout(out)))
               for tx in genesis.transactions for n, out in enumerate(tx.outputs)
               if not is_unspendable(out.script_pubkey)]
    return chainstate.connect_block(genesis.hash, 0, bytes(32), [], created)
