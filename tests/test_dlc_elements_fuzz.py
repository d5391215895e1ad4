"""Hostile offer and accept messages for our chain (rust-dlc JSON with the ``elements`` part):
a field replaced by junk or a byte flipped inside any hex field gives a ``DlcError`` from the
party that receives it — never another exception — and nothing of the wallet is spent."""

from __future__ import annotations

import contextlib
import copy
import json
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
from regtest.chain import ChainBuilder
from regtest.params import POLICY_ASSET, REGTEST_SEED
from regtest.wallet import Payment, Wallet
from regtest.wallet.dlc import DlcParty, PartySecrets

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


def _leaves(obj: object, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(obj, dict):
        return [leaf for k, v in obj.items() for leaf in _leaves(v, (*path, k))]
    if isinstance(obj, list):
        return [leaf for i, v in enumerate(obj) for leaf in _leaves(v, (*path, i))] or [path]
    return [path]


junk = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                 st.floats(allow_nan=True), st.text(max_size=8),
                 st.sampled_from(["00" * 32, "02" + "11" * 32, "ff" * 33, "zz", "", "00" * 33]),
                 st.just({}), st.just([]))


def _mutate(message: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    out = copy.deepcopy(message)
    leaves = [p for p in _leaves(out) if "cetAdaptorSignatures" not in p or data.draw(
        st.integers(0, 20)) == 0]
    for _ in range(data.draw(st.integers(1, 2))):
        path = data.draw(st.sampled_from(leaves))
        node = out
        for key in path[:-1]:
            node = node[key]
        value = node[path[-1]]
        if isinstance(value, str) and value and data.draw(st.booleans()):
            try:
                raw = bytearray.fromhex(value)
            except ValueError:
                raw = bytearray()
            if raw:  # flip one byte of a hex field
                at = data.draw(st.integers(0, len(raw) - 1))
                raw[at] ^= data.draw(st.integers(1, 255))
                node[path[-1]] = raw.hex()
                continue
        node[path[-1]] = data.draw(junk)
    return json.loads(json.dumps(out))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzzed_elements_offers_give_only_dlc_errors(parties: Parties, data: st.DataObject) -> None:
    mutated = _mutate(parties.offer_json, data)
    with contextlib.suppress(DlcError):
        parties.bob.accept(messages.parse_offer(mutated), height=2)
    assert parties.bob.wallet.balance(POLICY_ASSET) == parties.balances[1]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzzed_elements_accepts_give_only_dlc_errors(parties: Parties,
                                                      data: st.DataObject) -> None:
    mutated = _mutate(parties.accept_json, data)
    offer = messages.parse_offer(parties.offer_json)
    secrets: PartySecrets = parties.alice_secrets
    with contextlib.suppress(DlcError):
        parties.alice.sign(offer, messages.parse_accept(mutated), secrets)
    assert parties.alice.wallet.balance(POLICY_ASSET) == parties.balances[0]
