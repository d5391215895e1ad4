"""The wallet's sending and wallet calls are declared as elementsd declares them
(src/wallet/rpc/*.cpp): the argument lists in elementsd's order, and help with Arguments,
Result and Examples generated from the one declaration (rpc/registry.py)."""

from __future__ import annotations

import pytest

import rpc.methods  # noqa: F401  (fills the registry)
from rpc.registry import REGISTRY

ARGUMENTS = {
    "sendtoaddress": ["address", "amount", "comment", "comment_to", "subtractfeefromamount",
                      "replaceable", "conf_target", "estimate_mode", "avoid_reuse",
                      "assetlabel", "ignoreblindfail", "fee_rate", "verbose"],
    "sendmany": ["dummy", "amounts", "minconf", "comment", "subtractfeefrom", "replaceable",
                 "conf_target", "estimate_mode", "output_assets", "ignoreblindfail",
                 "fee_rate", "verbose"],
    "gettransaction": ["txid", "include_watchonly", "verbose", "assetlabel"],
    "fundrawtransaction": ["hexstring", "options", "iswitness"],
    "lockunspent": ["unlock", "transactions", "persistent"],
    "listlockunspent": [],
    "abandontransaction": ["txid"],
    "listreceivedbyaddress": ["minconf", "include_empty", "include_watchonly",
                              "address_filter", "assetlabel", "include_immature_coinbase"],
    "getreceivedbyaddress": ["address", "minconf", "assetlabel", "include_immature_coinbase"],
    "listsinceblock": ["blockhash", "target_confirmations", "include_watchonly",
                       "include_removed", "include_change", "label"],
    "rescanblockchain": ["start_height", "stop_height"],
    "destroyamount": ["asset", "amount", "comment", "verbose"],
    "dumpissuanceblindingkey": ["txid", "vin"],
    "importissuanceblindingkey": ["txid", "vin", "blindingkey"],
    "rawblindrawtransaction": ["hexstring", "inputamountblinders", "inputamounts",
                               "inputassets", "inputassetblinders", "totalblinder",
                               "ignoreblindfail"],
    "signmessage": ["address", "message"],
    "encryptwallet": ["passphrase"],
    "walletpassphrase": ["passphrase", "timeout"],
    "walletpassphrasechange": ["oldpassphrase", "newpassphrase"],
    "walletlock": [],
    "settxfee": ["amount"],
}


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_elementsds_argument_list(name: str) -> None:
    method = REGISTRY.methods[name]
    assert [a.name for a in method.args] == ARGUMENTS[name]


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_help_has_result_and_examples(name: str) -> None:
    text = REGISTRY.methods[name].help_text()
    assert text.startswith(name)
    assert "\nResult:\n" in text and "\nExamples:\n" in text
    if ARGUMENTS[name]:
        assert "\nArguments:\n" in text
