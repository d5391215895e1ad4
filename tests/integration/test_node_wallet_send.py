"""The wallet's sending side and wallet calls as elementsd answers them (src/wallet/rpc/spend.cpp,
coins.cpp, transactions.cpp, encrypt.cpp, elements.cpp, backup.cpp; docs/node-rpc.md §1.5, §1.9),
on node subprocesses: a ``ctplugin-elementsd -chain=elementsregtest`` node with the CT tests'
options (Borromean proofs, elementsd's wallet defaults) and short-lived nodes of our own chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from ctplugin.elements import AssetIssuance, Transaction, TxOut, parse_transaction
from ctplugin.elements.issuance import issuance_asset_id, issuance_entropy, reissuance_token_id
from rpc.process import ELEMENTSD_COMMAND, NodeProcess, free_port
from rpcclient import RPCError

CT_OPTIONS = ("-initialfreecoins=2100000000000000", "-con_blocksubsidy=0",
              "-con_connect_genesis_outputs=1", "-anyonecanspendaremine=1",
              "-blindedaddresses=1", "-fallbackfee=0.0002")
ZERO = "00" * 32


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    process = NodeProcess(tmp_path_factory.mktemp("send") / "node", "-chain=elementsregtest",
                          *CT_OPTIONS, command=ELEMENTSD_COMMAND).start(timeout=120)
    try:
        # the payer: a wallet that owns the genesis free coins (-anyonecanspendaremine) once it
        # rescans (elementsd creates no wallet of its own on elementsregtest)
        process.call("createwallet", "alice")
        process.call("rescanblockchain", 0, path="/wallet/alice")
        process.call("createwallet", "bob")
        yield process
    finally:
        process.stop()


def call(node: NodeProcess, wallet: str, method: str, *params: Any) -> Any:
    return node.call(method, *params, path=f"/wallet/{wallet}")


def error_of(node: NodeProcess, wallet: str, method: str, *params: Any) -> tuple[int, str]:
    with pytest.raises(RPCError) as info:
        call(node, wallet, method, *params)
    return info.value.code, info.value.message


def fund(node: NodeProcess, wallet: str, amount: int = 5) -> None:
    """Pay ``wallet`` from the free coins and confirm it (each test stands on its own)."""
    call(node, "alice", "sendtoaddress", call(node, wallet, "getnewaddress"), amount)
    mine(node)


def mine(node: NodeProcess, n: int = 1) -> list[str]:
    address = call(node, "bob", "getnewaddress")
    hashes: list[str] = call(node, "alice", "generatetoaddress", n, address)
    return hashes


def test_sendtoaddress_takes_elementsds_13_arguments(node: NodeProcess) -> None:
    address = call(node, "bob", "getnewaddress")
    sent = call(node, "alice", "sendtoaddress", address, Decimal("0.1"), "", "", False, None, None,
                "unset", True, "bitcoin", True, None, True)
    assert sent["fee_reason"] == "Fallback fee"
    assert error_of(node, "alice", "sendtoaddress", address, Decimal("0.1"), "", "", False, None,
                    None, "unset", True, "bitcoin", True, None, True, True)[0] == -1
    # an explicit rate: Core's PayTxFee reason; under -mintxfee (100 sat/kvB): -6
    explicit = call(node, "alice", "sendtoaddress", address, Decimal("0.1"), "", "", False, None,
                    None, "unset", True, "", True, 2, True)
    assert explicit["fee_reason"] == "PayTxFee set"
    assert error_of(node, "alice", "sendtoaddress", address, Decimal("0.1"), "", "", False, None,
                    None, "unset", True, "", True, Decimal("0.05")) == (
        -6, "Fee rate (0.050 sat/vB) is lower than the minimum fee rate setting "
            "(0.100 sat/vB)")
    assert error_of(node, "alice", "sendtoaddress", address, 1, "", "", False, None, None,
                    "fast")[0] == -8
    assert error_of(node, "alice", "sendtoaddress", address, 1, "", "", False, None, 2000)[0] == -8
    mine(node)


def test_sendmany_takes_elementsds_12_arguments(node: NodeProcess) -> None:
    address = call(node, "bob", "getnewaddress")
    sent = call(node, "alice", "sendmany", "", {address: Decimal("0.2")}, 0, "", [], False, None,
                "unset", {}, True, None, True)
    assert set(sent) == {"txid", "fee_reason"}
    mine(node)


def test_gettransaction_assetlabel_and_unconfidential_history(node: NodeProcess) -> None:
    address = call(node, "bob", "getnewaddress")
    txid = call(node, "alice", "sendtoaddress", address, Decimal("0.3"))
    assert call(node, "bob", "gettransaction", txid, True, False, "bitcoin")["amount"] == \
        Decimal("0.3")
    assert call(node, "bob", "gettransaction", txid, True, False, "nosuchlabel")["amount"] == 0
    assert call(node, "bob", "gettransaction", txid)["amount"] == {"bitcoin": Decimal("0.3")}
    unconfidential = call(node, "bob", "getaddressinfo", address)["unconfidential"]
    # elementsd's ListTransactions prints ExtractDestination: the unconfidential address
    [send] = [d for d in call(node, "alice", "gettransaction", txid)["details"]
              if d["category"] == "send"]
    assert send["address"] == unconfidential
    [receive] = call(node, "bob", "gettransaction", txid)["details"]
    assert receive["address"] == unconfidential and receive["abandoned"] is False
    mine(node)


def test_lockunspent_keeps_coins_out_of_selection(node: NodeProcess) -> None:
    fund(node, "bob")
    call(node, "bob", "sendtoaddress", call(node, "bob", "getnewaddress"), Decimal("0.01"))
    mine(node)
    coins = call(node, "bob", "listunspent")
    locked = [{"txid": c["txid"], "vout": c["vout"]} for c in coins]
    assert call(node, "bob", "lockunspent", False, locked) is True
    assert {(x["txid"], x["vout"]) for x in call(node, "bob", "listlockunspent")} == \
        {(x["txid"], x["vout"]) for x in locked}
    assert error_of(node, "bob", "lockunspent", False, locked[:1]) == (
        -8, "Invalid parameter, output already locked")
    # everything is locked: nothing to spend
    assert error_of(node, "bob", "sendtoaddress", call(node, "alice", "getnewaddress"),
                    Decimal("0.001"))[0] == -6
    assert call(node, "bob", "lockunspent", True, locked[:1]) is True
    assert error_of(node, "bob", "lockunspent", True, locked[:1]) == (
        -8, "Invalid parameter, expected locked output")
    assert call(node, "bob", "lockunspent", True) is True
    assert call(node, "bob", "listlockunspent") == []
    first = locked[0]
    assert error_of(node, "bob", "lockunspent", False, [{"txid": ZERO, "vout": 0}]) == (
        -8, "Invalid parameter, unknown transaction")
    assert error_of(node, "bob", "lockunspent", False, [{"txid": first["txid"], "vout": 99}]) \
        == (-8, "Invalid parameter, vout index out of bounds")
    assert error_of(node, "bob", "lockunspent", False, [{"txid": first["txid"], "vout": -1}]) \
        == (-8, "Invalid parameter, vout cannot be negative")
    assert error_of(node, "bob", "lockunspent", False, [{"txid": first["txid"]}]) == (
        -3, "Missing vout")


def test_abandontransaction_refuses_what_the_mempool_holds(node: NodeProcess) -> None:
    txid = call(node, "alice", "sendtoaddress", call(node, "bob", "getnewaddress"), Decimal("0.01"))
    assert error_of(node, "alice", "abandontransaction", txid) == (
        -5, "Transaction not eligible for abandonment")
    assert error_of(node, "alice", "abandontransaction", ZERO) == (
        -5, "Invalid or non-wallet transaction id")
    mine(node)
    assert error_of(node, "alice", "abandontransaction", txid)[0] == -5  # confirmed


def test_received_by_address_and_since_block(node: NodeProcess) -> None:
    [start] = mine(node)
    address = call(node, "bob", "getnewaddress", "tally")
    txid = call(node, "alice", "sendtoaddress", address, Decimal("0.25"))
    assert call(node, "bob", "getreceivedbyaddress", address, 0) == {"bitcoin": Decimal("0.25")}
    assert call(node, "bob", "getreceivedbyaddress", address) == {"bitcoin": 0}
    assert call(node, "bob", "getreceivedbyaddress", address, 0, "bitcoin") == Decimal("0.25")
    rows = call(node, "bob", "listreceivedbyaddress", 0, False, False, "", "bitcoin")
    [row] = [r for r in rows if r["label"] == "tally"]
    assert row["address"] == address and row["amount"] == Decimal("0.25")
    assert row["txids"] == [txid] and row["confirmations"] == 0
    assert error_of(node, "bob", "listreceivedbyaddress", 0, False, False, "nonsense") == (
        -4, "address_filter parameter was invalid")
    since = call(node, "bob", "listsinceblock", start)
    assert txid in {t["txid"] for t in since["transactions"]}
    [tip] = mine(node)
    assert call(node, "bob", "listsinceblock", start)["lastblock"] == tip
    assert call(node, "bob", "listsinceblock", tip)["transactions"] == []
    assert error_of(node, "bob", "listsinceblock", ZERO) == (-5, "Block not found")
    assert error_of(node, "bob", "getreceivedbyaddress", call(node, "alice", "getnewaddress")) == (
        -4, "Address not found in wallet")
    height = call(node, "alice", "getblockcount")
    assert call(node, "bob", "rescanblockchain", height - 2) == {
        "start_height": height - 2, "stop_height": height}
    assert error_of(node, "bob", "rescanblockchain", height + 5) == (-8, "Invalid start_height")


def test_encrypted_wallet_needs_the_passphrase_to_spend(node: NodeProcess) -> None:
    call(node, "alice", "createwallet", "crypt")
    address = call(node, "crypt", "getnewaddress")
    call(node, "alice", "sendtoaddress", address, 1)
    mine(node)
    assert error_of(node, "crypt", "walletlock")[0] == -15
    assert error_of(node, "crypt", "walletpassphrase", "x", 10)[0] == -15
    assert call(node, "crypt", "encryptwallet", "correct horse").startswith("wallet encrypted")
    assert error_of(node, "crypt", "encryptwallet", "again")[0] == -15
    target = call(node, "bob", "getnewaddress")
    assert error_of(node, "crypt", "sendtoaddress", target, Decimal("0.1")) == (
        -13, "Error: Please enter the wallet passphrase with walletpassphrase first.")
    assert error_of(node, "crypt", "walletpassphrase", "wrong", 10) == (
        -14, "Error: The wallet passphrase entered was incorrect.")
    assert error_of(node, "crypt", "walletpassphrase", "correct horse", -1)[0] == -8
    assert call(node, "crypt", "getwalletinfo")["unlocked_until"] == 0
    assert call(node, "crypt", "walletpassphrase", "correct horse", 60) is None
    assert call(node, "crypt", "getwalletinfo")["unlocked_until"] > 0
    assert call(node, "crypt", "sendtoaddress", target, Decimal("0.1"))
    assert call(node, "crypt", "walletlock") is None
    assert error_of(node, "crypt", "sendtoaddress", target, Decimal("0.1"))[0] == -13
    assert call(node, "crypt", "walletpassphrasechange", "correct horse", "battery") is None
    assert error_of(node, "crypt", "walletpassphrase", "correct horse", 10)[0] == -14
    call(node, "crypt", "walletpassphrase", "battery", 60)
    assert call(node, "crypt", "sendtoaddress", target, Decimal("0.1"))
    mine(node)


def test_destroyamount_burns_to_op_return(node: NodeProcess) -> None:
    fund(node, "bob")
    before = call(node, "bob", "getbalance")["bitcoin"]
    txid = call(node, "bob", "destroyamount", "bitcoin", Decimal("0.05"), "burn")
    tx = call(node, "alice", "getrawtransaction", txid, True)
    burns = [o for o in tx["vout"] if o["scriptPubKey"]["hex"] == "6a"]
    assert [o["value"] for o in burns] == [Decimal("0.05")]
    assert call(node, "bob", "gettransaction", txid)["comment"] == "burn"
    mine(node)
    assert call(node, "bob", "getbalance")["bitcoin"] < before - Decimal("0.05")
    assert error_of(node, "bob", "destroyamount", "bitcoin", 0) == (
        -3, "Invalid amount to destroy")


def test_issuance_blinding_key(node: NodeProcess) -> None:
    fund(node, "bob")
    issued = call(node, "bob", "issueasset", 5, 1)
    key = call(node, "bob", "dumpissuanceblindingkey", issued["txid"], issued["vin"])
    assert len(key) == 64
    # importing the same key is accepted (stored without a check, as elementsd)
    assert call(node, "bob", "importissuanceblindingkey", issued["txid"], issued["vin"],
                key) is None
    [entry] = [i for i in call(node, "bob", "listissuances") if i["txid"] == issued["txid"]]
    assert entry["assetamount"] == 5
    assert error_of(node, "bob", "dumpissuanceblindingkey", "zz", 0) == (
        -3, "First argument must be a txid string")
    assert error_of(node, "bob", "dumpissuanceblindingkey", issued["txid"], "0")[0] == -3
    assert error_of(node, "bob", "dumpissuanceblindingkey", issued["txid"], 7) == (
        -4, "Transaction is in wallet but vin does not exist")
    assert error_of(node, "bob", "dumpissuanceblindingkey", ZERO, 0) == (
        -4, "Transaction is unknown to wallet.")
    assert error_of(node, "bob", "importissuanceblindingkey", issued["txid"], 0, "ab") == (
        -3, "blinding key must be a hex string of length 64")
    mine(node)


def test_rawblindrawtransaction(node: NodeProcess) -> None:
    call(node, "alice", "sendtoaddress", call(node, "bob", "getnewaddress"), 10)
    mine(node)
    blinded_address = call(node, "bob", "getnewaddress")
    unconfidential = call(node, "bob", "getaddressinfo", blinded_address)["unconfidential"]
    call(node, "bob", "sendtoaddress", blinded_address, 1)
    call(node, "bob", "sendtoaddress", blinded_address, 3)
    unspent = [u for u in call(node, "bob", "listunspent", 0, 0) if u["amount"] in (1, 3)][:2]
    inputs = [{"txid": u["txid"], "vout": u["vout"]} for u in unspent]
    total = sum(u["amount"] for u in unspent)
    blinders = [[u["amountblinder"] for u in unspent], [u["amount"] for u in unspent],
                [u["asset"] for u in unspent], [u["assetblinder"] for u in unspent]]
    explicit = call(node, "alice", "createrawtransaction", inputs,
                    [{unconfidential: total - Decimal("0.2")}, {"fee": Decimal("0.2")}])
    assert error_of(node, "alice", "rawblindrawtransaction", explicit, *blinders)[1] == (
        "Unable to blind transaction: Add another output to blind in order to complete the "
        "blinding.")
    raw = call(node, "alice", "createrawtransaction", inputs,
               [{blinded_address: total - Decimal("0.002")}, {"fee": Decimal("0.002")}])
    bad = [[blinders[0][0], "ff" * 32], *blinders[1:]]
    assert error_of(node, "alice", "rawblindrawtransaction", raw, *bad) == (
        -8, "Unable to blind transaction: Are you sure each asset type to blind is represented "
            "in the inputs?")
    assert error_of(node, "alice", "rawblindrawtransaction", raw, blinders[0][:1],
                    *blinders[1:])[0] == -8
    blinded = call(node, "alice", "rawblindrawtransaction", raw, *blinders)
    outs = call(node, "alice", "decoderawtransaction", blinded)["vout"]
    assert all("valuecommitment" in o for o in outs if o["scriptPubKey"]["type"] != "fee")
    signed = call(node, "bob", "signrawtransactionwithwallet", blinded)
    txid = call(node, "alice", "sendrawtransaction", signed["hex"])
    mine(node)
    assert call(node, "bob", "gettransaction", txid)["confirmations"] == 1


def test_fundrawtransaction_legacy_boolean_and_missing_asset_output(node: NodeProcess) -> None:
    fund(node, "bob")
    raw = call(node, "alice", "createrawtransaction", [],
               [{call(node, "bob", "getnewaddress"): Decimal("0.5")}])
    funded = call(node, "bob", "fundrawtransaction", raw, True)
    assert funded["fee"] > 0
    locked = call(node, "bob", "fundrawtransaction", raw, {"lockUnspents": True})
    spent = {(t["txid"], t["vout"])
             for t in call(node, "alice", "decoderawtransaction", locked["hex"])["vin"]}
    assert spent <= {(x["txid"], x["vout"]) for x in call(node, "bob", "listlockunspent")}
    call(node, "bob", "lockunspent", True)
    assert error_of(node, "bob", "fundrawtransaction", raw, "yes")[0] == -3
    issued = call(node, "bob", "issueasset", 2, 0)
    mine(node)
    [coin] = [u for u in call(node, "bob", "listunspent") if u["asset"] == issued["asset"]]
    spend = call(node, "alice", "createrawtransaction",
                 [{"txid": coin["txid"], "vout": coin["vout"]}],
                 [{call(node, "bob", "getnewaddress"): 1}])
    assert error_of(node, "bob", "fundrawtransaction", spend) == (
        -4, f"Transaction is missing an output for input asset {issued['asset']}")


def test_signmessage_needs_a_key_address(node: NodeProcess) -> None:
    address = call(node, "bob", "getnewaddress")
    assert error_of(node, "bob", "signmessage", address, "hello") == (
        -3, "Address does not refer to key")
    assert error_of(node, "bob", "signmessage", "nonsense", "hello") == (-5, "Invalid address")


def test_loaded_wallet_sees_payments_already_in_the_mempool(node: NodeProcess) -> None:
    call(node, "alice", "createwallet", "late")
    address = call(node, "late", "getnewaddress")
    node.call("unloadwallet", "late")
    call(node, "alice", "sendtoaddress", address, Decimal("0.7"))
    node.call("loadwallet", "late")
    pending = call(node, "late", "getbalances")["mine"]["untrusted_pending"]
    assert pending["bitcoin"] == Decimal("0.7")
    mine(node)


def test_dust_change_goes_to_the_fee(node: NodeProcess) -> None:
    """Core drops change at or below the cost of change to the fee: a send of nearly a whole
    coin leaves no change output."""
    call(node, "alice", "createwallet", "exact")
    address = call(node, "exact", "getnewaddress")
    call(node, "alice", "sendtoaddress", address, 1)
    mine(node)
    target = call(node, "bob", "getnewaddress")
    probe = call(node, "exact", "sendtoaddress", target, Decimal("0.5"))
    fee = -call(node, "exact", "gettransaction", probe)["fee"]["bitcoin"]
    mine(node)
    balance = call(node, "exact", "getbalance")["bitcoin"]
    # pay all but the fee of a send with change: what is left over the fee of a send without
    # change is about the change output's own fee, below the cost of change
    txid = call(node, "exact", "sendtoaddress", target, balance - fee)
    tx = parse_transaction(bytes.fromhex(call(node, "alice", "getrawtransaction", txid)))
    assert len(tx.outputs) == 2  # the payment and the fee: the few satoshis went to the fee
    assert call(node, "exact", "getbalances")["mine"]["trusted"]["bitcoin"] == 0


def test_fallbackfee_zero_is_elementsds_refusal(tmp_path: Path) -> None:
    process = NodeProcess(tmp_path / "nofee", "-fallbackfee=0").start()
    try:
        address = process.call("getnewaddress")
        with pytest.raises(RPCError) as info:
            process.call("sendtoaddress", address, 1)
        assert (info.value.code, info.value.message) == (
            -6, "Fee estimation failed. Fallbackfee is disabled. Wait a few blocks or enable "
                "-fallbackfee.")
        raw = process.call("createrawtransaction", [], [{address: 1}])
        with pytest.raises(RPCError) as info:
            process.call("fundrawtransaction", raw)
        assert info.value.code == -4
        assert process.call("sendtoaddress", address, 1, "", "", False, None, None, "unset",
                            True, None, True, 1)  # an explicit fee rate needs no estimate
        assert process.call("settxfee", Decimal("0.00002")) is True
        assert process.call("getwalletinfo")["paytxfee"] == Decimal("0.00002")
        assert process.call("sendtoaddress", address, 1, "", "", False, None, None, "unset",
                            True, None, True, None, True)["fee_reason"] == "PayTxFee set"
    finally:
        process.stop()


def test_two_wallets_blind_their_halves_of_one_transaction(node: NodeProcess) -> None:
    """Elements' partial blinding (feature_confidential_transactions.py's combined
    transaction): each wallet blinds its outputs against its own inputs, with the asset
    commitments of every input of the final transaction as surjection targets; each signs
    its own inputs."""
    call(node, "alice", "createwallet", "carol")
    for who in ("bob", "carol"):
        call(node, "alice", "sendtoaddress", call(node, who, "getnewaddress"), 2)
    mine(node)
    policy = call(node, "alice", "dumpassetlabels")["bitcoin"]
    [mine_b] = [u for u in call(node, "bob", "listunspent")
                if u["amount"] == 2 and u["asset"] == policy][:1]
    [mine_c] = [u for u in call(node, "carol", "listunspent")
                if u["amount"] == 2 and u["asset"] == policy][:1]
    commitments = [mine_b["assetcommitment"], mine_c["assetcommitment"]]
    bob_to = call(node, "bob", "getnewaddress")
    carol_to = call(node, "carol", "getnewaddress")
    half = call(node, "alice", "createrawtransaction",
                [{"txid": mine_b["txid"], "vout": mine_b["vout"]}],
                [{bob_to: Decimal("1.95")}])
    blinded_b = call(node, "bob", "blindrawtransaction", half, True, commitments)
    # carol appends her input, her output and the fee, then blinds her half
    b_tx = parse_transaction(bytes.fromhex(blinded_b))
    c_half = parse_transaction(bytes.fromhex(call(
        node, "", "createrawtransaction", [{"txid": mine_c["txid"], "vout": mine_c["vout"]}],
        [{carol_to: Decimal("1.95")}, {"fee": Decimal("0.1")}])))
    combined = type(b_tx)(version=2, inputs=b_tx.inputs + c_half.inputs,
                          outputs=b_tx.outputs + c_half.outputs, locktime=0)
    blinded = call(node, "carol", "blindrawtransaction", combined.hex(), True, commitments)
    outs = call(node, "alice", "decoderawtransaction", blinded)["vout"]
    assert sum("valuecommitment" in o for o in outs) == 2
    partial = call(node, "bob", "signrawtransactionwithwallet", blinded)
    assert partial["complete"] is False and len(partial["errors"]) == 1
    signed = call(node, "carol", "signrawtransactionwithwallet", partial["hex"])
    assert signed["complete"] is True
    txid = call(node, "alice", "sendrawtransaction", signed["hex"])
    mine(node)
    assert call(node, "carol", "gettransaction", txid)["confirmations"] == 1
    assert error_of(node, "bob", "blindrawtransaction", half, True, ["zz"]) == (
        -8, "Asset commitments must be a hex encoded string of length 66.")


def test_blindrawtransaction_blinds_a_raw_issuance(node: NodeProcess) -> None:
    """A raw issuance (what rawissueasset adds to a funded transaction: the issuance on input 0,
    outputs of the asset and its token with blinding keys in their nonces) is blinded by
    blindrawtransaction with the wallet's issuance blinding key, so the node accepts it and
    listissuances opens the amount with dumpissuanceblindingkey's key."""
    call(node, "alice", "sendtoaddress", call(node, "bob", "getnewaddress"), 3)
    mine(node)
    funded = call(node, "bob", "fundrawtransaction", call(
        node, "", "createrawtransaction", [], [{call(node, "bob", "getnewaddress"): 1}]))
    tx = parse_transaction(bytes.fromhex(funded["hex"]))
    first = tx.inputs[0]
    entropy = issuance_entropy(first.prevout_hash, first.prevout_index, bytes(32))
    asset, token = issuance_asset_id(entropy), reissuance_token_id(entropy, True)
    info = [call(node, "bob", "getaddressinfo", call(node, "bob", "getnewaddress"))
            for _ in range(2)]
    paid = [TxOut(asset=a, value=v, script_pubkey=bytes.fromhex(i["scriptPubKey"]),
                  nonce=bytes.fromhex(i["confidential_key"]))
            for a, v, i in ((asset, 700, info[0]), (token, 3, info[1]))]
    raw = Transaction(
        version=2, locktime=0,
        inputs=(replace(first, issuance=AssetIssuance(bytes(32), bytes(32), 700, 3)),
                *tx.inputs[1:]),
        outputs=(*tx.outputs[:-1], *paid, tx.outputs[-1]))
    blinded = call(node, "bob", "blindrawtransaction", raw.hex(), False)
    [vin] = [v for v in call(node, "alice", "decoderawtransaction", blinded)["vin"]
             if "issuance" in v]
    assert "assetamountcommitment" in vin["issuance"]
    assert "tokenamountcommitment" in vin["issuance"]
    signed = call(node, "bob", "signrawtransactionwithwallet", blinded)
    txid = call(node, "alice", "sendrawtransaction", signed["hex"])
    mine(node)
    [entry] = [i for i in call(node, "bob", "listissuances") if i["txid"] == txid]
    assert entry["asset"] == asset[::-1].hex() and entry["assetamount"] == Decimal("0.000007")
    assert entry["tokenamount"] == Decimal("0.00000003") and entry["tokenblinds"] != ZERO
    assert call(node, "bob", "getbalance")[asset[::-1].hex()] == Decimal("0.000007")

    # blind_issuances=false leaves the issuance explicit (and its token id the unblinded one)
    again = call(node, "bob", "fundrawtransaction", call(
        node, "", "createrawtransaction", [], [{call(node, "bob", "getnewaddress"): 1}]))
    fresh = parse_transaction(bytes.fromhex(again["hex"]))
    lead = fresh.inputs[0]
    entropy = issuance_entropy(lead.prevout_hash, lead.prevout_index, bytes(32))
    asset, token = issuance_asset_id(entropy), reissuance_token_id(entropy, False)
    paid = [replace(paid[0], asset=asset), replace(paid[1], asset=token)]
    raw = Transaction(
        version=2, locktime=0,
        inputs=(replace(lead, issuance=AssetIssuance(bytes(32), bytes(32), 700, 3)),
                *fresh.inputs[1:]),
        outputs=(*fresh.outputs[:-1], *paid, fresh.outputs[-1]))
    explicit = call(node, "bob", "blindrawtransaction", raw.hex(), False, [], False)
    [vin] = [v for v in call(node, "alice", "decoderawtransaction", explicit)["vin"]
             if "issuance" in v]
    assert vin["issuance"]["assetamount"] == Decimal("0.000007")
    signed = call(node, "bob", "signrawtransactionwithwallet", explicit)
    assert call(node, "alice", "sendrawtransaction", signed["hex"])
    mine(node)


def test_persistent_locks_survive_a_restart_and_others_do_not(tmp_path: Path) -> None:
    process = NodeProcess(tmp_path / "locks").start()
    try:
        address = process.call("getnewaddress")
        for _ in range(2):
            process.call("sendtoaddress", address, 1)
        process.call("generatetoaddress", 1, address)
        coins = [{"txid": u["txid"], "vout": u["vout"]} for u in process.call("listunspent")
                 if u["amount"] == 1]
        assert len(coins) == 2
        process.call("lockunspent", False, coins[:1], True)
        process.call("lockunspent", False, coins[1:])
        # re-locking a persistent lock is allowed when asked to be persistent (Core)
        assert process.call("lockunspent", False, coins[:1], True) is True
        process.stop()
        process.start()
        assert process.call("listlockunspent") == coins[:1]
    finally:
        process.stop()


def test_third_party_clients_drive_sends_issuance_and_raw_blinding(tmp_path: Path) -> None:
    """python-bitcoinrpc's AuthServiceProxy and python-elementstx's RPCCaller (Elements chain
    parameters, the cookie found from the conf file) drive a session of sends, an issuance and
    the raw create → fund → blind → sign → send flow against ctplugin-elementsd."""
    import elementstx  # noqa: F401  (registers the Elements chain parameters)
    from bitcointx import ChainParams
    from bitcointx.rpc import RPCCaller

    datadir = tmp_path / "clients"
    datadir.mkdir()
    port = free_port()
    (datadir / "elements.conf").write_text(
        f"chain=elementsregtest\n[elementsregtest]\nrpcport={port}\n")
    process = NodeProcess(datadir, "-chain=elementsregtest", *CT_OPTIONS, port=port,
                          command=ELEMENTSD_COMMAND).start(timeout=120)
    try:
        proxy = process.proxy()  # AuthServiceProxy
        proxy.createwallet("alice")
        proxy.createwallet("dan")
        alice, dan = process.proxy("/wallet/alice"), process.proxy("/wallet/dan")
        alice.rescanblockchain(0)  # finds the free coins it owns
        with ChainParams("elements/elementsregtest"):
            # node calls through RPCCaller, which finds the cookie from the conf file; wallet
            # calls through AuthServiceProxy on the wallets' URLs (two wallets are loaded)
            caller = RPCCaller(conf_file=str(datadir / "elements.conf"))
            txid = alice.sendtoaddress(dan.getnewaddress(), 2)
            assert txid in caller.getrawmempool()
            issued = alice.issueasset(10, 1)
            caller.generatetoaddress(1, dan.getnewaddress())
            assert dan.getbalance()["bitcoin"] == 2
            assert alice.getbalance()[issued["asset"]] == 10
            raw = caller.createrawtransaction([], [{dan.getnewaddress(): Decimal("0.5")},
                                                   {dan.getnewaddress(): 1,
                                                    "asset": issued["asset"]}])
            funded = alice.fundrawtransaction(raw)
            signed = alice.signrawtransactionwithwallet(alice.blindrawtransaction(funded["hex"]))
            assert signed["complete"] is True
            sent = caller.sendrawtransaction(signed["hex"])
            caller.generatetoaddress(1, dan.getnewaddress())
            assert dan.getbalance()[issued["asset"]] == 1
            assert dan.gettransaction(sent, True, False, issued["asset"])["amount"] == 1
    finally:
        process.stop()
