"""Hostile parameters for the wallet's sending side and wallet calls, on a node subprocess: every
call answers with elementsd's typed codes (-3 types, -4 wallet, -5 addresses and ids, -6 funds,
-8 parameters, -13/-14/-15 encryption, -22 decoding, -25/-26 refusals) and never -1 — the
one -1 elementsd gives for a well-counted call is UniValue's "JSON integer out of range" for a
fractional number where an integer belongs — nor an internal error (-32603)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rpc.methods  # noqa: F401  (fills the registry)
from rpc.process import ELEMENTSD_COMMAND, NodeProcess
from rpc.registry import REGISTRY
from rpcclient import RPCError

METHODS = ("sendtoaddress", "sendmany", "gettransaction", "fundrawtransaction", "lockunspent",
           "listlockunspent", "abandontransaction", "listreceivedbyaddress",
           "getreceivedbyaddress", "listsinceblock", "destroyamount",
           "dumpissuanceblindingkey", "importissuanceblindingkey", "rawblindrawtransaction",
           "signmessage", "encryptwallet", "walletpassphrase", "walletlock",
           "walletpassphrasechange", "rescanblockchain", "settxfee")
INTEGER_OUT_OF_RANGE = "JSON integer out of range"

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(1 << 70), 1 << 70),
    st.decimals(allow_nan=False, allow_infinity=False, places=9, min_value=-10 ** 9,
                max_value=10 ** 9),
    st.text(max_size=70), st.sampled_from(["", "bitcoin", "00" * 32, "ff" * 32, "unset",
                                           "el1qq", "ert1q", "2dxk3DB5Ma6bRiXuSJSQKvRmkF9z"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6)


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    process = NodeProcess(tmp_path_factory.mktemp("fuzz") / "node", "-chain=elementsregtest",
                          "-initialfreecoins=2100000000000000", "-con_blocksubsidy=0",
                          "-anyonecanspendaremine=1", "-blindedaddresses=1",
                          "-fallbackfee=0.0002", command=ELEMENTSD_COMMAND).start(timeout=120)
    try:
        process.call("createwallet", "fuzz")
        # with -anyonecanspendaremine the genesis free coins are its own once it rescans
        process.call("rescanblockchain", 0, path="/wallet/fuzz")
        yield process
    finally:
        process.stop()


@settings(max_examples=150, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.data())
def test_hostile_parameters_get_elementsds_codes(node: NodeProcess, data: st.DataObject) -> None:
    method = REGISTRY.methods[data.draw(st.sampled_from(METHODS))]
    count = data.draw(st.integers(method.n_required, len(method.args)))
    params = [data.draw(values) for _ in range(count)]
    try:
        node.call(method.name, *params, path="/wallet/fuzz")
    except RPCError as error:
        assert error.code != -32603, (method.name, params, error.message)
        if error.code == -1:
            assert error.message == INTEGER_OUT_OF_RANGE, (method.name, params, error.message)
        return
    # a call that succeeded must not have left the wallet unusable for the next example
    node.call("getwalletinfo", path="/wallet/fuzz")


def test_wrong_counts_answer_the_help_text(node: NodeProcess) -> None:
    """As bitcoind: a call with too many parameters answers its help (-1), which names it."""
    for name in METHODS:
        method = REGISTRY.methods[name]
        with pytest.raises(RPCError) as info:
            node.call(name, *([Decimal(1)] * (len(method.args) + 1)), path="/wallet/fuzz")
        assert info.value.code == -1 and info.value.message.startswith(name)
