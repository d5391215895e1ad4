"""DLC transactions in Elements format (our chain): funding, CETs, refund, fees, sighashes.

The Bitcoin transactions of ``transactions`` stay for rust-dlc interoperability and its vectors;
these are the same contract's transactions as our chain validates them. rust-dlc's choices are
kept where Elements has an equivalent; what Elements adds:

- **Funding**: version 2, locktime 0; inputs of both parties sorted by ``input_serial_id``
  (native segwit only: our chain's templates have no P2SH); outputs (funding, offer change,
  accept change) sorted by their serial ids, then ONE explicit fee output (empty script) paying
  both parties' funding fees. The funding output is P2WSH of ``OP_2 <pk1> <pk2> OP_2
  OP_CHECKMULTISIG`` (keys in ascending byte order) in the collateral asset (explicit asset id);
  its value, the total collateral plus both parties' closing fees, is explicit or a Pedersen
  commitment (``confidential_funding``). Both change outputs are blinded by their owners and
  always present (a party's change pays back its inputs' blinding, so it may not be dropped as
  dust: each change must be at least ``DUST_LIMIT``).
- **Closing transactions** (CETs and refund): version 2, one input spending the funding output
  (sequence 0xFFFFFFFE, 0xFFFFFFFF when the CET locktime is 0, as rust-dlc), the payouts (CETs:
  ordered by payout serial id; refund: offer first, as rust-dlc) with payouts below
  ``DUST_LIMIT`` dropped, then an explicit fee output with what the payouts leave of the
  funding value (both closing fees and any dropped dust).
- **Sighash** of the closing transactions: Elements' segwit v0 digest (``ctplugin.script.
  sighash``), SIGHASH_ALL, input 0, scriptCode = the 2-of-2 script, amount = the funding output's
  value *as stored* (9 bytes explicit, or its 33-byte commitment). It commits to the outputs'
  asset, value and nonce commitments and scripts, not to their range and surjection proofs
  (no SIGHASH_RANGEPROOF): the closing transactions' proofs are made when one is broadcast.
- **Witness**: ``<> <sig lesser pk> <sig greater pk> <script>`` (DER + SIGHASH_ALL byte).
- **Fees**: per party, ceil(weight / 4) · fee rate, with the weights of Elements' serialization
  (4 per byte outside the witness, 1 per witness byte; ``FundingWeights`` / ``closing_weight``).
  A party's share depends on its own data only (the offerer fixes its change before it knows
  the accepter): half the shared parts (header, funding output, fee output; closing: header,
  input with its 2-of-2 witness, fee output), its own inputs and change (funding), its own
  payout output (closing). Surjection proofs of funding outputs are counted at their size for
  the largest input set (256 inputs), closing ones for their one input.
- **contract_id**: dlcspecs' (``transactions.contract_id``), over the Elements funding txid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ctplugin.bulletproofs import CONSENSUS_PROOF_LENGTH
from ctplugin.dlc import transactions as btc
from ctplugin.dlc.errors import DlcError
from ctplugin.elements import Transaction, TxIn, TxOut
from ctplugin.errors import CtpluginError
from ctplugin.script.sighash import SIGHASH_ALL, PrecomputedTransaction, segwit_v0_sighash
from ctplugin.serialize import compact_size
from ctplugin.surjection import serialized_size

DUST_LIMIT = btc.DUST_LIMIT
TX_VERSION = 2
SEQUENCE_ENABLE_LOCKTIME = btc.SEQUENCE_ENABLE_LOCKTIME
SEQUENCE_FINAL = btc.SEQUENCE_FINAL
MAX_FEE_RATE = btc.MAX_FEE_RATE
MAX_FUNDING_INPUTS = 256
"""Funding inputs per transaction (both parties), the surjection proofs' domain limit."""

_WITNESS_SCALE = 4
_HEADER = 4 + 1 + 1 + 1 + 4  # version, witness flag, input count, output count, locktime
_EXPLICIT_ASSET = 33
_EXPLICIT_VALUE = 9
_COMMITMENT = 33
_NULL = 1  # a null nonce (or a null asset/value) serializes as one zero byte
_RANGE_PROOF = len(compact_size(CONSENSUS_PROOF_LENGTH)) + CONSENSUS_PROOF_LENGTH
_INPUT = 32 + 4 + 1 + 4  # outpoint, empty scriptSig, sequence
_INPUT_WITNESS_FRAME = 3  # empty issuance proofs (2 bytes) and peg-in witness (1 byte)
_OUTPUT_WITNESS_EMPTY = 2
_P2WSH = 34
_MULTISIG_SCRIPT = 71
_MAX_DER = 72  # a low-S DER signature; + 1 hash type byte below
_MULTISIG_WITNESS = 1 + 1 + 2 * (1 + _MAX_DER + 1) + 1 + _MULTISIG_SCRIPT


def _surjection_size(n_inputs: int) -> int:
    size = serialized_size(n_inputs, min(3, n_inputs))
    return len(compact_size(size)) + size


def weight_to_fee(weight: int, fee_rate: int) -> int:
    return -(-weight // _WITNESS_SCALE) * fee_rate


def _fee_output_weight() -> int:
    return _WITNESS_SCALE * (_EXPLICIT_ASSET + _EXPLICIT_VALUE + _NULL + 1) + _OUTPUT_WITNESS_EMPTY


def blinded_output_weight(script_len: int, n_inputs: int) -> int:
    """An output with asset, value and nonce commitments, one Bulletproof and a surjection
    proof over ``n_inputs`` inputs."""
    base = 3 * _COMMITMENT + len(compact_size(script_len)) + script_len
    return _WITNESS_SCALE * base + _surjection_size(n_inputs) + _RANGE_PROOF


def funding_output_weight(confidential: bool) -> int:
    if confidential:
        # asset commitment, value commitment, null nonce, the P2WSH script; proofs
        base = 2 * _COMMITMENT + _NULL + 1 + _P2WSH
        return (_WITNESS_SCALE * base + _surjection_size(MAX_FUNDING_INPUTS) + _RANGE_PROOF)
    base = _EXPLICIT_ASSET + _EXPLICIT_VALUE + _NULL + 1 + _P2WSH
    return _WITNESS_SCALE * base + _OUTPUT_WITNESS_EMPTY


def input_weight(max_witness_len: int) -> int:
    return _WITNESS_SCALE * _INPUT + _INPUT_WITNESS_FRAME + max_witness_len


def closing_shared_weight() -> int:
    """Header, the funding input with its 2-of-2 witness, the fee output of a closing tx."""
    return (_WITNESS_SCALE * (_HEADER + _INPUT) + _INPUT_WITNESS_FRAME + _MULTISIG_WITNESS
            + _fee_output_weight())


def funding_shared_weight(confidential: bool) -> int:
    return _WITNESS_SCALE * _HEADER + funding_output_weight(confidential) + _fee_output_weight()


# --- parties ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ElementsInput:
    """A funding input: rust-dlc's funding_input with an *Elements* previous transaction."""

    input_serial_id: int
    prev_tx: bytes
    prev_tx_vout: int
    sequence: int
    max_witness_len: int

    def prevout(self) -> tuple[bytes, TxOut]:
        """(txid in internal byte order, the spent output) of this input."""
        try:
            tx = Transaction.parse(self.prev_tx)
        except CtpluginError as exc:
            raise DlcError("bad-funding-input", f"previous transaction: {exc}") from None
        if not 0 <= self.prev_tx_vout < len(tx.outputs):
            raise DlcError("bad-funding-input", "prev_tx_vout out of range")
        return tx.txid, tx.outputs[self.prev_tx_vout]


@dataclass(frozen=True, slots=True)
class ElementsParty:
    """One party's side of the contract on our chain.

    ``change`` is the party's blinded change output as it will appear in the funding
    transaction (commitments and script; its range proof; the surjection proof is added once
    every funding input is known); ``payout_blinding_pubkey`` is the blinding key of the
    confidential address its payouts go to.
    """

    fund_pubkey: bytes
    payout_spk: bytes
    payout_blinding_pubkey: bytes
    payout_serial_id: int
    change: TxOut
    change_serial_id: int
    inputs: tuple[ElementsInput, ...]
    collateral: int

    @property
    def change_spk(self) -> bytes:
        return self.change.script_pubkey

    def fees(self, fee_rate: int, confidential_funding: bool) -> tuple[int, int]:
        """(funding fee, closing fee) this party pays (module docstring)."""
        return party_fees([i.max_witness_len for i in self.inputs], len(self.change_spk),
                          len(self.payout_spk), fee_rate, confidential_funding)


def party_fees(input_witness_lens: Sequence[int], change_spk_len: int, payout_spk_len: int,
               fee_rate: int, confidential_funding: bool) -> tuple[int, int]:
    """(funding fee, closing fee) of a party with inputs whose witnesses are at most
    ``input_witness_lens`` bytes (serialized stacks) and the given change and payout scripts."""
    if not 0 <= fee_rate <= MAX_FEE_RATE:
        raise DlcError("bad-fee-rate", f"fee rate {fee_rate} sat/vB")
    fund = (-(-funding_shared_weight(confidential_funding) // 2)
            + sum(input_weight(n) for n in input_witness_lens)
            + blinded_output_weight(change_spk_len, MAX_FUNDING_INPUTS))
    closing = -(-closing_shared_weight() // 2) + blinded_output_weight(payout_spk_len, 1)
    return weight_to_fee(fund, fee_rate), weight_to_fee(closing, fee_rate)


def funding_script(pubkey_a: bytes, pubkey_b: bytes) -> bytes:
    """``OP_2 <lesser pk> <greater pk> OP_2 OP_CHECKMULTISIG``."""
    return bytes(btc.funding_script(pubkey_a, pubkey_b))


def p2wsh(script: bytes) -> bytes:
    return bytes(btc.p2wsh(btc.CScript(script)))


def fee_output(asset: bytes, amount: int) -> TxOut:
    return TxOut(asset=asset, value=amount)


# --- funding -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Funding:
    """The funding transaction (without witnesses and without the parties' proofs beyond what
    their change outputs carry) and what spending its 2-of-2 output needs."""

    tx: Transaction
    index: int
    value: int
    """The funding output's value in satoshis (explicit or committed)."""
    script: bytes
    """The 2-of-2 witness script."""

    @property
    def output(self) -> TxOut:
        return self.tx.outputs[self.index]

    @property
    def amount(self) -> int | bytes:
        """The funding output's value as stored (what closing sighashes commit to)."""
        return self.output.value

    @property
    def txid(self) -> bytes:
        """Internal byte order (as outpoints hold it)."""
        return self.tx.txid

    @property
    def txid_display(self) -> bytes:
        return self.tx.txid[::-1]


def funding_transaction(offer: ElementsParty, accept: ElementsParty, fund_output: TxOut,
                        fund_output_serial_id: int, fee: int, asset: bytes,
                        fund_value: int) -> Funding:
    """Assemble the funding transaction (module docstring) around the given outputs."""
    serials = [fund_output_serial_id, offer.change_serial_id, accept.change_serial_id]
    if len(set(serials)) != 3:
        raise DlcError("bad-serial-id", "funding and change serial ids must be distinct")
    inputs = list(offer.inputs) + list(accept.inputs)
    if not inputs:
        raise DlcError("bad-funding-input", "the funding transaction needs inputs")
    if len(inputs) > MAX_FUNDING_INPUTS:
        raise DlcError("bad-funding-input", f"more than {MAX_FUNDING_INPUTS} funding inputs")
    if len({i.input_serial_id for i in inputs}) != len(inputs):
        raise DlcError("bad-serial-id", "input serial ids must be distinct")
    txins = []
    seen = set()
    for funding_input in sorted(inputs, key=lambda i: i.input_serial_id):
        txid, _ = funding_input.prevout()
        outpoint = (txid, funding_input.prev_tx_vout)
        if outpoint in seen:
            raise DlcError("bad-funding-input", "an outpoint is spent twice")
        seen.add(outpoint)
        if not 0 <= funding_input.sequence <= 0xFFFF_FFFF:
            raise DlcError("bad-funding-input", "sequence out of range")
        txins.append(TxIn(prevout_hash=txid, prevout_index=funding_input.prev_tx_vout,
                          sequence=funding_input.sequence))
    tagged = sorted([(fund_output_serial_id, fund_output), (offer.change_serial_id, offer.change),
                     (accept.change_serial_id, accept.change)], key=lambda item: item[0])
    outputs = [o for _, o in tagged]
    if fee > 0:
        outputs.append(fee_output(asset, fee))
    script = funding_script(offer.fund_pubkey, accept.fund_pubkey)
    if fund_output.script_pubkey != p2wsh(script):
        raise DlcError("bad-funding-output", "the funding output must pay the 2-of-2 P2WSH")
    tx = _transaction(txins, outputs, 0)
    index = next(n for n, (serial, _) in enumerate(tagged) if serial == fund_output_serial_id)
    return Funding(tx, index, fund_value, script)


def _transaction(inputs: Sequence[TxIn], outputs: Sequence[TxOut], lock_time: int) -> Transaction:
    try:
        return Transaction(version=TX_VERSION, inputs=tuple(inputs), outputs=tuple(outputs),
                           locktime=lock_time)
    except CtpluginError as exc:
        raise DlcError("bad-transaction", str(exc)) from None


# --- closing transactions ----------------------------------------------------------------------

def cet_sequence(cet_locktime: int) -> int:
    return SEQUENCE_ENABLE_LOCKTIME if cet_locktime else SEQUENCE_FINAL


def closing_transaction(funding: Funding, payouts: Sequence[TxOut], fee: int, asset: bytes,
                        lock_time: int, sequence: int) -> Transaction:
    """A CET or the refund: the funding input, ``payouts`` in the given (final) order, then
    the explicit fee output (left out when ``fee`` is 0)."""
    txin = TxIn(prevout_hash=funding.txid, prevout_index=funding.index, sequence=sequence)
    outputs = list(payouts)
    if fee > 0:
        outputs.append(fee_output(asset, fee))
    return _transaction([txin], outputs, lock_time)


def payout_order(offer: ElementsParty, accept: ElementsParty, *, refund: bool) -> bool:
    """True when the offerer's payout comes first (CETs: by payout serial id; refund: always)."""
    return refund or offer.payout_serial_id < accept.payout_serial_id


def closing_sighash(funding: Funding, tx: Transaction) -> bytes:
    """Elements segwit v0 SIGHASH_ALL digest of input 0 spending the 2-of-2 funding output."""
    return segwit_v0_sighash(PrecomputedTransaction(tx), 0, funding.script, funding.amount,
                             SIGHASH_ALL)


def multisig_witness(script: bytes, signatures: Mapping[bytes, bytes]) -> tuple[bytes, ...]:
    """``<> <sig lesser pk> <sig greater pk> <script>`` from pubkey → DER signature."""
    keys = sorted(signatures)
    return (b"", *(signatures[k] + bytes((SIGHASH_ALL,)) for k in keys), script)


def with_witness(tx: Transaction, index: int, witness: Sequence[bytes]) -> Transaction:
    inputs = list(tx.inputs)
    inputs[index] = replace(inputs[index], script_witness=tuple(witness))
    return replace(tx, inputs=tuple(inputs))


def with_outputs(tx: Transaction, outputs: Sequence[TxOut]) -> Transaction:
    """``tx`` with its outputs replaced (the same commitments with their proofs attached)."""
    if len(outputs) != len(tx.outputs) or any(
            a.serialize() != b.serialize() for a, b in zip(outputs, tx.outputs)):
        raise DlcError("bad-transaction", "proofs may be attached, outputs may not change")
    return replace(tx, outputs=tuple(outputs))


def contract_id(funding: Funding, temporary_id: bytes) -> bytes:
    return btc.contract_id(funding.txid_display, funding.index, temporary_id)
