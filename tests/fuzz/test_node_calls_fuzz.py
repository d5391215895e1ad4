"""Bad input to the node calls of docs/node-rpc.md §1.8, through a ``ctplugin-elementsd``
subprocess: wrong types, wrong counts and wrong values get elementsd's codes — a type error
-3, an unknown key or block -5, a bad parameter -8, an undecodable transaction, block or
proof -22, a verification failure -25/-26/-27 — and -1 only where elementsd answers -1: a
wrong argument count (the call's help text, as RPCHelpMan), an integer out of UniValue's range
("JSON integer out of range") and scantxoutset's missing scan objects. Anything else at -1
would be an unexpected exception in the handler.

Each call gets hypothesis-drawn argument lists: values of the declared kind with hostile
contents (hex that is not a transaction, out-of-range heights, unknown hashes, random
descriptors and sighash names) mixed with JSON values of any type, and lists shorter or longer
than the declaration.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bitcoinrpc.authproxy import JSONRPCException
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rpc.methods  # noqa: F401  (registers every call)
from ctplugin.elements.address import encode_destination, encode_secret
from ctplugin.elements.chainparams import ELEMENTS_REGTEST_ADDRESSES as ADDRESSES
from rpc.process import ELEMENTSD_COMMAND, NodeProcess
from rpc.registry import REGISTRY, Kind
from tests.conftest import SLOW_SCALE

CALLS = ("getblockstats", "getchaintxstats", "gettxoutproof", "verifytxoutproof",
         "scantxoutset", "preciousblock", "getmininginfo", "testproposedblock", "submitheader",
         "decodescript", "calculateasset", "rawissueasset", "rawreissueasset",
         "signrawtransactionwithkey", "createmultisig", "verifymessage",
         "signmessagewithprivkey", "estimatesmartfee", "gettxoutsetinfo")
TYPED = {-3, -5, -8, -22, -25, -26, -27}
ELEMENTSD_MISC = ("JSON integer out of range",
                  "scanobjects argument is required for the start action")


ADDRESS = encode_destination(b"\x00\x14" + bytes(20), ADDRESSES)


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    datadir: Path = tmp_path_factory.mktemp("fuzzcalls") / "node"
    process = NodeProcess(datadir, "-chain=elementsregtest", "-disablewallet",
                          command=ELEMENTSD_COMMAND)
    process.start()
    try:
        process.proxy().generatetoaddress(3, ADDRESS)
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def valid(node: NodeProcess) -> list[str]:
    """Well-formed values the hostile ones are mixed with, so the draws get past decoding: a
    raw transaction ending in a fee output, a block proposal, a proof, hashes, an address."""
    rpc = node.proxy()
    tip = rpc.getbestblockhash()
    coinbase = rpc.getblock(tip)["tx"][0]
    raw = rpc.createrawtransaction([{"txid": coinbase, "vout": 0}],
                                   [{ADDRESS: 1}, {"fee": 0.0001}])
    return [raw, rpc.getnewblockhex(), rpc.gettxoutproof([coinbase], tip), tip, coinbase,
            ADDRESS, rpc.getblockheader(tip, False)]


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                      st.text(max_size=12), st.binary(max_size=40).map(bytes.hex),
                      st.sampled_from(["ALL", "start", "status", "legacy", "bech32m",
                                       "raw(51)", "addr(x)", "wpkh(02)", "00" * 32,
                                       "0" * 64, "economical"]))
json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["txid", "vout", "desc", "asset_amount", "asset_address", "token_amount",
         "input_index", "entropy", "asset_blinder", "scriptPubKey", "amount", "range",
         "redeemScript", "witnessScript"]), inner, max_size=4)), max_leaves=6)


def of_kind(kind: Kind, valid: list[str]) -> st.SearchStrategy[Any]:
    """A value of the declared JSON type with hostile contents."""
    if kind in (Kind.STR, Kind.HEX):
        return st.one_of(st.sampled_from(valid), st.binary(max_size=90).map(bytes.hex),
                         st.text(max_size=20),
                         st.sampled_from(["ALL|ANYONECANPAY", "SINGLE|RANGEPROOF", "DEFAULT",
                                          "p2sh-segwit", "abort", "f" * 64]))
    if kind is Kind.INT:
        return st.integers(-(2**40), 2**40)
    if kind is Kind.BOOL:
        return st.booleans()
    if kind is Kind.ARR:
        return st.lists(st.one_of(json_value, st.sampled_from(valid), issuance), max_size=3)
    if kind is Kind.OBJ:
        return st.dictionaries(st.text(max_size=8), json_value, max_size=3)
    return json_value


issuance = st.fixed_dictionaries({}, optional={
    "asset_amount": st.one_of(st.integers(-2, 2**64), st.decimals(-1, 10, places=9)),
    "asset_address": st.one_of(st.just(ADDRESS), st.text(max_size=5)),
    "token_amount": st.integers(-1, 2**63), "token_address": st.just(ADDRESS),
    "blind": json_leaf, "contract_hash": st.one_of(st.just("00" * 32), json_leaf),
    "input_index": st.integers(-2, 3), "asset_blinder": st.just("01" * 32),
    "entropy": st.one_of(st.just("02" * 32), json_leaf)})
"""rawissueasset's / rawreissueasset's objects, with hostile amounts, addresses and indices."""


def arguments(name: str, valid: list[str]) -> st.SearchStrategy[list[Any]]:
    method = REGISTRY.methods[name]
    typed = st.tuples(*(st.one_of(of_kind(a.kind, valid), json_value)
                        for a in method.args)).map(list)
    cut = st.integers(0, len(method.args) + 2)
    return st.one_of(typed, st.tuples(typed, cut, st.lists(json_value, max_size=2)).map(
        lambda t: (t[0] + t[2])[:t[1]] if t[1] <= len(t[0]) else t[0] + t[2]))


prevtx = st.fixed_dictionaries(
    {"txid": st.sampled_from(["11" * 32]), "vout": st.integers(-1, 3),
     "scriptPubKey": st.one_of(st.binary(max_size=40).map(bytes.hex),
                               st.sampled_from(["a914" + "22" * 20 + "87", "0020" + "33" * 32,
                                                "0014" + "44" * 20, "5120" + "55" * 32]))},
    optional={"redeemScript": st.binary(max_size=40).map(bytes.hex),
              "witnessScript": st.binary(max_size=40).map(bytes.hex),
              "amount": st.one_of(st.integers(-1, 2**64), st.decimals(0, 1, places=8)),
              "amountcommitment": st.binary(max_size=40).map(bytes.hex)})
"""signrawtransactionwithkey's previous outputs: well-formed keys, hostile scripts and values."""


def check(node: NodeProcess, name: str, params: list[Any]) -> None:
    method = REGISTRY.methods[name]
    try:
        getattr(node.proxy(), name)(*params)
    except JSONRPCException as exc:
        code, message = exc.error["code"], exc.error["message"]
        if code == -1:
            assert message == method.help_text() or message in ELEMENTSD_MISC, (
                name, params, message)
            if message == method.help_text():  # only a wrong count answers the help
                assert not method.n_required <= len(params) <= len(method.args)
        else:
            assert code in TYPED, (name, params, exc.error)


@pytest.mark.parametrize("name", CALLS)
def test_bad_input_gets_elementsds_codes(node: NodeProcess, valid: list[str],
                                        name: str) -> None:
    @settings(max_examples=max(10, int(60 * SLOW_SCALE)), deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(arguments(name, valid))
    def run(params: list[Any]) -> None:
        check(node, name, params)

    run()
    # and the node is still answering afterwards
    assert node.proxy().getblockcount() >= 3


def test_hostile_previous_outputs_get_elementsds_codes(node: NodeProcess) -> None:
    """The transaction is well-formed and spends "11"*32:0..3; the previous outputs describe
    those coins with arbitrary scripts, redeem and witness scripts, amounts and commitments."""
    spend = node.proxy().createrawtransaction(
        [{"txid": "11" * 32, "vout": n} for n in range(3)], [{ADDRESS: 1}, {"fee": 0.0001}])

    @settings(max_examples=max(10, int(60 * SLOW_SCALE)), deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(prevtx, max_size=3), st.sampled_from(["ALL", "NONE|ANYONECANPAY",
                                                          "SINGLE|RANGEPROOF", "DEFAULT"]))
    def run(prevtxs: list[dict[str, Any]], sighash: str) -> None:
        check(node, "signrawtransactionwithkey",
              [spend, [encode_secret(bytes([1]) * 32, ADDRESSES)], prevtxs, sighash])

    run()
