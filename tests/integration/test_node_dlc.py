"""DLCs on a running node (docs/dlc.md): the node as a subprocess on 127.0.0.1 in a temporary data
directory, driven by python-bitcoinrpc's AuthServiceProxy only.

Two wallets (the default one, which owns the regtest key's coins, and "bob") fund a 2-of-3
numeric contract over 10 binary digits; the funding confirms; two oracles attest an outcome; the
CET is found, completed and broadcast by ``dlcexecute``; it confirms; both balances move by the
payout curve at that outcome (and ``listunspent`` shows the unblinded CET outputs). A second
contract takes the refund path after its locktime. Cheating closing transactions (a wrong
adaptor decryption, another outcome's CET, the refund before its locktime) are refused by the
node's validator with Elements' reject reason, in the mempool (sendrawtransaction -26) and in a
block (submitblock). The contracts survive a restart, and a reorganisation of a funding
transaction moves its contract back and forth. Fuzzed offers and accepts get typed error codes.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from bitcoinrpc.authproxy import JSONRPCException
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin.dlc import ecdsa_adaptor as ea
from ctplugin.dlc import elements_tx as etx
from ctplugin.dlc import messages
from ctplugin.dlc.messages import announcement_json, attestation_json
from ctplugin.dlc.oracle import DigitDecompositionEvent, Oracle, OracleAnnouncement
from ctplugin.elements import Transaction
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N
from regtest.builder import make_block
from regtest.params import REGTEST_SEED
from regtest.wallet import Wallet
from regtest.wallet.dlc import DlcParty, DlcRole, PartySecrets
from regtest.wallet.keys import P2WPKH, KeyChain
from rpc.process import NodeProcess
from tests.json_mutation import mutate

COIN = 100_000_000
TOTAL = 2 * COIN
EVAL_FALSE = ("mandatory-script-verify-flag-failed (Script evaluated without error but finished "
              "with a false/empty top stack element)")
CURVE = {"numDigits": 10, "payoutPoints": [[0, 0], [200, 0], [800, TOTAL], [1023, TOTAL]],
         "roundingMod": 1_000_000}


def offer_payout_at(outcome: int) -> int:
    raw = 0 if outcome <= 200 else TOTAL if outcome >= 800 else (outcome - 200) * TOTAL / 600
    return int((raw + 500_000) // 1_000_000 * 1_000_000)


class Scenario:
    def __init__(self, node: NodeProcess) -> None:
        self.node = node
        self.connect()
        self.oracles = [Oracle.from_seed(f"node oracle {i}".encode()) for i in range(3)]
        event = DigitDecompositionEvent(2, False, "usd/btc", 0, 10)
        self.announcements: list[OracleAnnouncement] = [
            o.announce("btcusd", event, 1_700_000_000) for o in self.oracles]
        self.miner = self.alice.getnewaddress()

    def connect(self) -> None:
        self.alice = self.node.proxy("/wallet/")
        self.bob = self.node.proxy("/wallet/bob")
        self.chain = self.node.proxy("/")

    def mine(self, n: int = 1) -> None:
        self.chain.generatetoaddress(n, self.miner)

    def balance(self, wallet: Any) -> Decimal:
        return Decimal(wallet.getbalances()["mine"]["trusted"]["bitcoin"])

    def contract(self, refund_in: int, **options: Any) -> dict[str, Any]:
        """Offer (alice), accept (bob), sign (alice), fund (bob); the funding confirmed."""
        tip = self.chain.getblockcount()
        offer = self.alice.dlcoffer(CURVE, [announcement_json(a) for a in self.announcements],
                                    2, 2, 1, tip + refund_in, {"fee_rate": 1, **options})
        accept = self.bob.dlcaccept(offer["offer"])
        sign = self.alice.dlcsign(accept["accept"])
        funded = self.bob.dlcfund(sign["sign"])
        assert funded["contractId"] == sign["contractId"] == accept["contractId"]
        assert funded["fundingTxid"] in self.chain.getrawmempool()
        for wallet in (self.alice, self.bob):
            assert wallet.getdlc(sign["contractId"])["state"] == "funding-broadcast"
        self.mine()
        return {"id": sign["contractId"], "offer": offer["offer"], "accept": accept["accept"],
                "sign": sign["sign"], "funding": funded["fundingTxid"]}

    def attest(self, value: int, oracles: tuple[int, ...]) -> list[dict[str, Any]]:
        return [attestation_json(self.oracles[i].attest(self.announcements[i], value))
                for i in oracles]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    datadir: Path = tmp_path_factory.mktemp("dlc-node") / "node"
    node = NodeProcess(datadir).start()
    try:
        node.proxy("/").createwallet("bob")
        state = Scenario(node)
        state.alice.sendtoaddress(state.bob.getnewaddress(), 5)
        state.alice.sendtoaddress(state.bob.getnewaddress(), 5)
        state.mine()
        yield state
    finally:
        node.stop()


def test_dlc_calls_are_documented(scenario: Scenario) -> None:
    overview = scenario.chain.help()
    assert "== Dlc ==" in overview
    for name in ("dlcoffer", "dlcaccept", "dlcsign", "dlcfund", "dlcexecute", "dlcrefund",
                 "dlccancel", "listdlcs", "getdlc"):
        assert name in overview
        assert scenario.chain.help(name).startswith(name)


def test_a_contract_executes_and_pays_the_curve(scenario: Scenario) -> None:
    s = scenario
    contract = s.contract(refund_in=100)
    for wallet in (s.alice, s.bob):
        status = wallet.getdlc(contract["id"])
        assert status["state"] == "funded" and status["funding"]["confirmations"] == 1
    before = s.balance(s.alice), s.balance(s.bob)
    for which, says in (((1,), "threshold: 1 attestation(s), the contract needs 2"),
                        ((1, 1), "duplicate-attestation: attestation 1: oracle ")):
        with pytest.raises(JSONRPCException) as refused:  # the threshold is two oracles
            s.alice.dlcexecute(contract["id"], s.attest(613, which))
        assert refused.value.error["code"] == -8
        assert refused.value.error["message"].startswith(says), refused.value.error
    executed = s.alice.dlcexecute(contract["id"], s.attest(613, (0, 2)))
    assert executed["outcome"] == list(format(613, "010b"))
    expected = offer_payout_at(613)
    assert Decimal(executed["payout"]) == Decimal(expected) / COIN
    assert executed["txid"] in s.chain.getrawmempool()
    assert s.bob.getdlc(contract["id"])["state"] == "closing"
    s.mine()
    after = s.balance(s.alice), s.balance(s.bob)
    assert after[0] - before[0] == Decimal(expected) / COIN
    assert after[1] - before[1] == Decimal(TOTAL - expected) / COIN
    # The payouts are blinded outputs each wallet unblinds (listunspent shows the openings).
    for wallet, amount in ((s.alice, expected), (s.bob, TOTAL - expected)):
        coins = [c for c in wallet.listunspent() if c["txid"] == executed["txid"]]
        assert [Decimal(c["amount"]) for c in coins] == [Decimal(amount) / COIN]
        assert coins[0]["amountblinder"] != "00" * 32
        status = wallet.getdlc(contract["id"])
        assert status["state"] == "closed" and status["closingType"] == "cet"
        assert status["closing"]["txid"] == executed["txid"]
    # Closed: the funding output is spent, so a second execution (with other attestations)
    # is refused by the node as Core refuses a spent input.
    with pytest.raises(JSONRPCException) as again:
        s.bob.dlcexecute(contract["id"], s.attest(100, (1, 2)))
    assert again.value.error["code"] == -25, again.value.error


def _own_party(s: Scenario, offer: dict[str, Any]) -> tuple[DlcParty, int, PartySecrets]:
    """The default wallet's seed is the documented regtest seed: the test can rebuild the
    contract and find alice's funding key to forge closing transactions."""
    party = DlcParty(Wallet(REGTEST_SEED), lambda txid: None)
    pubkey = bytes.fromhex(offer["fundingPubkey"])
    keys = KeyChain(REGTEST_SEED)
    index = next(i for i in range(500) if keys.key(i, P2WPKH).pubkey == pubkey)
    return party, keys.key(index, P2WPKH).secret, PartySecrets(DlcRole.OFFER, index, ())


def _refused_in_mempool_and_block(s: Scenario, bad: Transaction, reason: str,
                                  block_reason: str) -> None:
    """sendrawtransaction answers -26 with ``reason``; a block carrying ``bad`` is invalid
    (``block_reason``) and the tip stays."""
    tip = s.chain.getbestblockhash()
    with pytest.raises(JSONRPCException) as refused:
        s.chain.sendrawtransaction(bad.hex())
    assert refused.value.error["code"] == -26
    assert refused.value.error["message"].startswith(reason), refused.value.error
    header = s.chain.getblockheader(tip)
    block = make_block(bytes.fromhex(tip)[::-1], header["height"] + 1, header["time"] + 1,
                       [bad], bytes.fromhex(s.alice.getaddressinfo(s.miner)["scriptPubKey"]))
    assert s.chain.submitblock(block.serialize().hex()) == block_reason
    assert s.chain.getbestblockhash() == tip


def test_refund_path_and_cheating_closing_transactions(scenario: Scenario) -> None:
    s = scenario
    contract = s.contract(refund_in=4)
    with pytest.raises(JSONRPCException) as early:
        s.bob.dlcrefund(contract["id"])
    assert early.value.error["code"] == -26 and "non-final" in early.value.error["message"]
    # Forged CETs, signed by alice's key: the node's validator refuses them.
    party, secret, alice_secrets = _own_party(s, contract["offer"])
    offer = messages.parse_offer(contract["offer"])
    accept = messages.parse_accept(contract["accept"])
    view = party.contract(offer, accept)
    # The refund, fully signed (bob's signature is in his accept), before its locktime.
    early_refund = party.refund(view, alice_secrets, accept.refund_signature)
    _refused_in_mempool_and_block(s, early_refund, "non-final", "bad-txns-nonfinal")
    attestations = {i: s.oracles[i].attest(s.announcements[i], 377) for i in (0, 1)}
    index = view.find_adaptor_index(attestations)
    y = view.decryption_key(index, attestations)
    blinding = party._contract_blinding(view)

    def closing(cet: int, theirs: bytes) -> Transaction:
        mine = ct.ecdsa_sign(secret, view.sighashes[cet])
        witness = etx.multisig_witness(view.funding.script,
                                       {ct.base_mul(secret).to_bytes(): mine,
                                        accept.funding_pubkey: theirs})
        return etx.with_witness(blinding.prove(view.closings[cet], view.payouts[cet]), 0,
                                witness)

    sigs = accept.cet_adaptor_signatures
    cet = view.entries[index].cet_index
    wrong = closing(cet, ea.der_encode(ea.decrypt(ea.AdaptorSignature.from_bytes(sigs[index]),
                                                  (y + 1) % N)))
    other = next(n for n, e in enumerate(view.entries)
                 if e.cet_index != cet and {o for o, _ in e.paths} == {0, 1})
    another = closing(view.entries[other].cet_index, ea.der_encode(ea.decrypt(
        ea.AdaptorSignature.from_bytes(sigs[other]), y)))
    for bad in (wrong, another):
        _refused_in_mempool_and_block(s, bad, EVAL_FALSE, EVAL_FALSE)
    # The refund after its locktime.
    before = s.balance(s.alice), s.balance(s.bob)
    s.mine(3)
    refund = s.bob.dlcrefund(contract["id"])
    s.mine()
    after = s.balance(s.alice), s.balance(s.bob)
    assert [a - b for a, b in zip(after, before)] == [Decimal(1), Decimal(1)]
    for wallet in (s.alice, s.bob):
        status = wallet.getdlc(contract["id"])
        assert status["state"] == "refunded" and status["closing"]["txid"] == refund["txid"]


def test_contracts_survive_a_restart_and_a_reorg_of_the_funding(scenario: Scenario) -> None:
    s = scenario
    contract = s.contract(refund_in=100, confidential_funding=False)
    states = {"alice": [(c["temporaryContractId"], c["state"]) for c in s.alice.listdlcs()],
              "bob": [(c["temporaryContractId"], c["state"]) for c in s.bob.listdlcs()]}
    # listdlcs orders by creation time (seconds), then temporary id: contracts made within
    # one second come in id order, so only the set of states is fixed here
    assert sorted(st for _, st in states["alice"]) == ["closed", "funded", "refunded"]
    s.node.stop()
    s.node.start()
    s.connect()
    s.chain.loadwallet("bob")
    assert [(c["temporaryContractId"], c["state"]) for c in s.alice.listdlcs()] == \
        states["alice"]
    assert [(c["temporaryContractId"], c["state"]) for c in s.bob.listdlcs()] == states["bob"]
    # The funding block leaves the chain: its transaction returns to the mempool.
    funding_block = s.chain.getblockhash(s.chain.getblockcount())
    s.chain.invalidateblock(funding_block)
    assert contract["funding"] in s.chain.getrawmempool()
    for wallet in (s.alice, s.bob):
        assert wallet.getdlc(contract["id"])["state"] == "funding-broadcast"
    s.chain.reconsiderblock(funding_block)
    for wallet in (s.alice, s.bob):
        status = wallet.getdlc(contract["id"])
        assert status["state"] == "funded" and status["funding"]["confirmations"] == 1
    # The contract still executes after all that (rebuilt from the wallet's database).
    before = s.balance(s.alice), s.balance(s.bob)
    executed = s.bob.dlcexecute(contract["id"], s.attest(900, (1, 2)))
    assert executed["outcome"] == list(format(900, "010b"))
    assert Decimal(executed["payout"]) == 0  # past 800 the offerer takes everything
    s.mine()
    after = s.balance(s.alice), s.balance(s.bob)
    assert after[0] - before[0] == Decimal(TOTAL) / COIN
    assert after[1] - before[1] == 0
    # Bob's wallet watched the funding output: the CET is its transaction, paying it nothing.
    assert s.bob.gettransaction(executed["txid"])["amount"] == {"bitcoin": 0}
    assert executed["txid"] not in {t["txid"] for t in s.bob.listtransactions("*", 100)}
    for wallet in (s.alice, s.bob):
        status = wallet.getdlc(contract["id"])
        assert status["state"] == "closed" and status["closing"]["txid"] == executed["txid"]


def test_pending_contracts_lock_their_coins_until_cancelled(scenario: Scenario) -> None:
    """An offer's coins are locked (other spends leave them alone, across a restart) until it
    is withdrawn; its terms are checked before any coin is chosen."""
    s = scenario
    s.chain.createwallet("dave")
    dave = s.node.proxy("/wallet/dave")
    s.alice.sendtoaddress(dave.getnewaddress(), 3)
    s.mine()
    announcements = [announcement_json(a) for a in s.announcements]
    tip = s.chain.getblockcount()
    offer = dave.dlcoffer(CURVE, announcements, 2, 2, 1, tip + 50)
    assert dave.getdlc(offer["temporaryContractId"])["state"] == "offered"
    s.node.stop()
    s.node.start()
    s.connect()
    for name in ("bob", "dave"):
        s.chain.loadwallet(name)
    dave = s.node.proxy("/wallet/dave")
    with pytest.raises(JSONRPCException) as locked:
        dave.sendtoaddress(s.alice.getnewaddress(), 0.5)
    assert locked.value.error["code"] == -6
    with pytest.raises(JSONRPCException) as early:  # the terms first, whatever the coins
        dave.dlcoffer(CURVE, announcements, 2, 2, 1, 0)
    assert early.value.error["code"] == -8
    assert early.value.error["message"].startswith("bad-locktime"), early.value.error
    assert dave.dlccancel(offer["temporaryContractId"])["state"] == "cancelled"
    assert dave.getdlc(offer["temporaryContractId"])["state"] == "cancelled"
    with pytest.raises(JSONRPCException) as again:
        dave.dlccancel(offer["temporaryContractId"])
    assert again.value.error["code"] == -8
    assert dave.sendtoaddress(s.alice.getnewaddress(), 0.5) in s.chain.getrawmempool()
    s.mine()
    # Spent anyway (a raw transaction names the locked coin): the offer can no longer be
    # funded, and says so; it can still be withdrawn.
    second = dave.dlcoffer(CURVE, announcements, 2, 2, 1, tip + 50)
    funding_input = second["offer"]["fundingInputs"][0]
    coin = {"txid": s.chain.decoderawtransaction(funding_input["prevTx"])["txid"],
            "vout": funding_input["prevTxVout"]}
    amount = next(c["amount"] for c in dave.listunspent() if c["txid"] == coin["txid"]
                  and c["vout"] == coin["vout"])
    raw = s.chain.createrawtransaction([coin], [{dave.getnewaddress(): amount - Decimal("0.001")},
                                                {"fee": Decimal("0.001")}])
    signed_raw = dave.signrawtransactionwithwallet(dave.blindrawtransaction(raw))
    s.chain.sendrawtransaction(signed_raw["hex"])
    assert dave.getdlc(second["temporaryContractId"])["state"] == "funding-conflicted"
    assert dave.dlccancel(second["temporaryContractId"])["state"] == "cancelled"
    # A signed contract withdrawn by the offerer stays fundable by the accepter until one of
    # its coins is spent; then the chain tells what it is.
    tip = s.chain.getblockcount()
    offered = s.alice.dlcoffer(CURVE, announcements, 2, 2, 1, tip + 50)
    signed = s.alice.dlcsign(s.bob.dlcaccept(offered["offer"])["accept"])
    assert s.alice.dlccancel(signed["contractId"])["state"] == "cancelled"
    s.bob.dlcfund(signed["sign"])
    s.mine()
    assert s.alice.getdlc(signed["contractId"])["state"] == "funded"
    with pytest.raises(JSONRPCException) as funded:  # once funded, nothing to withdraw
        s.bob.dlccancel(signed["contractId"])
    assert funded.value.error["code"] == -8


def test_bad_calls_are_typed_errors(scenario: Scenario) -> None:
    s = scenario
    cases = [
        (lambda: s.alice.dlcoffer({}, [], 1, 2, 1, 10), -8),
        (lambda: s.bob.dlcaccept({"protocolVersion": 1}), -8),
        (lambda: s.alice.dlcsign({"message": {}}), -8),
        (lambda: s.alice.dlcexecute("00" * 32, []), -5),
        (lambda: s.alice.getdlc("zz"), -8),
        (lambda: s.alice.dlcoffer(CURVE, [announcement_json(a) for a in s.announcements],
                                  2, 2, 1, s.chain.getblockcount() + 10, {"nope": 1}), -8),
        (lambda: s.alice.dlcoffer(CURVE, [announcement_json(a) for a in s.announcements],
                                  2, 2, 1, s.chain.getblockcount() + 10,
                                  {"oracle_params": {"maxErrorExp": "4"}}), -8),
        (lambda: s.alice.dlcoffer(CURVE, [announcement_json(a) for a in s.announcements],
                                  4, 2, 1, s.chain.getblockcount() + 10), -8),
        (lambda: s.bob.dlcoffer(CURVE, [announcement_json(a) for a in s.announcements],
                                2, 2000, 1000, s.chain.getblockcount() + 10), -6),
    ]
    for call, code in cases:
        with pytest.raises(JSONRPCException) as info:
            call()
        assert info.value.error["code"] == code, info.value.error


TYPED = {-3, -5, -6, -8, -32700, -32602}
"""What hostile messages may get: bad type or parameter, unknown contract, funds, unparseable
JSON (a NaN) — never -1, the code of an unexpected exception."""


@pytest.fixture(scope="module")
def small_contract(scenario: Scenario) -> dict[str, Any]:
    """A one-oracle, 4-digit contract offered by alice and accepted by bob (not signed); carol
    (who has not seen it) gets the mutated offers."""
    oracle = Oracle.from_seed(b"node fuzz oracle")
    announcement = oracle.announce("fuzz", DigitDecompositionEvent(2, False, "x", 0, 4))
    curve = {"numDigits": 4, "payoutPoints": [[0, 0], [15, 20_000_000]]}
    # carol is funded first: the offer then locks the coins it commits, whichever coin
    # selection left where
    scenario.chain.createwallet("carol")
    carol = scenario.node.proxy("/wallet/carol")
    scenario.alice.sendmany("", {carol.getnewaddress(): 0.5 for _ in range(8)})
    scenario.mine()
    offer = scenario.alice.dlcoffer(curve, [announcement_json(announcement)], 1, 0.2, 0.1,
                                    scenario.chain.getblockcount() + 50)["offer"]
    return {"offer": offer, "accept": scenario.bob.dlcaccept(offer)["accept"], "carol": carol}


def _typed(call: Any) -> None:
    try:
        call()
    except JSONRPCException as exc:
        assert exc.error["code"] in TYPED, exc.error


@settings(max_examples=25, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzzed_offers_and_accepts_through_the_node_give_typed_errors(
        scenario: Scenario, small_contract: dict[str, Any], data: st.DataObject) -> None:
    s, carol = scenario, small_contract["carol"]
    before = s.balance(s.alice), s.balance(carol)
    offer = mutate(small_contract["offer"], data)
    offer["temporaryContractId"] = data.draw(st.binary(min_size=32, max_size=32)).hex()
    _typed(lambda: carol.dlcaccept(offer))
    # The version is not part of the contract (a changed one is signed): leave it alone.
    accept = dict(small_contract["accept"])
    version = accept.pop("protocolVersion")
    _typed(lambda: s.alice.dlcsign({**mutate(accept, data), "protocolVersion": version}))
    assert (s.balance(s.alice), s.balance(carol)) == before  # nothing broadcast
