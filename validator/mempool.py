"""Mempool acceptance against a UTXO view (chainstate + unconfirmed parents), writing the proof
cache (docs/design.md "Proof caches"; docs/elements-format.md §2.3: mempool checks store successes).

``Mempool.accept(tx)`` runs the same rules as block connection for one transaction:
``check_transaction``, input resolution (the chainstate, or outputs of transactions already in
the pool), coinbase maturity for the next block, ``plan_amounts``, then ONE batch with the
balance equation and every range proof not already cached, and the surjection proofs. On success
every verified proof's salted key is inserted into the cache, so connecting the block that
confirms the transaction skips those proofs.

Mempool-only reasons (Bitcoin's): ``coinbase``, ``txn-already-in-mempool``,
``txn-already-known`` (outputs already in the UTXO set), ``txn-mempool-conflict``; and Elements'
relay policy (``validator.policy``, settings ``PolicySettings``): standardness, dust, the CT
policy rules and the relay fee, checked where Elements' PreChecks checks them.
Reject reasons carry no transaction index here (there is no block); output/input indexes stay.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, repeat
from operator import attrgetter

from ctplugin.elements import Block, Transaction, TxOut
from ctplugin.elements.chainparams import ChainParams
from ctplugin.errors import ValidationError
from ctplugin.script.sigops import transaction_sigop_cost
from validator import policy, reasons
from validator.ahead import AheadChecks
from validator.cachekeys import CacheKeys, cache_keys, check_items, script_cache_key
from validator.coins import decode_txout, encode_txout
from validator.known import KnownTransaction
from validator.policy import PolicySettings
from validator.rules import AmountPlan, SpentOutput, check_transaction, plan_amounts
from validator.scripts import BLOCK_FLAGS, MEMPOOL_FLAGS, items_of, run_scripts
from validator.store import Chainstate, Outpoint, ProofCache
from validator.timelocks import MedianTimes, check_final, check_sequence_locks
from validator.verify import ProofWork, verify


@dataclass(frozen=True, slots=True)
class MempoolEntry:
    """A pool transaction: its fees per asset, what acceptance verified or found cached, and
    when it was accepted (``time``, seconds since the epoch)."""

    tx: Transaction
    fees: dict[bytes, int]
    n_range_verified: int
    n_range_cached: int
    n_surjection_verified: int
    n_surjection_cached: int
    known: KnownTransaction | None = None
    time: float = 0.0
    weight: int = field(init=False)  # the transaction's, kept: block assembly sums the pool's

    def __post_init__(self) -> None:
        object.__setattr__(self, "weight", self.tx.weight)

    @property
    def vsize(self) -> int:
        return (self.weight + 3) // 4


def _outpoints(tx: Transaction) -> list[Outpoint]:
    return [Outpoint.trusted(t.prevout_hash, t.prevout_index) for t in tx.inputs]


def _spent_points(entry: MempoolEntry) -> Sequence[Outpoint]:
    known = entry.known
    return known.spent_points if known is not None else _outpoints(entry.tx)


_tx_of = attrgetter("tx")
_txid = attrgetter("txid")


REMOVED_BLOCK = "block"  # confirmed by a connected block
REMOVED_CONFLICT = "conflict"  # spends an output a connected block spent
REMOVED_REORG = "reorg"  # no longer valid on the chain after a reorganisation
REMOVED_BY_CALLER = "removed"


def _without_tx_index(error: ValidationError) -> ValidationError:
    return ValidationError(error.reason, output_index=error.output_index,
                           input_index=error.input_index, detail=error.detail)


AHEAD_KEPT = 256
"""Proofs ``Mempool.verify_ahead`` keeps in flight at most."""


class Mempool:
    """Unconfirmed transactions that passed every consensus check against the current tip."""

    def __init__(self, chainstate: Chainstate, cache: ProofCache | None,
                 params: ChainParams, settings: PolicySettings | None = None, *,
                 median_times: MedianTimes) -> None:
        """``median_times``: the active chain's median time past by height (the chain
        manager's, ``validator.timelocks.MedianTimes``): timelocks are judged for the next
        block, against the tip's."""
        self.chainstate = chainstate
        self.median_times = median_times
        self.cache = cache
        self.params = params
        self.settings = settings if settings is not None else PolicySettings()
        self.entries: dict[bytes, MempoolEntry] = {}
        self.spent_by: dict[Outpoint, bytes] = {}
        # Bumped on every addition and removal (ZMQ "sequence", getrawmempool's
        # mempool_sequence), as Core's mempool sequence number.
        self.sequence = 0
        # cache key -> its proof's check running ahead (``verify_ahead``), newest last
        self._ahead: dict[bytes, AheadChecks] = {}
        self._ahead_lock = threading.Lock()  # the callers of verify_ahead hold no chain lock

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, txid: object) -> bool:
        return txid in self.entries

    def transactions(self) -> list[Transaction]:
        """In acceptance order (parents before children)."""
        return [e.tx for e in self.entries.values()]

    def verify_ahead(self, outputs: Sequence[TxOut],
                     ring_points: Mapping[bytes, bytes] | None = None) -> None:
        """Start verifying the Borromean range proofs of ``outputs`` now, on the shared pool,
        for the acceptance of their transaction soon after (``validator.ahead``): a wallet
        calls it with a send's outputs as soon as their range proofs are made, and with the
        signer's ring points of the proofs (by proof), which let the check run as one
        multi-scalar multiplication. Without a proof cache (proofs are matched by their cache
        keys) nothing starts. At most ``AHEAD_KEPT`` are kept; an older one is forgotten (its
        transaction verifies it in full)."""
        if self.cache is None:
            return
        ahead = AheadChecks.start(outputs, self.params, self.cache, ring_points)
        if ahead is None:
            return
        with self._ahead_lock:
            for key in ahead.keys:
                self._ahead.pop(key, None)
                self._ahead[key] = ahead
            while len(self._ahead) > AHEAD_KEPT:
                del self._ahead[next(iter(self._ahead))]

    def accept(self, tx: Transaction) -> MempoolEntry:
        """Validate ``tx`` against the tip and the pool, cache its proofs, add it to the pool."""
        try:
            entry = self._accept(tx, add=True)
        except ValidationError as exc:
            raise _without_tx_index(exc) from None
        self.sequence += 1
        return entry

    def test_accept(self, tx: Transaction) -> MempoolEntry:
        """The same checks as ``accept`` (``testmempoolaccept``) with no side effect: the pool
        and the proof cache are left as they were."""
        try:
            return self._accept(tx, add=False)
        except ValidationError as exc:
            raise _without_tx_index(exc) from None

    def _accept(self, tx: Transaction, add: bool, bypass_limits: bool = False) -> MempoolEntry:
        """The checks in Core's order: the transaction alone (consensus, then policy), its place
        among the pool's and the chain's, the spent outputs, finality, then its proofs and
        scripts (one batch). ``bypass_limits``: a transaction a reorganisation returns skips
        the relay fee (Core's)."""
        check_transaction(tx, 0)
        if tx.is_coinbase:
            raise ValidationError(reasons.COINBASE, detail="coinbase is only valid in a block")
        policy.check_transaction(tx, self.settings, self.params.policy_asset)
        txid = tx.txid
        if txid in self.entries:
            raise ValidationError(reasons.TXN_ALREADY_IN_MEMPOOL)
        existing = self.chainstate.get_many(
            Outpoint.trusted(txid, n) for n in range(len(tx.outputs)))
        if any(entry is not None for entry in existing.values()):
            raise ValidationError(reasons.TXN_ALREADY_KNOWN)
        tip = self.chainstate.best_block()
        height = (tip.height + 1) if tip is not None else 0
        outpoints = [Outpoint.trusted(t.prevout_hash, t.prevout_index) for t in tx.inputs]
        spent, spent_bytes, coin_heights = self._spent_outputs(outpoints, height)
        # finality for the next block (Elements' CheckFinalTxAtTip, CheckSequenceLocksAtTip):
        # time locks against the tip's median time past (BIP113), BIP68 always
        cutoff = self.median_times(height - 1) if height else 0
        check_final(tx, None, height, cutoff, reason=reasons.NON_FINAL)
        check_sequence_locks(tx, None, coin_heights.__getitem__, height, self.median_times,
                             reason=reasons.NON_BIP68_FINAL)
        plan, keys, sigops, counts = self._verify(tx, spent, bypass_limits)
        if not add:
            return MempoolEntry(tx, plan.fees, *counts)
        script_key = balance_key = None
        if self.cache is not None and keys is not None:
            # the script entry under the block flags: valid under the (stricter) policy flags
            # means valid under the block's, which is what connecting the block will look up
            script_key = script_cache_key(self.cache, tx, BLOCK_FLAGS)
            balance_key = self.cache.balance_key(tx.wtxid, spent_bytes)
            range_keys, check_keys = keys
            self.cache.insert_many([*range_keys, *check_keys, script_key, balance_key])
        known = KnownTransaction.of(tx, plan, outpoints, sigops, height, keys, script_key,
                                    balance_key)
        entry = MempoolEntry(tx, plan.fees, *counts, known, time.time())
        self.entries[txid] = entry
        for outpoint in outpoints:
            self.spent_by[outpoint] = txid
        return entry

    def _spent_outputs(self, outpoints: list[Outpoint], height: int
                       ) -> tuple[list[SpentOutput], list[bytes], list[int]]:
        """The outputs ``outpoints`` spend — from the pool's transactions or the UTXO set — as
        (outputs, their bytes as the UTXO set stores them (the balance cache key), their
        heights (an unconfirmed parent counts at the next block's ``height``))."""
        for n, outpoint in enumerate(outpoints):
            if outpoint in self.spent_by:
                raise ValidationError(reasons.TXN_MEMPOOL_CONFLICT, input_index=n,
                                      detail=f"{outpoint} already spent in the mempool")
        from_db = self.chainstate.get_many(
            o for o in outpoints if o.txid not in self.entries)
        spent: list[SpentOutput] = []
        spent_bytes: list[bytes] = []
        coin_heights: list[int] = []
        for n, outpoint in enumerate(outpoints):
            parent = self.entries.get(outpoint.txid)
            if parent is not None:
                if outpoint.index >= len(parent.tx.outputs):
                    raise ValidationError(reasons.BAD_TXNS_INPUTS_MISSINGORSPENT, input_index=n)
                spent.append(parent.tx.outputs[outpoint.index])
                spent_bytes.append(encode_txout(parent.tx.outputs[outpoint.index]))
                coin_heights.append(height)
                continue
            coin = from_db.get(outpoint)
            if coin is None:
                raise ValidationError(reasons.BAD_TXNS_INPUTS_MISSINGORSPENT, input_index=n,
                                      detail=str(outpoint))
            if coin.coinbase and height - coin.height < self.params.coinbase_maturity:
                raise ValidationError(reasons.BAD_TXNS_PREMATURE_SPEND_OF_COINBASE, input_index=n)
            spent.append(decode_txout(coin.txout))
            spent_bytes.append(coin.txout)
            coin_heights.append(coin.height)
        return spent, spent_bytes, coin_heights

    def _verify(self, tx: Transaction, spent: list[SpentOutput], bypass_limits: bool
                ) -> tuple[AmountPlan, CacheKeys | None, int, tuple[int, int, int, int]]:
        """The input and fee policy, then every proof of ``tx`` the proof cache does not hold,
        its balance and its scripts (under the policy flags), verified in one batch. Returns
        the plan, its cache keys (None without a cache), its sigop cost and the counts: range
        proofs verified / cached, surjection proofs verified / cached."""
        params, settings = self.params, self.settings
        plan = plan_amounts(tx, 0, spent, params.policy_asset, params.range_proofs)
        policy.check_inputs(tx, spent, settings)
        checks = check_items(plan)
        cache = self.cache
        keys = None if cache is None else cache_keys(cache, plan)
        check_missing = [True] * len(checks)
        pending: list[AheadChecks | None] = []
        if cache is None or keys is None:
            to_verify = list(plan.ranges)
        else:
            range_keys, check_keys = keys
            to_verify = [r for r, k in zip(plan.ranges, range_keys) if k not in cache]
            check_missing = [k not in cache for k in check_keys]
            with self._ahead_lock:
                pending = [self._ahead.pop(k, None) for k in check_keys]
        # scripts under the policy flags; their signatures join this transaction's batch
        sigops = transaction_sigop_cost(tx, spent)
        policy.check_fees(tx, plan.fees.get(params.policy_asset, 0), sigops, settings,
                          params.policy_asset, bypass_limits)
        pre, deferred = run_scripts(tx, 0, spent, self.params.genesis_hash, MEMPOOL_FLAGS)
        scripts = items_of([(0, pre, deferred)], MEMPOOL_FLAGS)
        # proofs verified ahead and found valid count as verified here; they are waited for
        # only now, so everything above ran beside them
        done_ahead = [False] * len(checks)
        if any(pending):
            valid: set[bytes] = set()
            for ahead in {id(a): a for a in pending if a is not None}.values():
                valid |= ahead.valid_keys()
            done_ahead = [m and k in valid for m, k in zip(check_missing, check_keys)]
        checks_to_verify = [c for c, m, d in zip(checks, check_missing, done_ahead) if m and not d]
        verify(ProofWork([plan.balance], [*to_verify, *scripts.batch],
                         [*checks_to_verify, *scripts.checks]))
        verified = [c for c, m in zip(checks, check_missing) if m]  # here or ahead
        # Bulletproofs and Borromean proofs both count as range proofs
        n_ranges = len(plan.ranges) + len(plan.borromeans)
        n_range_verified = len(to_verify) + sum(c.family == "borromean" for c in verified)
        n_surj_verified = len(verified) - (n_range_verified - len(to_verify))
        return plan, keys, sigops, (n_range_verified, n_ranges - n_range_verified, n_surj_verified,
                            len(plan.surjections) - n_surj_verified)

    def known_transaction(self, tx: Transaction) -> KnownTransaction | None:
        """What acceptance computed for this very transaction (same wtxid), for block
        connection to reuse (``KnownTransaction``), or None."""
        return self.known_transactions((tx,))[0]

    def known_transactions(self, txs: Sequence[Transaction]) -> list[KnownTransaction | None]:
        """``known_transaction`` of each of ``txs``."""
        entries = list(map(self.entries.get, map(_txid, txs)))
        # The same object (a block assembled from the pool) or byte equality of the full
        # serializations = same wtxid, without hashing 2 KB.
        return [entry.known if entry is not None and (entry.tx is tx
                                                      or entry.tx.serialize() == tx.serialize())
                else None for entry, tx in zip(entries, txs)]

    def remove(self, txids: Iterable[bytes]) -> list[Transaction]:
        """Drop transactions and, recursively, everything spending their outputs; returns
        what was removed."""
        removed = []
        pending = list(txids)
        while pending:
            txid = pending.pop()
            entry = self.entries.pop(txid, None)
            if entry is None:
                continue
            removed.append(entry.tx)
            self.sequence += 1
            for txin in entry.tx.inputs:
                outpoint = Outpoint.trusted(txin.prevout_hash, txin.prevout_index)
                if self.spent_by.get(outpoint) == txid:
                    del self.spent_by[outpoint]
            for n in range(len(entry.tx.outputs)):
                child = self.spent_by.get(Outpoint.trusted(txid, n))
                if child is not None:
                    pending.append(child)
        return removed

    def remove_for_block(self, block: Block
                         ) -> tuple[list[Transaction], list[tuple[Transaction, str]]]:
        """After connecting ``block``: drop its transactions (their children stay, now spending
        confirmed outputs) and every pool transaction that conflicts with it. Returns the pool
        transactions it confirmed (``REMOVED_BLOCK``) and the conflicts removed, each with
        ``REMOVED_CONFLICT``.

        The pool spends each outpoint at most once, so an outpoint a confirmed pool
        transaction spent is spent by no other pool transaction: only the inputs of the block's
        other transactions can conflict."""
        txs = block.transactions[1:]
        spent_by = self.spent_by
        popped = list(map(self.entries.pop, map(_txid, txs), repeat(None)))
        pooled = list(filter(None, popped))
        others = ([tx for tx, entry in zip(txs, popped) if entry is None]
                  if len(pooled) != len(popped) else [])
        deque(map(spent_by.pop, chain.from_iterable(map(_spent_points, pooled)), repeat(None)),
              maxlen=0)
        confirmed = list(map(_tx_of, pooled))
        self.sequence += len(confirmed)
        conflicts = [other for tx in others for outpoint in _outpoints(tx)
                     if (other := spent_by.get(outpoint)) is not None] if spent_by else []
        removed = ([(tx, REMOVED_CONFLICT) for tx in self.remove(conflicts)] if conflicts
                   else [])
        return confirmed, removed

    def reorganize(self, disconnected: Sequence[Transaction]
                   ) -> tuple[list[Transaction], list[tuple[Transaction, str]]]:
        """After blocks were disconnected (and others perhaps connected): re-validate the pool
        against the new tip. The disconnected blocks' transactions (``disconnected``, in chain
        order; coinbases are skipped) come first, as Core's reorg handling re-adds them, then
        the previous pool in acceptance order. Returns (transactions added that were not in the
        pool, pool transactions dropped with ``REMOVED_REORG``)."""
        previous = list(self.entries.values())
        self.entries.clear()
        self.spent_by.clear()
        added = []
        for tx in disconnected:
            if tx.is_coinbase:
                continue
            try:
                self._accept(tx, add=True, bypass_limits=True)
            except ValidationError:
                continue
            added.append(tx)
        dropped: list[tuple[Transaction, str]] = []
        for entry in previous:
            try:
                again = self._accept(entry.tx, add=True)
            except ValidationError:
                dropped.append((entry.tx, REMOVED_REORG))
                continue
            self.entries[again.tx.txid] = replace(again, time=entry.time)  # still that old
        self.sequence += len(added) + len(dropped)
        return added, dropped

    def parents(self, txid: bytes) -> set[bytes]:
        """The pool transactions that ``txid`` (a pool transaction) spends outputs of."""
        entry = self.entries.get(txid)
        if entry is None:
            return set()
        return {t.prevout_hash for t in entry.tx.inputs if t.prevout_hash in self.entries}
