"""DLC transactions with python-bitcointx (dlcspecs Transactions.md; rust-dlc's choices).

- Funding: version 2, locktime 0; inputs of both parties sorted by ``input_serial_id``; outputs
  (funding, offer change, accept change) sorted by their serial ids; outputs below the 1000 sat
  dust limit dropped. The funding output is P2WSH of ``OP_2 <pk1> <pk2> OP_2 OP_CHECKMULTISIG``
  with the compressed keys in ascending byte order; its value is the total collateral plus both
  parties' closing fees.
- Fees per party (weight → fee: ceil(weight / 4) · feerate):
  funding weight = 107 + 36 + 4·len(change_spk) + Σ_inputs (164 + 4·len(script_sig) +
  max_witness_len), where script_sig is empty (native segwit) or a push of the redeem script;
  closing weight = 250 + 4·len(payout_spk) (rust-dlc's half of CET_BASE_WEIGHT 500).
  change = inputs − collateral − funding fee − closing fee.
- CET: version 2, nLockTime = cet_locktime, one input spending the funding output with sequence
  0xFFFFFFFE (0xFFFFFFFF when the locktime is 0), outputs (offer, accept payouts) ordered by
  payout serial id, dust dropped.
- Refund: as a CET with nLockTime = refund_locktime, sequence 0xFFFFFFFE, outputs (offer
  collateral, accept collateral) in that order (rust-dlc does not sort them), dust dropped.
- Sighash of CETs and refund: BIP143 (segwit v0), SIGHASH_ALL, input 0, scriptCode = the 2-of-2
  script, amount = the funding output value. The witness is ``<> <sig lesser pk> <sig greater pk>
  <script>``.
- contract_id = funding txid (display byte order) XOR temporary_contract_id, with the funding
  output index XORed into the last two bytes (big-endian).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bitcointx.core import (
    CMutableTransaction,
    CMutableTxIn,
    CMutableTxInWitness,
    CMutableTxOut,
    CMutableTxWitness,
    COutPoint,
    CTransaction,
)
from bitcointx.core.script import (
    OP_2,
    OP_CHECKMULTISIG,
    SIGHASH_ALL,
    SIGVERSION_WITNESS_V0,
    CScript,
    CScriptWitness,
    SignatureHash,
)
from bitcointx.core.scripteval import SCRIPT_VERIFY_P2SH, SCRIPT_VERIFY_WITNESS, VerifyScript

from ctplugin.dlc.errors import DlcError
from ctplugin.hashes import sha256, sha256d
from ctplugin.secp256k1.libsecp import share_with_bitcointx
from ctplugin.serialize import compact_size

DUST_LIMIT = 1000
TX_VERSION = 2
FUND_TX_BASE_WEIGHT = 214
CET_BASE_WEIGHT = 500
TX_INPUT_BASE_WEIGHT = 164
CHANGE_OUTPUT_EXTRA_WEIGHT = 36
SEQUENCE_ENABLE_LOCKTIME = 0xFFFFFFFE
SEQUENCE_FINAL = 0xFFFFFFFF
MAX_FEE_RATE = 25 * 250


def weight_to_fee(weight: int, fee_rate: int) -> int:
    return -(-weight // 4) * fee_rate


@dataclass(frozen=True, slots=True)
class FundingInput:
    input_serial_id: int
    prev_tx: bytes
    prev_tx_vout: int
    sequence: int
    max_witness_len: int
    redeem_script: bytes

    def script_sig(self) -> bytes:
        return bytes(CScript([self.redeem_script])) if self.redeem_script else b""

    def prevout(self) -> tuple[bytes, int, bytes]:
        """(txid as stored in the outpoint, amount, scriptPubKey) of the spent output."""
        try:
            tx = CTransaction.deserialize(self.prev_tx)
        except Exception as exc:  # bitcointx raises assorted types on garbage
            raise DlcError("bad-funding-input", f"previous transaction: {exc}") from None
        if not 0 <= self.prev_tx_vout < len(tx.vout):
            raise DlcError("bad-funding-input", "prev_tx_vout out of range")
        out = tx.vout[self.prev_tx_vout]
        return tx.GetTxid(), int(out.nValue), bytes(out.scriptPubKey)


@dataclass(frozen=True, slots=True)
class PartyParams:
    fund_pubkey: bytes
    change_spk: bytes
    change_serial_id: int
    payout_spk: bytes
    payout_serial_id: int
    inputs: tuple[FundingInput, ...]
    collateral: int

    def input_amount(self) -> int:
        return sum(i.prevout()[1] for i in self.inputs)

    def fees(self, fee_rate: int) -> tuple[int, int]:
        """(funding fee, closing fee) this party pays (module docstring)."""
        inputs_weight = sum(TX_INPUT_BASE_WEIGHT + 4 * len(i.script_sig()) + i.max_witness_len
                            for i in self.inputs)
        fund_weight = (FUND_TX_BASE_WEIGHT // 2 + inputs_weight + 4 * len(self.change_spk)
                       + CHANGE_OUTPUT_EXTRA_WEIGHT)
        closing_weight = CET_BASE_WEIGHT // 2 + 4 * len(self.payout_spk)
        return weight_to_fee(fund_weight, fee_rate), weight_to_fee(closing_weight, fee_rate)


def funding_script(pubkey_a: bytes, pubkey_b: bytes) -> CScript:
    first, second = sorted((pubkey_a, pubkey_b))
    return CScript([OP_2, first, second, OP_2, OP_CHECKMULTISIG])


def p2wsh(script: CScript) -> CScript:
    return CScript([0, sha256(bytes(script))])


def _without_dust(outputs: list[CMutableTxOut]) -> list[CMutableTxOut]:
    return [o for o in outputs if o.nValue >= DUST_LIMIT]


@dataclass(frozen=True)
class DlcTransactions:
    fund: CMutableTransaction
    fund_output_index: int
    fund_output_value: int
    funding_script: CScript
    cet_sequence: int
    refund: CMutableTransaction

    @property
    def fund_txid(self) -> bytes:
        """The funding txid in display (big-endian) byte order."""
        return self.fund.GetTxid()[::-1]


def _closing_input(fund_txid_le: bytes, index: int, sequence: int) -> CMutableTxIn:
    return CMutableTxIn(COutPoint(fund_txid_le, index), nSequence=sequence)


def create_cet(fund: DlcTransactions | tuple[bytes, int], offer: PartyParams,
               accept: PartyParams, offer_payout: int, accept_payout: int, lock_time: int,
               sequence: int) -> CMutableTransaction:
    txid_le, index = ((fund.fund.GetTxid(), fund.fund_output_index)
                      if isinstance(fund, DlcTransactions) else fund)
    offer_out = CMutableTxOut(offer_payout, CScript(offer.payout_spk))
    accept_out = CMutableTxOut(accept_payout, CScript(accept.payout_spk))
    outputs = ([offer_out, accept_out] if offer.payout_serial_id < accept.payout_serial_id
               else [accept_out, offer_out])
    return CMutableTransaction([_closing_input(txid_le, index, sequence)],
                               _without_dust(outputs), nLockTime=lock_time, nVersion=TX_VERSION)


def create_transactions(offer: PartyParams, accept: PartyParams,
                        payouts: Sequence[tuple[int, int]], *, fee_rate: int, cet_locktime: int,
                        refund_locktime: int, fund_output_serial_id: int,
                        fund_lock_time: int = 0) -> DlcTransactions:
    """Funding, CETs (one per (offer, accept) payout) and refund (module docstring)."""
    if not 0 <= fee_rate <= MAX_FEE_RATE:
        raise DlcError("bad-fee-rate", f"fee rate {fee_rate} sat/vB")
    total = offer.collateral + accept.collateral
    if any(o + a != total or o < 0 or a < 0 for o, a in payouts):
        raise DlcError("bad-payout", "every CET must pay out exactly the total collateral")
    changes, closing_fees = [], []
    for party in (offer, accept):
        fund_fee, closing_fee = party.fees(fee_rate)
        change = party.input_amount() - party.collateral - fund_fee - closing_fee
        if change < 0:
            raise DlcError("insufficient-funds",
                           "inputs do not cover collateral and fees")
        changes.append(change)
        closing_fees.append(closing_fee)
    fund_value = total + sum(closing_fees)
    script = funding_script(offer.fund_pubkey, accept.fund_pubkey)
    fund_spk = p2wsh(script)
    tagged_outputs = sorted(
        [(fund_output_serial_id, 0, CMutableTxOut(fund_value, fund_spk)),
         (offer.change_serial_id, 1, CMutableTxOut(changes[0], CScript(offer.change_spk))),
         (accept.change_serial_id, 2, CMutableTxOut(changes[1], CScript(accept.change_spk)))],
        key=lambda item: (item[0], item[1]))
    outputs = _without_dust([o for _, _, o in tagged_outputs])
    tagged_inputs = sorted(
        [(i.input_serial_id, n, i) for n, i in enumerate(offer.inputs + accept.inputs)],
        key=lambda item: (item[0], item[1]))
    inputs = []
    for _, _, funding_input in tagged_inputs:
        txid, _, _ = funding_input.prevout()
        inputs.append(CMutableTxIn(COutPoint(txid, funding_input.prev_tx_vout),
                                   CScript(funding_input.script_sig()),
                                   nSequence=funding_input.sequence))
    fund = CMutableTransaction(inputs, outputs, nLockTime=fund_lock_time, nVersion=TX_VERSION)
    fund_index = next(i for i, o in enumerate(fund.vout) if o.scriptPubKey == fund_spk)
    cet_sequence = SEQUENCE_ENABLE_LOCKTIME if cet_locktime else SEQUENCE_FINAL
    outpoint = (fund.GetTxid(), fund_index)
    refund_outputs = [CMutableTxOut(offer.collateral, CScript(offer.payout_spk)),
                      CMutableTxOut(accept.collateral, CScript(accept.payout_spk))]
    refund = CMutableTransaction([_closing_input(*outpoint, SEQUENCE_ENABLE_LOCKTIME)],
                                 _without_dust(refund_outputs), nLockTime=refund_locktime,
                                 nVersion=TX_VERSION)
    return DlcTransactions(fund, fund_index, fund_value, script, cet_sequence, refund)


class CetSighasher:
    """BIP143 SIGHASH_ALL digests of CETs, computed straight from the spec with the parts all
    CETs share (version, hashPrevouts, hashSequence, outpoint, scriptCode, amount, sequence)
    hashed once; only hashOutputs and nLockTime change per CET. Building a python-bitcointx
    transaction per CET just to hash it costs milliseconds; tests cross-check every digest
    against bitcointx's ``SignatureHash``."""

    def __init__(self, dlc: DlcTransactions, offer: PartyParams, accept: PartyParams) -> None:
        outpoint = dlc.fund.GetTxid() + dlc.fund_output_index.to_bytes(4, "little")
        sequence = dlc.cet_sequence.to_bytes(4, "little")
        script = bytes(dlc.funding_script)
        self._head = (TX_VERSION.to_bytes(4, "little") + sha256d(outpoint) + sha256d(sequence)
                      + outpoint + compact_size(len(script)) + script
                      + dlc.fund_output_value.to_bytes(8, "little") + sequence)
        self._offer = compact_size(len(offer.payout_spk)) + offer.payout_spk
        self._accept = compact_size(len(accept.payout_spk)) + accept.payout_spk
        self._offer_first = offer.payout_serial_id < accept.payout_serial_id

    def sighash(self, offer_payout: int, accept_payout: int, lock_time: int) -> bytes:
        outputs = [(offer_payout, self._offer), (accept_payout, self._accept)]
        if not self._offer_first:
            outputs.reverse()
        serialized = b"".join(v.to_bytes(8, "little") + spk for v, spk in outputs
                              if v >= DUST_LIMIT)
        return sha256d(self._head + sha256d(serialized) + lock_time.to_bytes(4, "little")
                       + SIGHASH_ALL.to_bytes(4, "little"))


def closing_sighash(tx: CMutableTransaction, funding: CScript, fund_value: int) -> bytes:
    """BIP143 SIGHASH_ALL digest of input 0 spending the 2-of-2 funding output."""
    return bytes(SignatureHash(funding, tx, 0, SIGHASH_ALL, amount=fund_value,
                               sigversion=SIGVERSION_WITNESS_V0))


def input_sighash(tx: CMutableTransaction, index: int, script_code: CScript, amount: int) -> bytes:
    return bytes(SignatureHash(script_code, tx, index, SIGHASH_ALL, amount=amount,
                               sigversion=SIGVERSION_WITNESS_V0))


def set_multisig_witness(tx: CMutableTransaction, funding: CScript,
                         signatures: dict[bytes, bytes]) -> None:
    """Put ``<> <sig lesser pk> <sig greater pk> <script>`` on input 0 (DER sigs + hash type)."""
    keys = sorted(signatures)
    stack = [b"", *(signatures[k] + bytes((SIGHASH_ALL,)) for k in keys), bytes(funding)]
    tx.wit = CMutableTxWitness([CMutableTxInWitness(CScriptWitness(stack))])


def verify_input(tx: CMutableTransaction, index: int, script_pubkey: bytes, amount: int,
                 witness: Sequence[bytes] | None = None) -> None:
    """python-bitcointx script verification (P2SH + segwit); raises ``DlcError`` on failure."""
    wit = (CScriptWitness(list(witness)) if witness is not None
           else tx.wit.vtxinwit[index].scriptWitness)
    share_with_bitcointx()
    try:
        VerifyScript(tx.vin[index].scriptSig, CScript(script_pubkey), tx, index,
                     flags=(SCRIPT_VERIFY_P2SH, SCRIPT_VERIFY_WITNESS), amount=amount, witness=wit)
    except Exception as exc:  # bitcointx raises VerifyScriptError and friends
        raise DlcError("script-verify", f"input {index}: {exc}") from None


def contract_id(fund_txid_display: bytes, fund_output_index: int, temporary_id: bytes) -> bytes:
    """fund txid XOR temporary id, output index XORed into the last two bytes."""
    if len(fund_txid_display) != 32 or len(temporary_id) != 32:
        raise DlcError("bad-contract-id", "txid and temporary id are 32 bytes")
    if not 0 <= fund_output_index < 1 << 16:
        raise DlcError("bad-contract-id", "funding output index must fit 16 bits")
    out = bytearray(a ^ b for a, b in zip(fund_txid_display, temporary_id))
    out[30] ^= fund_output_index >> 8
    out[31] ^= fund_output_index & 0xFF
    return bytes(out)
