"""``ctplugin demo dlc``: a Discreet Log Contract's life on a regtest node it starts itself.

A node (``ctplugin node``) starts on 127.0.0.1 in a temporary data directory; everything below
goes through its JSON-RPC, as a peer's software would drive it:

1. three deterministic oracles (``Oracle.from_seed``) announce a 10-digit BTC/USD event;
2. wallet "alice" offers a 2-of-3 contract with a piecewise-linear payout, wallet "bob"
   accepts it (every CET adaptor-signed), alice signs, bob broadcasts the funding transaction
   and it is mined;
3. two oracles attest an outcome; alice's ``dlcexecute`` finds the CET by the trie, decrypts
   bob's adaptor signature, completes and broadcasts it; once mined, each wallet's balance moves
   by its payout on the curve (the outputs are blinded: each wallet unblinds its own);
4. a second contract is refunded: refused by the validator before its locktime, accepted after.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any, TextIO

from apps.tempdirs import scratch_directory
from ctplugin.dlc.messages import announcement_json, attestation_json
from ctplugin.dlc.oracle import DigitDecompositionEvent, Oracle
from rpc.helpformat import UserHelpFormatter
from rpc.process import NodeProcess
from rpcclient import RPCError

DESCRIPTION = """\
A Discreet Log Contract's life on a regtest node this command starts itself (in a
temporary directory, on a free local port) and stops at the end:

1. three oracles announce a 10-digit BTC/USD event;
2. wallet "alice" offers a 2-of-3-oracle contract with a piecewise-linear payout, wallet
   "bob" accepts it, alice signs, bob broadcasts the funding transaction and it is mined;
3. two oracles attest the outcome; alice executes the contract, and once the closing
   transaction is mined each wallet's balance has moved by its payout;
4. a second contract is refunded: refused before its locktime, accepted after.
"""

COIN = 100_000_000
TOTAL = 2 * COIN
DIGITS = 10
CURVE = {"numDigits": DIGITS, "payoutPoints": [[0, 0], [200, 0], [800, TOTAL],
                                               [(1 << DIGITS) - 1, TOTAL]],
         "roundingMod": 1_000_000}


class _Wallet:
    """One wallet of the node, called over JSON-RPC."""

    def __init__(self, node: NodeProcess, name: str) -> None:
        self.node, self.name = node, name

    def __call__(self, method: str, *params: Any) -> Any:
        return self.node.call(method, *params, path=f"/wallet/{self.name}")

    def balance(self) -> Decimal:
        return Decimal(self("getbalances")["mine"]["trusted"]["bitcoin"])


def _timed(say: Callable[[str], None], label: str, call: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = call()
    say(f"{label} ({(time.perf_counter() - start) * 1e3:.0f} ms)")
    return result


def run(outcome: int = 613, out: TextIO = sys.stdout) -> int:
    def say(text: str) -> None:
        print(text, file=out, flush=True)

    with scratch_directory("ctplugin-dlc-demo-") as tmp:
        node = NodeProcess(tmp / "node").start()
        try:
            return _life(node, outcome, say)
        finally:
            node.stop()


def _life(node: NodeProcess, outcome: int, say: Callable[[str], None]) -> int:
    node.call("createwallet", "alice")
    node.call("createwallet", "bob")
    alice, bob, funder = _Wallet(node, "alice"), _Wallet(node, "bob"), _Wallet(node, "")
    miner = funder("getnewaddress")

    def mine(n: int = 1) -> int:
        node.call("generatetoaddress", n, miner)
        return int(node.call("getblockcount"))

    for wallet in (alice, bob):
        funder("sendtoaddress", wallet("getnewaddress"), 5)
    mine()
    say(f"node on 127.0.0.1:{node.port}; the default wallet (regtest's free coins) sent alice "
        "and bob 5 BTC each")

    oracles = [Oracle.from_seed(f"demo oracle {i}".encode()) for i in range(3)]
    event = DigitDecompositionEvent(2, False, "usd/btc", 0, DIGITS)
    announcements = [o.announce("btcusd", event, 1_700_000_000) for o in oracles]
    say(f"3 oracles announce btcusd ({DIGITS} binary digits); payout to alice: 0 up to 200, "
        "2 BTC from 800, linear between")

    def contract(refund_at: int) -> str:
        offer = _timed(say, "  dlcoffer   alice: 2-of-3 oracles, 1 BTC each", lambda: alice(
            "dlcoffer", CURVE, [announcement_json(a) for a in announcements], 2, 2, 1,
            refund_at))
        start = time.perf_counter()
        accept = bob("dlcaccept", offer["offer"])
        n_cets = len(accept["accept"]["cetAdaptorSignatures"]["ecdsaAdaptorSignatures"])
        say(f"  dlcaccept  bob: {n_cets} CET adaptor signatures made, the refund signed "
            f"({(time.perf_counter() - start) * 1e3:.0f} ms)")
        sign = _timed(say, f"  dlcsign    alice: bob's {n_cets} adaptor signatures verified, "
                           "hers made", lambda: alice("dlcsign", accept["accept"]))
        funded = bob("dlcfund", sign["sign"])
        height = mine()
        say(f"  dlcfund    bob: funding {funded['fundingTxid'][:16]}… mined at height "
            f"{height}: {alice('getdlc', sign['contractId'])['state']}")
        return str(sign["contractId"])

    say("contract 1:")
    first = contract(node.call("getblockcount") + 100)
    before = alice.balance(), bob.balance()
    attestations = [attestation_json(oracles[i].attest(announcements[i], outcome))
                    for i in (0, 2)]
    say(f"  oracles 0 and 2 attest {outcome} ({format(outcome, f'0{DIGITS}b')})")
    executed = _timed(say, "  dlcexecute alice: CET found by the trie, bob's signature "
                           "decrypted, completed, broadcast",
                      lambda: alice("dlcexecute", first, attestations))
    mine()
    gains = alice.balance() - before[0], bob.balance() - before[1]
    say(f"  mined: alice +{gains[0]:.8f} BTC, bob +{gains[1]:.8f} BTC (blinded outputs, each "
        f"unblinded by its wallet); alice's payout on the curve: {executed['payout']} BTC; "
        f"{bob('getdlc', first)['state']}")
    if gains[0] != Decimal(executed["payout"]) or sum(gains) != Decimal(TOTAL) / COIN:
        say("error: the balances do not match the payout curve")
        return 1

    say("contract 2:")
    refund_at = node.call("getblockcount") + 3
    second = contract(refund_at)
    try:
        bob("dlcrefund", second)
        say("error: the refund was accepted before its locktime")
        return 1
    except RPCError as exc:
        say(f"  dlcrefund  before height {refund_at}: refused ({exc.code} {exc.message})")
    mine(refund_at - node.call("getblockcount"))
    refund = bob("dlcrefund", second)
    mine()
    say(f"  dlcrefund  at height {refund_at}: {refund['txid'][:16]}… mined: "
        f"{alice('getdlc', second)['state']}")
    states = ", ".join(f"{c['contractId'][:8]}… {c['state']}" for c in alice("listdlcs"))
    say(f"listdlcs (alice): {states}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ctplugin demo dlc", description=DESCRIPTION,
                                     formatter_class=UserHelpFormatter)
    parser.add_argument("--outcome", type=int, default=613,
                        help=f"the attested value, 0..{(1 << DIGITS) - 1} (default 613)")
    args = parser.parse_args(argv)
    if not 0 <= args.outcome < 1 << DIGITS:
        parser.error(f"--outcome must be in 0..{(1 << DIGITS) - 1}")
    return run(args.outcome)


if __name__ == "__main__":
    sys.exit(main())
