"""Block connection and disconnection against the chainstate (docs/design.md "Data flow").

``BlockValidator.connect(raw)`` runs its stages, each one method, timed by one ``StageTimer``
(``ConnectReport.timings``: parse, check, resolve, plan, cache, scripts, claims, msm, with more
than one kernel thread prefetch, then one per check family (surjection, ecdsa, ...), commit).
With more than one kernel thread the proof work that needs nothing from the scripts starts
early on a helper thread (``verify.Prefetch``), the verdicts the same: the Bulletproof setup of
the transactions the mempool did not know right after the checks (1), beside stages 2–4, their
surjection rings after the cache lookup (4), beside the scripts (3b) and the batch's MSM;
without such Bulletproofs (Elements' chain, a block of mempool transactions) what the cache
lookup left, after it:

1. ``check_block`` — context-free block checks (after parsing with the C walker) and the
   header's link to the tip: prev block, height, challenge ``OP_TRUE`` with an empty solution,
   coinbase position and BIP34 height, duplicate transactions, Merkle root, witness commitment,
   weight, and ``check_transaction`` per tx;
2. ``resolve_inputs`` — every prevout not created earlier in the block is read in ONE snapshot
   read (``Chainstate.read_view``); missing, double-spent and immature spends are named;
3. ``plan`` — per transaction ``plan_amounts`` (fees, encodings, issuance): one balance claim
   and the range-proof / surjection *items* (``validator.items``), nothing verified yet; the
   block's fees per asset; the coinbase may claim at most the fees (subsidy 0);
3b. ``script_pass`` — timelocks (nLockTime against the parent's median time past, BIP68 by
   height and time), the block's sigop cost, then every input script of the transactions the
   script-execution cache does not vouch for (hits consumed when the block commits), their
   BIP340 signatures and taproot tweaks becoming batch items and their ECDSA signatures check
   items (``validator.scripts``); every output script is valid, as in Elements;
4. ``cache_pass`` — each item's salted key is looked up in the proof cache (its in-memory front
   first; the script stage does the same for each transaction's script-execution key); the hits
   are consumed only once the block is committed, in memory, their records deleted with a later
   write batch (as Elements' CuckooCache erases lazily), so an invalid block consumes nothing.
   Keys the mempool computed for the same wtxid are reused. What is left is a ``ProofWork``
   (``prepare`` runs stages 1–4);
5. ``validator.verify.verify`` — stateless: ONE batch (one multi-scalar multiplication) of every
   balance equation, uncached range proof and signature, the culprit named by halving; then the
   uncached surjection proofs (all in one ring-kernel call);
6. ``commit`` — the chainstate's coins cache: spent outputs removed, new outputs (minus
   unspendable ones) added, the tip moved, undo data kept for the block files
   (``Chainstate.connect_block``; the chain manager flushes it to LevelDB in atomic batches).

Reject reasons: the block-level and transaction constants of ``validator.reasons``, with the
transaction's index in the block.

Header times (Core's ContextualCheckBlockHeader: after the parent's median time past, at most
``MAX_FUTURE_BLOCK_TIME`` ahead of the node's clock) are checked once per block, when the chain
manager accepts it or the node prepares it (``check_block_time``; ``validator.chain``): they
need the block index, which this module does not see.

The values handed between stages live in ``validator.prepared`` (``ResolvedInputs``, the one
``PreparedBlock``, ``ConnectReport``), the proof-cache keys in ``validator.cachekeys``, the
mempool's per-transaction record in ``validator.known``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import attrgetter, itemgetter, not_
from typing import cast

from ctplugin.batch import Claim
from ctplugin.elements import Block, BlockHeader, Transaction, TxOut
from ctplugin.elements.chainparams import ChainParams
from ctplugin.elements.consensus import MAX_BLOCK_WEIGHT, MAX_FUTURE_BLOCK_TIME, MAX_MONEY
from ctplugin.elements.script import is_unspendable, script_num, script_num_decode
from ctplugin.errors import ValidationError
from ctplugin.script.flags import ScriptFlags
from ctplugin.script.sigops import MAX_BLOCK_SIGOPS_COST, transaction_sigop_cost
from ctplugin.secp256k1 import kernel
from validator import reasons
from validator.cachekeys import (
    CacheKeys,
    balance_cache_key,
    cache_keys,
    check_items,
    script_cache_key,
)
from validator.coins import decode_txout
from validator.items import KIND_BALANCE, BatchItem, Family, Item, ItemLabel
from validator.known import KnownTransaction, PlanCounts, created_entries, plan_counts
from validator.prepared import ConnectReport, PreparedBlock, ResolvedInputs, SpentOutputs
from validator.rules import (
    AmountPlan,
    SpentOutput,
    check_coinbase_outputs,
    check_transaction,
    decode_commitments,
    foreseen_ranges,
    plan_amounts,
    value_commitments,
)
from validator.scripts import BLOCK_FLAGS, ScriptWork, items_of, run_scripts
from validator.store import (
    BlockRef,
    BlockUndo,
    Chainstate,
    DuplicateOutputError,
    Outpoint,
    ProofCache,
    UtxoEntry,
)
from validator.timelocks import MedianTimes, check_final, check_sequence_locks
from validator.timing import Stage, StageTimer
from validator.verify import Prefetch, ProofWork, verify


def relabel(plan: AmountPlan, tx_index: int) -> AmountPlan:
    """The same plan for the transaction at ``tx_index`` of a block. Only the balance claim is
    relabelled here (it is always verified); range and surjection items keep their labels until
    one has to be verified (a cache miss), when ``at_tx`` relabels it: most are cache hits."""
    b = plan.balance
    balance = Claim.trusted(ItemLabel(tx_index, KIND_BALANCE), b.base, b.fixed, b.free_scalars,
                            b.free_points, b.shared, b.fixed_const)
    return AmountPlan(tx_index, plan.fees, balance, plan.ranges, plan.surjections,
                      plan.borromeans)


_txid_of = itemgetter(0)
_txid = attrgetter("txid")
_coinbase_of = attrgetter("coinbase")
chain_items = chain.from_iterable


@dataclass(frozen=True, slots=True)
class BlockPlan:
    """Stage 3's answer, per non-coinbase transaction in block order (``txs[j]`` is
    transaction j + 1's): its amount plan, or None for a mempool transaction (its plan is not
    kept: ``KnownTransaction``; ``rebuild`` makes the plans of some transactions again when
    something of them must be verified), the numbers of items of each plan (``PlanCounts``),
    the cache keys mempool acceptance already computed (None: compute them); and the block's
    fees per asset."""

    txs: list[AmountPlan | None]
    counts: list[PlanCounts]
    known_keys: list[CacheKeys | None]
    fees: dict[bytes, int]
    rebuild: Callable[[Sequence[int]], dict[int, AmountPlan]]

    def complete(self) -> list[AmountPlan]:
        """Every plan (each labelled with its transaction's position), the mempool
        transactions' made again in one ``rebuild``."""
        missing = [j + 1 for j, p in enumerate(self.txs) if p is None]
        made = self.rebuild(missing) if missing else {}
        return [p if p is not None else made[j] for j, p in enumerate(self.txs, 1)]


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


_family = attrgetter("family")


def _padded(knowns: Sequence[KnownTransaction | None], n: int
            ) -> Sequence[KnownTransaction | None]:
    """``knowns`` for a block of ``n`` transactions (missing ones: not known)."""
    return knowns if len(knowns) == n else [*knowns[:n], *[None] * (n - len(knowns))]


def _decoded(spent: Sequence[SpentOutput | bytes]) -> list[SpentOutput]:
    return [decode_txout(o) if isinstance(o, bytes) else o for o in spent]


_FAMILIES: tuple[str, ...] = (Family.RANGE, Family.SURJECTION, Family.BORROMEAN)  # PlanCounts
# counted per cache hit: the plain strings (an enum member hashes and compares slower)
_SURJECTION, _BORROMEAN = Family.SURJECTION.value, Family.BORROMEAN.value
_batch_keys_of = itemgetter(0)
_check_keys_of = itemgetter(1)


def _balance_claim(plan: AmountPlan, tx_index: int) -> Claim:
    """The plan's balance claim labelled for the transaction at ``tx_index``."""
    return plan.balance if plan.tx_index == tx_index else relabel(plan, tx_index).balance


def _fee_totals(fees: Sequence[dict[bytes, int]]) -> dict[bytes, int]:
    """The block's fees per asset, from each non-coinbase transaction's (in block order);
    ``bad-txns-accumulated-fee-outofrange`` names the transaction whose fee takes a total
    above MAX_MONEY. Every fee is positive (``rules.check_fees``), so the running totals only
    grow: the transactions are walked one by one only when a final total is out of range."""
    totals: dict[bytes, int] = {}
    for tx_fees in fees:
        for asset, fee in tx_fees.items():
            totals[asset] = totals.get(asset, 0) + fee
    if any(total > MAX_MONEY for total in totals.values()):
        running: dict[bytes, int] = {}
        for i, tx_fees in enumerate(fees, 1):
            for asset, fee in tx_fees.items():
                running[asset] = total = running.get(asset, 0) + fee
                if total > MAX_MONEY:
                    raise ValidationError(reasons.BAD_TXNS_ACCUMULATED_FEE_OUTOFRANGE,
                                          tx_index=i)
    return totals


def _misses(items: list[tuple[Item, int]], hits: Sequence[bool] | None) -> list[Item]:
    """The items the cache did not vouch for, labelled with their transaction's position."""
    kept = items if hits is None else compress(items, [not h for h in hits])
    return [item.at_tx(i) for item, i in kept]


class BlockValidator:
    """Connects and disconnects blocks on a chainstate, with an optional proof cache."""

    def __init__(self, chainstate: Chainstate, cache: ProofCache | None,
                 params: ChainParams,
                 known: Callable[[Sequence[Transaction]], list[KnownTransaction | None]]
                 | None = None,
                 bip30_limit: int | None = 0, *, median_times: MedianTimes) -> None:
        """``known``: per transaction, the mempool's record of that very transaction (None:
        unknown). ``bip30_limit``: ``bip34_implies_bip30_limit`` of the chain's genesis (the
        default 0 checks BIP30 at every height). ``median_times``: the active chain's median
        time past by height (``validator.timelocks.MedianTimes``; the chain manager's): the
        timelocks of a block are judged against its parent's."""
        self.chainstate = chainstate
        self.cache = cache
        self.params = params
        self.median_times = median_times
        self.known = known
        self.bip30_limit = bip30_limit
        # The chain's height-dependent rules, read once here, not per block or transaction:
        # from ``_all_rules_from`` on every block runs under ``_full_flags`` (ctregtest: from 1).
        self._full_flags = block_script_flags(params, None)
        self._all_rules_from = max(params.bip65_height, params.bip66_height, params.csv_height)
        self._bip34_height = params.bip34_height
        self._version_rules = ((2, params.bip34_height), (3, params.bip66_height),
                               (4, params.bip65_height))
        self._challenge = params.block_challenge
        self._mandatory_coinbase = params.mandatory_coinbase

    def script_flags(self, height: int) -> int:
        """The script flags of a block at ``height`` (Elements' GetBlockScriptFlags)."""
        if height >= self._all_rules_from:
            return self._full_flags
        return block_script_flags(self.params, height)

    # --- stage 1: block checks ------------------------------------------------------------

    @staticmethod
    def check_block_time(time: int, median_time_past: int, now: float) -> None:
        """The header's time against its parent's median time past and the node's clock
        (Core's ContextualCheckBlockHeader): ``median_time_past < time <= now +
        MAX_FUTURE_BLOCK_TIME``."""
        if time <= median_time_past:
            raise ValidationError(reasons.TIME_TOO_OLD,
                                  detail="block's timestamp is too early")
        if time > now + MAX_FUTURE_BLOCK_TIME:
            raise ValidationError(reasons.TIME_TOO_NEW,
                                  detail="block timestamp too far in the future")

    def check_header(self, header: BlockHeader) -> None:
        """The header's own proof (CheckBlockHeader for signed blocks) and version rules:
        checked for every block, and alone for submitheader."""
        if header.is_dynafed:
            raise ValidationError(reasons.BLOCK_PROOF_INVALID, detail="dynafed is not active")
        if header.challenge != self._challenge:  # = the previous block's, before dynafed
            raise ValidationError(reasons.BAD_DIFFBITS, detail="incorrect proof of work")
        # The challenge is OP_TRUE (regtest.elements refuses others): evaluated as Elements
        # does (SIGPUSHONLY, CLEANSTACK), only the empty solution satisfies it, and that one
        # is within every max_block_sig_size.
        if header.solution:
            raise ValidationError(reasons.BLOCK_PROOF_INVALID)
        for version, since in self._version_rules:
            if header.version < version and header.height >= since:
                raise ValidationError(reasons.BAD_VERSION, detail=f"0x{header.version:08x}")

    def check_block(self, block: Block, tip: BlockRef | None,
                    knowns: Sequence[KnownTransaction | None] = ()) -> None:
        """Context-free block checks plus the header's link to the tip. ``knowns[i]`` not
        None: transaction i is byte-identical to a mempool entry, which passed
        ``check_transaction`` (and is no coinbase): a pure function of those bytes, so it is
        not checked again, and its witness hash is the entry's."""
        header = block.header
        if tip is not None:
            if header.prev_hash != tip.hash:
                raise ValidationError(reasons.BAD_PREVBLK, detail="block does not extend the tip")
            if header.height != tip.height + 1:
                raise ValidationError(reasons.BAD_BLK_HEIGHT)
        self.check_header(header)
        txs = block.transactions
        if not txs or not txs[0].is_coinbase:
            raise ValidationError(reasons.BAD_CB_MISSING, tx_index=0)
        knowns = _padded(knowns, len(txs))
        unknown = [i for i in range(1, len(txs)) if knowns[i] is None]
        for i in unknown:
            if txs[i].is_coinbase:
                raise ValidationError(reasons.BAD_CB_MULTIPLE, tx_index=i)
        txids = block.txids()
        root, mutated = block.compute_merkle_root()
        if mutated:
            raise ValidationError(reasons.BAD_TXNS_DUPLICATE, detail="mutated Merkle tree")
        if root != header.merkle_root:
            raise ValidationError(reasons.BAD_TXNMRKLROOT)
        if len(set(txids)) != len(txids):
            seen: set[bytes] = set()
            for i, txid in enumerate(txids):
                if txid in seen:
                    raise ValidationError(reasons.BAD_TXNS_DUPLICATE, tx_index=i)
                seen.add(txid)
        if header.height >= self._bip34_height and not txs[0].inputs[0].script_sig.startswith(
                script_num(header.height)):
            raise ValidationError(reasons.BAD_CB_HEIGHT, tx_index=0)
        weight = block.weight
        if weight > MAX_BLOCK_WEIGHT:
            raise ValidationError(reasons.BAD_BLK_WEIGHT)
        has_witness = any(tx.serialize()[4] & 1 for tx in txs)
        if block.witness_commitment_index() is not None:
            withashes = [tx.withash if k is None else k.withash for tx, k in zip(txs, knowns)]
            if not block.check_witness_commitment(withashes):
                raise ValidationError(reasons.BAD_WITNESS_MERKLE_MATCH, tx_index=0)
        elif has_witness:
            raise ValidationError(reasons.UNEXPECTED_WITNESS)
        check_transaction(txs[0], 0)
        for i in unknown:
            check_transaction(txs[i], i)
        if self._mandatory_coinbase is not None:
            self.check_mandatory_coinbase(txs[0])

    def check_mandatory_coinbase(self, coinbase: Transaction) -> None:
        """``-con_mandatorycoinbase``: each coinbase output of the policy asset whose value is
        not an explicit 0 pays exactly the mandatory script (Elements' ConnectBlock)."""
        policy = self.params.policy_asset
        for j, out in enumerate(coinbase.outputs):
            if out.value != 0 and out.asset == policy \
                    and out.script_pubkey != self._mandatory_coinbase:
                raise ValidationError(reasons.BAD_COINBASE_TXOS, tx_index=0, output_index=j,
                                      detail="coinbase outputs didn't match required "
                                             "scriptPubKey")

    # --- stage 2: inputs ------------------------------------------------------------------

    def resolve_inputs(self, block: Block,
                       knowns: Sequence[KnownTransaction | None] = ()) -> ResolvedInputs:
        """The spent outputs of every transaction (see ``ResolvedInputs``); missing /
        double-spent / immature inputs are named. Prevouts not created earlier in the block
        are read in one ``read_view`` snapshot read. ``knowns``: the spent outpoints and
        created entries of mempool transactions are theirs (pure functions of the bytes).

        A block none of whose transactions spends another's output (the common case) is
        checked with whole-block set and list operations; any failure, and every block with
        in-block spends, goes through the input-by-input pass, which names the culprit."""
        txs = block.transactions
        height = block.header.height
        knowns = _padded(knowns, len(txs))
        trusted = Outpoint.trusted
        points: list[tuple[Outpoint, ...]] = [()]  # the coinbase spends nothing
        points += [k.spent_points if k is not None
                   else tuple([trusted(t.prevout_hash, t.prevout_index) for t in tx.inputs])
                   for tx, k in zip(txs[1:], knowns[1:])]
        spent_points = list(chain_items(points))
        txids = set(map(_txid, txs))
        if len(set(spent_points)) != len(spent_points) \
                or not txids.isdisjoint(map(_txid_of, spent_points)):
            return self._resolve_in_order(block, points, spent_points, knowns)
        view = self.chainstate.read_view(spent_points)
        coins = list(map(view.entries.__getitem__, spent_points))
        if not all(coins) or (any(map(_coinbase_of, coins)) and any(
                height - c.height < self.params.coinbase_maturity
                for c in coins if c is not None and c.coinbase)):
            return self._resolve_in_order(block, points, spent_points, knowns)
        return ResolvedInputs(SpentOutputs(points, view.entries, {}), spent_points,
                              self._created(block, knowns), view)

    def _created(self, block: Block, knowns: Sequence[KnownTransaction | None]
                 ) -> list[tuple[Outpoint, UtxoEntry]]:
        """Every UTXO entry the block creates, in block order (a mempool transaction's own
        when it was made for this height)."""
        height = block.header.height
        return list(chain_items([
            known.created if known is not None and known.height == height
            else created_entries(tx, height, i == 0)
            for i, (tx, known) in enumerate(zip(block.transactions, knowns))]))

    def _resolve_in_order(self, block: Block, points: list[tuple[Outpoint, ...]],
                          spent_points: list[Outpoint],
                          knowns: Sequence[KnownTransaction | None]) -> ResolvedInputs:
        """``resolve_inputs`` input by input, in block order: the first failing input is
        named (spent twice in the block, missing, an immature coinbase output — the block's
        own coinbase's included); an output created earlier in the block is spent from there."""
        txs = block.transactions
        height = block.header.height
        n_txs = len(txs)
        position = {tx.txid: i for i, tx in enumerate(txs)}
        view = self.chainstate.read_view(
            [o for o in spent_points if position.get(o[0], n_txs) >= n_txs])
        from_db = view.entries
        created: dict[Outpoint, tuple[TxOut, bool]] = {}
        used: set[Outpoint] = set()
        maturity = self.params.coinbase_maturity
        for i, tx in enumerate(txs):
            for n, outpoint in enumerate(points[i]):
                if outpoint in used:
                    raise ValidationError(reasons.BAD_TXNS_INPUTS_MISSINGORSPENT, tx_index=i,
                                          input_index=n, detail="spent twice in the block")
                used.add(outpoint)
                here = created.get(outpoint)
                if here is not None:
                    if here[1] and maturity > 0:  # the block's own coinbase: 0 confirmations
                        raise ValidationError(reasons.BAD_TXNS_PREMATURE_SPEND_OF_COINBASE,
                                              tx_index=i, input_index=n)
                    continue
                entry = from_db.get(outpoint)
                if entry is None:
                    raise ValidationError(reasons.BAD_TXNS_INPUTS_MISSINGORSPENT, tx_index=i,
                                          input_index=n, detail=str(outpoint))
                if entry.coinbase and height - entry.height < maturity:
                    raise ValidationError(reasons.BAD_TXNS_PREMATURE_SPEND_OF_COINBASE,
                                          tx_index=i, input_index=n)
            txid = tx.txid
            trusted = Outpoint.trusted
            for n, out in enumerate(tx.outputs):
                if not is_unspendable(out.script_pubkey):
                    created[trusted(txid, n)] = (out, i == 0)
        in_block = {o: out for o, (out, _) in created.items() if o in used}
        return ResolvedInputs(SpentOutputs(points, from_db, in_block), spent_points,
                              self._created(block, knowns), view)

    # --- stage 3: plan --------------------------------------------------------------------

    def plan(self, block: Block, spent: Sequence[Sequence[SpentOutput | bytes]],
             knowns: Sequence[KnownTransaction | None]) -> BlockPlan:
        """Every transaction's amount plan (a mempool transaction's fees and item counts), the
        block's fees per asset (each within MAX_MONEY) and the coinbase's claim on them."""
        txs = block.transactions
        knowns = _padded(knowns, len(txs))
        made = self._plans(block, spent, [i for i in range(1, len(txs)) if knowns[i] is None])
        tail = knowns[1:]
        plans: list[AmountPlan | None] = (list(map(made.get, range(1, len(txs)))) if made
                                          else [None] * len(tail))
        counts: list[PlanCounts] = [
            known.counts if known is not None else plan_counts(cast(AmountPlan, plan))
            for known, plan in zip(tail, plans)]
        fees = [known.fees if known is not None else cast(AmountPlan, plan).fees
                for known, plan in zip(tail, plans)]
        block_fees = _fee_totals(fees)
        check_coinbase_outputs(txs[0], block_fees, self.params.policy_asset,
                               self.params.block_subsidy_at(block.header.height))
        known_keys = [None if k is None else k.keys for k in knowns[1:]]
        return BlockPlan(plans, counts, known_keys, block_fees,
                         lambda indexes: self._plans(block, spent, indexes))

    def _plans(self, block: Block, spent: Sequence[Sequence[SpentOutput | bytes]],
               indexes: Sequence[int]) -> dict[int, AmountPlan]:
        """The amount plans of the transactions at ``indexes``; every value commitment they
        decode is decoded together (their square roots in one batch of the kernel)."""
        txs = block.transactions
        outs = {i: _decoded(spent[i]) for i in indexes}
        decoded = decode_commitments(c for i in indexes for c in value_commitments(txs[i], outs[i]))
        return {i: self.plan_transaction(txs[i], i, outs[i], decoded) for i in indexes}

    def plan_transaction(self, tx: Transaction, tx_index: int,
                         spent: Sequence[SpentOutput | bytes],
                         decoded: Mapping[bytes, bytes] | None = None) -> AmountPlan:
        """The amount plan of a block transaction. ``decoded``: value commitments the block
        decoded together (``rules.decode_commitments``)."""
        return plan_amounts(tx, tx_index, _decoded(spent), self.params.policy_asset,
                            self.params.range_proofs, decoded)

    # --- stage 3b: scripts -----------------------------------------------------------------

    def script_pass(self, block: Block, inputs: ResolvedInputs, consumed: list[bytes],
                    knowns: Sequence[KnownTransaction | None] = ()) -> ScriptPass:
        """Every transaction's timelocks (nLockTime with BIP113's cutoff, BIP68 by height and
        by time: ``validator.timelocks``) and the block's signature-operation cost
        (``bad-blk-sigops``), then every input script of the transactions the
        script-execution cache does not vouch for (hits are consumed: their keys are appended to
        ``consumed``, consumed when the block commits), run under the block flags with their
        signatures deferred to the batch (``validator.scripts``). Every output script is valid
        in a block, as in Elements (standardness is the mempool's: ``validator.policy``).

        A mempool transaction (``knowns``) has a known sigop cost (a pure function of its
        bytes and spent outputs); its timelocks are evaluated for this block unless it has none
        (``KnownTransaction.timeless``), and the block's sigop total always is."""
        txs = block.transactions
        height = block.header.height
        knowns = _padded(knowns, len(txs))
        entries = inputs.view.entries
        spent_points = inputs.spent_points
        decoded: dict[int, list[SpentOutput]] = {}
        flags = self.script_flags(height)
        # BIP68 and BIP113 come with BIP112 (Elements' LOCKTIME_VERIFY_SEQUENCE and
        # LOCKTIME_MEDIAN_TIME_PAST from the CSV deployment): one median time per block
        csv = height >= self.params.csv_height
        cutoff = self.median_times(height - 1) if csv else block.header.time
        check_final(txs[0], 0, height, cutoff)
        sigops = transaction_sigop_cost(txs[0], ())
        k = 0
        for i in range(1, len(txs)):
            tx = txs[i]
            known = knowns[i]
            n_inputs = len(tx.inputs)
            if known is None or not known.timeless:
                check_final(tx, i, height, cutoff)
                if csv:
                    check_sequence_locks(tx, i, _coin_heights(entries, spent_points, k, height),
                                         height, self.median_times)
            k += n_inputs
            if known is None:
                outs = decoded[i] = _decoded(inputs.spent[i])
                sigops += transaction_sigop_cost(tx, outs)
            else:
                sigops += known.sigops
            if sigops > MAX_BLOCK_SIGOPS_COST:
                raise ValidationError(reasons.BAD_BLK_SIGOPS, tx_index=i, detail="too many sigops")
        hits = [False] * len(txs)
        cache = self.cache
        if cache is not None and len(txs) > 1:
            keys = [known.script_key if known is not None and known.script_key is not None
                    else script_cache_key(cache, tx, flags)
                    for tx, known in zip(txs[1:], knowns[1:])]
            found = cache.lookup_many(keys)
            hits[1:] = found
            consumed += compress(keys, found)
        genesis = self.params.genesis_hash
        runs = [(i, *run_scripts(txs[i], i, decoded[i] if i in decoded
                                 else _decoded(inputs.spent[i]), genesis, flags))
                for i in range(1, len(txs)) if not hits[i]]
        return ScriptPass(items_of(runs, flags), len(txs) - 1, sum(hits))

    # --- stage 4: proof cache ---------------------------------------------------------------

    def balance_keys(self, block: Block, inputs: ResolvedInputs,
                     knowns: Sequence[KnownTransaction | None]) -> list[bytes] | None:
        """Per non-coinbase transaction the cache key of its balance equation (a mempool
        transaction's own: same wtxid, same spent outputs), or None without a cache."""
        cache = self.cache
        if cache is None:
            return None
        txs = block.transactions
        knowns = _padded(knowns, len(txs))
        return [known.balance_key if known is not None and known.balance_key is not None
                else balance_cache_key(cache, txs[i], inputs.spent[i])
                for i, known in enumerate(knowns) if i]

    def cache_pass(self, plan: BlockPlan, balance_keys: Sequence[bytes] | None = None
                   ) -> CachePass:
        """Drop the items and balance claims the proof cache vouches for (``balance_keys``:
        per transaction, ``balance_keys``; None: every balance is verified): ONE lookup over
        every key of the block; the hits are consumed when the block commits. Only what is
        left is labelled with its transaction's position in the block."""
        cache = self.cache
        items = {family: n for family, n in zip(
            _FAMILIES, map(sum, zip(*plan.counts))) if n}
        if cache is None or not (items or balance_keys):
            every = plan.complete()
            return CachePass(ProofWork([_balance_claim(p, i) for i, p in enumerate(every, 1)],
                                       [r.at_tx(i) for i, p in enumerate(every, 1)
                                        for r in p.ranges],
                                       [c.at_tx(i) for i, p in enumerate(every, 1)
                                        for c in check_items(p)]),
                             [], items, {})
        made: dict[int, AmountPlan] = {}
        if None in plan.known_keys:  # keys to compute: of every plan without them
            made = plan.rebuild([j for j, (p, k) in enumerate(zip(plan.txs, plan.known_keys), 1)
                                 if p is None and k is None])
        keys = [known if known is not None else cache_keys(cache, p or made[j])
                for j, (p, known) in enumerate(zip(plan.txs, plan.known_keys), 1)]
        batch_keys = list(chain_items(map(_batch_keys_of, keys)))
        check_keys = list(chain_items(map(_check_keys_of, keys)))
        balance = list(balance_keys) if balance_keys is not None else []
        every_key = batch_keys + check_keys + balance
        hits = cache.lookup_many(every_key)
        if all(hits) and balance_keys is not None:  # mempool transactions: nothing to verify
            cached = dict(items)
            if balance:
                cached[Family.BALANCE] = len(balance)
            return CachePass(ProofWork([], [], []), every_key, items, cached)
        n_batch, n_checks = len(batch_keys), len(check_keys)
        batch_hits = hits[:n_batch]
        check_hits = hits[n_batch:n_batch + n_checks]
        balance_hits = hits[n_batch + n_checks:] if balance else [False] * len(plan.txs)
        consumed = [*compress(batch_keys, batch_hits), *compress(check_keys, check_hits),
                    *compress(balance, balance_hits)]
        counts: Counter[str] = Counter(compress(chain_items(
            ((_SURJECTION,) * n_s + (_BORROMEAN,) * n_b
             for _, n_s, n_b in plan.counts)), check_hits))
        if any(batch_hits):
            counts[Family.RANGE] = sum(batch_hits)
        if any(balance_hits):
            counts[Family.BALANCE] = sum(balance_hits)
        txs: list[AmountPlan | None] = plan.txs
        if None in txs:
            # the mempool transactions something of which is left to verify are planned
            # again; the others' items are all cached (their hits are set aside)
            batch_tx = list(chain_items(repeat(j, n_r) for j, (n_r, _, _)
                                        in enumerate(plan.counts, 1)))
            check_tx = list(chain_items(repeat(j, n_s + n_b) for j, (_, n_s, n_b)
                                        in enumerate(plan.counts, 1)))
            needed = {*compress(batch_tx, map(not_, batch_hits)),
                      *compress(check_tx, map(not_, check_hits)),
                      *compress(range(1, len(txs) + 1), map(not_, balance_hits))}
            made = made | plan.rebuild(sorted(j for j in needed if txs[j - 1] is None))
            txs = [p if p is not None else made.get(j) for j, p in enumerate(txs, 1)]
            batch_hits = list(compress(batch_hits, [txs[j - 1] is not None for j in batch_tx]))
            check_hits = list(compress(check_hits, [txs[j - 1] is not None for j in check_tx]))
        planned = [(j, p) for j, p in enumerate(txs, 1) if p is not None]
        batch_items = [(r, i) for i, p in planned for r in p.ranges]
        check_pairs = [(c, i) for i, p in planned for c in check_items(p)]
        claims = [_balance_claim(cast(AmountPlan, p), i)
                  for (i, p), hit in zip(enumerate(txs, 1), balance_hits) if not hit]
        work = ProofWork(claims,
                         _misses(batch_items, batch_hits),  # type: ignore[arg-type]
                         _misses(check_pairs, check_hits))  # type: ignore[arg-type]
        return CachePass(work, consumed, items, dict(counts))

    # --- stage 6: commit ------------------------------------------------------------------

    def commit(self, block: Block, inputs: ResolvedInputs) -> None:
        """The block's one atomic chainstate write (UTXO changes, undo data, best block). An
        output the block creates that is already unspent is rejected (BIP30) and nothing is
        written. Where BIP34 implies BIP30 (``bip30_enforced``) only the coins cache is
        consulted for the created outputs, as Core saves those database reads."""
        header = block.header
        try:
            self.chainstate.connect_block(block.hash, header.height, header.prev_hash,
                                          inputs.spent_points, inputs.created, inputs.view,
                                          check_created=self.bip30_enforced(header.height))
        except DuplicateOutputError as exc:
            txid, index = cast(Outpoint, exc.outpoint)
            tx_index = next((i for i, tx in enumerate(block.transactions) if tx.txid == txid),
                            None)
            raise ValidationError(reasons.BAD_TXNS_BIP30, tx_index=tx_index, output_index=index,
                                  detail=str(exc)) from None

    def bip30_enforced(self, height: int) -> bool:
        """Core's ConnectBlock rule: BIP30 (no created output may already be unspent) is
        checked below the BIP34 height and again from ``BIP34_IMPLIES_BIP30_LIMIT``, the lowest
        height an unchecked older coinbase indicates (``bip34_implies_bip30_limit``)."""
        limit = self.bip30_limit
        return height < max(BIP34_HEIGHT, self._bip34_height) \
            or (limit is not None and height >= limit)

    # --- connect / disconnect ------------------------------------------------------------

    def connect(self, block: Block) -> ConnectReport:
        """Validate a block on the tip and apply it atomically; ``ValidationError`` naming the
        culprit otherwise (nothing is written then). The stages of the module docstring."""
        tip = self.chainstate.best_block()
        if tip is None:
            raise ValidationError(reasons.BAD_PREVBLK, detail="chainstate has no genesis")
        # with more than one kernel thread, stage 5's script-independent kernels start beside
        # the scripts stage (verify.Prefetch)
        timer = StageTimer()
        # the block arrives parsed: its parse is timed by whoever parsed it (Node.submit_block
        # adds it here), listed first as it happened first
        timer.seconds[Stage.PARSE] = 0.0
        prepared = self.prepare(block, tip, timer, early=kernel.threads() > 1)
        n_claims = verify(prepared.work, prepared.timer, prepared.prefetch)
        self.commit_prepared(prepared)
        return prepared.report(n_claims)

    def commit_prepared(self, prepared: PreparedBlock) -> None:
        """Stage 6 of a prepared block whose work verified (or is being verified elsewhere):
        the chainstate write, then the cache hits it used are consumed. Timed as "commit"."""
        with prepared.timer.stage(Stage.COMMIT):
            self.commit(prepared.block, prepared.inputs)
            if self.cache is not None and prepared.consumed:
                self.cache.consume(prepared.consumed)

    def prepare(self, block: Block, tip: BlockRef, timer: StageTimer, *,
                raw: bytes | None = None, early: bool = False) -> PreparedBlock:
        """Stages 1–4 of ``block`` on ``tip``, timed: the proof and signature work left and
        the cache keys hit; nothing consumed or written. ``raw``: the block's bytes, carried
        for a caller that stores them (``PreparedBlock.raw``). ``early``: start the proof work
        that needs nothing from the scripts (``verify.Prefetch``: the Bulletproof setup, the
        surjection and Borromean rings) on a helper thread as soon as it is known (the module
        docstring), to run beside the stages that follow (``PreparedBlock.prefetch``: pass it
        to ``verify``)."""
        with timer.stage(Stage.CHECK):
            knowns = self.known_transactions(block)
            self.check_block(block, tip, knowns)
            # The transactions the mempool did not know are rarely in the proof cache: their
            # Bulletproofs' claims start now, from the transactions alone, on a helper thread
            # beside the inputs, the plan and the cache pass (what the cache then vouches for
            # is left out by verify), their surjection rings beside the scripts. Without such
            # Bulletproofs (Elements' chain, a block of mempool transactions) what the cache
            # pass leaves starts after it (verify.Prefetch). Timed with the checks.
            prefetch = self._prefetch_ranges(block, knowns) if early else None
        consumed: list[bytes] = []
        try:
            with timer.stage(Stage.RESOLVE):
                inputs = self.resolve_inputs(block, knowns)
            with timer.stage(Stage.PLAN):
                plan = self.plan(block, inputs.spent, knowns)
            with timer.stage(Stage.CACHE):
                cached = self.cache_pass(plan, self.balance_keys(block, inputs, knowns))
                if prefetch is not None and prefetch.wants_checks:
                    # their Python here, their rings on the helper beside the scripts
                    prefetch.add_checks(cached.work.checks)
            if early and prefetch is None and (cached.work.batch or cached.work.checks):
                prefetch = Prefetch(cached.work)
            with timer.stage(Stage.SCRIPTS):
                scripts = self.script_pass(block, inputs, consumed, knowns)
        except BaseException:
            if prefetch is not None:  # the block failed before stage 5: nothing to keep
                prefetch.join()
            raise
        consumed += cached.consumed
        work = cached.work
        work.batch += scripts.work.batch
        work.checks += scripts.work.checks
        items = dict(cached.items)
        cached_counts = dict(cached.cached)
        items[Family.SCRIPT] = scripts.n_transactions
        cached_counts[Family.SCRIPT] = scripts.n_cached
        for family, count in Counter(map(_family, scripts.work.batch)).items():
            items[family] = count
        if scripts.work.checks:
            items[Family.ECDSA] = sum(len(c.checks) for c in scripts.work.checks)
        return PreparedBlock(block, raw, tip, timer, inputs, work, consumed, items,
                             cached_counts, len(plan.txs), prefetch)

    def _prefetch_ranges(self, block: Block, knowns: Sequence[KnownTransaction | None]
                         ) -> Prefetch | None:
        """A prefetch of the Bulletproofs ``foreseen_ranges`` finds in the transactions the
        mempool did not know (None if there are none), on one core fewer than the kernel may
        use: the block's Python keeps its own."""
        kinds = self.params.range_proofs
        txs = block.transactions
        ranges: list[BatchItem] = [r for i in range(1, len(txs)) if knowns[i] is None
                                   for r in foreseen_ranges(txs[i], i, kinds)]
        if not ranges:
            return None
        return Prefetch(ProofWork([], ranges, []), max(1, kernel.threads() - 1),
                        checks_later=True)

    def known_transactions(self, block: Block) -> list[KnownTransaction | None]:
        """Per transaction, what mempool acceptance computed for it (None: not known; the
        coinbase never is)."""
        knowns: list[KnownTransaction | None] = [None] * len(block.transactions)
        block.txids()  # every txid hashed in one call: the lookups below and check_block use them
        if self.known is not None:
            knowns[1:] = self.known(block.transactions[1:])
        return knowns

    def disconnect(self, block_hash: bytes, undo: BlockUndo) -> BlockRef:
        """Undo the tip block ``block_hash``: its undo data restores the exact previous UTXO
        set (in the chainstate's coins cache)."""
        return self.chainstate.disconnect_block(block_hash, undo)


def _coin_height(entry: UtxoEntry | None, height: int) -> int:
    """The height of a spent coin's block (a coin created in this block: this height)."""
    return height if entry is None else entry.height


def _coin_heights(entries: Mapping[Outpoint, UtxoEntry | None], spent_points: Sequence[Outpoint],
                  first: int, height: int) -> Callable[[int], int]:
    """``coin_height(n)`` of a transaction in a block at ``height`` whose input 0 is the
    block's spent point ``first`` (read only for inputs with a relative lock)."""
    return lambda n: _coin_height(entries.get(spent_points[first + n]), height)


def connect_genesis(chainstate: Chainstate, genesis: Block, connect_outputs: bool) -> BlockRef:
    """Apply the genesis block unvalidated. ``connect_outputs`` (the chain's
    ``connect_genesis_outputs``): its outputs are the chain's initial coins, spendable at once
    (stored as non-coinbase, as Elements' ConnectBlock adds them with AddCoins at height 0);
    otherwise the genesis adds nothing to the UTXO set."""
    created = [entry for tx in genesis.transactions for entry in created_entries(tx, 0, False)
               ] if connect_outputs else []
    return chainstate.connect_block(genesis.hash, 0, bytes(32), [], created)


def block_script_flags(params: ChainParams, height: int | None) -> int:
    """The script flags of a block at ``height`` of the chain (None: once every buried
    deployment is active): Elements' GetBlockScriptFlags — P2SH, WITNESS, TAPROOT and NULLDUMMY
    always, DERSIG from ``bip66_height``, CHECKLOCKTIMEVERIFY from ``bip65_height``,
    CHECKSEQUENCEVERIFY from ``csv_height``, SIGHASH_RANGEPROOF where the chain has it."""
    flags = BLOCK_FLAGS
    if not params.sighash_rangeproof:
        flags &= ~ScriptFlags.SIGHASH_RANGEPROOF
    if height is not None:
        for since, flag in ((params.bip66_height, ScriptFlags.DERSIG),
                            (params.bip65_height, ScriptFlags.CHECKLOCKTIMEVERIFY),
                            (params.csv_height, ScriptFlags.CHECKSEQUENCEVERIFY)):
            if height < since:
                flags &= ~flag
    return int(flags)


BIP34_HEIGHT = 1
"""Every block from height 1 on carries its height in its coinbase (``check_block``: BIP34 from
the first block, as Core's regtest; only the genesis block is unchecked)."""


def bip34_implies_bip30_limit(genesis: Block) -> int | None:
    """Core's BIP34_IMPLIES_BIP30_LIMIT for a chain starting at ``genesis``: the height from
    which BIP30 must be checked again (None: never).

    With BIP34 from height 1 a block's coinbase differs from every other height's (its
    scriptSig starts with its own height), and every other transaction spends coins descending
    from such coinbases, so no block can repeat an earlier txid — except by repeating a
    transaction that was never checked, the genesis block's. Core keeps BIP30 from the lowest
    height a pre-BIP34 coinbase's scriptSig happens to indicate (1,983,702 on mainnet); here
    that is the height the genesis coinbase indicates, if any. A genesis with other
    transactions (never validated: they could spend one another's outputs, which are all
    unspent) keeps BIP30 everywhere (1) — except Elements' (docs/elements-regtest.md §2.3):
    its issuance transaction spends only outpoints of the chain commitment its coinbase
    pushes, a single SHA256 of text that no transaction's txid (a double SHA256) can equal,
    so no block can ever repeat it."""
    txs = genesis.transactions
    if not txs or not txs[0].is_coinbase:
        return BIP34_HEIGHT
    script_sig = txs[0].inputs[0].script_sig
    if len(txs) > 1:
        commit = script_sig[1:] if len(script_sig) == 33 and script_sig[0] == 32 else None
        if commit is None or any(tx.is_coinbase or any(t.prevout_hash != commit
                                                       for t in tx.inputs)
                                 for tx in txs[1:]):
            return BIP34_HEIGHT
        return None  # the Elements coinbase's one 32-byte push indicates no height
    if not script_sig:
        return None
    op = script_sig[0]
    if 0x51 <= op <= 0x60:  # OP_1 .. OP_16
        return op - 0x50
    if 1 <= op <= 5 and len(script_sig) > op:  # a push of a 32-bit height's CScriptNum
        height = script_num_decode(script_sig[1:1 + op], max_size=5)
        if height >= BIP34_HEIGHT and script_sig.startswith(script_num(height)):
            return height
    return None
