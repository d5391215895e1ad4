"""A DLC on our chain: the contract's Elements transactions, sighashes, signatures and closing.

``ElementsContract.build(offer, accept_party, blinder)`` derives from an offer for our chain (an
``OfferDlc`` with its ``elements`` part) and the accepter's ``ElementsParty`` everything both
parties must agree on: the chain-independent terms (``contract.ContractTerms``: CETs, adaptor
entries and points), the funding transaction, every closing transaction (CETs and refund) with
its outputs' commitments, and their Elements segwit v0 sighashes (``elements_tx``). The adaptor
signatures (``AdaptorSigned``) sign those sighashes.

Blinding is the wallet's (``OutputBlinder``, implemented by ``regtest.wallet.dlc``): it gives
the funding output and, per closing transaction, the payout outputs' commitments (asset, value,
nonce) that the sighashes cover; the range and surjection proofs, which the sighashes do not
cover, are attached when a transaction is broadcast (``execute`` / ``refund_transaction`` take
the wallet's ``prove`` callback).

Checks this module makes (``DlcError`` naming the failure): the offer is for our chain
(``elements`` present, native segwit inputs, distinct serial ids), collateral and fees add up,
every change output is at least the dust limit by its side's balance (``side_balance_holds``:
Σ inputs − change = contributed·H + offset·G over the commitments), adaptor, refund and funding
signatures verify (the funding witnesses by our script interpreter), and a completed closing
transaction's witness passes script verification before it is returned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ctplugin.dlc import adaptor_points as ap
from ctplugin.dlc import ecdsa_adaptor as ea
from ctplugin.dlc import elements_tx as etx
from ctplugin.dlc.contract import AdaptorSigned, ContractTerms, PreparedItem
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.messages import AcceptDlc, ElementsOffer, OfferDlc
from ctplugin.dlc.multi_oracle import AdaptorEntry
from ctplugin.dlc.oracle import MessageHash, OracleAttestation
from ctplugin.dlc.transactions import FundingInput
from ctplugin.elements import Transaction, TxOut
from ctplugin.errors import CtpluginError
from ctplugin.pedersen import Commitment, generator_generate
from ctplugin.script.checker import checker_for
from ctplugin.script.errors import ScriptError
from ctplugin.script.flags import STANDARD
from ctplugin.script.interpreter import verify_input
from ctplugin.script.sighash import PrecomputedTransaction
from ctplugin.secp256k1 import INFINITY, Point, ct

Payout = tuple[bool, int]
"""(paid to the offerer, amount) of one payout output, in transaction order."""


class OutputBlinder(Protocol):
    """The wallet's side of a contract's blinding (both parties derive the same outputs)."""

    def funding_output(self, value: int, script_pubkey: bytes) -> TxOut:
        """The 2-of-2 output of ``value`` (explicit, or with commitments and no proofs)."""

    def closing_outputs(self, closings: Sequence[Sequence[Payout]]) -> list[list[TxOut]]:
        """Per closing transaction, its payout outputs with their commitments (no proofs)."""

    def side_offset(self, offerer: bool) -> int:
        """The blinding (Σ v·abf + vbf) a side's inputs carry beyond its change output's."""


Prover = Callable[[Transaction, Sequence[Payout]], Transaction]
"""Attach the range and surjection proofs to a closing transaction's payout outputs."""


def elements_inputs(inputs: Sequence[FundingInput]) -> tuple[etx.ElementsInput, ...]:
    out = []
    for i in inputs:
        if i.redeem_script:
            raise DlcError("unsupported", "P2SH-wrapped funding inputs (our chain has no P2SH)")
        out.append(etx.ElementsInput(i.input_serial_id, i.prev_tx, i.prev_tx_vout, i.sequence,
                                     i.max_witness_len))
    return tuple(out)


def _change(asset: bytes, value: bytes, nonce: bytes, script: bytes, range_proof: bytes,
            surjection_proof: bytes = b"") -> TxOut:
    try:
        return TxOut(asset=asset, value=value, nonce=nonce, script_pubkey=script,
                     range_proof=range_proof, surjection_proof=surjection_proof)
    except CtpluginError as exc:
        raise DlcError("bad-change-output", str(exc)) from None


def _elements(offer: OfferDlc) -> ElementsOffer:
    if offer.elements is None:
        raise DlcError("not-elements", "the offer has no Elements part (a Bitcoin contract)")
    return offer.elements


def offer_party(offer: OfferDlc) -> etx.ElementsParty:
    ext = _elements(offer)
    change = _change(ext.change_asset, ext.change_value, ext.change_nonce, offer.change_spk,
                     ext.change_range_proof)
    return etx.ElementsParty(offer.funding_pubkey, offer.payout_spk, ext.payout_blinding_pubkey,
                             offer.payout_serial_id, change, offer.change_serial_id,
                             elements_inputs(offer.funding_inputs), offer.offer_collateral)


def accept_party(accept: AcceptDlc) -> etx.ElementsParty:
    ext = accept.elements
    if ext is None:
        raise DlcError("not-elements", "the accept has no Elements part")
    change = _change(ext.change_asset, ext.change_value, ext.change_nonce, accept.change_spk,
                     ext.change_range_proof, ext.change_surjection_proof)
    return etx.ElementsParty(accept.funding_pubkey, accept.payout_spk, ext.payout_blinding_pubkey,
                             accept.payout_serial_id, change, accept.change_serial_id,
                             elements_inputs(accept.funding_inputs), accept.accept_collateral)


def _value_point(out: TxOut, asset_gen: Point) -> Point:
    if isinstance(out.value, int):
        return asset_gen.mul_var(out.value) if out.value else INFINITY
    try:
        return Commitment.parse(out.value).point
    except CtpluginError as exc:
        raise DlcError("bad-funding-input", f"value commitment: {exc}") from None


def side_balance_holds(party: etx.ElementsParty, contributed: int, asset: bytes,
                       offset: int) -> bool:
    """Σ inputs − change = contributed·H_asset + offset·G (commitments as stored; the
    offset is a shared secret, multiplied in constant time)."""
    asset_gen = generator_generate(asset).point
    total = INFINITY
    for funding_input in party.inputs:
        _, spent = funding_input.prevout()
        total = total + _value_point(spent, asset_gen)
    total = total - _value_point(party.change, asset_gen)
    expected = asset_gen.mul_var(contributed) if contributed else INFINITY
    if offset:
        expected = expected + ct.base_mul(offset)
    return total == expected


@dataclass
class ElementsContract(AdaptorSigned):
    offer: OfferDlc
    offer_party: etx.ElementsParty
    accept_party: etx.ElementsParty
    asset: bytes
    genesis_hash: bytes
    items: list[PreparedItem]
    cet_terms: list[tuple[int, int, int]]
    entries: list[AdaptorEntry]
    points: list[Point]
    local_cet_indices: list[int]
    funding: etx.Funding
    fees: tuple[tuple[int, int], tuple[int, int]]
    """((offer funding fee, offer closing fee), (accept funding fee, accept closing fee))."""
    closings: list[Transaction]
    """Per CET, the transaction without proofs or witness."""
    payouts: list[list[Payout]]
    """Per closing transaction (CETs, then the refund last), its payout outputs."""
    sighashes: list[bytes]
    refund: Transaction
    refund_sighash: bytes

    @classmethod
    def build(cls, offer: OfferDlc, accept: etx.ElementsParty, blinder: OutputBlinder, *,
              scheme: MessageHash = MessageHash.UNTAGGED,
              strategy: ap.Strategy = "memo") -> ElementsContract:
        ext = _elements(offer)
        terms = ContractTerms.build(offer, scheme=scheme, strategy=strategy)
        offerer = offer_party(offer)
        total = offer.contract_info.total_collateral
        if offerer.collateral + accept.collateral != total:
            raise DlcError("bad-collateral", "offer + accept collateral != total collateral")
        fee_rate = offer.fee_rate_per_vb
        fees = (offerer.fees(fee_rate, ext.confidential_funding),
                accept.fees(fee_rate, ext.confidential_funding))
        fund_value = total + fees[0][1] + fees[1][1]
        script = etx.funding_script(offerer.fund_pubkey, accept.fund_pubkey)
        fund_output = blinder.funding_output(fund_value, etx.p2wsh(script))
        funding = etx.funding_transaction(offerer, accept, fund_output,
                                          offer.fund_output_serial_id, fees[0][0] + fees[1][0],
                                          ext.asset, fund_value)
        sequence = etx.cet_sequence(offer.cet_locktime)
        offer_first = etx.payout_order(offerer, accept, refund=False)
        payouts = [_present(o, a, offer_first) for o, a, _ in terms.cet_terms]
        payouts.append(_present(offerer.collateral, accept.collateral, True))
        outputs = blinder.closing_outputs(payouts)
        if len(outputs) != len(payouts):
            raise DlcError("bad-blinding", "one output list per closing transaction expected")
        closings = [_closing(funding, out, present, ext.asset, lock_time, sequence)
                    for out, present, (_, _, lock_time) in zip(outputs, payouts, terms.cet_terms)]
        sighashes = [etx.closing_sighash(funding, tx) for tx in closings]
        refund = _closing(funding, outputs[-1], payouts[-1], ext.asset, offer.refund_locktime,
                          etx.SEQUENCE_ENABLE_LOCKTIME)
        return cls(offer, offerer, accept, ext.asset, offer.chain_hash, terms.items,
                   terms.cet_terms, terms.entries, terms.points, terms.local_cet_indices, funding,
                   fees, closings, payouts, sighashes, refund,
                   etx.closing_sighash(funding, refund))

    # --- checks of the counterparty's funding side ---------------------------------------------

    def contributed(self, offerer: bool) -> int:
        """What a side's inputs pay beyond its change: collateral and both its fees."""
        party = self.offer_party if offerer else self.accept_party
        fund_fee, closing_fee = self.fees[0 if offerer else 1]
        return party.collateral + fund_fee + closing_fee

    def check_side(self, offerer: bool, offset: int) -> None:
        """The side's change output balances its inputs (module docstring)."""
        party = self.offer_party if offerer else self.accept_party
        if not side_balance_holds(party, self.contributed(offerer), self.asset, offset):
            who = "offerer" if offerer else "accepter"
            raise DlcError("bad-change-output",
                           f"the {who}'s change does not balance its inputs, collateral and fees")

    def spent_outputs(self) -> list[TxOut]:
        """The outputs the funding transaction's inputs spend, in its input order."""
        by_outpoint = {}
        for funding_input in self.offer_party.inputs + self.accept_party.inputs:
            txid, out = funding_input.prevout()
            by_outpoint[(txid, funding_input.prev_tx_vout)] = out
        return [by_outpoint[(i.prevout_hash, i.prevout_index)] for i in self.funding.tx.inputs]

    def input_index(self, funding_input: etx.ElementsInput) -> int:
        txid, _ = funding_input.prevout()
        for n, txin in enumerate(self.funding.tx.inputs):
            if txin.prevout_hash == txid and txin.prevout_index == funding_input.prev_tx_vout:
                return n
        raise DlcError("bad-funding-input", "input missing from the funding transaction")

    def funding_with(self, witnesses: Mapping[int, Sequence[bytes]],
                     outputs: Mapping[int, TxOut] | None = None) -> Transaction:
        """The funding transaction with the given input witnesses (by input index) and outputs
        replaced by the same outputs carrying their proofs."""
        tx = self.funding.tx
        if outputs:
            replaced = list(tx.outputs)
            for n, out in outputs.items():
                replaced[n] = out
            tx = etx.with_outputs(tx, replaced)
        for n, witness in witnesses.items():
            tx = etx.with_witness(tx, n, witness)
        return tx

    def verify_funding_witnesses(self, party: etx.ElementsParty,
                                 witnesses: Sequence[Sequence[bytes]],
                                 tx: Transaction | None = None) -> None:
        """Check ``party``'s funding witnesses (one per input, in the party's input order) with
        our script interpreter under the mempool's flags; ``tx`` is the funding transaction they
        sign (proofs attached: taproot signatures commit to them)."""
        if len(witnesses) != len(party.inputs):
            raise DlcError("bad-funding-signatures", "one witness per funding input expected")
        indices = [self.input_index(i) for i in party.inputs]
        signed = self.funding_with(dict(zip(indices, witnesses)), None) if tx is None else tx
        if tx is not None:
            for n, witness in zip(indices, witnesses):
                signed = etx.with_witness(signed, n, witness)
        pre = PrecomputedTransaction(signed, self.spent_outputs(), self.genesis_hash)
        for n in indices:
            try:
                verify_input(pre, n, int(STANDARD), checker_for(pre, n, int(STANDARD)))
            except (ScriptError, CtpluginError) as exc:
                raise DlcError("bad-funding-signatures", f"input {n}: {exc}") from None

    # --- refund ---------------------------------------------------------------------------------

    def contract_id(self) -> bytes:
        return etx.contract_id(self.funding, self.offer.temporary_contract_id)

    # --- closing ----------------------------------------------------------------------------------

    def _complete(self, tx: Transaction, payouts: Sequence[Payout], sighash: bytes,
                  signatures: Mapping[bytes, bytes], prove: Prover) -> Transaction:
        witness = etx.multisig_witness(self.funding.script, signatures)
        signed = etx.with_witness(prove(tx, payouts), 0, witness)
        pre = PrecomputedTransaction(signed, [self.funding.output], self.genesis_hash)
        try:
            verify_input(pre, 0, int(STANDARD), checker_for(pre, 0, int(STANDARD)))
        except ScriptError as exc:
            raise DlcError("bad-closing-signature", f"the closing witness fails: {exc}") from None
        return signed

    def execute(self, adaptor_index: int, attestations: dict[int, OracleAttestation],
                counterparty_signature: ea.AdaptorSignature | bytes, own_secret: bytes,
                counterparty_pubkey: bytes, prove: Prover) -> Transaction:
        """The CET the attestations unlock, signed by both parties and proven: decrypt the
        counterparty's adaptor signature with the summed oracle secrets, add our signature,
        attach the payout outputs' proofs (``prove``) and check the witness."""
        if isinstance(counterparty_signature, bytes):
            counterparty_signature = ea.AdaptorSignature.from_bytes(counterparty_signature)
        entry = self.entries[adaptor_index] if 0 <= adaptor_index < len(self.entries) else None
        if entry is None:
            raise DlcError("bad-adaptor-index", f"no adaptor signature {adaptor_index}")
        y = self.decryption_key(adaptor_index, attestations)
        theirs = ea.der_encode(ea.decrypt(counterparty_signature, y))
        sighash = self.sighashes[entry.cet_index]
        mine = ct.ecdsa_sign(own_secret, sighash)
        own_pubkey = ct.base_mul(own_secret).to_bytes()
        return self._complete(self.closings[entry.cet_index], self.payouts[entry.cet_index],
                              sighash, {own_pubkey: mine, counterparty_pubkey: theirs}, prove)

    def refund_transaction(self, own_secret: bytes, counterparty_pubkey: bytes,
                           counterparty_signature: bytes, prove: Prover) -> Transaction:
        """The refund, signed by both parties and proven (valid once its locktime is reached)."""
        mine = ct.ecdsa_sign(own_secret, self.refund_sighash)
        own_pubkey = ct.base_mul(own_secret).to_bytes()
        return self._complete(self.refund, self.payouts[-1], self.refund_sighash,
                              {own_pubkey: mine, counterparty_pubkey: counterparty_signature},
                              prove)

    def closing_fee(self, payouts: Sequence[Payout]) -> int:
        return self.funding.value - sum(amount for _, amount in payouts)


def _present(offer_payout: int, accept_payout: int, offer_first: bool) -> list[Payout]:
    """The payouts a closing transaction carries, in output order, dust dropped."""
    ordered = [(True, offer_payout), (False, accept_payout)]
    if not offer_first:
        ordered.reverse()
    return [(who, amount) for who, amount in ordered if amount >= etx.DUST_LIMIT]


def _closing(funding: etx.Funding, outputs: Sequence[TxOut], present: Sequence[Payout],
             asset: bytes, lock_time: int, sequence: int) -> Transaction:
    if len(outputs) != len(present):
        raise DlcError("bad-blinding", "one output per payout expected")
    fee = funding.value - sum(amount for _, amount in present)
    return etx.closing_transaction(funding, outputs, fee, asset, lock_time, sequence)
