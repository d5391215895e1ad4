"""elementsd's node calls that need no wallet, driven as Elements' tests drive them, on a
``ctplugin-elementsd -chain=elementsregtest`` subprocess (docs/node-rpc.md §1.8): keys are
ours (WIF), coins come from the block subsidy to a P2WPKH key, and every transaction is built
with createrawtransaction, signed with signrawtransactionwithkey and checked by the node's own
mempool (so a wrong digest or script is a rejection, not a passing test).

One module-scoped node; each test leaves the chain usable for the next (they run in file
order). Bad input for the same calls is tests/fuzz/test_node_calls_fuzz.py.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import coincurve
import pytest
from bitcoinrpc.authproxy import JSONRPCException

import rpc.methods  # noqa: F401  (registers every call)
from ctplugin.elements import parse_block, parse_transaction
from ctplugin.elements.address import (
    encode_destination,
    encode_secret,
    p2pkh_script,
    p2sh_script,
)
from ctplugin.elements.chainparams import ELEMENTS_REGTEST_ADDRESSES as ADDRESSES
from ctplugin.hashes import hash160, sha256
from ctplugin.script.taproot import tweak_hash
from ctplugin.secp256k1 import ct
from rpc.process import ELEMENTSD_COMMAND, NodeProcess
from rpc.registry import REGISTRY

MATURE = 120  # blocks mined first: the subsidies of heights 1..20 can be spent
FEE = Decimal("0.0001")
KEYS = [bytes([i]) * 32 for i in range(1, 4)]
PUBKEYS = [coincurve.PrivateKey(k).public_key.format() for k in KEYS]
WIFS = [encode_secret(k, ADDRESSES) for k in KEYS]
WPKH = [encode_destination(b"\x00\x14" + hash160(p), ADDRESSES) for p in PUBKEYS]
PKH = [encode_destination(p2pkh_script(hash160(p)), ADDRESSES) for p in PUBKEYS]


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    datadir: Path = tmp_path_factory.mktemp("calls") / "node"
    process = NodeProcess(datadir, "-chain=elementsregtest", "-disablewallet",
                          "-con_blocksubsidy=5000000000", command=ELEMENTSD_COMMAND)
    process.start()
    try:
        yield process
    finally:
        process.stop()


def error_of(call: Any, *args: Any) -> dict[str, Any]:
    with pytest.raises(JSONRPCException) as info:
        call(*args)
    return info.value.error  # type: ignore[no-any-return]


def coinbase_coin(rpc: Any, height: int) -> tuple[str, int, Decimal]:
    """(txid, vout, value) of the subsidy paid to WPKH[0] in the block at ``height``."""
    coinbase = rpc.getblock(rpc.getblockhash(height), 2)["tx"][0]
    out = next(o for o in coinbase["vout"]
               if o["scriptPubKey"].get("address") == WPKH[0])
    return coinbase["txid"], out["n"], Decimal(out["value"])


def output_to(decoded: dict[str, Any], address: str) -> dict[str, Any]:
    return next(o for o in decoded["vout"] if o["scriptPubKey"].get("address") == address)


def test_initial_block_download_ends_with_a_recent_block(node: NodeProcess) -> None:
    rpc = node.proxy()
    # The genesis block is from 2011: Core's IsInitialBlockDownload is true until a block
    # younger than the maximum tip age is connected, then false for good.
    assert rpc.getblockchaininfo()["initialblockdownload"] is True
    rpc.generatetoaddress(MATURE, WPKH[0])
    assert rpc.getblockchaininfo()["initialblockdownload"] is False
    info = rpc.getmininginfo()
    assert info["blocks"] == MATURE and info["chain"] == "elementsregtest"
    assert info["currentblocktx"] == 0 and info["currentblockweight"] > 0
    assert "difficulty" not in info and "networkhashps" not in info  # signed blocks


def test_relay_fees_agree(node: NodeProcess) -> None:
    rpc = node.proxy()
    network, mempool = rpc.getnetworkinfo(), rpc.getmempoolinfo()
    assert network["relayfee"] == mempool["minrelaytxfee"]
    assert network["incrementalfee"] == mempool["incrementalrelayfee"] == Decimal("0.000001")


def test_every_script_type_signs_with_keys(node: NodeProcess) -> None:
    """P2WPKH pays P2PKH, P2SH multisig, P2WSH multisig, P2SH-P2WSH, P2SH-P2WPKH; two parties
    then sign the spend of all five with SIGHASH_ALL|ANYONECANPAY, the second completing the
    first's multisig signatures; the mempool accepts both transactions."""
    rpc = node.proxy()
    txid, vout, value = coinbase_coin(rpc, 1)
    keys = [PUBKEYS[1].hex(), PUBKEYS[2].hex()]
    legacy = rpc.createmultisig(2, keys)
    segwit = rpc.createmultisig(2, keys, "bech32")
    nested = rpc.createmultisig(1, keys, "p2sh-segwit")
    assert legacy["descriptor"].startswith("sh(multi(2,")
    assert segwit["descriptor"].startswith("wsh(multi(2,")
    assert nested["descriptor"].startswith("sh(wsh(multi(1,")
    wpkh_redeem = b"\x00\x14" + hash160(PUBKEYS[2])
    nested_wpkh = encode_destination(p2sh_script(hash160(wpkh_redeem)), ADDRESSES)
    targets = [PKH[1], legacy["address"], segwit["address"], nested["address"], nested_wpkh]
    outputs: list[dict[str, Any]] = [{a: Decimal(1)} for a in targets]
    outputs += [{WPKH[0]: value - 5 - FEE}, {"fee": FEE}]
    raw = rpc.createrawtransaction([{"txid": txid, "vout": vout}], outputs)
    signed = rpc.signrawtransactionwithkey(raw, [WIFS[0]])
    assert signed["complete"] is True and "errors" not in signed
    funding = rpc.sendrawtransaction(signed["hex"])
    rpc.generatetoaddress(1, WPKH[0])
    decoded = rpc.decoderawtransaction(signed["hex"])
    coins = [output_to(decoded, a) for a in targets]
    prevtxs = [
        {"txid": funding, "vout": coins[1]["n"], "scriptPubKey": coins[1]["scriptPubKey"]["hex"],
         "redeemScript": legacy["redeemScript"]},
        {"txid": funding, "vout": coins[2]["n"], "scriptPubKey": coins[2]["scriptPubKey"]["hex"],
         "witnessScript": segwit["redeemScript"], "amount": 1},
        {"txid": funding, "vout": coins[3]["n"], "scriptPubKey": coins[3]["scriptPubKey"]["hex"],
         "witnessScript": nested["redeemScript"], "amount": 1,
         "redeemScript": "0020" + sha256(bytes.fromhex(nested["redeemScript"])).hex()},
        {"txid": funding, "vout": coins[4]["n"], "scriptPubKey": coins[4]["scriptPubKey"]["hex"],
         "redeemScript": wpkh_redeem.hex(), "amount": 1},
    ]
    spend = rpc.createrawtransaction([{"txid": funding, "vout": c["n"]} for c in coins],
                                     [{WPKH[0]: Decimal("4.999")}, {"fee": Decimal("0.001")}])
    first = rpc.signrawtransactionwithkey(spend, [WIFS[1]], prevtxs, "ALL|ANYONECANPAY")
    assert first["complete"] is False
    missing = {(e["vout"], e["error"]) for e in first["errors"]}
    # key 1 alone: P2PKH and the 1-of-2 are done; the 2-of-2s miss a signature; P2SH-P2WPKH
    # (key 2's) gets its redeem script and an empty witness, as Core's ProduceSignature
    assert missing == {
        (coins[1]["n"], "Unable to sign input, invalid stack size (possibly missing key)"),
        (coins[2]["n"], "Unable to sign input, invalid stack size (possibly missing key)"),
        (coins[4]["n"], "Witness program hash mismatch")}
    second = rpc.signrawtransactionwithkey(first["hex"], [WIFS[2]], prevtxs, "ALL|ANYONECANPAY")
    assert second["complete"] is True, second.get("errors")
    tx = parse_transaction(bytes.fromhex(second["hex"]))
    signatures = [item for txin in tx.inputs for item in txin.script_witness
                  if item[:1] == b"\x30"]  # DER
    assert len(signatures) == 4 and {sig[-1] for sig in signatures} == {0x81}
    [verdict] = rpc.testmempoolaccept([second["hex"]])
    assert verdict["allowed"] is True, verdict
    rpc.sendrawtransaction(second["hex"])
    rpc.generatetoaddress(1, WPKH[0])


@pytest.mark.parametrize("sighash", ["ALL", "NONE", "SINGLE", "ALL|RANGEPROOF",
                                     "NONE|ANYONECANPAY|RANGEPROOF", "DEFAULT"])
def test_each_sighash_type_is_accepted_by_the_mempool(node: NodeProcess, sighash: str) -> None:
    rpc = node.proxy()
    height = {"ALL": 2, "NONE": 3, "SINGLE": 4, "ALL|RANGEPROOF": 5,
              "NONE|ANYONECANPAY|RANGEPROOF": 6, "DEFAULT": 7}[sighash]
    txid, vout, value = coinbase_coin(rpc, height)
    raw = rpc.createrawtransaction([{"txid": txid, "vout": vout}],
                                   [{PKH[1]: value - FEE}, {"fee": FEE}])
    signed = rpc.signrawtransactionwithkey(raw, [WIFS[0]], None, sighash)
    assert signed["complete"] is True
    [witness_sig, _] = parse_transaction(bytes.fromhex(signed["hex"])).inputs[0].script_witness
    expected = {"DEFAULT": 0x01}.get(sighash, 0)  # DEFAULT is ALL for ECDSA
    if not expected:
        parts = set(sighash.split("|"))
        expected = {"ALL": 1, "NONE": 2, "SINGLE": 3}[sighash.split("|")[0]]
        expected |= 0x80 if "ANYONECANPAY" in parts else 0
        expected |= 0x40 if "RANGEPROOF" in parts else 0
    assert witness_sig[-1] == expected
    assert rpc.testmempoolaccept([signed["hex"]])[0]["allowed"] is True
    rpc.sendrawtransaction(signed["hex"])  # key 1's P2PKH coins, for scantxoutset's combo()


def test_taproot_key_path_signs_with_keys(node: NodeProcess) -> None:
    """A P2TR output of key 2 (BIP341 tweak without scripts) spent with its WIF: Elements'
    taproot digest, committing to the genesis hash and every spent output, is what the
    mempool checks."""
    rpc = node.proxy()
    txid, vout, value = coinbase_coin(rpc, 11)
    xonly = PUBKEYS[2][1:]
    output_key = ct.xonly_public_key(ct.taproot_tweak_secret(KEYS[2], tweak_hash(xonly, None)))
    p2tr = encode_destination(b"\x51\x20" + output_key, ADDRESSES)
    raw = rpc.createrawtransaction([{"txid": txid, "vout": vout}],
                                   [{p2tr: value - FEE}, {"fee": FEE}])
    funding = rpc.sendrawtransaction(rpc.signrawtransactionwithkey(raw, [WIFS[0]])["hex"])
    spend = rpc.createrawtransaction([{"txid": funding, "vout": 0}],
                                     [{WPKH[0]: value - 2 * FEE}, {"fee": FEE}])
    signed = rpc.signrawtransactionwithkey(spend, [WIFS[2]])  # the coin is in the mempool
    assert signed["complete"] is True
    [witness] = [i.script_witness for i in parse_transaction(bytes.fromhex(signed["hex"])).inputs]
    assert len(witness) == 1 and len(witness[0]) == 64  # SIGHASH_DEFAULT
    rpc.sendrawtransaction(signed["hex"])
    rpc.generatetoaddress(1, WPKH[0])


def test_signing_errors_are_elementsds(node: NodeProcess) -> None:
    rpc = node.proxy()
    txid, vout, value = coinbase_coin(rpc, 8)
    raw = rpc.createrawtransaction([{"txid": txid, "vout": vout}, {"txid": "11" * 32, "vout": 0}],
                                   [{PKH[1]: value - FEE}, {"fee": FEE}])
    result = rpc.signrawtransactionwithkey(raw, [WIFS[0]])
    assert result["complete"] is False
    [error] = result["errors"]
    assert error == {"txid": "11" * 32, "vout": 0, "witness": [], "scriptSig": "",
                     "sequence": 0xFFFFFFFD, "error": "Input not found or already spent"}
    assert error_of(rpc.signrawtransactionwithkey, raw, ["notakey"])["code"] == -5
    assert error_of(rpc.signrawtransactionwithkey, raw, [WIFS[0]], None, "ALL|NOPE") == {
        "code": -8, "message": "'ALL|NOPE' is not a valid sighash parameter."}
    assert error_of(rpc.signrawtransactionwithkey, "00", [])["code"] == -22
    p2wsh = "0020" + "22" * 32
    assert error_of(rpc.signrawtransactionwithkey, raw, [WIFS[0]],
                    [{"txid": "11" * 32, "vout": 0, "scriptPubKey": p2wsh,
                      "witnessScript": "51"}]) == {
        "code": -8, "message": "redeemScript/witnessScript does not match scriptPubKey"}
    wpkh_script = "0014" + hash160(PUBKEYS[0]).hex()
    assert error_of(rpc.signrawtransactionwithkey, raw, [WIFS[0]],
                    [{"txid": "11" * 32, "vout": 0, "scriptPubKey": wpkh_script}]) == {
        "code": -3, "message": f"Missing amount for CTxOut(nValue=21000000.00000000, "
                               f"scriptPubKey={wpkh_script[:30]})"}
    assert error_of(rpc.signrawtransactionwithkey, raw, [WIFS[0]],
                    [{"txid": "11" * 32, "vout": 0}]) == {"code": -3,
                                                           "message": "Missing scriptPubKey"}


def test_issuance_by_raw_transactions(node: NodeProcess) -> None:
    rpc = node.proxy()
    txid, vout, value = coinbase_coin(rpc, 9)
    raw = rpc.createrawtransaction([{"txid": txid, "vout": vout}],
                                   [{WPKH[0]: value - FEE}, {"fee": FEE}])
    [issued] = rpc.rawissueasset(raw, [{"asset_amount": 3, "asset_address": WPKH[1],
                                        "token_amount": 1, "token_address": WPKH[2],
                                        "blind": False}])
    calculated = rpc.calculateasset(txid, vout, "00" * 32, False)
    assert calculated == {"asset_tag": issued["asset"], "reissuance_asset_tag": issued["token"],
                          "final_asset_entropy": issued["entropy"]}
    assert issued["vin"] == 0
    decoded = rpc.decoderawtransaction(issued["hex"])
    issuance = decoded["vin"][0]["issuance"]
    assert issuance["asset"] == issued["asset"] and issuance["token"] == issued["token"]
    assert issuance["assetamount"] == Decimal(3) and issuance["tokenamount"] == Decimal(1)
    assert decoded["vout"][-1]["scriptPubKey"]["type"] == "fee"  # the fee stays last
    assert output_to(decoded, WPKH[1])["asset"] == issued["asset"]
    signed = rpc.signrawtransactionwithkey(issued["hex"], [WIFS[0]])
    assert signed["complete"] is True
    rpc.sendrawtransaction(signed["hex"])
    rpc.generatetoaddress(1, WPKH[0])
    # reissue: spend the token (key 2) and a subsidy coin for the fee
    token = output_to(rpc.decoderawtransaction(signed["hex"]), WPKH[2])
    fee_txid, fee_vout, fee_value = coinbase_coin(rpc, 10)
    raw2 = rpc.createrawtransaction(
        [{"txid": signed_txid(signed), "vout": token["n"]}, {"txid": fee_txid, "vout": fee_vout}],
        [{WPKH[2]: Decimal(1), "asset": issued["token"]}, {WPKH[0]: fee_value - FEE},
         {"fee": FEE}])
    reissued = rpc.rawreissueasset(raw2, [{"asset_amount": 2, "asset_address": WPKH[1],
                                           "input_index": 0, "asset_blinder": "00" * 31 + "01",
                                           "entropy": issued["entropy"]}])
    vin = rpc.decoderawtransaction(reissued["hex"])["vin"][0]["issuance"]
    assert vin["isreissuance"] is True and vin["asset"] == issued["asset"]
    assert error_of(rpc.rawreissueasset, raw2, [{"asset_amount": 2, "asset_address": WPKH[1],
                                                 "input_index": 2, "asset_blinder": "00" * 32,
                                                 "entropy": issued["entropy"]}]) == {
        "code": -8, "message": "Input index must exist in transaction."}
    assert error_of(rpc.rawissueasset, raw, [{"asset_amount": 0}]) == {
        "code": -8, "message": "Invalid parameter, asset_amount must be positive"}
    assert error_of(rpc.rawissueasset, raw, [{}]) == {
        "code": -3, "message": "Issuance must have one non-zero component"}
    no_fee = rpc.createrawtransaction([{"txid": txid, "vout": vout}], [{WPKH[0]: 1}])
    assert error_of(rpc.rawissueasset, no_fee, [{"asset_amount": 1, "asset_address": WPKH[0]}]
                    ) == {"code": -8, "message": "Last transaction output must be fee."}


def signed_txid(signed: dict[str, Any]) -> str:
    return parse_transaction(bytes.fromhex(signed["hex"])).txid_hex


def test_block_statistics(node: NodeProcess) -> None:
    rpc = node.proxy()
    height = rpc.getblockcount()
    stats = rpc.getblockstats(height)
    block = rpc.getblock(rpc.getblockhash(height), 2)
    assert stats["height"] == height and stats["txs"] == len(block["tx"])
    assert stats["blockhash"] == block["hash"] and stats["subsidy"] == 5_000_000_000
    assert stats["totalfee"] == sum(int(Decimal(v) * 100_000_000)
                                    for tx in block["tx"][1:] for v in tx["fee"].values())
    assert rpc.getblockstats(block["hash"], ["txs", "height"]) == {"height": height,
                                                                  "txs": stats["txs"]}
    assert error_of(rpc.getblockstats, height + 1)["message"] == \
        f"Target block height {height + 1} after current tip {height}"
    assert error_of(rpc.getblockstats, height, ["nope"])["message"] == \
        "Invalid selected statistic 'nope'"
    chain = rpc.getchaintxstats()
    assert chain["window_final_block_height"] == height
    assert chain["window_block_count"] == height - 1
    total = sum(rpc.getblockheader(rpc.getblockhash(h))["nTx"] for h in range(height + 1))
    assert chain["txcount"] == total
    assert rpc.getchaintxstats(2)["window_tx_count"] == sum(
        rpc.getblockheader(rpc.getblockhash(h))["nTx"] for h in (height - 1, height))
    assert error_of(rpc.getchaintxstats, height)["code"] == -8


def test_transactions_print_elements_shapes(node: NodeProcess) -> None:
    """TxToUniv as elementsd prints it here: no discounted sizes (elementsregtest does not
    accept discounted CT by default); verbosity 2 of getrawtransaction and 3 of getblock give
    each input's prevout as {generated, height, value, scriptPubKey}."""
    rpc = node.proxy()
    block_hash = next(h for h in map(rpc.getblockhash, range(rpc.getblockcount(), 0, -1))
                      if len(rpc.getblock(h)["tx"]) > 1)
    block = rpc.getblock(block_hash, 3)
    spend = block["tx"][1]
    assert "discountvsize" not in spend and "discountweight" not in spend
    assert "discountvsize" not in rpc.decoderawtransaction(spend["hex"])
    raw = rpc.getrawtransaction(spend["txid"], 2, block_hash)
    assert raw["in_active_chain"] is True and raw["blockhash"] == block_hash
    for vin, from_block in zip(raw["vin"], spend["vin"]):
        assert list(vin["prevout"]) == ["generated", "height", "value", "scriptPubKey"]
        assert vin["prevout"] == from_block["prevout"]
    assert all("prevout" not in vin
               for vin in rpc.getrawtransaction(spend["txid"], 1, block_hash)["vin"])


def test_pegout_scripts_print_the_parent_chain(node: NodeProcess) -> None:
    """feature_fedpeg.py's reading of a peg-out output: pegout_chain and the parent-chain
    script's fields inside scriptPubKey, its address in Bitcoin regtest's encoding."""
    rpc = node.proxy()
    parent_script = p2pkh_script(hash160(PUBKEYS[0]))
    raw = rpc.createrawtransaction([], [{"vdata": ["aa" * 32, parent_script.hex()]}])
    [out] = rpc.decoderawtransaction(raw)["vout"]
    script = out["scriptPubKey"]
    assert script["type"] == "nulldata" and script["pegout_chain"] == "aa" * 32
    assert script["pegout_hex"] == parent_script.hex() and script["pegout_type"] == "pubkeyhash"
    assert script["pegout_address"][0] in "mn"  # Bitcoin regtest P2PKH
    assert list(script)[4:] == ["pegout_chain", "pegout_asm", "pegout_desc", "pegout_hex",
                                "pegout_address", "pegout_type"]


def test_txout_proofs_round_trip(node: NodeProcess) -> None:
    rpc = node.proxy()
    block = rpc.getblock(rpc.getbestblockhash())
    wanted = block["tx"][-1:]
    proof = rpc.gettxoutproof(wanted, block["hash"])
    assert rpc.verifytxoutproof(proof) == wanted
    header = parse_block(bytes.fromhex(rpc.getblock(block["hash"], 0))).header.serialize()
    assert proof.startswith(header.hex())  # Elements' signed-block header first
    coinbase_block = rpc.getblock(rpc.getblockhash(50))  # its subsidy is unspent
    found = rpc.gettxoutproof([coinbase_block["tx"][0]])  # found by its unspent output
    assert rpc.verifytxoutproof(found) == [coinbase_block["tx"][0]]
    tampered = proof[:-2] + ("00" if proof[-2:] != "00" else "01")
    assert rpc.verifytxoutproof(tampered) == []
    assert error_of(rpc.verifytxoutproof, proof[:-10])["code"] == -22
    assert error_of(rpc.gettxoutproof, [])["message"] == "Parameter 'txids' cannot be empty"
    assert error_of(rpc.gettxoutproof, ["11" * 32])["message"] == "Transaction not yet in block"


def test_scantxoutset_finds_the_subsidy(node: NodeProcess) -> None:
    rpc = node.proxy()
    by_key = rpc.scantxoutset("start", [f"wpkh({PUBKEYS[0].hex()})"])
    by_address = rpc.scantxoutset("start", [{"desc": f"addr({WPKH[0]})"}])
    assert by_key["success"] is True and by_key["height"] == rpc.getblockcount()
    assert {(u["txid"], u["vout"]) for u in by_key["unspents"]} == \
        {(u["txid"], u["vout"]) for u in by_address["unspents"]}
    assert by_key["unspents"] and all(u["desc"].startswith("wpkh(") for u in by_key["unspents"])
    assert by_key["total_unblinded_bitcoin_amount"] == sum(
        Decimal(u["amount"]) for u in by_key["unspents"])
    combo = rpc.scantxoutset("start", [f"combo({PUBKEYS[1].hex()})"])
    assert any(u["desc"].startswith("pkh(") for u in combo["unspents"])  # the P2PKH payments
    assert rpc.scantxoutset("status") is None and rpc.scantxoutset("abort") is False
    assert error_of(rpc.scantxoutset, "start") == {  # elementsd's code: RPC_MISC_ERROR
        "code": -1, "message": "scanobjects argument is required for the start action"}
    assert error_of(rpc.scantxoutset, "go") == {"code": -8, "message": "Invalid action 'go'"}
    assert error_of(rpc.scantxoutset, "start", ["foo(00)"])["code"] == -5


def test_proposed_blocks_headers_and_precious_blocks(node: NodeProcess) -> None:
    rpc = node.proxy()
    proposal = rpc.getnewblockhex()
    assert rpc.testproposedblock(proposal) is None
    assert rpc.testproposedblock(proposal, False) is None
    block = parse_block(bytes.fromhex(proposal))
    broken = bytearray(bytes.fromhex(proposal))
    broken[40] ^= 1  # the merkle root
    assert error_of(rpc.testproposedblock, broken.hex()) == {"code": -25,
                                                              "message": "bad-txnmrklroot"}
    assert rpc.submitblock(proposal) is None
    assert error_of(rpc.testproposedblock, proposal) == {"code": -27,
                                                          "message": "already have block"}
    # a header without its block: headers-only until the block arrives
    later = rpc.getnewblockhex()
    header = parse_block(bytes.fromhex(later)).header
    assert rpc.submitheader(header.serialize().hex()) is None
    tips = {t["hash"]: t["status"] for t in rpc.getchaintips()}
    assert tips[header.hash_hex] == "headers-only"
    assert rpc.getblockheader(header.hash_hex)["confirmations"] == -1
    info = rpc.getblockchaininfo()
    assert info["headers"] == info["blocks"] + 1  # the best header is ahead of the tip
    assert rpc.submitheader(header.serialize().hex()) is None  # known: nothing to do
    assert rpc.submitblock(later) is None  # the block's bytes complete the entry
    assert rpc.getbestblockhash() == header.hash_hex
    assert error_of(rpc.submitheader, "00")["code"] == -22
    orphan = bytes(block.header.serialize())
    orphan = orphan[:4] + b"\x11" * 32 + orphan[36:]
    assert error_of(rpc.submitheader, orphan.hex())["message"] == \
        f"Must submit previous header ({'11' * 32}) first"
    # two blocks at the same height: preciousblock makes the later one the tip
    tip = rpc.getbestblockhash()
    rpc.invalidateblock(tip)
    [other] = rpc.generatetoaddress(1, WPKH[1])
    rpc.reconsiderblock(tip)
    assert rpc.getbestblockhash() == tip  # first seen wins the tie
    assert rpc.preciousblock(other) is None
    assert rpc.getbestblockhash() == other
    assert error_of(rpc.preciousblock, "00" * 32) == {"code": -5, "message": "Block not found"}


def test_messages_multisig_fees_and_scripts(node: NodeProcess) -> None:
    rpc = node.proxy()
    signature = rpc.signmessagewithprivkey(WIFS[0], "hello")
    assert len(base64.b64decode(signature)) == 65
    assert rpc.verifymessage(PKH[0], signature, "hello") is True
    assert rpc.verifymessage(PKH[0], signature, "hello!") is False
    assert rpc.verifymessage(PKH[1], signature, "hello") is False
    assert error_of(rpc.verifymessage, WPKH[0], signature, "hello") == {
        "code": -3, "message": "Address does not refer to key"}
    assert error_of(rpc.verifymessage, PKH[0], "%%%", "hello") == {
        "code": -3, "message": "Malformed base64 encoding"}
    assert error_of(rpc.verifymessage, "nope", signature, "hello")["code"] == -5
    assert error_of(rpc.signmessagewithprivkey, "nope", "hello") == {
        "code": -5, "message": "Invalid private key"}
    assert rpc.estimatesmartfee(6) == {"errors": ["Insufficient data or no feerate found"],
                                       "blocks": 0}
    assert error_of(rpc.estimatesmartfee, 0)["message"] == \
        "Invalid conf_target, must be between 1 and 1008"
    assert error_of(rpc.estimatesmartfee, 2, "fast")["code"] == -8
    multi = rpc.createmultisig(1, [PUBKEYS[0].hex()])
    decoded = rpc.decodescript(multi["redeemScript"])
    assert decoded["type"] == "multisig" and decoded["p2sh"] == multi["address"]
    assert decoded["desc"].startswith(f"multi(1,{PUBKEYS[0].hex()})#")
    assert decoded["segwit"]["p2sh-segwit"] == \
        rpc.createmultisig(1, [PUBKEYS[0].hex()], "p2sh-segwit")["address"]
    pkh = rpc.decodescript(p2pkh_script(hash160(PUBKEYS[0])).hex())
    assert pkh["address"] == PKH[0] and pkh["segwit"]["address"] == WPKH[0]
    assert "segwit" not in rpc.decodescript("0014" + hash160(PUBKEYS[0]).hex())
    assert "p2sh" not in rpc.decodescript("6a0100")  # OP_RETURN is not wrapped
    assert error_of(rpc.createmultisig, 2, [PUBKEYS[0].hex()])["code"] == -8
    assert error_of(rpc.createmultisig, 1, ["02" + "00" * 32])["code"] == -5
    assert error_of(rpc.createmultisig, 1, [PUBKEYS[0].hex()], "bech32m")["code"] == -5
    assert rpc.createmultisig(1, [PUBKEYS[0].hex()], "blech32") == \
        rpc.createmultisig(1, [PUBKEYS[0].hex()], "bech32")  # Elements' alias


def test_python_elementstx_drives_the_calls(node: NodeProcess) -> None:
    """python-bitcointx's RPCCaller with python-elementstx's Elements parameters (cookie found
    in DATADIR/elementsregtest/, port from the conf's section) gets the same answers, and
    elementsd's codes as its typed errors."""
    import elementstx  # noqa: F401  (registers the Elements chain parameters)
    from bitcointx import ChainParams
    from bitcointx.rpc import InvalidParameterError, RPCCaller

    conf = node.datadir / "elements.conf"
    conf.write_text(f"chain=elementsregtest\n[elementsregtest]\nrpcport={node.port}\n")
    rpc = node.proxy()
    with ChainParams("elements"):
        caller = RPCCaller(conf_file=str(conf))
        height = caller.getblockcount()
        assert caller.getblockstats(height) == rpc.getblockstats(height)
        script = p2pkh_script(hash160(PUBKEYS[0])).hex()
        assert caller.decodescript(script) == rpc.decodescript(script)
        assert caller.calculateasset("11" * 32, 0) == rpc.calculateasset("11" * 32, 0)
        with pytest.raises(InvalidParameterError):
            caller.getblockstats(height + 1)


def test_help_over_rpc_is_the_declarations(node: NodeProcess) -> None:
    """``help`` lists every registered call a client may use, and ``help CALL`` answers the
    text generated from its declaration (what tests/unit/test_rpc_help.py checks)."""
    rpc = node.proxy()
    names = [line.split()[0] for line in rpc.help().splitlines()
             if line and not line.startswith("==")]
    assert {"getblockstats", "signrawtransactionwithkey", "scantxoutset", "decodescript",
            "estimatesmartfee", "verifymessage", "testproposedblock"} <= set(names)
    for name in [*names, "calcfastmerkleroot", "echo"]:
        method = REGISTRY.get(name)
        assert method is not None and rpc.help(name) == method.help_text(), name
    assert rpc.help("nosuchcall") == "help: unknown command: nosuchcall"
