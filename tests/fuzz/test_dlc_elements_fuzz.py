"""Hostile offer and accept messages for our chain (rust-dlc JSON with the ``elements`` part):
a field replaced by junk or a byte flipped inside any hex field gives a ``DlcError`` from the
party that receives it — never another exception — and nothing of the wallet is spent."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin.dlc import messages
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.messages import ContractInfo, ContractInfoItem, NumericDescriptor, OracleSet
from ctplugin.dlc.oracle import DigitDecompositionEvent, Oracle
from ctplugin.dlc.payout import (
    PayoutFunction,
    PayoutPoint,
    PolynomialPiece,
    RoundingInterval,
    RoundingIntervals,
)
from ctplugin.elements import Transaction
from regtest.builder import ChainBuilder
from regtest.params import POLICY_ASSET, REGTEST_SEED
from regtest.wallet import Payment, Wallet
from regtest.wallet.dlc import DlcParty, PartySecrets
from tests.json_mutation import mutate

TOTAL = 10_000_000


class Parties:
    def __init__(self) -> None:
        alice, bob = Wallet(REGTEST_SEED), Wallet(b"fuzzed bob")
        builder = ChainBuilder([alice, bob], miner_script=b"\x51")
        self.txs: dict[bytes, Transaction] = {}
        tx = alice.build_transaction([Payment(50_000_000, bob.new_address())], fee=1000,
                                     height=1)
        builder.add(tx)
        for block in (builder.genesis, builder.mine()):
            for t in block.transactions:
                self.txs[t.txid] = t
        self.alice = DlcParty(alice, self.txs.get)
        self.bob = DlcParty(bob, self.txs.get)
        oracle = Oracle.from_seed(b"fuzz oracle")
        event = DigitDecompositionEvent(2, False, "x", 0, 4)
        function = PayoutFunction((PolynomialPiece((PayoutPoint(0, 0), PayoutPoint(15, TOTAL))),))
        info = ContractInfo(TOTAL, (ContractInfoItem(
            NumericDescriptor(4, function, RoundingIntervals((RoundingInterval(0, 1),))),
            OracleSet(1, (oracle.announce("e", event),), None)),), False)
        offer, self.alice_secrets = self.alice.offer(info, TOTAL // 2, fee_rate=1,
                                                     cet_locktime=2, refund_locktime=20,
                                                     height=2)
        _, accept, _ = self.bob.accept(offer, height=2)
        self.offer_json: dict[str, Any] = messages.offer_json(offer)
        self.accept_json: dict[str, Any] = messages.accept_json(accept)
        self.balances = (alice.balance(POLICY_ASSET), bob.balance(POLICY_ASSET))


@pytest.fixture(scope="module")
def parties() -> Iterator[Parties]:
    yield Parties()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzzed_elements_offers_give_only_dlc_errors(parties: Parties, data: st.DataObject) -> None:
    mutated = mutate(parties.offer_json, data)
    with contextlib.suppress(DlcError):
        parties.bob.accept(messages.parse_offer(mutated), height=2)
    assert parties.bob.wallet.balance(POLICY_ASSET) == parties.balances[1]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzzed_elements_accepts_give_only_dlc_errors(parties: Parties,
                                                      data: st.DataObject) -> None:
    mutated = mutate(parties.accept_json, data)
    offer = messages.parse_offer(parties.offer_json)
    secrets: PartySecrets = parties.alice_secrets
    with contextlib.suppress(DlcError):
        parties.alice.sign(offer, messages.parse_accept(mutated), secrets)
    assert parties.alice.wallet.balance(POLICY_ASSET) == parties.balances[0]
