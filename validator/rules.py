"""Consensus rules of our chain for transactions (docs/elements-format.md §2) and their reject
reasons.

Two stages, as in Elements:

- ``check_transaction`` — context-free (CheckTransaction): shape, explicit amounts, duplicate
  inputs, coinbase script length, peg-ins (rejected on our chain).
- ``plan_amounts`` — contextual (CheckTxInputs → VerifyAmounts), given the spent outputs: fee
  range, explicit/blinded encodings, issuance and reissuance, and the cryptographic work turned
  into *items* the caller batches: one balance claim per transaction, one range-proof item per
  blinded value (outputs, issuance amounts, inflation keys) and one surjection item per blinded
  asset. Nothing cryptographic is verified here, so a block's items all go into one batch.

Reject reasons (``ValidationError.reason``) are the constants of ``validator.reasons``.

Scripts are not run here: they are the scripts stage of the same validator
(``validator.scripts``), which block connection and mempool acceptance call beside these rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ctplugin.batch import Claim
from ctplugin.elements import Transaction, TxIn, TxOut
from ctplugin.elements.chainparams import RangeProofKind, range_proof_kind
from ctplugin.elements.consensus import (
    MAX_BLOCK_WEIGHT,
    MAX_MONEY,
    WITNESS_SCALE_FACTOR,
    money_range,
)
from ctplugin.elements.issuance import input_issuance_ids
from ctplugin.elements.script import is_unspendable
from ctplugin.errors import EncodingError, ValidationError
from ctplugin.pedersen import generator_generate, generator_generate_blinded
from ctplugin.script.sighash import SpentOutput  # a TxOut or the chainstate's light record
from ctplugin.secp256k1 import KIND_GENERATOR, KIND_PEDERSEN, kernel
from ctplugin.secp256k1.params import N
from validator import reasons
from validator.balance import BalanceTally
from validator.items import (
    KIND_BALANCE,
    KIND_INFLATION,
    KIND_ISSUANCE,
    KIND_OUTPUT,
    BorromeanItem,
    ItemLabel,
    RangeItem,
    SurjectionItem,
    SurjectionTargets,
    decode_one,
)

_k = kernel.backend
_new_tuple = tuple.__new__  # a named tuple from its fields, without its Python __new__
_INT64_MAX = (1 << 63) - 1
BULLETPROOF_ONLY = frozenset({RangeProofKind.BULLETPROOF})


@dataclass(frozen=True, slots=True)
class AmountPlan:
    """Everything ``plan_amounts`` found to check for one transaction."""

    tx_index: int
    fees: dict[bytes, int]
    balance: Claim
    ranges: list[RangeItem] = field(default_factory=list)
    surjections: list[SurjectionItem] = field(default_factory=list)
    borromeans: list[BorromeanItem] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------
# Context-free rules
# ------------------------------------------------------------------------------------------------


def check_transaction(tx: Transaction, tx_index: int | None = None) -> None:
    """CheckTransaction (docs/elements-format.md §2.1), plus our chain's peg-in ban."""
    if not tx.inputs:
        raise ValidationError(reasons.BAD_TXNS_VIN_EMPTY, tx_index=tx_index)
    if not tx.outputs:
        raise ValidationError(reasons.BAD_TXNS_VOUT_EMPTY, tx_index=tx_index)
    if tx.base_size * WITNESS_SCALE_FACTOR > MAX_BLOCK_WEIGHT:
        raise ValidationError(reasons.BAD_TXNS_OVERSIZE, tx_index=tx_index)
    total = 0
    for j, out in enumerate(tx.outputs):
        value = out.value
        if isinstance(value, int):
            if value > _INT64_MAX:  # a negative CAmount in Elements' signed 64-bit view
                raise ValidationError(reasons.BAD_TXNS_VOUT_NEGATIVE, tx_index=tx_index,
                                      output_index=j)
            if value > MAX_MONEY:
                raise ValidationError(reasons.BAD_TXNS_VOUT_TOOLARGE, tx_index=tx_index,
                                      output_index=j)
            total += value
            if total > MAX_MONEY:
                raise ValidationError(reasons.BAD_TXNS_TXOUTTOTAL_TOOLARGE, tx_index=tx_index,
                                      output_index=j)
    seen: set[tuple[bytes, int]] = set()
    for i, txin in enumerate(tx.inputs):
        key = (txin.prevout_hash, txin.prevout_index)
        if key in seen:
            raise ValidationError(reasons.BAD_TXNS_INPUTS_DUPLICATE, tx_index=tx_index,
                                  input_index=i)
        seen.add(key)
        if txin.is_pegin or txin.pegin_witness:
            raise ValidationError(reasons.BAD_PEGIN_UNSUPPORTED, tx_index=tx_index, input_index=i)
    if tx.is_coinbase:
        if not 2 <= len(tx.inputs[0].script_sig) <= 100:
            raise ValidationError(reasons.BAD_CB_LENGTH, tx_index=tx_index)
        if any(out.is_fee for out in tx.outputs):
            raise ValidationError(reasons.BAD_CB_FEE, tx_index=tx_index)
    else:
        for i, txin in enumerate(tx.inputs):
            if txin.is_null_prevout:
                raise ValidationError(reasons.BAD_TXNS_PREVOUT_NULL, tx_index=tx_index,
                                      input_index=i)


def check_fees(tx: Transaction, tx_index: int | None = None) -> dict[bytes, int]:
    """HasValidFee: every fee output in (0, MAX_MONEY], per-asset sums in range; the fee map."""
    fees: dict[bytes, int] = {}
    for j, out in enumerate(tx.outputs):
        if out.is_fee:
            value = out.value
            assert isinstance(value, int)
            if not 0 < value <= MAX_MONEY:
                raise ValidationError(reasons.BAD_TXNS_FEE_OUTOFRANGE, tx_index=tx_index,
                                      output_index=j)
            total = fees.get(out.asset, 0) + value
            if total > MAX_MONEY:
                raise ValidationError(reasons.BAD_TXNS_FEE_OUTOFRANGE, tx_index=tx_index,
                                      output_index=j)
            fees[out.asset] = total
    return fees


def check_coinbase_outputs(coinbase: Transaction, block_fees: dict[bytes, int],
                           subsidy_asset: bytes = b"", subsidy: int = 0) -> None:
    """VerifyCoinbaseAmount (§2.2 item 5): explicit outputs only, no witnesses, per asset the
    outputs sum to at most the block's reward: its fees, plus ``subsidy`` of ``subsidy_asset``
    (the chain's ``ChainParams.block_subsidy_at``; docs/elements-regtest.md §3.1). A reward
    above MAX_MONEY is ``bad-blockreward-outofrange``."""
    txin = coinbase.inputs[0]
    if txin.issuance_amount_rangeproof or txin.inflation_keys_rangeproof or txin.pegin_witness:
        raise ValidationError(reasons.BAD_CB_WITNESS, tx_index=0, input_index=0)
    remaining = dict(block_fees)
    if subsidy:
        reward = remaining.get(subsidy_asset, 0) + subsidy
        if reward > MAX_MONEY:
            raise ValidationError(reasons.BAD_BLOCKREWARD_OUTOFRANGE, tx_index=0)
        remaining[subsidy_asset] = reward
    for j, out in enumerate(coinbase.outputs):
        if out.surjection_proof or out.range_proof:
            raise ValidationError(reasons.BAD_CB_WITNESS, tx_index=0, output_index=j)
        if not out.asset_is_explicit or not out.value_is_explicit:
            raise ValidationError(reasons.BAD_CB_AMOUNT, tx_index=0, output_index=j,
                                  detail="coinbase outputs must be explicit")
        value = out.value
        assert isinstance(value, int)
        if not money_range(value):
            raise ValidationError(reasons.BAD_CB_AMOUNT, tx_index=0, output_index=j)
        if value == 0:
            if not is_unspendable(out.script_pubkey):
                raise ValidationError(reasons.BAD_CB_AMOUNT, tx_index=0, output_index=j,
                                      detail="zero-value coinbase output must be unspendable")
            continue
        left = remaining.get(out.asset, 0) - value
        if left < 0:
            raise ValidationError(reasons.BAD_CB_AMOUNT, tx_index=0, output_index=j,
                                  detail="coinbase pays too much")
        remaining[out.asset] = left


# ------------------------------------------------------------------------------------------------
# Contextual rules: VerifyAmounts as a plan of batchable items
# ------------------------------------------------------------------------------------------------


def _explicit_generator(asset_id: bytes) -> bytes:
    """Packed point of an explicit asset's generator (generator_generate is cached)."""
    return generator_generate(asset_id).point.packed


def value_commitments(tx: Transaction, spent: Sequence[SpentOutput]) -> Iterator[bytes]:
    """The blinded amounts ``plan_amounts`` decodes for ``tx``: spent values, issued amounts and
    inflation keys, output values (33-byte Pedersen commitments, unchecked)."""
    for prev in spent:
        if isinstance(prev.value, bytes):
            yield prev.value
    for txin in tx.inputs:
        issuance = txin.issuance
        if issuance is not None:
            for amount in (issuance.amount, issuance.inflation_keys):
                if isinstance(amount, bytes):
                    yield amount
    for out in tx.outputs:
        if isinstance(out.value, bytes):
            yield out.value


def decode_commitments(encodings: Iterable[bytes]) -> dict[bytes, bytes]:
    """Pedersen commitments (33 B) → packed kernel points, decoded in ONE kernel call (the
    square roots of a whole block together). Empty if one of them does not decode: then each is
    decoded, and a bad one named, where ``plan_amounts`` uses it."""
    distinct = list(dict.fromkeys(e for e in encodings if len(e) == 33))
    if not distinct:
        return {}
    try:
        points = _k.decode_points_var(b"".join(distinct), KIND_PEDERSEN)
    except EncodingError:
        return {}
    return {e: points[64 * i: 64 * i + 64] for i, e in enumerate(distinct)}


def foreseen_ranges(tx: Transaction, tx_index: int,
                    range_proofs: frozenset[RangeProofKind] = BULLETPROOF_ONLY
                    ) -> list[RangeItem]:
    """The Bulletproof range items ``plan_amounts`` will make for ``tx``'s outputs with a
    blinded amount and an asset commitment, from the transaction alone (no spent output
    needed, no commitment decoded): what proof work can start on before the amounts are
    planned (``validator.verify.Prefetch``). A forecast, never a verdict: the planner decides,
    and ``Prefetch.take`` uses only the items the plan made the same."""
    items: list[RangeItem] = []
    every_one = range_proofs == BULLETPROOF_ONLY  # (range_proof_kind's answer for all)
    for j, out in enumerate(tx.outputs):
        value, asset, proof = out.value, out.asset, out.range_proof
        if value.__class__ is bytes and len(asset) == 33 and proof and (
                every_one or range_proof_kind(proof, range_proofs) == RangeProofKind.BULLETPROOF):
            # (the named tuples built without their Python __new__: this runs on the block's
            # critical path, before the helper it feeds can start)
            items.append(_new_tuple(RangeItem, (_new_tuple(ItemLabel, (tx_index, KIND_OUTPUT, j)),
                                                proof, value, asset, out.script_pubkey, None)))
    return items


def plan_amounts(tx: Transaction, tx_index: int, spent: Sequence[SpentOutput],
                 policy_asset: bytes,
                 range_proofs: frozenset[RangeProofKind] = BULLETPROOF_ONLY,
                 decoded: Mapping[bytes, bytes] | None = None) -> AmountPlan:
    """CheckTxInputs + VerifyAmounts (§2.2) without the cryptography: the balance claim, range
    items and surjection items to batch. ``spent[i]`` is the output input i spends (anything
    with ``asset`` and ``value`` in the model's encodings). ``range_proofs``: the kinds the
    chain accepts (``ChainParams.range_proofs``): Bulletproofs become batch items
    (``ranges``), Borromean proofs check items (``borromeans``).

    Asset commitments are not decoded here: a range or surjection proof that is verified decodes
    them (a bad one fails there, named), and a cached proof was verified with these very bytes.
    Only what the balance needs is decoded: value commitments and the generators of explicit
    amounts. ``decoded``: commitments already decoded (``decode_commitments`` over a block's
    ``value_commitments``), used as they are. Raises ``ValidationError`` for every
    non-cryptographic failure.
    """
    fees = check_fees(tx, tx_index)
    planner = _AmountPlanner(tx_index, policy_asset, range_proofs, decoded)
    for i, (txin, prev) in enumerate(zip(tx.inputs, spent, strict=True)):
        planner.spend(i, prev)
        if txin.issuance is not None:
            if not tx.has_witness:
                # VerifyAmounts reads an issued amount's proof from the input's witness and
                # fails a transaction that has none at all, explicit amounts too
                # (src/confidential_validation.cpp: "disallows issuances in transactions with
                # *no* witness data")
                raise ValidationError(reasons.BAD_TXNS_ISSUANCE_INVALID, tx_index=tx_index,
                                      input_index=i, detail="issuance in a transaction "
                                                            "without witness data")
            planner.issue(i, txin, prev.asset)
    for j, out in enumerate(tx.outputs):
        planner.output(j, out)
    return planner.plan(fees)


class _AmountPlanner:
    """The state ``plan_amounts`` builds up over a transaction's inputs and outputs: the
    balance tally, the range items, the surjection target list (Elements' order: each input's
    asset, then its issued asset and token when it issues) and the blinded-asset outputs."""

    __slots__ = ("borromeans", "decoded", "policy_asset", "range_proofs", "ranges",
                 "surjection_outputs", "tally", "targets", "tx_index")

    def __init__(self, tx_index: int, policy_asset: bytes,
                 range_proofs: frozenset[RangeProofKind] = BULLETPROOF_ONLY,
                 decoded: Mapping[bytes, bytes] | None = None) -> None:
        self.tx_index = tx_index
        self.decoded: Mapping[bytes, bytes] = decoded if decoded is not None else {}
        self.policy_asset = policy_asset
        self.range_proofs = range_proofs
        self.tally = BalanceTally()
        self.ranges: list[RangeItem] = []
        self.borromeans: list[BorromeanItem] = []
        self.targets: list[bytes] = []
        self.surjection_outputs: list[tuple[ItemLabel, bytes, bytes]] = []

    def commitment(self, encoding: bytes) -> bytes | None:
        """A value commitment as a packed kernel point (None if it does not decode)."""
        point = self.decoded.get(encoding)
        return point if point is not None else decode_one(encoding, KIND_PEDERSEN)

    def spend(self, i: int, prev: SpentOutput) -> None:
        """Input i spends ``prev``: its amount joins the tally, its asset the targets."""
        asset = prev.asset
        self.targets.append(b"\x01" + asset if len(asset) == 32 else asset)
        value = prev.value
        if isinstance(value, int):
            if not 0 < value <= MAX_MONEY:  # pedersen_commit refuses 0; MoneyRange
                raise ValidationError(reasons.BAD_TXNS_VALUE_INVALID, tx_index=self.tx_index,
                                      input_index=i, detail="spent explicit value out of range")
            gen = (_explicit_generator(asset) if len(asset) == 32
                   else decode_one(asset, KIND_GENERATOR))
            if gen is None:
                raise ValidationError(reasons.BAD_TXNS_ASSET_INVALID, tx_index=self.tx_index,
                                      input_index=i)
            self.tally.add_explicit(gen, value)
        else:
            point = self.commitment(value)
            if point is None:
                raise ValidationError(reasons.BAD_TXNS_VALUE_INVALID, tx_index=self.tx_index,
                                      input_index=i)
            self.tally.add_input_commitment(point)

    def issue(self, i: int, txin: TxIn, spent_asset: bytes) -> None:
        """Input i's issuance or reissuance (its spent asset is ``spent_asset``)."""
        issuance = txin.issuance
        ids = input_issuance_ids(txin)
        assert issuance is not None and ids is not None
        if issuance.is_reissuance:
            nonce = issuance.asset_blinding_nonce
            if int.from_bytes(nonce, "big") >= N or len(spent_asset) != 33 \
                    or generator_generate_blinded(ids.token, nonce).serialize() != spent_asset:
                raise ValidationError(reasons.BAD_TXNS_REISSUANCE_TOKEN, tx_index=self.tx_index,
                                      input_index=i)
            if issuance.inflation_keys is not None:
                raise ValidationError(reasons.BAD_TXNS_REISSUANCE_INFLATION, tx_index=self.tx_index,
                                      input_index=i)
        self._issued_amount(ItemLabel(self.tx_index, KIND_ISSUANCE, i), issuance.amount,
                            ids.asset, txin.issuance_amount_rangeproof)
        self._issued_amount(ItemLabel(self.tx_index, KIND_INFLATION, i),
                            issuance.inflation_keys, ids.token, txin.inflation_keys_rangeproof)

    def _issued_amount(self, label: ItemLabel, amount: int | bytes | None, asset_id: bytes,
                       proof: bytes) -> None:
        """An issued amount (of the asset or of its reissuance tokens), if any."""
        if amount is None:
            return
        if isinstance(amount, int):
            limit = MAX_MONEY if asset_id == self.policy_asset else _INT64_MAX
            if not 0 < amount <= limit or proof:
                raise label.error(reasons.BAD_TXNS_ISSUANCE_INVALID)
            self.tally.add_explicit(_explicit_generator(asset_id), amount)
        else:
            if not proof:
                raise label.error(reasons.BAD_TXNS_ISSUANCE_INVALID, "blinded amount without proof")
            point = self.commitment(amount)
            if point is None:
                raise label.error(reasons.BAD_TXNS_VALUE_INVALID)
            self.tally.add_input_commitment(point)
            # Elements: issuance proofs use an EMPTY scriptPubKey as extra commit.
            self.range_item(label, proof, amount, generator_generate(asset_id).serialize(), b"",
                            point)
        self.targets.append(b"\x01" + asset_id)

    def output(self, j: int, out: TxOut) -> None:
        """Output j: its amount leaves the tally; its range and surjection items."""
        label = ItemLabel(self.tx_index, KIND_OUTPUT, j)
        asset = out.asset
        value = out.value
        explicit_asset = len(asset) == 32
        if isinstance(value, int):
            if out.range_proof:
                raise label.error(reasons.BAD_TXNS_RANGEPROOF_UNEXPECTED)
            if value == 0:
                if not is_unspendable(out.script_pubkey):
                    raise label.error(reasons.BAD_TXNS_VOUT_ZERO_SPENDABLE)
            else:
                gen = (_explicit_generator(asset) if explicit_asset
                       else decode_one(asset, KIND_GENERATOR))
                if gen is None:
                    raise label.error(reasons.BAD_TXNS_ASSET_INVALID)
                self.tally.add_explicit(gen, -value)
        else:
            point = self.commitment(value)
            if point is None:
                raise label.error(reasons.BAD_TXNS_VALUE_INVALID)
            self.tally.add_output_commitment(point)
            if not out.range_proof:
                raise label.error(reasons.BAD_TXNS_RANGEPROOF_MISSING)
            value_gen = asset if not explicit_asset else generator_generate(asset).serialize()
            self.range_item(label, out.range_proof, value, value_gen, out.script_pubkey, point)
        if explicit_asset:
            if out.surjection_proof:
                raise label.error(reasons.BAD_TXNS_SURJECTIONPROOF_UNEXPECTED)
        else:
            if not out.surjection_proof:
                raise label.error(reasons.BAD_TXNS_SURJECTIONPROOF_MISSING)
            self.surjection_outputs.append((label, out.surjection_proof, asset))

    def range_item(self, label: ItemLabel, proof: bytes, commitment: bytes, value_gen: bytes,
                   extra_commit: bytes, point: bytes) -> None:
        """The range proof of a blinded amount, as the kind the chain takes it for: a
        Bulletproof (batch item) or a Borromean proof (check item). With both kinds accepted,
        the consensus Bulletproof size decides (no Borromean proof has it)."""
        if range_proof_kind(proof, self.range_proofs) == RangeProofKind.BORROMEAN:
            self.borromeans.append(BorromeanItem(label, proof, commitment, value_gen,
                                                 extra_commit))
        else:
            self.ranges.append(RangeItem(label, proof, commitment, value_gen, extra_commit, point))

    def plan(self, fees: dict[bytes, int]) -> AmountPlan:
        surjections: list[SurjectionItem] = []
        if self.surjection_outputs:
            targets = SurjectionTargets(tuple(self.targets))
            surjections = [SurjectionItem(label, proof, asset, targets)
                           for label, proof, asset in self.surjection_outputs]
        return AmountPlan(self.tx_index, fees,
                          self.tally.claim(ItemLabel(self.tx_index, KIND_BALANCE)), self.ranges,
                          surjections, self.borromeans)
