"""The regtest node end to end, driven as elementsd is: a node subprocess on 127.0.0.1, real
third-party clients (python-bitcoinrpc's AuthServiceProxy, python-bitcointx's RPCCaller with
cookie discovery, ``ctplugin cli``), ZMQ subscribers.

One scenario, ``test_one_node_from_genesis_to_sigkill``: a node's life in named steps, each
building on the chain and wallets the previous ones left (mining, a confidential send between two
wallets, blinders, unblinding, invalidate/reconsider, a competing branch that wins, error codes,
third-party clients, restart, SIGKILL during mining). The steps are ``step_*`` functions so a
failure names the step; they are not separate tests because none means anything alone.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import zmq
from bitcoinrpc.authproxy import JSONRPCException
from bitcointx import ChainParams
from bitcointx.rpc import JSONRPCError, RPCCaller

from ctplugin.elements import parse_block, parse_transaction
from ctplugin.pedersen import commit, generator_generate, generator_generate_blinded
from regtest.builder import make_block
from rpc.process import NodeProcess, free_port
from tests.conftest import REPO

BLOCKS_TO_MATURITY = 101


class Subscriber:
    """A ZMQ SUB socket collecting (topic, body, sequence) messages."""

    def __init__(self, address: str, topics: list[str]) -> None:
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.SUB)
        self.socket.setsockopt(zmq.RCVTIMEO, 10_000)
        for topic in topics:
            self.socket.setsockopt(zmq.SUBSCRIBE, topic.encode())
        self.socket.connect(address)

    def receive(self, n: int) -> list[tuple[str, bytes, int]]:
        out = []
        for _ in range(n):
            topic, body, seq = self.socket.recv_multipart()
            out.append((topic.decode(), body, int.from_bytes(seq, "little")))
        return out

    def drain(self, quiet: float = 0.5) -> list[tuple[str, bytes, int]]:
        """Everything that arrives until ``quiet`` seconds pass without a message."""
        out = []
        while self.socket.poll(int(quiet * 1000)):
            topic, body, seq = self.socket.recv_multipart()
            out.append((topic.decode(), body, int.from_bytes(seq, "little")))
        return out

    def close(self) -> None:
        self.socket.close(linger=0)
        self.context.term()


@dataclass
class Env:
    """The node under test, its ZMQ subscriber, and what earlier steps left for later ones."""

    node: NodeProcess
    zmq: Subscriber
    txid: str = ""
    """alice's confidential send to bob (step_confidential_send_between_wallets)."""
    bob_address: str = ""
    send_block: str = ""
    """The block that confirmed ``txid``."""


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    zmq_address = f"tcp://127.0.0.1:{free_port()}"
    node = NodeProcess(tmp_path / "node", "--txindex", "--zmqpubhashblock", zmq_address,
                       "--zmqpubsequence", zmq_address, "--zmqpubrawtx", zmq_address)
    node.start()
    subscriber = Subscriber(zmq_address, ["hashblock", "sequence", "rawtx"])
    time.sleep(0.5)  # ZMQ's slow joiner: let the subscription reach the publisher
    try:
        yield Env(node, subscriber)
    finally:
        subscriber.close()
        node.stop()


def rpc(env: Env, wallet: str | None = None) -> Any:
    return env.node.proxy(f"/wallet/{wallet}" if wallet is not None else "")


def check_blinders(utxo: dict[str, Any]) -> None:
    """listunspent's blinders open its commitments (blinders are uint256 hex: reversed)."""
    asset = bytes.fromhex(utxo["asset"])[::-1]
    abf = bytes.fromhex(utxo["assetblinder"])[::-1]
    vbf = bytes.fromhex(utxo["amountblinder"])[::-1]
    value = int(Decimal(utxo["amount"]) * 100_000_000)
    generator = generator_generate_blinded(asset, abf) if any(abf) else generator_generate(asset)
    if "assetcommitment" in utxo:
        assert generator.serialize().hex() == utxo["assetcommitment"]
    if "amountcommitment" in utxo:
        assert commit(value, vbf, generator).serialize().hex() == utxo["amountcommitment"]


def test_one_node_from_genesis_to_sigkill(env: Env) -> None:
    """The steps below, in order, on one node (module docstring)."""
    step_fresh_node_and_mining(env)
    step_confidential_send_between_wallets(env)
    step_unblindrawtransaction(env)
    step_invalidate_and_reconsider(env)
    step_longer_competing_branch_wins(env)
    step_error_codes(env)
    step_python_bitcointx_with_cookie_discovery(env)
    step_ctplugin_cli(env)
    step_restart_keeps_chain_and_wallets(env)
    step_sigkill_while_mining(env)


def step_fresh_node_and_mining(env: Env) -> None:
    node = rpc(env)
    assert node.getblockcount() == 0
    info = node.getblockchaininfo()
    assert info["chain"] == "ctregtest" and info["blocks"] == 0
    assert node.listwallets() == [""]
    balance = node.getbalance()
    assert balance["bitcoin"] == Decimal("21000000.00000000")  # the genesis coins
    address = node.getnewaddress()
    assert address.startswith("el1")
    hashes = node.generatetoaddress(BLOCKS_TO_MATURITY, address)
    assert len(hashes) == BLOCKS_TO_MATURITY and node.getblockcount() == BLOCKS_TO_MATURITY
    assert node.getbestblockhash() == hashes[-1] == node.getblockhash(BLOCKS_TO_MATURITY)
    block = node.getblock(hashes[0])
    assert block["height"] == 1 and block["confirmations"] == BLOCKS_TO_MATURITY
    assert block["previousblockhash"] == node.getblockhash(0)
    assert block["signblock_challenge"] == "51" and "difficulty" not in block
    header = node.getblockheader(hashes[0], False)
    assert node.getblock(hashes[0], 0).startswith(header)
    messages = env.zmq.receive(2 * BLOCKS_TO_MATURITY + BLOCKS_TO_MATURITY)
    blocks = [body.hex() for topic, body, _ in messages if topic == "hashblock"]
    assert blocks == hashes  # every connected block, in order
    sequences = [seq for topic, _, seq in messages if topic == "hashblock"]
    assert sequences == list(range(BLOCKS_TO_MATURITY))
    connects = [body for topic, body, _ in messages if topic == "sequence"]
    assert all(body[32:] == b"C" for body in connects) and len(connects) == BLOCKS_TO_MATURITY


def step_confidential_send_between_wallets(env: Env) -> None:
    node = rpc(env)
    assert node.createwallet("bob", False, False, "", False, True, True) == {"name": "bob"}
    alice, bob = rpc(env, ""), rpc(env, "bob")
    with pytest.raises(JSONRPCException) as info:
        node.getbalance()  # two wallets loaded: the bare URL is ambiguous
    assert info.value.code == -19
    bob_address = bob.getnewaddress("from alice")
    info = bob.getaddressinfo(bob_address)
    assert info["ismine"] and info["confidential_key"] and info["labels"] == ["from alice"]
    assert not alice.getaddressinfo(bob_address)["ismine"]
    env.zmq.drain()
    txid = alice.sendtoaddress(bob_address, Decimal("1.5"))
    assert node.getrawmempool() == [txid]
    decoded = node.getrawtransaction(txid, True)
    blinded = [o for o in decoded["vout"] if "valuecommitment" in o]
    assert len(blinded) == 2 and all("surjectionproof" in o for o in blinded)
    assert bob.getbalances()["mine"]["untrusted_pending"]["bitcoin"] == Decimal("1.5")
    [_topic, raw, _seq] = next(m for m in env.zmq.receive(2) if m[0] == "rawtx")
    assert parse_transaction(raw).txid_hex == txid
    mined = node.generatetoaddress(1, alice.getnewaddress())
    assert node.getrawmempool() == []
    assert bob.getbalance()["bitcoin"] == Decimal("1.5")
    assert bob.getbalance("*", 0, False, False, "bitcoin") == Decimal("1.5")
    fee = -alice.gettransaction(txid)["fee"]["bitcoin"]
    assert Decimal(0) < fee < Decimal("0.001")
    balances = alice.getbalances()["mine"]
    assert balances["trusted"]["bitcoin"] == Decimal("21000000") - Decimal("1.5") - fee
    assert balances["immature"]["bitcoin"] == fee  # the block's fee, to alice's coinbase
    [coin] = bob.listunspent()
    assert coin["txid"] == txid and coin["amount"] == Decimal("1.5") and coin["confirmations"] == 1
    # elementsd lists the unconfidential address (ExtractDestination of the scriptPubKey)
    unconfidential = bob.getaddressinfo(bob_address)["unconfidential"]
    assert coin["address"] == unconfidential and coin["label"] == "from alice"
    check_blinders(coin)
    change = [u for u in alice.listunspent() if u["txid"] == txid]
    assert len(change) == 1 and "amountcommitment" in change[0]
    check_blinders(change[0])
    tx_info = bob.gettransaction(txid)
    assert tx_info["amount"]["bitcoin"] == Decimal("1.5") and tx_info["blockhash"] == mined[0]
    assert [d["category"] for d in tx_info["details"]] == ["receive"]
    env.txid, env.bob_address, env.send_block = txid, bob_address, mined[0]


def step_unblindrawtransaction(env: Env) -> None:
    node, bob = rpc(env), rpc(env, "bob")
    txid = env.txid
    raw = node.getrawtransaction(txid, False, env.send_block)
    unblinded = parse_transaction(bytes.fromhex(bob.unblindrawtransaction(raw)["hex"]))
    explicit = [o for o in unblinded.outputs if isinstance(o.value, int) and o.script_pubkey]
    assert [o.value for o in explicit] == [150_000_000]  # bob's output, and only bob's
    assert len([o for o in unblinded.outputs if not isinstance(o.value, int)]) == 1


def step_invalidate_and_reconsider(env: Env) -> None:
    node, bob = rpc(env), rpc(env, "bob")
    tip = node.getbestblockhash()
    assert tip == env.send_block
    node.invalidateblock(tip)
    assert node.getblockcount() == BLOCKS_TO_MATURITY
    assert node.getrawmempool() == [env.txid]  # back in the mempool
    assert bob.gettransaction(env.txid)["confirmations"] == 0
    assert bob.getbalances()["mine"]["untrusted_pending"]["bitcoin"] == Decimal("1.5")
    assert node.getblockheader(tip)["confirmations"] == -1
    tips = {t["hash"]: t["status"] for t in node.getchaintips()}
    assert tips[tip] == "invalid"
    node.reconsiderblock(tip)
    assert node.getbestblockhash() == tip and node.getrawmempool() == []
    assert bob.getbalance()["bitcoin"] == Decimal("1.5")


def step_longer_competing_branch_wins(env: Env) -> None:
    node, alice, bob = rpc(env), rpc(env, ""), rpc(env, "bob")
    env.zmq.drain()
    fork_height = node.getblockcount()
    fork = node.getbestblockhash()
    txid = alice.sendtoaddress(bob.getnewaddress(), Decimal("0.25"))
    ours = node.generatetoaddress(2, alice.getnewaddress())  # txid confirmed in ours[0]
    assert bob.gettransaction(txid)["confirmations"] == 2
    env.zmq.drain()
    # A competing branch of three blocks from the fork, made outside the node.
    prev = bytes.fromhex(fork)[::-1]
    # after the fork's median time (the node's own blocks run ahead of the wall clock when
    # mined faster than one a second, as Core's do): time-too-old otherwise
    time_now = max(int(time.time()), node.getblockheader(fork)["time"]) + 1
    branch = []
    for i in range(3):
        block = make_block(prev, fork_height + 1 + i, time_now + i, [], b"\x51")
        branch.append(block)
        prev = block.hash
    assert node.submitblock(branch[0].serialize().hex()) == "inconclusive"  # side branch
    assert node.submitblock(branch[1].serialize().hex()) == "inconclusive"  # a tie: first wins
    assert node.getbestblockhash() == ours[-1]
    assert node.submitblock(branch[2].serialize().hex()) is None  # longer: reorganisation
    assert node.getbestblockhash() == branch[2].header.hash_hex
    assert node.submitblock(branch[2].serialize().hex()) == "duplicate"
    tips = {t["hash"]: (t["status"], t["branchlen"]) for t in node.getchaintips()}
    assert tips[ours[-1]] == ("valid-fork", 2)
    assert tips[branch[2].header.hash_hex] == ("active", 0)
    assert node.getrawmempool() == [txid]  # the reorged-out transaction is back
    assert bob.gettransaction(txid)["confirmations"] == 0
    received = env.zmq.receive(16)
    sequence = [(body[:32].hex(), body[32:33]) for topic, body, _ in received
                if topic == "sequence"]
    labels = [label for _, label in sequence]
    assert labels == [b"D", b"D", b"C", b"C", b"C", b"A"]
    assert sequence[0][0] == ours[1] and sequence[1][0] == ours[0]
    assert sequence[-1][0] == txid
    connected = [h for h, label in sequence if label == b"C"]
    assert connected == [b.header.hash_hex for b in branch]
    node.generatetoaddress(1, alice.getnewaddress())
    assert bob.gettransaction(txid)["confirmations"] == 1


def step_error_codes(env: Env) -> None:
    node, alice = rpc(env), rpc(env, "")

    def code(fn: Any, *args: Any) -> int:
        with pytest.raises(JSONRPCException) as info:
            fn(*args)
        return int(info.value.code)

    assert code(node.getblockhash, 10_000) == -8
    assert code(node.getblockhash, "1") == -3
    assert code(node.getblock, "00" * 32) == -5
    assert code(node.getblock, "xyz") == -8
    assert code(node.getblockcount, 1) == -1
    assert code(node.decoderawtransaction, "00") == -22
    assert code(node.sendrawtransaction, "zz") == -22
    assert code(node.getrawtransaction, "11" * 32) == -5
    assert code(node.submitblock, "00") == -22
    assert code(node.nosuchmethod) == -32601
    assert code(node.generate, 1) == -32601  # hidden, replaced by generatetoaddress
    assert code(alice.sendtoaddress, "nonsense", 1) == -5
    assert code(alice.sendtoaddress, env.bob_address, "x") == -3
    assert code(alice.sendtoaddress, env.bob_address, -1) == -3
    assert code(alice.sendtoaddress, env.bob_address, 30_000_000) == -3  # > MAX_MONEY
    assert code(alice.sendtoaddress, env.bob_address, 21_000_000) == -6
    assert code(rpc(env, "nosuch").getbalance) == -18
    assert node.gettxout(env.txid, 99) is None
    coin = node.gettxout(env.txid, 0)
    assert coin["confirmations"] >= 1 and ("valuecommitment" in coin or "value" in coin)
    assert node.validateaddress("nonsense")["isvalid"] is False
    # A transaction spending the same coins again: rejected, not in the pool.
    tx = parse_transaction(bytes.fromhex(node.getrawtransaction(env.txid)))
    assert code(node.sendrawtransaction, tx.hex()) == -27


def step_python_bitcointx_with_cookie_discovery(env: Env) -> None:
    node = env.node
    # The cookie sits in the chain's directory, DATADIR/ctregtest/.cookie; with bitcoin mainnet
    # parameters RPCCaller looks beside its conf file (no chain subdirectory), so the conf goes
    # there. Other tests may have selected Elements parameters process-wide (python-elementstx
    # does on import).
    conf = node.netdir / "rpccaller.conf"
    conf.write_text(f"rpcport={node.port}\nrpcconnect=127.0.0.1\n")
    with ChainParams("bitcoin"):
        caller = RPCCaller(conf_file=str(conf))  # finds the .cookie beside its conf
    assert caller.getblockcount() == rpc(env).getblockcount()
    assert caller.getblockhash(0) == rpc(env).getblockhash(0)
    with pytest.raises(JSONRPCError) as info:
        caller.getblockhash(-1)
    assert info.value.error["code"] == -8
    # The wallet calls of the scenario through RPCCaller too (its wallet URLs take the
    # credentials in the URL, as python-bitcointx has no -rpcwallet of its own).
    user, password = node.credentials()
    alice, bob = (RPCCaller(service_url=f"http://{user}:{password}@127.0.0.1:{node.port}"
                            f"/wallet/{name}") for name in ("", "bob"))
    before = bob.getbalance()["bitcoin"]
    address = bob.getnewaddress()
    assert bob.getaddressinfo(address)["confidential_key"]
    txid = alice.sendtoaddress(address, Decimal("0.5"))
    raw = caller.getrawtransaction(txid)
    blinded = [o for o in caller.decoderawtransaction(raw)["vout"] if "valuecommitment" in o]
    assert len(blinded) == 2
    [block] = caller.generatetoaddress(1, alice.getnewaddress())
    assert caller.getblock(block)["tx"][1] == txid
    assert bob.getbalance()["bitcoin"] == before + Decimal("0.5")
    [coin] = [u for u in bob.listunspent() if u["txid"] == txid]
    assert coin["amount"] == Decimal("0.5")
    assert coin["address"] == bob.getaddressinfo(address)["unconfidential"]
    check_blinders(coin)
    [change] = [u for u in alice.listunspent() if u["txid"] == txid]
    check_blinders(change)
    unblinded = parse_transaction(bytes.fromhex(bob.unblindrawtransaction(raw)["hex"]))
    assert [o.value for o in unblinded.outputs if isinstance(o.value, int)
            and o.script_pubkey] == [50_000_000]
    wrong = RPCCaller(service_url=f"http://__cookie__:wrong@127.0.0.1:{node.port}")
    with pytest.raises(JSONRPCError) as info:
        wrong.getblockcount()
    assert info.value.error["code"] == -342  # the client's "non-JSON HTTP response" (a 401)
    assert "401" in info.value.error["message"]


def step_ctplugin_cli(env: Env) -> None:
    node = env.node

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "apps.main", "cli", "--datadir",
                               str(node.datadir), f"-rpcport={node.port}", *args],
                              cwd=REPO, capture_output=True, text=True, timeout=60)

    height = rpc(env).getblockcount()
    result = cli("getblockcount")
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{height}\n", "")
    result = cli("getblockhash", "0")
    assert result.stdout.strip() == rpc(env).getblockhash(0)  # a string: printed raw
    result = cli("--rpcwallet=bob", "getbalance")
    assert result.returncode == 0 and result.stdout.startswith('{\n  "bitcoin": ')
    result = cli("getblockhash", "999999")
    assert result.returncode == 8
    assert result.stderr == "error code: -8\nerror message:\nBlock height out of range\n"
    result = cli("getbalance")
    assert result.returncode == 19 and result.stderr.startswith("error code: -19\n")
    assert '"--rpcwallet=<walletname>"' in result.stderr
    result = cli("--named", "getblock", f"blockhash={rpc(env).getblockhash(1)}", "verbosity=1")
    assert result.returncode == 0 and '"height": 1,' in result.stdout
    result = cli("--rpcpassword=wrong", "getblockcount")
    assert result.returncode == 1
    assert result.stderr == "error: Authorization failed: Incorrect rpcuser or rpcpassword\n"


def step_restart_keeps_chain_and_wallets(env: Env) -> None:
    node = env.node
    before = rpc(env)
    tip, height = before.getbestblockhash(), before.getblockcount()
    bob_balance = rpc(env, "bob").getbalance()
    alice_balance = rpc(env, "").getbalances()
    assert node.stop() == 0
    assert not node.cookie_path.exists()
    node.start()
    after = rpc(env)
    assert (after.getbestblockhash(), after.getblockcount()) == (tip, height)
    assert sorted(after.listwallets()) == ["", "bob"]
    assert rpc(env, "bob").getbalance() == bob_balance
    assert rpc(env, "").getbalances() == alice_balance
    assert rpc(env, "bob").gettransaction(env.txid)["txid"] == env.txid


def step_sigkill_while_mining(env: Env) -> None:
    node = env.node
    start_height = rpc(env).getblockcount()
    address = rpc(env, "").getnewaddress()
    rpc(env, "").sendtoaddress(env.bob_address, Decimal("0.01"))
    errors: list[BaseException] = []

    def mine() -> None:
        try:
            rpc(env, "").generatetoaddress(50, address)
        except BaseException as exc:  # the connection dies with the node
            errors.append(exc)

    env.zmq.drain()
    miner = threading.Thread(target=mine)
    miner.start()
    # Blocks take a millisecond or two: kill on the ZMQ announcement of the fifth one.
    seen = 0
    while seen < 5:
        topic, _body, _seq = env.zmq.receive(1)[0]
        seen += topic == "hashblock"
    node.kill()
    miner.join(30)
    assert errors  # it did not finish: killed in the middle
    node.start()
    after = rpc(env)
    height = after.getblockcount()
    assert start_height + 5 <= height < start_height + 50, height - start_height
    tip = after.getbestblockhash()
    assert after.getblock(tip)["height"] == height
    for wallet in ("", "bob"):
        info = rpc(env, wallet).getwalletinfo()
        assert info["lastprocessedblock"] == {"hash": tip, "height": height}
    bob = rpc(env, "bob")
    confirmed = [t for t in bob.listtransactions("*", 100) if t["amount"] == Decimal("0.01")]
    assert confirmed and confirmed[0]["confirmations"] == height - start_height
    assert bob.getbalance()["bitcoin"] == sum(Decimal(u["amount"]) for u in bob.listunspent())
    block = parse_block(bytes.fromhex(after.getblock(tip, 0)))
    assert block.header.height == height

