"""Elements' mempool policy through the node's RPC (docs/elements-regtest.md §8): a node started
with elementsd's relay options answers ``testmempoolaccept`` with Elements' reject reasons and
``sendrawtransaction`` with -26 and the same reason."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from bitcoinrpc.authproxy import JSONRPCException

from rpc.process import NodeProcess

MIN_RELAY = Decimal("0.0005")  # BTC/kvB: above the wallet's fallback fee rate (0.0002)


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    process = NodeProcess(tmp_path_factory.mktemp("policy") / "node",
                          f"-minrelaytxfee={MIN_RELAY}", "-dustrelayfee=0.00003000")
    process.start()
    try:
        yield process
    finally:
        process.stop()


def rejected(node: NodeProcess, raw: str) -> tuple[str, str]:
    """(testmempoolaccept's reject-reason, sendrawtransaction's -26 message)."""
    chain = node.proxy()
    [verdict] = chain.testmempoolaccept([raw])
    assert verdict["allowed"] is False
    with pytest.raises(JSONRPCException) as err:
        chain.sendrawtransaction(raw)
    assert err.value.code == -26
    return verdict["reject-reason"], str(err.value.message)


def signed(node: NodeProcess, outputs: list[dict[str, Any]], fee_rate: Decimal | None = None
           ) -> str:
    wallet, chain = node.proxy("/wallet/"), node.proxy()
    raw = chain.createrawtransaction([], outputs)
    options = {} if fee_rate is None else {"fee_rate": fee_rate}
    funded = wallet.fundrawtransaction(raw, options)["hex"]
    result = wallet.signrawtransactionwithwallet(wallet.blindrawtransaction(funded))
    assert result["complete"] is True
    return str(result["hex"])


def test_relay_fee_is_the_configured_one(node: NodeProcess) -> None:
    chain, wallet = node.proxy(), node.proxy("/wallet/")
    info = chain.getmempoolinfo()
    assert Decimal(str(info["minrelaytxfee"])) == MIN_RELAY
    # the wallet never pays less than the relay fee on its own (Core's GetRequiredFeeRate),
    # but an explicit rate is fundrawtransaction's to give: 20 sat/vB = 0.0002 BTC/kvB
    assert chain.testmempoolaccept([signed(node, [{wallet.getnewaddress(): Decimal("1")}])])[
        0]["allowed"] is True
    cheap = signed(node, [{wallet.getnewaddress(): Decimal("1")}], fee_rate=Decimal(20))
    reason, message = rejected(node, cheap)
    assert reason == "min relay fee not met" and "min relay fee not met" in message
    enough = signed(node, [{wallet.getnewaddress(): Decimal("1")}], fee_rate=Decimal(60))
    [verdict] = chain.testmempoolaccept([enough])
    assert verdict["allowed"] is True, verdict
    chain.sendrawtransaction(enough)


def test_version_and_dust(node: NodeProcess) -> None:
    wallet = node.proxy("/wallet/")
    good = signed(node, [{wallet.getnewaddress(): Decimal("1")}], fee_rate=Decimal(60))
    version_4 = (4).to_bytes(4, "little").hex() + good[8:]  # standardness comes before scripts
    assert rejected(node, version_4)[0] == "version"
    explicit = [wallet.getaddressinfo(wallet.getnewaddress())["unconfidential"]
                for _ in range(2)]
    # -dustrelayfee=0.00003: an explicit P2TR output (78 bytes) + 67 costs 435 sat to spend
    tiny = Decimal("0.00000434")
    one_dust = signed(node, [{explicit[0]: tiny}], fee_rate=Decimal(60))
    reason, message = rejected(node, one_dust)
    assert reason == "dust" and "tx with dust output must be 0-fee" in message
    two_dust = signed(node, [{explicit[0]: tiny}, {explicit[1]: tiny}], fee_rate=Decimal(60))
    assert rejected(node, two_dust)[0] == "dust"
    at_threshold = signed(node, [{explicit[0]: Decimal("0.00000435")}], fee_rate=Decimal(60))
    [verdict] = node.proxy().testmempoolaccept([at_threshold])
    assert verdict["allowed"] is True, verdict
