"""elementsd's wallet model and key calls on ``ctplugin-elementsd -chain=elementsregtest``
(docs/elements-regtest.md §5.2, §6; Elements' src/wallet/load.cpp, rpc/backup.cpp,
rpc/addresses.cpp): no wallet until one is asked for, settings.json as bitcoind reads it, legacy
and descriptor wallets with their own calls and BIP32 key origins, the framework's
deterministic P2PKH keys mined to, imported and spent, the wallet-recovery flow of
feature_confidential_transactions.py, and elementsd's error codes for bad parameters
(hypothesis-driven)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin.script.descriptor import with_checksum
from rpc.process import ELEMENTSD_COMMAND, NodeProcess
from rpcclient import RPCError

FRAMEWORK_OPTIONS = ("-validatepegin=0", "-con_blocksubsidy=5000000000",
                     "-con_connect_genesis_outputs=0", "-anyonecanspendaremine=0",
                     "-blindedaddresses=0", "-keypool=1", "-fallbackfee=0.0002")
"""The framework's elements.conf values that matter here (docs/elements-regtest.md §9)."""
NODE0 = ("cQ1PxVTn5J3qCzUqXzpNeHiPVxZcwwaJkFmZcokescXwmHWAdBoe",
         "2doncj41FX6LahE2aspuLuQcnmgrLtfvvma")
NODE1 = ("cRuGzyZjb5zQQg1TbAiGK1UJBuK1UQHaFf4DXBUcPZNZ3WomNoxW",
         "2dv4oTKjmi3TF6dRq2TmasMdNtTeuqHNcPb")
"""test_node.py's deterministic keys 0 and 1: WIF and P2PKH address."""
TYPED = {-1, -3, -4, -5, -8, -11, -18, -19, -35}
"""elementsd's codes for bad input (-1 only for a wrong argument count: the help text)."""


def start(datadir: Path, *options: str) -> NodeProcess:
    return NodeProcess(datadir, "-chain=elementsregtest", *FRAMEWORK_OPTIONS, *options,
                       command=ELEMENTSD_COMMAND).start(timeout=120)


def error(node: NodeProcess, method: str, *params: Any, path: str = "") -> tuple[int, str]:
    with pytest.raises(RPCError) as info:
        node.call(method, *params, path=path)
    return info.value.code, info.value.message


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    """One node with a legacy wallet "legacy" holding key 0, which 101 blocks paid, and a
    descriptor wallet "desc"."""
    process = start(tmp_path_factory.mktemp("wallets") / "node0")
    try:
        process.call("createwallet", "legacy", False, False, "", False, False, True)
        process.call("importprivkey", NODE0[0], "coinbase", True, path="/wallet/legacy")
        process.call("createwallet", "desc")
        process.call("generatetoaddress", 101, NODE0[1])
        yield process
    finally:
        process.stop()


def test_no_wallet_until_asked_then_settings_json_as_bitcoind(tmp_path: Path) -> None:
    datadir = tmp_path / "node0"
    process = start(datadir)
    try:
        assert process.call("listwallets") == []
        assert error(process, "getbalance")[0] == -18
        assert process.call("createwallet", "")["name"] == ""
        code, message = error(process, "createwallet", "")
        assert code == -4 and "Database already exists" in message
        assert error(process, "loadwallet", "")[0] == -35
        process.call("createwallet", "second", None, None, "", None, True, True)
        assert error(process, "getbalance")[0] == -19  # two loaded: the URI must say which
        process.call("createwallet", "gone", None, None, "", None, True, True)
        process.call("unloadwallet", "gone")
        assert process.call("loadwallet", "gone", True)["name"] == "gone"
        assert error(process, "getwalletinfo", path="/wallet/nosuch")[0] == -18
    finally:
        process.stop()
    netdir = datadir / "elementsregtest"
    assert json.loads((netdir / "settings.json").read_text())["wallet"] == ["second", "gone"]
    # a listed wallet that has gone is skipped with bitcoind's warning, never re-created
    wallet_dirs = netdir / "wallets"
    for entry in (wallet_dirs / "gone").iterdir():
        entry.unlink()
    (wallet_dirs / "gone").rmdir()
    process.start()
    try:
        # "" sits on disk unlisted: Core loads it only when no -wallet is set at all, and
        # settings.json's list counts as set
        assert process.call("listwallets") == ["second"]
        assert not (wallet_dirs / "gone").exists()
    finally:
        process.stop()
    log = (netdir / "debug.log").read_text()
    assert "Skipping -wallet path that doesn't exist" in log
    process.start("-nowallet")  # -nowallet: none of them, settings.json's neither
    try:
        assert process.call("listwallets") == []
    finally:
        process.stop()
    # a settings.json that is not JSON stops the start, with bitcoind's words
    (netdir / "settings.json").write_text("{not json")
    with pytest.raises(RuntimeError, match="Settings file could not be read"):
        process.start(timeout=30)
    process.kill()
    stderr = process.stderr_text()
    assert "does not contain valid JSON" in stderr


def test_our_chains_keep_their_default_wallet(tmp_path: Path) -> None:
    process = NodeProcess(tmp_path / "node").start(timeout=120)
    try:
        assert process.call("listwallets") == [""]
        assert process.call("getwalletinfo")["descriptors"] is True
    finally:
        process.stop()


def test_legacy_wallet_mines_to_the_framework_key_and_spends_every_script_type(
        node: NodeProcess) -> None:
    legacy = "/wallet/legacy"
    info = node.call("getwalletinfo", path=legacy)
    assert info["descriptors"] is False and len(info["hdseedid"]) == 40
    assert node.call("getbalance", path=legacy) == {"bitcoin": Decimal(50)}
    assert node.call("dumpprivkey", NODE0[1], path=legacy) == NODE0[0]
    addresses = {kind: node.call("getnewaddress", "", kind, path=legacy)
                 for kind in ("legacy", "p2sh-segwit", "bech32", "bech32m", "blech32")}
    assert addresses["legacy"].startswith("2d") and addresses["p2sh-segwit"].startswith("X")
    assert addresses["bech32"].startswith("ert1q") and addresses["blech32"].startswith("el1q")
    # one payment to all five (separate sends may spend each other's unconfirmed outputs:
    # Core's coin selection takes the wallet's own trusted change and payments to itself)
    node.call("sendmany", "", {address: 2 for address in addresses.values()}, path=legacy)
    node.call("generatetoaddress", 1, NODE1[1])
    coins = node.call("listunspent", 1, 9999999, list(addresses.values()), path=legacy)
    assert len(coins) == len(addresses)
    # spend them all: P2PKH and P2SH-P2WPKH inputs are signed by the wallet
    spend = node.call("sendtoaddress", NODE1[1], 9.9, path=legacy)
    assert node.call("getmempoolentry", spend)
    info = node.call("getaddressinfo", addresses["legacy"], path=legacy)
    assert info["ismine"] and info["hdkeypath"].startswith("m/0'/0'/")
    change = node.call("getaddressinfo", node.call("getrawchangeaddress", path=legacy),
                       path=legacy)
    assert change["ischange"] and change["hdkeypath"].startswith("m/0'/1'/")
    assert info["hdmasterfingerprint"] == info["desc"].split("[")[1][:8]
    assert info["desc"].startswith("pkh([")
    nested = node.call("getaddressinfo", addresses["p2sh-segwit"], path=legacy)
    assert nested["isscript"] and nested["script"] == "witness_v0_keyhash"


def test_legacy_imports_and_their_errors(node: NodeProcess) -> None:
    legacy = "/wallet/legacy"
    watched = node.call("getnewaddress", "", "bech32", path="/wallet/desc")
    node.call("importaddress", watched, "seen", False, path=legacy)
    info = node.call("getaddressinfo", watched, path=legacy)
    assert info["iswatchonly"] and not info["ismine"] and info["labels"] == ["seen"]
    pubkey = node.call("getaddressinfo", watched, path="/wallet/desc")["pubkey"]
    multisig = node.call("addmultisigaddress", 1, [pubkey], "", "legacy", path=legacy)
    assert multisig["address"].startswith("X") and multisig["descriptor"].startswith("sh(multi(")
    assert node.call("getaddressinfo", multisig["address"], path=legacy)["sigsrequired"] == 1
    assert error(node, "importprivkey", "notakey", path=legacy)[0] == -5
    assert error(node, "importaddress", "zz", path=legacy)[0] == -5
    assert error(node, "importaddress", watched, "", False, True, path=legacy)[0] == -5
    assert error(node, "dumpprivkey", watched, path=legacy)[0] == -4
    assert error(node, "importprivkey", NODE1[0], "*", path=legacy)[0] == -11
    code, message = error(node, "importdescriptors", [], path=legacy)
    assert code == -4 and "non-descriptor wallets" in message


def test_multisig_of_our_own_keys_is_spendable_blinded(node: NodeProcess) -> None:
    """feature_issuance.py's blinded multisig: a 2-of-3 of the wallet's keys, blinded to one of
    its blinding keys by createblindedaddress + importblindingkey, is received, opened (the
    blinders are known) and spent."""
    legacy = "/wallet/legacy"
    pubkeys = [node.call("getaddressinfo", node.call("getnewaddress", path=legacy),
                         path=legacy)["pubkey"] for _ in range(3)]
    multisig = node.call("addmultisigaddress", 2, pubkeys, path=legacy)["address"]
    assert multisig.startswith("ert1q")  # -addresstype's bech32: P2WSH
    blinded = node.call("getnewaddress", "", "blech32", path=legacy)
    key = node.call("validateaddress", blinded)["confidential_key"]
    blinded_multisig = node.call("createblindedaddress", multisig, key)
    node.call("importblindingkey", blinded_multisig,
              node.call("dumpblindingkey", blinded, path=legacy), path=legacy)
    assert node.call("getaddressinfo", multisig, path=legacy)["confidential"] == blinded_multisig
    txid = node.call("sendtoaddress", blinded_multisig, 3, path=legacy)
    node.call("generatetoaddress", 1, NODE1[1])
    [coin] = [c for c in node.call("listunspent", path=legacy) if c["txid"] == txid
              and c["scriptPubKey"] == node.call("validateaddress", multisig)["scriptPubKey"]]
    assert coin["amount"] == 3 and coin["amountblinder"] != "00" * 32
    payee = node.call("getnewaddress", "", "blech32", path="/wallet/desc")
    raw = node.call("createrawtransaction", [{"txid": txid, "vout": coin["vout"]}],
                    [{payee: Decimal("2.999")}, {"fee": Decimal("0.001")}])
    blinded_raw = node.call("blindrawtransaction", raw, path=legacy)
    signed = node.call("signrawtransactionwithwallet", blinded_raw, path=legacy)
    assert signed["complete"], signed
    verdict = node.call("testmempoolaccept", [signed["hex"]])[0]
    assert verdict["allowed"], verdict


def test_descriptor_wallet_imports_combo_and_lists_bip_accounts(node: NodeProcess) -> None:
    desc = "/wallet/desc"
    assert node.call("getwalletinfo", path=desc)["descriptors"] is True
    code, message = error(node, "importprivkey", NODE1[0], path=desc)
    assert code == -4 and message == "Only legacy wallets are supported by this command"
    result = node.call("importdescriptors", [
        {"desc": with_checksum(f"combo({NODE1[0]})"), "timestamp": 0, "label": "coinbase"},
        {"desc": f"combo({NODE1[0]})", "timestamp": 0},
        {"desc": with_checksum(f"combo({NODE1[0]})")}], path=desc)
    assert result[0] == {"success": True}
    assert result[1]["error"] == {"code": -5, "message": "Missing checksum"}
    assert result[2]["error"]["code"] == -3
    assert node.call("getaddressinfo", NODE1[1], path=desc)["ismine"]
    immature = node.call("getbalances", path=desc)["mine"]["immature"]
    assert immature["bitcoin"] > 50  # the block mined to key 1 (subsidy + fees): rescanned
    listed = node.call("listdescriptors", path=desc)["descriptors"]
    active = [d["desc"] for d in listed if d["active"] and not d["internal"]]
    assert [d.split("(")[0] for d in active] == ["pkh", "sh", "tr", "wpkh"]  # sorted
    assert all("/1h/0h]tpub" in d and "/0/*)" in d for d in active)
    internal = [d["desc"] for d in listed if d["active"] and d["internal"]]
    assert len(internal) == 4 and all("/1/*)" in d for d in internal)
    change = node.call("getrawchangeaddress", "bech32", path=desc)
    change_info = node.call("getaddressinfo", change, path=desc)
    assert change_info["ischange"] and change_info["hdkeypath"].startswith("m/84h/1h/0h/1/")
    assert change_info["parent_desc"] in internal
    address = node.call("getnewaddress", "", "bech32", path=desc)
    info = node.call("getaddressinfo", address, path=desc)
    assert info["hdkeypath"].startswith("m/84h/1h/0h/0/")
    index = int(info["hdkeypath"].rsplit("/", 1)[1])
    wpkh = next(d for d in active if d.startswith("wpkh("))
    assert info["parent_desc"] == wpkh
    assert node.call("deriveaddresses", wpkh, [index, index]) == [address]
    private = node.call("listdescriptors", True, path=desc)["descriptors"]
    assert all("tprv" in d["desc"] for d in private if d["active"])


def test_descriptor_calls_without_a_wallet(node: NodeProcess) -> None:
    info = node.call("getdescriptorinfo", f"wpkh({NODE1[0]})")
    assert info["hasprivatekeys"] and not info["isrange"] and info["issolvable"]
    assert NODE1[0] not in info["descriptor"]
    assert node.call("deriveaddresses", with_checksum(f"pkh({NODE1[0]})")) == [NODE1[1]]
    code, message = error(node, "deriveaddresses", f"pkh({NODE1[0]})")
    assert (code, message) == (-5, "Missing checksum")
    assert error(node, "getdescriptorinfo", "wpkh(00)")[0] == -5


def test_wallet_recovery_from_the_dump_as_the_ct_test_does(node: NodeProcess,
                                                           tmp_path: Path) -> None:
    """feature_confidential_transactions.py test_wallet_recovery: the HD seed from
    dumpwallet's "hdseed=1" line, the master blinding key from its comment; another wallet
    with both owns the first one's confidential address."""
    node.call("createwallet", "first", False, False, "", False, False)
    first = "/wallet/first"
    blind_addr = node.call("getnewaddress", "", "blech32", path=first)
    dump = tmp_path / "blind_details"
    node.call("dumpwallet", str(dump), path=first)
    assert error(node, "dumpwallet", str(dump), path=first)[0] == -8  # never overwritten
    seed = blind = None
    for line in dump.read_text().splitlines():
        if "hdseed=1" in line:
            seed = line.split(" ")[0]
        if "Master private blinding key: " in line:
            blind = line.split("Master private blinding key: ")[1]
    assert blind == node.call("dumpmasterblindingkey", path=first) and seed is not None
    node.call("createwallet", "recover", False, False, "", False, False)
    rec = "/wallet/recover"
    wrong = node.call("getaddressinfo", blind_addr, path=rec)
    assert "pubkey" not in wrong and not wrong["ismine"]
    node.call("sethdseed", True, seed, path=rec)
    with_seed = node.call("getaddressinfo", blind_addr, path=rec)
    assert "pubkey" in with_seed and not with_seed["ismine"]
    node.call("importmasterblindingkey", blind, path=rec)
    assert node.call("dumpmasterblindingkey", path=rec) == blind
    mine = node.call("getaddressinfo", blind_addr, path=rec)
    assert mine["ismine"]
    assert node.call("getaddressinfo", mine["unconfidential"], path=rec)["confidential"] == \
        blind_addr
    assert node.call("dumpblindingkey", blind_addr, path=rec) == \
        node.call("dumpblindingkey", blind_addr, path=first)
    assert error(node, "importmasterblindingkey", "00", path=rec)[0] == -5
    node.call("unloadwallet", "recover")
    node.call("unloadwallet", "first")


def test_every_key_call_has_help_with_arguments_result_and_examples(node: NodeProcess) -> None:
    for method in ("importprivkey", "importpubkey", "importaddress", "dumpprivkey",
                   "dumpwallet", "sethdseed", "keypoolrefill", "addmultisigaddress",
                   "importdescriptors", "listdescriptors", "getdescriptorinfo",
                   "deriveaddresses", "importmasterblindingkey", "dumpissuanceblindingkey",
                   "importissuanceblindingkey", "createwallet"):
        text = node.call("help", method)
        assert text.startswith(method)
        for section in ("Result:", "Examples:"):
            assert section in text, (method, section)
        if method not in ("listdescriptors",):
            assert "Arguments:" in text or method == "keypoolrefill", method


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**40, 2**40)
                     | st.text(max_size=80) | st.sampled_from(["", "0", NODE1[0], NODE1[1]]),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)
FUZZED = {"importprivkey": "/wallet/legacy", "importpubkey": "/wallet/legacy",
          "importaddress": "/wallet/legacy", "dumpprivkey": "/wallet/legacy",
          "sethdseed": "/wallet/legacy", "addmultisigaddress": "/wallet/legacy",
          "keypoolrefill": "/wallet/legacy", "importdescriptors": "/wallet/desc",
          "listdescriptors": "/wallet/desc", "getdescriptorinfo": "",
          "deriveaddresses": "", "importmasterblindingkey": "/wallet/legacy",
          "dumpissuanceblindingkey": "/wallet/legacy",
          "importissuanceblindingkey": "/wallet/legacy"}


@settings(max_examples=60, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(sorted(FUZZED)), params=st.lists(_JSON, max_size=5))
def test_bad_parameters_get_elementsds_codes(node: NodeProcess, method: str,
                                             params: list[Any]) -> None:
    if method in ("importmasterblindingkey", "sethdseed") and params:
        params = [None if isinstance(p, str) and len(p) == 64 else p for p in params]
    try:
        node.call(method, *params, path=FUZZED[method])
    except RPCError as exc:
        assert exc.code in TYPED, (method, params, exc.code, exc.message)
        if exc.code == -1:  # only the help text for a wrong count, never a crash
            assert exc.message.startswith(method), (method, params, exc.message)
    assert node.call("getblockcount") >= 101  # still serving


def test_keys_imports_and_blinding_keys_survive_a_restart(tmp_path: Path) -> None:
    process = start(tmp_path / "node0")
    legacy, desc = "/wallet/legacy", "/wallet/desc"
    try:
        process.call("createwallet", "legacy", False, False, "", False, False, True)
        process.call("createwallet", "desc", False, False, "", False, True, True)
        process.call("importprivkey", NODE0[0], "coinbase", False, path=legacy)
        process.call("importmasterblindingkey", "11" * 32, path=legacy)
        pubkeys = [process.call("getaddressinfo", process.call("getnewaddress", path=legacy),
                                path=legacy)["pubkey"] for _ in range(2)]
        multisig = process.call("addmultisigaddress", 2, pubkeys, path=legacy)["address"]
        change = process.call("getrawchangeaddress", path=legacy)
        process.call("sethdseed", True, NODE1[0], path=legacy)
        fresh = process.call("getnewaddress", path=legacy)
        process.call("importdescriptors", [{"desc": with_checksum(f"combo({NODE1[0]})"),
                                            "timestamp": "now"}], path=desc)
        before = {address: process.call("getaddressinfo", address, path=legacy)
                  for address in (NODE0[1], multisig, change, fresh)}
        listed = process.call("listdescriptors", path=desc)
        info = process.call("getwalletinfo", path=legacy)
    finally:
        process.stop()
    process.start()
    try:
        assert sorted(process.call("listwallets")) == ["desc", "legacy"]
        for address, was in before.items():
            assert process.call("getaddressinfo", address, path=legacy) == was, address
        assert process.call("dumpmasterblindingkey", path=legacy) == "11" * 32
        assert process.call("dumpprivkey", NODE0[1], path=legacy) == NODE0[0]
        assert before[multisig]["ismine"] and before[change]["ischange"]
        assert process.call("listdescriptors", path=desc) == listed
        again = process.call("getwalletinfo", path=legacy)
        assert again["hdseedid"] == info["hdseedid"]
        assert process.call("getnewaddress", path=legacy) != fresh  # the counters persisted
    finally:
        process.stop()


def test_third_party_clients_drive_imports_sends_issuance_and_raw_blinding(
        tmp_path: Path) -> None:
    """python-bitcoinrpc's AuthServiceProxy for the wallet, python-elementstx's RPCCaller with
    Elements' elementsregtest parameters (which find DATADIR/elementsregtest/.cookie by
    themselves) for the chain: a legacy wallet imports the framework key, mines to its P2PKH
    address, issues an asset, pays a confidential address, blinds and signs a raw
    transaction."""
    import elementstx  # noqa: F401  (registers the Elements chain parameters)
    from bitcoinrpc.authproxy import AuthServiceProxy
    from bitcointx import ChainParams
    from bitcointx.rpc import RPCCaller

    process = start(tmp_path / "node0")
    try:
        conf = process.datadir / "rpccaller.conf"
        conf.write_text(f"rpcconnect=127.0.0.1\nrpcport={process.port}\n")
        with ChainParams("elements/elementsregtest"):
            chain = RPCCaller(conf_file=str(conf))
        wallet = AuthServiceProxy(process.url("/wallet/w"))
        assert chain.createwallet("w", False, False, "", False, False)["name"] == "w"
        wallet.importprivkey(NODE0[0], "coinbase", True)
        chain.generatetoaddress(101, NODE0[1])
        assert wallet.getbalance()["bitcoin"] == 50
        issued = wallet.issueasset(10, 1)
        payee = wallet.getnewaddress("", "blech32")
        wallet.sendtoaddress(payee, 2)
        chain.generatetoaddress(1, NODE1[1])
        assert wallet.getbalance()[issued["asset"]] == 10
        coin = next(c for c in wallet.listunspent() if c["address"] == payee
                    or wallet.getaddressinfo(c["address"])["confidential"] == payee)
        raw = chain.createrawtransaction([{"txid": coin["txid"], "vout": coin["vout"]}],
                                         [{wallet.getnewaddress("", "blech32"): Decimal("1.999")},
                                          {"fee": Decimal("0.001")}])
        signed = wallet.signrawtransactionwithwallet(wallet.blindrawtransaction(raw))
        assert signed["complete"]
        txid = chain.sendrawtransaction(signed["hex"])
        assert txid in chain.getrawmempool()
    finally:
        process.stop()


def test_blank_and_watch_only_wallets(node: NodeProcess) -> None:
    """createwallet's blank and disable_private_keys: no keys to hand out (elementsd's -4
    words) until sethdseed gives a blank legacy wallet a seed; a watch-only wallet refuses
    private keys and watches what it imports."""
    node.call("createwallet", "blank", False, True, "", False, False)
    blank = "/wallet/blank"
    info = node.call("getwalletinfo", path=blank)
    assert info["blank"] and info["private_keys_enabled"] and info["keypoolsize"] == 0
    assert error(node, "getnewaddress", path=blank) == (
        -4, "Error: This wallet has no available keys")
    node.call("importprivkey", NODE1[0], "", False, path=blank)  # imports work
    assert node.call("dumpprivkey", NODE1[1], path=blank) == NODE1[0]
    node.call("sethdseed", True, path=blank)
    assert not node.call("getwalletinfo", path=blank)["blank"]
    assert node.call("getnewaddress", "", "legacy", path=blank).startswith("2d")
    node.call("createwallet", "watch", True, False, "", False, True)
    watch = "/wallet/watch"
    assert not node.call("getwalletinfo", path=watch)["private_keys_enabled"]
    assert error(node, "getnewaddress", path=watch) == (
        -4, "Error: Private keys are disabled for this wallet")
    result = node.call("importdescriptors", [
        {"desc": with_checksum(f"combo({NODE1[0]})"), "timestamp": "now"},
        {"desc": with_checksum(f"addr({NODE1[1]})"), "timestamp": "now"}], path=watch)
    assert result[0]["error"]["code"] == -4 and result[1]["success"]
    assert node.call("getaddressinfo", NODE1[1], path=watch)["iswatchonly"]
    node.call("unloadwallet", "blank")
    node.call("unloadwallet", "watch")
