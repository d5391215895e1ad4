"""Auditing real Elements / Liquid transactions: every range proof, and every surjection proof and
balance whose spent outputs are known (``ctplugin audit`` is its command line).

A strict re-validator that trusts no cache (``docs/borromean.md`` §6 "Caching
caveat"): nothing is looked up, every proof is verified.

- Range proofs need no spent outputs: each blinded output value and each blinded issuance
  amount / inflation-key amount is checked as Elements checks it (``BorromeanItem``: the proof
  against (commitment, generator, scriptPubKey or empty), min_value > 0 unless unspendable),
  all of them in ONE ring-kernel call; a proof on an explicit value is a failure too. A proof
  of the consensus Bulletproof size is a Bulletproof (``range_proof_kind`` with both kinds: no
  Borromean proof has that size; our regtest chain's proofs) and is verified as the validator
  does (``RangeItem``), all of them in one batch, each failing one named.
- Surjection proofs and the balance need the spent outputs: given (``prevouts``),
  ``plan_amounts`` (Elements' VerifyAmounts without the cryptography) builds them; otherwise
  they are "unknown". Coinbases, and drafts without inputs, have neither ("-").
  ``chain_outputs`` adds each audited transaction's outputs to the known ones (blocks: their
  transactions spend each other).
- A chain from its genesis: ``audit_utxo_set`` replays only the spends and creations of its
  blocks in memory (no chainstate, no cache, no validation) and hashes the UTXO set they leave
  as ``Node.utxo_stats`` does, so a replay's or a node's ``utxo_set_hash`` can be checked
  against an independent computation.

Each transaction gets a ``TransactionAudit``; failures name the output or input and give
Elements' reject reason (``validator.rules``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ctplugin.batch import BatchVerifier
from ctplugin.borromean.elements import SITE_OUTPUT, transaction_claims
from ctplugin.bulletproofs import consensus_generators
from ctplugin.elements import Block, Transaction, TxOut
from ctplugin.elements.chainparams import ALL_RANGE_PROOFS, RangeProofKind, range_proof_kind
from ctplugin.errors import ValidationError
from validator import reasons
from validator.coins import utxo_hash_record
from validator.items import (
    KIND_INFLATION,
    KIND_ISSUANCE,
    KIND_OUTPUT,
    BorromeanItem,
    ItemLabel,
    RangeItem,
    VerifyContext,
    verify_borromean,
)
from validator.known import created_entries
from validator.rules import plan_amounts
from validator.store import Outpoint as StoredOutpoint
from validator.store import UtxoEntry

OK = "ok"
FAILED = "failed"
UNKNOWN = "unknown"
NOT_APPLICABLE = "-"

_SITE_KINDS = {SITE_OUTPUT: KIND_OUTPUT, "issuance": KIND_ISSUANCE, "inflation": KIND_INFLATION}

Outpoint = tuple[bytes, int]
"""(txid in internal byte order, output index)."""


@dataclass(slots=True)
class TransactionAudit:
    """One transaction's verdicts. ``surjection`` and ``balance`` are ok / failed / unknown
    (spent outputs missing) / "-" (nothing to check: a coinbase, or an unfunded draft without
    inputs); ``problems`` name each failure ("output 1: bad-txns-rangeproof-invalid: ..."),
    ``notes`` say why something was not checked."""

    txid: str
    range_ok: int = 0
    range_failed: int = 0
    surjection_ok: int = 0
    surjection_failed: int = 0
    surjection: str = UNKNOWN
    balance: str = UNKNOWN
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.range_failed) or FAILED in (self.surjection, self.balance)

    @property
    def balance_checked(self) -> bool:
        """The balance was verified (ok or failed), not skipped."""
        return self.balance in (OK, FAILED)

    @property
    def spent_unknown(self) -> bool:
        """Some check was skipped because spent outputs are not known."""
        return UNKNOWN in (self.surjection, self.balance)


def _where(error: ValidationError) -> str:
    if error.output_index is not None:
        return f"output {error.output_index}"
    if error.input_index is not None:
        return f"input {error.input_index}"
    return "transaction"


def _describe(error: ValidationError) -> str:
    return f"{_where(error)}: {error.reason}" + (f": {error.detail}" if error.detail else "")


def _explicit_with_proof(tx: Transaction) -> list[ValidationError]:
    """Proofs where Elements requires none: explicit output values, explicit issuance amounts."""
    errors = [ValidationError(reasons.BAD_TXNS_RANGEPROOF_UNEXPECTED, output_index=j)
              for j, out in enumerate(tx.outputs)
              if isinstance(out.value, int) and out.range_proof]
    for i, txin in enumerate(tx.inputs):
        issuance = txin.issuance
        if issuance is None:
            continue
        for amount, proof in ((issuance.amount, txin.issuance_amount_rangeproof),
                              (issuance.inflation_keys, txin.inflation_keys_rangeproof)):
            if isinstance(amount, int) and proof:
                errors.append(ValidationError(reasons.BAD_TXNS_ISSUANCE_INVALID, input_index=i,
                                              detail="explicit amount with a range proof"))
    return errors


def audit_range_proofs(txs: Sequence[Transaction], results: Sequence[TransactionAudit],
                       threads: int | None = None) -> None:
    """Every range proof of ``txs`` in one ring-kernel call; counts and problems into
    ``results`` (one per transaction, same order)."""
    items: list[BorromeanItem] = []
    bulletproofs: list[RangeItem] = []
    for t, tx in enumerate(txs):
        for site, claim in transaction_claims(tx):
            label = ItemLabel(t, _SITE_KINDS[site.kind], site.index)
            if not claim.proof:
                results[t].range_failed += 1
                reason = (reasons.BAD_TXNS_RANGEPROOF_MISSING if site.kind == SITE_OUTPUT
                          else reasons.BAD_TXNS_ISSUANCE_INVALID)
                results[t].problems.append(_describe(label.error(reason, "no range proof")))
                continue
            if range_proof_kind(claim.proof, ALL_RANGE_PROOFS) == RangeProofKind.BULLETPROOF:
                bulletproofs.append(RangeItem(label, claim.proof, claim.commitment,
                                              claim.generator, claim.extra_commit))
                continue
            items.append(BorromeanItem(label, claim.proof, claim.commitment, claim.generator,
                                       claim.extra_commit))
        for error in _explicit_with_proof(tx):
            results[t].range_failed += 1
            results[t].problems.append(_describe(error))
    ctx = VerifyContext(threads)
    verify_borromean(items, ctx)
    for item in items:
        result = results[item.label.tx_index]
        try:
            item.check(ctx)
        except ValidationError as exc:
            result.range_failed += 1
            result.problems.append(_describe(exc))
        else:
            result.range_ok += 1
    _audit_bulletproofs(bulletproofs, results, ctx)


def _audit_bulletproofs(items: list[RangeItem], results: Sequence[TransactionAudit],
                        ctx: VerifyContext) -> None:
    """The Bulletproofs among the range proofs: one batch, then the culprit search names every
    false one (``BatchVerifier.failures``); a malformed proof is a failure of its own."""
    if not items:
        return
    claims, malformed = RangeItem.claims(items, ctx)
    for label, error in malformed:
        results[label.tx_index].range_failed += 1
        results[label.tx_index].problems.append(_describe(error))
    batch = BatchVerifier(consensus_generators().fixed)
    batch.extend(claims)
    failing = set(batch.failures())
    skipped = {label for label, _ in malformed}
    for item in items:
        if item.label in skipped:
            continue
        result = results[item.label.tx_index]
        if item.label in failing:
            result.range_failed += 1
            result.problems.append(_describe(item.failure()))
        else:
            result.range_ok += 1


def _spent_outputs(tx: Transaction, known: Mapping[Outpoint, TxOut]) -> list[TxOut] | None:
    spent = []
    for txin in tx.inputs:
        prev = None if txin.is_pegin else known.get((txin.prevout_hash, txin.prevout_index))
        if prev is None:
            return None
        spent.append(prev)
    return spent


def audit_amounts(tx: Transaction, spent: Sequence[TxOut], result: TransactionAudit,
                  policy_asset: bytes) -> None:
    """The balance and the surjection proofs of ``tx`` given the outputs it spends."""
    try:
        plan = plan_amounts(tx, 0, spent, policy_asset, ALL_RANGE_PROOFS)
    except ValidationError as exc:  # a rule before the cryptography: nothing else can be told
        result.balance = FAILED
        result.surjection = UNKNOWN
        result.problems.append(_describe(exc))
        return
    batch = BatchVerifier(consensus_generators().fixed)
    batch.add(plan.balance)
    result.balance = OK if batch.verify() else FAILED
    if result.balance == FAILED:
        result.problems.append("transaction: bad-txns-in-ne-out: value in != value out")
    for item in plan.surjections:
        try:
            item.check()
        except ValidationError as exc:
            result.surjection_failed += 1
            result.problems.append(_describe(exc))
        else:
            result.surjection_ok += 1
    result.surjection = FAILED if result.surjection_failed else OK


def audit_transactions(txs: Sequence[Transaction], prevouts: Mapping[Outpoint, TxOut],
                       policy_asset: bytes, threads: int | None = None, *,
                       chain_outputs: bool = False) -> list[TransactionAudit]:
    """Audit ``txs`` (see the module docstring). Spent outputs are looked up in ``prevouts``
    and, with ``chain_outputs``, among the outputs of ``txs`` themselves."""
    results = [TransactionAudit(tx.txid_hex) for tx in txs]
    audit_range_proofs(txs, results, threads)
    known = dict(prevouts)
    if chain_outputs:
        for tx in txs:
            for n, out in enumerate(tx.outputs):
                known.setdefault((tx.txid, n), out)
    for tx, result in zip(txs, results):
        if tx.is_coinbase or not tx.inputs:
            result.surjection = result.balance = NOT_APPLICABLE
            if not tx.inputs:
                result.notes.append("no inputs (an unfunded draft): nothing to balance")
            continue
        spent = _spent_outputs(tx, known)
        if spent is not None:
            audit_amounts(tx, spent, result, policy_asset)
    return results


@dataclass(frozen=True, slots=True)
class UtxoAudit:
    """The UTXO set a chain of blocks leaves: its number of outputs and ``utxo_set_hash``
    (``Node.utxo_stats``' definition; internal byte order)."""

    height: int
    txouts: int
    utxo_set_hash: bytes


def audit_utxo_set(blocks: Iterable[Block], connect_genesis_outputs: bool) -> UtxoAudit:
    """The UTXO set of ``blocks``, a chain from its genesis (block 0 first), with the genesis
    outputs in it or not (the chain's ``connect_genesis_outputs``). A block that does not
    extend the previous one or spends an output that is not unspent is
    ``bad-txns-inputs-missingorspent`` / ``bad-prevblk`` naming it (the chain does not
    connect: there is no UTXO set to compare)."""
    utxos: dict[bytes, tuple[StoredOutpoint, UtxoEntry]] = {}
    height = -1
    prev = bytes(32)
    for block in blocks:
        height += 1
        header = block.header
        if header.prev_hash != prev or header.height != height:
            raise ValidationError(reasons.BAD_PREVBLK, detail=f"block {height} does not connect")
        prev = block.hash
        for i, tx in enumerate(block.transactions):
            if height == 0:
                if not connect_genesis_outputs:
                    break
                # genesis outputs are spendable at once: not coinbase outputs
                utxos.update((o.key(), (o, e)) for o, e in created_entries(tx, 0, False))
                continue
            if i:
                for n, txin in enumerate(tx.inputs):
                    key = StoredOutpoint.trusted(txin.prevout_hash, txin.prevout_index).key()
                    if utxos.pop(key, None) is None:
                        raise ValidationError(reasons.BAD_TXNS_INPUTS_MISSINGORSPENT,
                                              tx_index=i, input_index=n,
                                              detail=f"in block {height}")
            utxos.update((o.key(), (o, e)) for o, e in created_entries(tx, height, i == 0))
    digest = hashlib.sha256()
    for key in sorted(utxos):
        outpoint, entry = utxos[key]
        digest.update(utxo_hash_record(outpoint.txid, outpoint.index, entry.encode()))
    return UtxoAudit(height, len(utxos), digest.digest())
