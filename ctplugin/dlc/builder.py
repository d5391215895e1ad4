"""Building offers and party parameters programmatically (examples, tests, the benchmark).

Real wallets supply funding inputs; here a party is funded by one P2WPKH output of a synthetic
previous transaction, which is all the funding transaction and its witnesses need.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import coincurve
from bitcointx.core import (
    CMutableTransaction,
    CMutableTxIn,
    CMutableTxInWitness,
    CMutableTxOut,
    CMutableTxWitness,
    COutPoint,
)
from bitcointx.core.script import CScript, CScriptWitness

from ctplugin.dlc import transactions as txs
from ctplugin.dlc.messages import (
    ContractInfo,
    ContractInfoItem,
    NumericDescriptor,
    OfferDlc,
    OracleSet,
)
from ctplugin.dlc.multi_oracle import DifferenceParams
from ctplugin.dlc.oracle import OracleAnnouncement
from ctplugin.dlc.payout import PayoutFunction, RoundingIntervals
from ctplugin.hashes import hash160, sha256

REGTEST_CHAIN_HASH = bytes.fromhex(
    "06226e46111a0b59caaf126043eb5bbf28c34f3a5e332a1fc7b2b73cf188910f")


def p2wpkh(pubkey: bytes) -> bytes:
    return bytes(CScript([0, hash160(pubkey)]))


@dataclass(frozen=True)
class Wallet:
    """A party's keys: funding key, one P2WPKH coin, payout and change scripts."""

    funding_secret: bytes
    coin_secret: bytes
    coin_value: int
    serial_seed: int

    @property
    def funding_pubkey(self) -> bytes:
        return coincurve.PrivateKey(self.funding_secret).public_key.format()

    @property
    def coin_pubkey(self) -> bytes:
        return coincurve.PrivateKey(self.coin_secret).public_key.format()

    def funding_input(self) -> txs.FundingInput:
        prev = CMutableTransaction(
            [CMutableTxIn(COutPoint(sha256(self.coin_secret), 0))],
            [CMutableTxOut(self.coin_value, CScript(p2wpkh(self.coin_pubkey)))], nVersion=2)
        return txs.FundingInput(self.serial_seed * 7 + 1, prev.serialize(), 0, 0xFFFFFFFF, 107,
                                b"")

    def params(self, collateral: int) -> txs.PartyParams:
        return txs.PartyParams(
            self.funding_pubkey, p2wpkh(sha256(self.coin_secret + b"change")[:33]),
            self.serial_seed * 7 + 2, p2wpkh(sha256(self.coin_secret + b"payout")[:33]),
            self.serial_seed * 7 + 3, (self.funding_input(),), collateral)

    def sign_funding(self, fund: CMutableTransaction) -> list[list[bytes]]:
        """P2WPKH witnesses for this wallet's inputs of the funding transaction."""
        funding_input = self.funding_input()
        txid, amount, _ = funding_input.prevout()
        index = next(n for n, vin in enumerate(fund.vin) if vin.prevout.hash == txid)
        script_code = CScript(bytes.fromhex("76a914") + hash160(self.coin_pubkey)
                              + bytes.fromhex("88ac"))
        digest = txs.input_sighash(fund, index, script_code, amount)
        der = coincurve.PrivateKey(self.coin_secret).sign(digest, hasher=None)
        return [[der + b"\x01", self.coin_pubkey]]


def attach_witnesses(fund: CMutableTransaction, inputs: Sequence[txs.FundingInput],
                     witnesses: Sequence[Sequence[bytes]]) -> CMutableTransaction:
    """A copy of ``fund`` with each given input's witness in place."""
    signed = fund.clone()
    stacks: list[list[bytes]] = [[] for _ in signed.vin]
    for funding_input, witness in zip(inputs, witnesses):
        txid, _, _ = funding_input.prevout()
        index = next(n for n, vin in enumerate(signed.vin) if vin.prevout.hash == txid)
        stacks[index] = list(witness)
    signed.wit = CMutableTxWitness([CMutableTxInWitness(CScriptWitness(s)) for s in stacks])
    return signed


def numeric_contract_info(announcements: Sequence[OracleAnnouncement], threshold: int,
                          payout_function: PayoutFunction, rounding: RoundingIntervals, *,
                          total_collateral: int, num_digits: int,
                          params: DifferenceParams | None = None) -> ContractInfo:
    """A single numeric contract's info: the descriptor and the oracles."""
    return ContractInfo(total_collateral, (ContractInfoItem(
        NumericDescriptor(num_digits, payout_function, rounding),
        OracleSet(threshold, tuple(announcements), params)),), False)


def numeric_offer(wallet: Wallet, announcements: Sequence[OracleAnnouncement], threshold: int,
                  payout_function: PayoutFunction, rounding: RoundingIntervals, *,
                  total_collateral: int, offer_collateral: int, num_digits: int,
                  params: DifferenceParams | None = None, fee_rate: int = 2,
                  cet_locktime: int = 1_700_000_000, refund_locktime: int = 1_700_604_800,
                  temporary_id: bytes = b"\x42" * 32) -> OfferDlc:
    """An offer_dlc for a numeric contract funded by ``wallet``'s coin."""
    party = wallet.params(offer_collateral)
    info = numeric_contract_info(announcements, threshold, payout_function, rounding,
                                 total_collateral=total_collateral, num_digits=num_digits,
                                 params=params)
    return OfferDlc(1, 0, REGTEST_CHAIN_HASH, temporary_id, info, party.fund_pubkey,
                    party.payout_spk, party.payout_serial_id, offer_collateral, party.inputs,
                    party.change_spk, party.change_serial_id, wallet.serial_seed * 7 + 4,
                    fee_rate, cet_locktime, refund_locktime)
