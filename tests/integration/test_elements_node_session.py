"""A ``ctplugin-elementsd -chain=elementsregtest`` node doing a node's own work as elementsd does
(docs/elements-regtest.md §2.3, §3.1, §3.4, §5, §6, §7): the blocks it mines (Elements'
coinbase on the chain's subsidy and policy asset), the wallet's view of the genesis free coins
with ``-anyonecanspendaremine``, Borromean range proofs with the chain's ct_bits/ct_exponent,
``-blindedaddresses`` and ``-defaultpeggedassetname``, listissuances' genesis issuance,
gettxoutsetinfo as Elements' feature_connect_genesis_outputs.py reads it.

Two configurations, each one node for the module: the confidential-transaction tests' options
(free coins in the UTXO set, no subsidy) and the functional framework's defaults (a 50-coin
subsidy, genesis outputs left out, plain addresses), plus a short-lived node with
``-con_mandatorycoinbase``.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from rpc.process import ELEMENTSD_COMMAND, NodeProcess
from rpcclient import RPCError

POLICY_ASSET = "b2e15d0d7a0c94e4e2ce0fe6e8691b9e451377f6e46e8045a86f7c4b5d4f0f23"
GENESIS_ENTROPY = "1c0edf6c0472150b1e91d57ddfbea15b005b3a6a70578c9e6796d386277638c5"
GENESIS_TOKEN = "a6be6b365498cd451be75ba0f68c258ee01e08f3cb30d5f8469f6628db58dc61"
CT_OPTIONS = ("-initialfreecoins=2100000000000000", "-con_blocksubsidy=0",
              "-con_connect_genesis_outputs=1", "-anyonecanspendaremine=1",
              "-blindedaddresses=1")
"""feature_confidential_transactions.py's extra arguments (docs/elements-regtest.md §9)."""
FRAMEWORK_OPTIONS = ("-validatepegin=0", f"-con_parent_pegged_asset={POLICY_ASSET}",
                     "-con_blocksubsidy=5000000000", "-con_connect_genesis_outputs=0",
                     "-anyonecanspendaremine=0", "-con_bip34height=1", "-con_bip65height=1",
                     "-con_bip66height=1", "-blindedaddresses=0",
                     "-evbparams=dynafed:2147483648:::", "-minrelaytxfee=0.00001",
                     "-fallbackfee=0.0002", "-initialfreecoins=5000000000")
"""What the framework's elements.conf sets for every node, and free coins that stay out of the
UTXO set (feature_connect_genesis_outputs.py's node 0)."""
FREE_COINS = Decimal("21000000")
OP_TRUE = "51"
OP_RETURN = "6a"
OTHER_ADDRESS = "ert1qyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zgpm0v0"  # P2WPKH of 20 bytes 0x22
NODE0_WIF = "cQ1PxVTn5J3qCzUqXzpNeHiPVxZcwwaJkFmZcokescXwmHWAdBoe"  # test_node.py PRIV_KEYS[0]


def start(tmp: Path, *options: str) -> NodeProcess:
    """The node with the wallet the framework gives node 0 under ``--legacy-wallet``
    (test_framework.py init_wallet: elementsd makes none itself): a legacy wallet "", then
    the deterministic key 0 imported with a rescan from genesis, which finds the free
    coins."""
    node = NodeProcess(tmp, "-chain=elementsregtest", *options,
                       command=ELEMENTSD_COMMAND).start(timeout=120)
    if "-disablewallet" not in options:
        node.call("createwallet", "", False, False, "", False, False, True)
        node.call("importprivkey", NODE0_WIF, "coinbase", True)
    return node


@pytest.fixture(scope="module")
def ct_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    node = start(tmp_path_factory.mktemp("ct") / "node0", *CT_OPTIONS)
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="module")
def framework_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    node = start(tmp_path_factory.mktemp("framework") / "node0", *FRAMEWORK_OPTIONS,
                 "-defaultpeggedassetname=testasset")
    try:
        yield node
    finally:
        node.stop()


def error_of(node: NodeProcess, method: str, *params: Any) -> tuple[int, str]:
    with pytest.raises(RPCError) as info:
        node.call(method, *params)
    return info.value.code, info.value.message


def coinbase(node: NodeProcess, block_hash: str) -> dict[str, Any]:
    tx: dict[str, Any] = node.call("getblock", block_hash, 2)["tx"][0]
    return tx


def test_genesis_free_coins_are_the_wallets_with_anyonecanspendaremine(
        ct_node: NodeProcess) -> None:
    assert ct_node.call("getblockchaininfo")["chain"] == "elementsregtest"
    genesis = ct_node.call("getblockhash", 0)
    # the CT tests' genesis: the coinbase and the issuance of the free coins (§2.3)
    assert genesis == "209577bda6bf4b5804bd46f8621580dd6d4e8bfa2d190e1c50e932492baca07d"
    assert ct_node.call("getbalance") == {"bitcoin": FREE_COINS}
    stats = ct_node.call("gettxoutsetinfo")
    assert (stats["txouts"], stats["transactions"], stats["total_amount"]) == (1, 1, FREE_COINS)
    [coin] = ct_node.call("listunspent")
    assert (coin["vout"], coin["scriptPubKey"], coin["amount"], coin["asset"],
            coin["confirmations"]) == (0, OP_TRUE, FREE_COINS, POLICY_ASSET, 1)
    issuance_txid = ct_node.call("getblock", genesis)["tx"][1]
    assert coin["txid"] == issuance_txid
    # the genesis issuance is the wallet's only one, labelled as the pegged asset (§2.6)
    [issued] = ct_node.call("listissuances")
    assert issued == {"txid": issuance_txid, "vin": 0, "isreissuance": False,
                      "entropy": GENESIS_ENTROPY, "asset": POLICY_ASSET, "assetlabel": "bitcoin",
                      "token": GENESIS_TOKEN, "assetamount": FREE_COINS,
                      "tokenamount": Decimal(0), "assetblinds": "00" * 32,
                      "tokenblinds": "00" * 32}
    assert ct_node.call("listissuances", "bitcoin") == [issued]
    assert ct_node.call("dumpassetlabels") == {"bitcoin": POLICY_ASSET}


def test_blocks_without_subsidy_or_fees_pay_op_return(ct_node: NodeProcess) -> None:
    address = ct_node.call("getnewaddress")
    assert address.startswith("el1q")  # -blindedaddresses=1, elementsd's bech32 type
    hashes = ct_node.call("generatetoaddress", 101, address)
    assert ct_node.call("getblockcount") == 101
    first = coinbase(ct_node, hashes[0])
    # scriptSig = the height (OP_1) then OP_0; the payout of 0 goes to OP_RETURN, not the
    # address; the witness commitment is last (§3.1)
    assert first["vin"][0]["coinbase"] == "5100"
    payout, commitment = first["vout"]
    assert (payout["value"], payout["asset"], payout["scriptPubKey"]["hex"]) == (
        Decimal(0), POLICY_ASSET, OP_RETURN)
    assert commitment["scriptPubKey"]["hex"].startswith("6a24aa21a9ed")
    assert commitment["asset"] == POLICY_ASSET
    assert coinbase(ct_node, hashes[16])["vin"][0]["coinbase"] == "0111" + "00"  # height 17
    assert ct_node.call("getbalance") == {"bitcoin": FREE_COINS}


def test_confidential_send_with_borromean_proofs(ct_node: NodeProcess) -> None:
    ct_node.call("createwallet", "bob")
    receiver = ct_node.call("getnewaddress", path="/wallet/bob")
    assert receiver.startswith("el1q")
    txid = ct_node.call("sendtoaddress", receiver, 10, path="/wallet/")
    # the spend of the OP_TRUE coin needs no signature (§2.4, §5.4)
    raw = ct_node.call("getrawtransaction", txid, True)
    assert raw["vin"][0]["scriptSig"]["hex"] == "" and not raw["vin"][0].get("txinwitness")
    blinded = [out for out in raw["vout"] if "valuecommitment" in out]
    assert len(blinded) == 2  # payment and change
    # Elements' wallet proofs: Borromean, exponent 0, 52 bits (§7)
    assert all((out["ct-exponent"], out["ct-bits"]) == (0, 52) for out in blinded)
    [fee_out] = [out for out in raw["vout"] if out["scriptPubKey"]["type"] == "fee"]
    fee = fee_out["value"]
    assert fee > 0
    miner = ct_node.call("getnewaddress", path="/wallet/bob")
    [block_hash] = ct_node.call("generatetoaddress", 1, miner, path="/wallet/")
    assert ct_node.call("getbalance", path="/wallet/bob") == {"bitcoin": Decimal(10)}
    assert ct_node.call("getbalance", path="/wallet/") == {"bitcoin": FREE_COINS - 10 - fee}
    # the block's fee is the coinbase's payout, to the miner's script
    payout = coinbase(ct_node, block_hash)["vout"][0]
    assert payout["value"] == fee
    assert payout["scriptPubKey"]["hex"] == ct_node.call(
        "getaddressinfo", miner, path="/wallet/bob")["scriptPubKey"]
    assert ct_node.call("getbalances", path="/wallet/bob")["mine"]["immature"] == {
        "bitcoin": fee}


def test_getnewblockhex_commits_before_the_payout_to_op_true(ct_node: NodeProcess) -> None:
    receiver = ct_node.call("getnewaddress", path="/wallet/bob")
    txid = ct_node.call("sendtoaddress", receiver, 1, path="/wallet/")
    fee = ct_node.call("getmempoolentry", txid)["fees"]["base"]
    block_hex = ct_node.call("getnewblockhex", 0, None, ["deadbeef"])
    assert ct_node.call("getnewblockhex", 0, None, "deadbeef")  # the older single-string form
    assert error_of(ct_node, "getnewblockhex", 0, {"signblockscript": "51"}) == (
        -8, "Dynamic federations is not active on this network. Proposed parameters are not "
            "needed.")
    assert ct_node.call("submitblock", block_hex) is None
    tip = ct_node.call("getbestblockhash")
    outputs = coinbase(ct_node, tip)["vout"]
    assert [out["scriptPubKey"]["hex"][:12] for out in outputs] == [
        "6a04deadbeef", OP_TRUE, "6a24aa21a9ed"]
    assert outputs[1]["value"] == fee
    assert txid in ct_node.call("getblock", tip)["tx"]


def test_framework_defaults_subsidy_and_maturity(framework_node: NodeProcess) -> None:
    node = framework_node
    # -con_connect_genesis_outputs=0: the free coins are nobody's (feature_connect_genesis_outputs)
    stats = node.call("gettxoutsetinfo")
    assert (stats["txouts"], stats["transactions"], stats["total_amount"]) == (0, 0, 0)
    assert node.call("listunspent") == [] and node.call("listissuances") == []
    address = node.call("getnewaddress")
    assert address.startswith("ert1q")  # -blindedaddresses=0
    hashes = node.call("generatetoaddress", 101, address)
    payout = coinbase(node, hashes[0])["vout"][0]
    assert (payout["value"], payout["asset"]) == (Decimal(50), POLICY_ASSET)
    assert payout["scriptPubKey"]["hex"] == node.call("getaddressinfo", address)["scriptPubKey"]
    # the wallet spends a coinbase at 101 confirmations, as Core's (§3.1); the label is
    # -defaultpeggedassetname's
    assert node.call("getbalance") == {"testasset": Decimal(50)}
    assert node.call("getbalances")["mine"]["immature"] == {"testasset": Decimal(5000)}
    assert node.call("getbalance", "*", 0, False, False, "testasset") == Decimal(50)
    assert node.call("dumpassetlabels") == {"testasset": POLICY_ASSET}
    assert node.call("gettxoutsetinfo")["total_amount"] == Decimal(5050)


def test_framework_defaults_confidential_send(framework_node: NodeProcess) -> None:
    node = framework_node
    node.call("createwallet", "bob")
    receiver = node.call("getnewaddress", "", "blech32", path="/wallet/bob")
    assert receiver.startswith("el1q")  # blech32 always blinds
    assert node.call("getnewaddress", "", "bech32", path="/wallet/bob").startswith("ert1q")
    txid = node.call("sendtoaddress", receiver, 7, path="/wallet/")
    raw = node.call("getrawtransaction", txid, True)
    assert all((out["ct-exponent"], out["ct-bits"]) == (0, 52)
               for out in raw["vout"] if "valuecommitment" in out)
    node.call("generatetoaddress", 1, node.call("getnewaddress", path="/wallet/"),
              path="/wallet/")
    assert node.call("getbalance", path="/wallet/bob") == {"testasset": Decimal(7)}


def test_mandatory_coinbase(tmp_path: Path) -> None:
    script = "0014" + "11" * 20
    node = start(tmp_path / "node0", "-con_blocksubsidy=5000000000",
                 f"-con_mandatorycoinbase={script}", "-disablewallet")
    try:
        # getnewblockhex pays the mandatory script (§3.4) and the block connects
        assert node.call("submitblock", node.call("getnewblockhex")) is None
        payout = coinbase(node, node.call("getbestblockhash"))["vout"][0]
        assert (payout["value"], payout["scriptPubKey"]["hex"]) == (Decimal(50), script)
        # a coinbase to any other script is refused, as elementsd refuses it
        code, message = error_of(node, "generatetoaddress", 1, OTHER_ADDRESS)
        assert code == -25 and "bad-coinbase-txos" in message
        assert node.call("getblockcount") == 1
    finally:
        node.stop()
