"""The node's raw-transaction, mempool, mining and asset calls, end to end on a node subprocess:
the Elements raw flow (create → fund → blind → send), mempool acceptance verdicts, issuance,
blinding keys, block templates and the long-poll calls."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from bitcoinrpc.authproxy import JSONRPCException

from ctplugin.elements import parse_block, parse_transaction
from rpc.process import NodeProcess


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    process = NodeProcess(tmp_path_factory.mktemp("raw") / "node")
    process.start()
    try:
        proxy = process.proxy()
        proxy.createwallet("carol")
        yield process
    finally:
        process.stop()


def w(node: NodeProcess, name: str) -> Any:
    return node.proxy(f"/wallet/{name}")


def code_of(fn: Any, *args: Any) -> int:
    with pytest.raises(JSONRPCException) as info:
        fn(*args)
    return int(info.value.code)


def test_raw_flow_create_fund_blind_send(node: NodeProcess) -> None:
    alice, carol, chain = w(node, ""), w(node, "carol"), node.proxy()
    address = carol.getnewaddress()
    raw = chain.createrawtransaction([], [{address: Decimal("2")}])
    decoded = chain.decoderawtransaction(raw)
    info = carol.getaddressinfo(address)
    assert decoded["vout"][0]["commitmentnonce"] == info["confidential_key"]  # key smuggled
    funded = alice.fundrawtransaction(raw)
    assert funded["fee"] > 0 and funded["changepos"] >= 0
    with pytest.raises(JSONRPCException) as error:
        chain.sendrawtransaction(funded["hex"])  # nonce but not blinded: Elements' CT guard
    assert error.value.code == -25
    blinded_unsigned = alice.blindrawtransaction(funded["hex"])
    [unsigned] = chain.testmempoolaccept([blinded_unsigned])
    assert unsigned["allowed"] is False  # nobody signed the spend yet
    signed = alice.signrawtransactionwithwallet(blinded_unsigned)
    assert signed["complete"] is True
    blinded = signed["hex"]
    tx = parse_transaction(bytes.fromhex(blinded))
    assert sum(not isinstance(o.value, int) for o in tx.outputs) == 2
    [verdict] = chain.testmempoolaccept([blinded])
    assert verdict["allowed"] is True and verdict["txid"] == tx.txid_hex
    assert chain.getrawmempool() == []
    txid = chain.sendrawtransaction(blinded)
    assert txid == tx.txid_hex and chain.getmempoolentry(txid)["vsize"] == tx.vsize
    # QA: the BIP125 signal is reported as it is (inputs added by funding are final here).
    assert {i.sequence for i in tx.inputs} == {0xFFFFFFFF}
    assert chain.getmempoolentry(txid)["bip125-replaceable"] is False
    assert alice.gettransaction(txid)["bip125-replaceable"] == "no"
    assert carol.getbalances()["mine"]["untrusted_pending"]["bitcoin"] == Decimal("2")
    chain.generatetoaddress(1, alice.getnewaddress())
    assert carol.getbalance()["bitcoin"] == Decimal("2")
    # QA: the sender's history of a raw-built transaction reads as after sendtoaddress: the
    # payment with its amount, asset and blinders (kept by blindrawtransaction), no change.
    assert alice.gettransaction(txid)["bip125-replaceable"] == "no"  # confirmed
    details = alice.gettransaction(txid)["details"]
    assert [(d["category"], d["amount"], d["vout"]) for d in details] == [
        ("send", Decimal("-2"), 0)]
    assert details[0]["asset"] == chain.dumpassetlabels()["bitcoin"]
    assert int(details[0]["amountblinder"], 16) and int(details[0]["assetblinder"], 16)
    # The same transaction again: its outputs are in the UTXO set.
    assert code_of(chain.sendrawtransaction, blinded) == -27
    [again] = chain.testmempoolaccept([blinded])
    assert again["allowed"] is False and again["reject-reason"] == "txn-already-known"


def test_rejects_carry_elements_reasons(node: NodeProcess) -> None:
    alice, chain = w(node, ""), node.proxy()
    raw = chain.createrawtransaction([], [{alice.getnewaddress("", "bech32"): Decimal("1")}])
    funded = alice.blindrawtransaction(alice.fundrawtransaction(raw)["hex"])
    tx = parse_transaction(bytes.fromhex(funded))
    fee_out = next(o for o in tx.outputs if o.is_fee)
    data = bytearray(tx.serialize())
    at = bytes(data).index(b"\x01" + fee_out.value.to_bytes(8, "big"))
    data[at + 1: at + 9] = (fee_out.value - 1).to_bytes(8, "big")  # outputs no longer = inputs
    data = bytearray(bytes.fromhex(alice.signrawtransactionwithwallet(data.hex())["hex"]))
    [verdict] = chain.testmempoolaccept([data.hex()])
    assert verdict["allowed"] is False and verdict["reject-reason"] == "bad-txns-in-ne-out"
    assert code_of(chain.sendrawtransaction, data.hex()) == -26
    missing = bytearray(data)
    first_input = 4 + 1 + 1  # version, flag, input count: the first prevout hash follows
    missing[first_input: first_input + 32] = b"\x42" * 32
    unknown = alice.signrawtransactionwithwallet(missing.hex())
    assert unknown["complete"] is False
    assert unknown["errors"][0]["vout"] == tx.inputs[0].prevout_index
    [verdict] = chain.testmempoolaccept([missing.hex()])
    assert verdict["reject-reason"] == "bad-txns-inputs-missingorspent"
    assert code_of(chain.sendrawtransaction, missing.hex()) == -25
    assert code_of(chain.testmempoolaccept, []) == -8
    assert code_of(chain.testmempoolaccept, ["00"]) == -22


def test_amount_checks_are_reported_as_elementsd_folds_them(node: NodeProcess) -> None:
    """A missing surjection proof fails VerifyAmounts: elementsd says ``bad-txns-in-ne-out``;
    our details still name the check."""
    alice, chain = w(node, ""), node.proxy()
    raw = chain.createrawtransaction([], [{alice.getnewaddress(): Decimal("1")}])
    tx = parse_transaction(bytes.fromhex(
        alice.blindrawtransaction(alice.fundrawtransaction(raw)["hex"])))
    assert tx.outputs[0].surjection_proof
    bare = replace(tx, outputs=(replace(tx.outputs[0], surjection_proof=b""), *tx.outputs[1:]))
    signed = alice.signrawtransactionwithwallet(bare.serialize().hex())["hex"]
    [verdict] = chain.testmempoolaccept([signed])
    assert verdict["reject-reason"] == "bad-txns-in-ne-out"
    assert verdict["reject-details"].startswith("bad-txns-surjectionproof-missing (output 0)")
    with pytest.raises(JSONRPCException) as info:
        chain.sendrawtransaction(signed)
    assert info.value.code == -26
    assert info.value.message.startswith("bad-txns-in-ne-out, value in != value out")


def test_a_lone_output_to_blind_stays_explicit(node: NodeProcess) -> None:
    """Nothing blinded in and one output to blind: its blind would follow from the explicit
    rest, so fundrawtransaction and a send leave the change explicit (fillBlindDetails) and
    blindrawtransaction returns a transaction whose only blindable value is an issuance
    unblinded (ignoreblindfail)."""
    alice, chain = w(node, ""), node.proxy()
    chain.createwallet("erin")
    erin = w(node, "erin")
    plain = erin.validateaddress(erin.getnewaddress())["unconfidential"]
    alice.sendtoaddress(plain, Decimal("10"))
    chain.generatetoaddress(1, alice.getnewaddress())
    raw = chain.createrawtransaction([], [{plain: Decimal("1")}])
    funded = parse_transaction(bytes.fromhex(erin.fundrawtransaction(raw)["hex"]))
    assert len(funded.outputs) == 3 and all(o.nonce == b"" for o in funded.outputs)
    issued = erin.rawissueasset(funded.serialize().hex(), [
        {"asset_amount": 1, "asset_address": plain, "blind": False}])[0]["hex"]
    again = parse_transaction(bytes.fromhex(erin.blindrawtransaction(issued)))
    assert all(isinstance(o.value, int) for o in again.outputs)
    assert again.inputs[0].issuance is not None
    assert again.inputs[0].issuance.amount == 100_000_000
    # a send alike: from the explicit coin to an unconfidential address, the change is the one
    # output to blind, so it stays explicit too
    txid = erin.sendtoaddress(alice.validateaddress(alice.getnewaddress())["unconfidential"],
                              Decimal("2"))
    sent = parse_transaction(bytes.fromhex(chain.getrawtransaction(txid)))
    assert len(sent.outputs) == 3 and all(isinstance(o.value, int) for o in sent.outputs)
    chain.unloadwallet("erin")


def test_issue_reissue_and_list(node: NodeProcess) -> None:
    alice, chain = w(node, ""), node.proxy()
    issued = alice.issueasset(Decimal("1000"), Decimal("5"))
    assert set(issued) == {"txid", "vin", "entropy", "asset", "token"}
    chain.generatetoaddress(1, alice.getnewaddress())
    balance = alice.getbalance()
    assert issued["asset"] in balance, (issued, balance, alice.gettransaction(issued["txid"]))
    assert balance[issued["asset"]] == Decimal("1000") and balance[issued["token"]] == Decimal("5")
    reissued = alice.reissueasset(issued["asset"], Decimal("250"))
    chain.generatetoaddress(1, alice.getnewaddress())
    assert alice.getbalance("*", 0, False, False, issued["asset"]) == Decimal("1250")
    # AmountMapToUniv keeps every asset the transaction moves: the token went out and came
    # back, so its net is 0 and still listed (a reissuance's history shows it)
    assert alice.gettransaction(reissued["txid"])["amount"] == {
        "bitcoin": 0, issued["token"]: 0, issued["asset"]: Decimal("250")}
    listed = alice.listissuances(issued["asset"])
    assert [(e["txid"], e["isreissuance"]) for e in listed] == [
        (issued["txid"], False), (reissued["txid"], True)]
    assert listed[0]["assetamount"] == Decimal("1000") and listed[1]["assetamount"] == 250
    carol = w(node, "carol")
    txid = alice.sendtoaddress(carol.getnewaddress(), Decimal("10"), "", "", False, None, None,
                               "unset", True, issued["asset"])
    chain.generatetoaddress(1, alice.getnewaddress())
    assert carol.getbalance()[issued["asset"]] == Decimal("10")
    assert carol.gettransaction(txid)["amount"][issued["asset"]] == Decimal("10")
    assert code_of(alice.reissueasset, issued["token"], 1) == -4
    assert code_of(alice.reissueasset, "ab" * 32, 1) == -4
    assert code_of(alice.issueasset, 0, 0) == -3
    policy_coins = alice.listunspent(0, 9999999, [], True, {"asset": "bitcoin"})
    assert chain.dumpassetlabels() == {"bitcoin": policy_coins[0]["asset"]}


def test_blinding_keys(node: NodeProcess) -> None:
    alice, carol, chain = w(node, ""), w(node, "carol"), node.proxy()
    address = carol.getnewaddress()
    key = carol.dumpblindingkey(address)
    assert len(bytes.fromhex(key)) == 32
    assert code_of(alice.dumpblindingkey, address) == -4  # not alice's
    txid = alice.sendtoaddress(address, Decimal("0.5"))
    raw = chain.getrawtransaction(txid)
    opened = alice.unblindrawtransaction(raw)["hex"]
    assert sum(isinstance(o.value, int) and o.script_pubkey != b""
               for o in parse_transaction(bytes.fromhex(opened)).outputs) == 1  # alice's change
    alice.importblindingkey(address, key)  # now alice can open carol's output too
    opened = parse_transaction(bytes.fromhex(alice.unblindrawtransaction(raw)["hex"]))
    assert sorted(o.value for o in opened.outputs if o.script_pubkey
                  and isinstance(o.value, int))[0] == 50_000_000
    unconfidential = carol.getaddressinfo(address)["unconfidential"]
    assert code_of(alice.importblindingkey, unconfidential, key) == -5
    assert code_of(alice.importblindingkey, address, "11" * 32) == -5
    assert len(carol.dumpmasterblindingkey()) == 64
    blinded = chain.createblindedaddress(unconfidential, carol.getaddressinfo(address)[
        "confidential_key"])
    assert blinded == address
    chain.generatetoaddress(1, alice.getnewaddress())


def test_an_auditor_sees_watched_coins_once_it_has_their_blinding_key(node: NodeProcess
                                                                        ) -> None:
    """importaddress watches carol's address without keys; its amounts stay hidden until
    importblindingkey (elementsd's MarkDirty reopens the outputs already held): then
    listunspent lists the coin (not spendable) and gettransaction counts it when watch-only
    is included (by default only in a wallet without private keys)."""
    alice, carol, chain = w(node, ""), w(node, "carol"), node.proxy()
    chain.createwallet("auditor", False, False, "", False, False)  # legacy: importaddress
    auditor = w(node, "auditor")
    address = carol.getnewaddress("", "blech32")
    txid = alice.sendtoaddress(address, Decimal("0.25"))
    chain.generatetoaddress(1, alice.getnewaddress())
    auditor.importaddress(address)
    assert auditor.listunspent() == []
    auditor.importblindingkey(address, carol.dumpblindingkey(address))
    [coin] = auditor.listunspent()
    assert (coin["txid"], coin["amount"], coin["spendable"]) == (txid, Decimal("0.25"), False)
    assert auditor.gettransaction(txid, True)["amount"]["bitcoin"] == Decimal("0.25")
    assert auditor.gettransaction(txid)["amount"]["bitcoin"] == 0
    [row] = auditor.listreceivedbyaddress(1, False, True)
    assert row["amount"] == {"bitcoin": Decimal("0.25")}
    assert auditor.listreceivedbyaddress(1, False, False) == []
    assert auditor.getbalance()["bitcoin"] == 0  # watched coins are not the wallet's balance
    chain.unloadwallet("auditor")


def test_block_templates_and_submission(node: NodeProcess) -> None:
    alice, chain = w(node, ""), node.proxy()
    txid = alice.sendtoaddress(w(node, "carol").getnewaddress(), Decimal("0.1"))
    hex_block = chain.getnewblockhex()
    block = parse_block(bytes.fromhex(hex_block))
    assert [tx.txid_hex for tx in block.transactions[1:]] == [txid]
    assert block.transactions[0].outputs[0].script_pubkey == b"\x51"  # fees to OP_TRUE
    assert chain.submitblock(hex_block) is None
    assert chain.getbestblockhash() == block.header.hash_hex
    assert chain.submitblock(hex_block) == "duplicate"
    txid2 = alice.sendtoaddress(w(node, "carol").getnewaddress(), Decimal("0.1"))
    made = chain.generateblock(alice.getnewaddress(), [txid2])
    assert chain.getblock(made["hash"])["tx"][1] == txid2
    unsubmitted = chain.generateblock(alice.getnewaddress(), [], False)
    assert "hex" in unsubmitted and chain.getbestblockhash() == made["hash"]
    assert code_of(chain.generateblock, alice.getnewaddress(), ["00" * 32]) == -5
    assert code_of(chain.generatetoaddress, 1, "nonsense") == -5
    full = chain.getblock(made["hash"], 3)
    spend = full["tx"][1]
    assert spend["hex"] and all("prevout" in vin for vin in spend["vin"])
    assert spend["fee"]  # Elements' per-asset fee map
    stats = chain.gettxoutsetinfo()
    assert stats["height"] == chain.getblockcount() and len(stats["hash_serialized_3"]) == 64
    assert stats["total_amount"] > 0  # Elements' sum of the explicit values


def test_waits_and_long_polls(node: NodeProcess) -> None:
    chain = node.proxy()
    height = chain.getblockcount()
    started = time.monotonic()
    assert chain.waitfornewblock(200)["height"] == height  # timeout: the current tip
    assert time.monotonic() - started >= 0.19
    result: dict[str, Any] = {}

    def wait() -> None:
        result.update(node.proxy().waitforblockheight(height + 1, 30_000))

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.3)
    assert chain.getblockcount() == height  # other calls still answer while it waits
    [new_hash] = chain.generatetoaddress(1, w(node, "").getnewaddress())
    waiter.join(30)
    assert result == {"hash": new_hash, "height": height + 1}
    assert code_of(chain.waitfornewblock, -1) == -1
    info = chain.getrpcinfo()
    assert info["active_commands"][0]["method"] == "getrpcinfo"
    assert info["logpath"] == str(Path(node.netdir) / "debug.log")
    assert chain.uptime() >= 0
    assert chain.getnetworkinfo()["subversion"].startswith("/ctplugin:")


def test_sendmany_history_and_wallet_lifecycle(node: NodeProcess) -> None:
    alice, chain = w(node, ""), node.proxy()
    chain.createwallet("dave", False, False, "", False, True, False)  # not loaded on start-up
    dave = w(node, "dave")
    first, second = dave.getnewaddress("one"), dave.getnewaddress("", "bech32")
    txid = alice.sendmany("", {first: Decimal("0.3"), second: Decimal("0.2")})
    decoded = chain.getrawtransaction(txid, 1)
    explicit = [o for o in decoded["vout"] if "value" in o and o["scriptPubKey"]["hex"]]
    assert [o["value"] for o in explicit] == [Decimal("0.2")]  # the unconfidential payment
    assert explicit[0]["scriptPubKey"]["address"] == second
    chain.generatetoaddress(1, alice.getnewaddress())
    history = dave.listtransactions()
    assert sorted((t["category"], t["amount"]) for t in history) == [
        ("receive", Decimal("0.2")), ("receive", Decimal("0.3"))]
    assert {t.get("label") for t in history} == {"one", ""}
    sent = [t for t in alice.listtransactions("*", 1000) if t["txid"] == txid]
    assert sorted(t["amount"] for t in sent) == [Decimal("-0.3"), Decimal("-0.2")]
    assert all(t["category"] == "send" and t["fee"] < 0 for t in sent)
    assert sorted(chain.listwallets()) == ["", "carol", "dave"]
    assert chain.unloadwallet("dave") == {}
    assert code_of(dave.getbalance) == -18
    assert {"name": "dave"} in chain.listwalletdir()["wallets"]
    assert code_of(chain.loadwallet, "nosuch") == -18
    chain.loadwallet("dave")
    assert dave.getbalance()["bitcoin"] == Decimal("0.5")
    assert code_of(chain.loadwallet, "dave") == -35
    assert code_of(chain.createwallet, "dave") == -4
    for call in (chain.createwallet, chain.loadwallet):  # QA: a typed answer, no OSError text
        with pytest.raises(JSONRPCException) as info:
            call("w" * 5000)
        assert info.value.code == -4 and "too long" in info.value.message
        assert str(node.datadir) not in info.value.message


def test_fee_and_burn_limits(node: NodeProcess) -> None:
    """QA: a fee-rate typo must not burn the wallet. The wallet refuses a fee above -maxtxfee
    (0.10 BTC) before anything is kept; sendrawtransaction and testmempoolaccept apply
    maxfeerate (0.10 BTC/kvB by default, 0 = none, >= 1 refused), sendrawtransaction
    maxburnamount (0 by default) to explicit value sent to OP_RETURN."""
    alice, carol, chain = w(node, ""), w(node, "carol"), node.proxy()
    address = carol.getnewaddress()
    before = alice.getbalances()
    coins = len(alice.listunspent())
    pool = chain.getrawmempool()
    with pytest.raises(JSONRPCException) as info:  # fee_rate 100000 sat/vB: ~0.25 BTC
        alice.sendtoaddress(address, Decimal("0.1"), "", "", False, None, None, None, None,
                            None, None, 100_000)
    assert (info.value.code, info.value.message) == (
        -6, "Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)")
    assert alice.getbalances() == before and len(alice.listunspent()) == coins
    assert chain.getrawmempool() == pool
    # A raw transaction paying ~0.25 BTC of fee: over 0.10 BTC/kvB.
    raw = chain.createrawtransaction([], [{address: Decimal("0.1")}])
    funded = alice.fundrawtransaction(raw, {"fee_rate": 100_000})
    signed = alice.signrawtransactionwithwallet(alice.blindrawtransaction(funded["hex"]))["hex"]
    [verdict] = chain.testmempoolaccept([signed])
    assert verdict["allowed"] is False and verdict["reject-reason"] == "max-fee-exceeded"
    assert chain.testmempoolaccept([signed], 0)[0]["allowed"] is True
    assert code_of(chain.testmempoolaccept, [signed], 1) == -8
    with pytest.raises(JSONRPCException) as info:
        chain.sendrawtransaction(signed)
    assert (info.value.code, info.value.message) == (
        -25, "Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)")
    assert code_of(chain.sendrawtransaction, signed, Decimal("1.5")) == -8
    assert chain.getrawmempool() == pool
    txid = chain.sendrawtransaction(signed, 0)  # no limit: the user meant it
    assert txid in chain.getrawmempool()
    # Explicit value to OP_RETURN.
    policy = chain.dumpassetlabels()["bitcoin"]  # a coin of another asset would need an
    coin = max((u for u in alice.listunspent(0)  # output of its own (Elements' FundTransaction)
                if u["asset"] == policy), key=lambda u: u["amount"])
    assert coin["amount"] > Decimal("0.5")
    raw = chain.createrawtransaction([{"txid": coin["txid"], "vout": coin["vout"]}],
                                     [{"burn": Decimal("0.5")}])  # replaceable: it signals
    funded = alice.fundrawtransaction(raw)
    burn = alice.signrawtransactionwithwallet(alice.blindrawtransaction(funded["hex"]))["hex"]
    with pytest.raises(JSONRPCException) as info:
        chain.sendrawtransaction(burn)
    assert (info.value.code, info.value.message) == (
        -25, "Unspendable output exceeds maximum configured by user (maxburnamount)")
    burn_txid = chain.sendrawtransaction(burn, None, Decimal("0.5"))
    assert burn_txid in chain.getrawmempool()
    assert 0xFFFFFFFD in {i.sequence for i in parse_transaction(bytes.fromhex(burn)).inputs}
    assert chain.getmempoolentry(burn_txid)["bip125-replaceable"] is True
    assert alice.gettransaction(burn_txid)["bip125-replaceable"] == "yes"
    chain.generatetoaddress(1, alice.getnewaddress())


def test_createrawtransaction_checks_in_cores_order(node: NodeProcess) -> None:
    """QA: empty outputs give a transaction with none (as elementsd), and inputs are checked
    before outputs."""
    chain = node.proxy()
    for outputs in ([], {}):
        empty = parse_transaction(bytes.fromhex(chain.createrawtransaction([], outputs)))
        assert empty.inputs == () and empty.outputs == ()
    with pytest.raises(JSONRPCException) as info:
        chain.createrawtransaction([{"txid": "zz", "vout": 0}], [])
    assert info.value.code == -8 and info.value.message.startswith("txid must be of length 64")
    assert code_of(chain.createrawtransaction, [], [{"nonsense": 1}]) == -5


def test_framework_bring_up_calls(node: NodeProcess) -> None:
    """QA: the calls Elements' tests and the test framework make at bring-up answer (no P2P:
    no peers; elementsregtest's sidechain defaults; every rule buried from genesis)."""
    chain, alice = node.proxy(), w(node, "")
    info = chain.getsidechaininfo()
    assert info["pegged_asset"] == chain.dumpassetlabels()["bitcoin"]
    assert info["fedpegscript"] == "51" and info["current_fedpegscripts"] == ["51"]
    assert info["current_fedpeg_programs"] == ["a91472c44f957fc011d97e3406667dca5b1c930c402687"]
    assert info["pegin_confirmation_depth"] == 8 and info["enforce_pak"] is False
    deployments = chain.getdeploymentinfo()
    assert deployments["hash"] == chain.getbestblockhash()
    assert deployments["height"] == chain.getblockcount()
    assert deployments["deployments"]["taproot"] == {"type": "buried", "active": True,
                                                     "height": 0}
    assert chain.getdeploymentinfo(chain.getblockhash(0))["height"] == 0
    assert code_of(chain.getdeploymentinfo, "00" * 32) == -5
    assert chain.getpeerinfo() == [] and chain.getconnectioncount() == 0
    chain.generatetoaddress(2, alice.getnewaddress())  # the median time past stays the clock's
    mock = int(time.time()) + 600
    assert chain.setmocktime(mock) is None
    [mocked] = chain.generatetoaddress(1, alice.getnewaddress())
    assert chain.getblockheader(mocked)["time"] == mock
    assert chain.setmocktime(0) is None
    [after] = chain.generatetoaddress(1, alice.getnewaddress())
    assert chain.getblockheader(after)["time"] < mock  # the wall clock again
    assert code_of(chain.setmocktime, -1) == -8
    assert "setmocktime" not in chain.help()  # hidden, as in Core


def test_load_chain_imports_what_it_can_read(node: NodeProcess, tmp_path: Path,
                                             caplog: pytest.LogCaptureFixture) -> None:
    """QA: -loadblock's rule for every kind of bad input: the readable prefix is imported,
    a warning names where it stopped, and start-up goes on (no traceback, no exit)."""
    from regtest.params import CTREGTEST, NETWORK_MAGIC, select_chain
    from rpc.startup import import_chain_file
    from validator import Node, write_chain

    chain = node.proxy()
    if chain.getblockcount() < 5:
        chain.generatetoaddress(5, w(node, "").getnewaddress())
    blocks = [parse_block(bytes.fromhex(chain.getblock(chain.getblockhash(h), 0)))
              for h in range(1, 6)]
    whole = tmp_path / "chain.dat"
    write_chain(whole, blocks, NETWORK_MAGIC)
    data = whole.read_bytes()
    cut = tmp_path / "cut.dat"
    cut.write_bytes(data[:-100])  # the last frame is cut short
    bad = tmp_path / "bad.dat"
    write_chain(bad, blocks[:3], NETWORK_MAGIC)
    garbage = bytes(blocks[3].serialize()[:80]) + b"\xff"  # a header, then no transactions
    bad.write_bytes(bad.read_bytes() + NETWORK_MAGIC + len(garbage).to_bytes(4, "little")
                    + garbage)
    flipped = tmp_path / "flipped.dat"
    write_chain(flipped, blocks[:3], NETWORK_MAGIC)
    raw = bytearray(blocks[3].serialize())
    raw[36] ^= 1  # a bit of the merkle root
    flipped.write_bytes(flipped.read_bytes() + NETWORK_MAGIC + len(raw).to_bytes(4, "little")
                        + bytes(raw) + data[sum(8 + len(b.serialize()) for b in blocks[:4]):])
    cases = ((whole, 5, None), (cut, 4, "unreadable past block 4"),
             (flipped, 3, "rejected: bad-txnmrklroot: import stopped"),
             (bad, 3, "block 4 is unreadable"), (tmp_path / "missing.dat", 0, "could not open"),
             (tmp_path, 0, "could not open"))
    for i, (path, height, warning) in enumerate(cases):
        caplog.clear()
        with Node.open(tmp_path / f"n{i}", select_chain(CTREGTEST)) as fresh, \
                caplog.at_level("INFO", logger="ctplugin.rpc"):
            assert import_chain_file(fresh, str(path)) == height
            assert fresh.tip.height == height
        messages = [r.getMessage() for r in caplog.records]
        assert messages[-1].startswith(f"imported {height} blocks from {path}; tip ")
        if warning is not None:
            assert any(warning in m for m in messages), messages


def test_positional_parameters_in_elementsds_order(node: NodeProcess) -> None:
    """QA: calls written for elementsd pass parameters by position, so ours take Elements'
    order (src/wallet/rpc/spend.cpp): sendmany ... estimate_mode, output_assets,
    ignoreblindfail, fee_rate, verbose (12); sendtoaddress ... assetlabel, ignoreblindfail,
    fee_rate, verbose (13) — no fee_asset, which no Elements version has; a 14th argument is
    a count error. createrawtransaction takes four (an output's asset is its "asset" key, as in
    Elements since output_assets was removed)."""
    alice, carol, chain = w(node, ""), w(node, "carol"), node.proxy()
    issued = alice.issueasset(Decimal("100"), Decimal("0"))
    chain.generatetoaddress(1, alice.getnewaddress())
    address = carol.getnewaddress()
    sent = alice.sendmany("", {address: Decimal("5")}, 0, "", [], False, None, "unset",
                          {address: issued["asset"]}, True, None, True)
    assert set(sent) == {"txid", "fee_reason"}
    by_name = alice.sendtoaddress(address, Decimal("0.1"), "", "", False, None, None, "unset",
                                  True, "bitcoin", True, None, True)
    assert set(by_name) == {"txid", "fee_reason"}
    assert code_of(alice.sendtoaddress, address, Decimal("0.1"), "", "", False, None, None,
                   "unset", True, "bitcoin", True, None, True, True) == -1
    chain.generatetoaddress(1, alice.getnewaddress())
    assert carol.getbalance()[issued["asset"]] == Decimal("5")
    assert carol.gettransaction(sent["txid"])["amount"][issued["asset"]] == Decimal("5")
    raw = chain.createrawtransaction([], [{address: Decimal("1"), "asset": issued["asset"]}],
                                     0, False)
    [out] = chain.decoderawtransaction(raw)["vout"]
    assert out["asset"] == issued["asset"]


def test_coinbase_of_a_disconnected_block_is_an_orphan(node: NodeProcess) -> None:
    """QA: after the block a wallet mined leaves the main chain, its coinbase is listed as
    Core lists it: category "orphan" (it was "immature" with 0 confirmations); back in the
    chain it is "immature" again."""
    alice, chain = w(node, ""), node.proxy()
    alice.sendtoaddress(w(node, "carol").getnewaddress(), Decimal("0.1"))  # subsidy 0: fees
    [block_hash] = chain.generatetoaddress(1, alice.getnewaddress())
    coinbase = chain.getblock(block_hash)["tx"][0]
    assert alice.gettransaction(coinbase)["details"][0]["category"] == "immature"
    chain.invalidateblock(block_hash)
    try:
        orphaned = alice.gettransaction(coinbase)
        assert orphaned["confirmations"] == 0
        assert [d["category"] for d in orphaned["details"]] == ["orphan"]
        listed = [t for t in alice.listtransactions("*", 1000) if t["txid"] == coinbase]
        assert [t["category"] for t in listed] == ["orphan"]
    finally:
        chain.reconsiderblock(block_hash)
    assert chain.getbestblockhash() == block_hash
    assert alice.gettransaction(coinbase)["details"][0]["category"] == "immature"
