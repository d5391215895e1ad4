"""Addresses through the node's RPC on ``elementsregtest`` (docs/elements-regtest.md §6): the
wallet hands out Elements' ``el1q…`` / ``ert1q…`` and every call that reads an address accepts
each of Elements' kinds — ``2d…`` (P2PKH), ``X…`` (P2SH), ``CTE…`` (blinded P2PKH), ``ert1…``
and ``el1…`` — in the chain's encodings (``ctplugin.elements.address``)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from ctplugin.elements import parse_transaction
from ctplugin.elements.address import (
    BITCOIN_REGTEST,
    decode_secret,
    encode_destination,
    p2pkh_script,
    p2sh_script,
)
from ctplugin.elements.chainparams import ELEMENTS_REGTEST_ADDRESSES
from ctplugin.hashes import hash160
from ctplugin.secp256k1 import ct
from rpc.process import NodeProcess

E = ELEMENTS_REGTEST_ADDRESSES
# The functional framework's deterministic key 0 (TestNode.PRIV_KEYS) and its P2PKH address.
WIF = "cQ1PxVTn5J3qCzUqXzpNeHiPVxZcwwaJkFmZcokescXwmHWAdBoe"
P2PKH = "2doncj41FX6LahE2aspuLuQcnmgrLtfvvma"


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    process = NodeProcess(tmp_path_factory.mktemp("addresses") / "node", "-chain=elementsregtest")
    process.start()
    process.call("createwallet", "")  # elementsd creates no wallet unless asked
    try:
        yield process
    finally:
        process.stop()


def _key() -> tuple[bytes, bytes]:
    secret, _ = decode_secret(WIF, E)
    pubkey = ct.base_mul(int.from_bytes(secret, "big")).to_bytes()
    return pubkey, hash160(pubkey)


def test_the_wallet_hands_out_elements_addresses(node: NodeProcess) -> None:
    wallet = node.proxy("/wallet/")
    assert wallet.getnewaddress("", "blech32").startswith("el1q")
    assert wallet.getnewaddress("", "bech32").startswith("ert1q")
    assert wallet.getnewaddress().startswith("el1q")  # elementsd's default: blinded P2WPKH
    confidential = wallet.getnewaddress("", "blech32")
    info = wallet.getaddressinfo(confidential)
    assert info["ismine"] and info["iswitness"] and info["witness_version"] == 0
    assert info["unconfidential"].startswith("ert1q")
    assert wallet.getaddressinfo(info["unconfidential"])["confidential"] == confidential


def test_every_kind_of_address_is_read(node: NodeProcess) -> None:
    chain = node.proxy()
    pubkey, key_hash = _key()
    blinded = encode_destination(p2pkh_script(key_hash), E, pubkey)
    script_hash = encode_destination(p2sh_script(hash160(b"\x51")), E)
    assert blinded.startswith("CTE") and script_hash.startswith("X")
    expected = {
        P2PKH: (p2pkh_script(key_hash), "", False),
        blinded: (p2pkh_script(key_hash), pubkey.hex(), False),
        script_hash: (p2sh_script(hash160(b"\x51")), "", True),
    }
    for address, (script, key, isscript) in expected.items():
        info = chain.validateaddress(address)
        assert info["isvalid"], (address, info)
        assert (info["scriptPubKey"], info["confidential_key"], info["isscript"],
                info["iswitness"]) == (script.hex(), key, isscript, False)
        assert info["unconfidential"] == (P2PKH if script[0] == 0x76 else script_hash)
    # the same key's address on Bitcoin's regtest (version 111) is not one of this chain's
    bitcoin = chain.validateaddress(encode_destination(p2pkh_script(key_hash), BITCOIN_REGTEST))
    assert not bitcoin["isvalid"]
    assert bitcoin["error"] == "Invalid or unsupported Base58-encoded address."


def test_raw_outputs_pay_what_the_address_says(node: NodeProcess) -> None:
    chain = node.proxy()
    pubkey, key_hash = _key()
    blinded = encode_destination(p2pkh_script(key_hash), E, pubkey)
    wallet = node.proxy("/wallet/")
    blech = wallet.getnewaddress("", "blech32")
    raw = chain.createrawtransaction([], [{P2PKH: Decimal("1")}, {blinded: Decimal("2")},
                                          {blech: Decimal("3")}])
    outputs = parse_transaction(bytes.fromhex(raw)).outputs
    assert outputs[0].script_pubkey == p2pkh_script(key_hash) and outputs[0].nonce == b""
    assert outputs[1].script_pubkey == p2pkh_script(key_hash) and outputs[1].nonce == pubkey
    assert outputs[2].nonce == bytes.fromhex(wallet.getaddressinfo(blech)["confidential_key"])
    decoded: Any = chain.decoderawtransaction(raw)
    assert decoded["vout"][0]["scriptPubKey"]["address"] == P2PKH
    assert decoded["vout"][2]["scriptPubKey"]["address"].startswith("ert1q")
