"""The P2P layer between node subprocesses on 127.0.0.1 (docs/p2p.md): handshake and
getpeerinfo, a chain mined on one node reaching the others, a confidential transaction relayed
into another mempool, misbehaving connections cut without harm to the node, and the Elements
test framework's own P2P client (an independent implementation) talking to our node."""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from ctplugin.elements import parse_block, parse_transaction
from net import messages as m
from rpc.process import NodeProcess, free_port
from tests.conftest import shared_path


def p2p_node(datadir: Path, *args: str) -> NodeProcess:
    """A node listening for P2P on 127.0.0.1 at a free port (``.p2p_port``)."""
    port = free_port()
    node = NodeProcess(datadir, "-bind=127.0.0.1", f"-port={port}", *args)
    node.p2p_port = port  # type: ignore[attr-defined]
    return node


def wait_until(predicate: Callable[[], Any], timeout: float = 60, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what or predicate}")


def connect(a: NodeProcess, b: NodeProcess) -> None:
    """The framework's connect_nodes: a → b, then both see the other and a pong from it."""
    a.call("addnode", f"127.0.0.1:{b.p2p_port}", "onetry")  # type: ignore[attr-defined]

    def ponged(node: NodeProcess, inbound: bool) -> bool:
        return any(p["inbound"] is inbound and p["bytesrecv_per_msg"].get("pong", 0) >= 32
                   for p in node.call("getpeerinfo"))

    wait_until(lambda: ponged(a, False) and ponged(b, True), what="handshake and pongs")


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[NodeProcess]]:
    base = tmp_path_factory.mktemp("p2p")
    started: list[NodeProcess] = []
    try:
        for i in range(3):
            started.append(p2p_node(base / f"node{i}", f"-uacomment=testnode{i}").start())
        yield started
    finally:
        for node in started:
            node.stop()


def test_handshake_fills_getpeerinfo_as_the_framework_reads_it(nodes: list[NodeProcess]
                                                                ) -> None:
    a, b, c = nodes
    connect(b, a)
    connect(c, b)
    peers = {p["inbound"]: p for p in b.call("getpeerinfo")}  # b: out to a, in from c
    out, inbound = peers[False], peers[True]
    assert out["addr"] == f"127.0.0.1:{a.p2p_port}"  # type: ignore[attr-defined]
    assert out["connection_type"] == "manual" and inbound["connection_type"] == "inbound"
    assert inbound["addrbind"] == f"127.0.0.1:{b.p2p_port}"  # type: ignore[attr-defined]
    assert out["subver"] == "/ctplugin:0.1.0(testnode0)/"
    assert inbound["subver"] == "/ctplugin:0.1.0(testnode2)/"
    assert out["version"] == 70016 and out["services"] == "0000000000000409"
    assert out["relaytxes"] is True and out["startingheight"] == 0
    # every message counted with its 24-byte header: a verack is 24, a pong 32
    assert out["bytesrecv_per_msg"]["verack"] == 24 and out["bytessent_per_msg"]["ping"] == 32
    assert out["bytesrecv"] == sum(out["bytesrecv_per_msg"].values())
    assert 0 < out["pingtime"] < 10 and out["minping"] <= out["pingtime"]
    info = b.call("getnetworkinfo")
    assert (info["connections"], info["connections_in"], info["connections_out"]) == (2, 1, 1)
    assert info["networkactive"] is True and info["protocolversion"] == 70016
    assert info["subversion"] == "/ctplugin:0.1.0(testnode1)/"
    assert b.call("getconnectioncount") == 2
    totals = b.call("getnettotals")
    assert totals["totalbytesrecv"] > 0 and totals["totalbytessent"] > 0


def test_a_chain_mined_on_one_node_reaches_the_others(nodes: list[NodeProcess]) -> None:
    a, b, c = nodes
    address = a.call("getnewaddress")
    hashes = a.call("generatetoaddress", 5, address)
    for node in (b, c):  # c hears of them through b only
        wait_until(lambda node=node: node.call("getbestblockhash") == hashes[-1],
                   what="blocks to propagate")
    assert c.call("getblockcount") == a.call("getblockcount")
    peer_of_c = c.call("getpeerinfo")[0]
    assert peer_of_c["synced_headers"] == a.call("getblockcount")


def test_a_confidential_transaction_reaches_the_other_mempools_and_is_mined(
        nodes: list[NodeProcess]) -> None:
    a, b, c = nodes
    c.call("createwallet", "carol")  # every node's default wallet holds the same keys
    carol = "/wallet/carol"
    address = c.call("getnewaddress", path=carol)
    assert c.call("getaddressinfo", address, path=carol)["confidential_key"]  # blinded
    txid = a.call("sendtoaddress", address, Decimal("1.5"))
    for node in (b, c):
        wait_until(lambda node=node: txid in node.call("getrawmempool"),
                   what="the transaction to be relayed")
    raw = c.call("getrawtransaction", txid)
    assert raw == a.call("getrawtransaction", txid)  # with its proofs (relayed by wtxid)
    [block] = b.call("generatetoaddress", 1, b.call("getnewaddress"))  # mined by a third node
    for node in (a, c):
        wait_until(lambda node=node: node.call("getbestblockhash") == block, what="the block")
    assert all(node.call("getrawmempool") == [] for node in nodes)
    # c's wallet saw the peer-delivered block as a locally mined one
    received = c.call("gettransaction", txid, path=carol)
    assert received["confirmations"] == 1
    assert [(d["category"], d["amount"]) for d in received["details"]] == [
        ("receive", Decimal("1.5"))]


def test_disconnectnode_addnode_list_and_setnetworkactive(nodes: list[NodeProcess]) -> None:
    a, b, _ = nodes
    address = f"127.0.0.1:{a.p2p_port}"  # type: ignore[attr-defined]
    [peer] = [p for p in b.call("getpeerinfo") if not p["inbound"]]
    b.call("disconnectnode", "", peer["id"])
    wait_until(lambda: not any(p["subver"].endswith("(testnode1)/")
                               for p in a.call("getpeerinfo")), what="a to notice")
    with pytest.raises(Exception, match="Node not found"):
        b.call("disconnectnode", "", peer["id"])
    with pytest.raises(Exception, match="Only one of address and nodeid"):
        b.call("disconnectnode", address, peer["id"])
    b.call("addnode", address, "add")
    with pytest.raises(Exception, match="already added"):
        b.call("addnode", address, "add")
    wait_until(lambda: b.call("getaddednodeinfo")[0]["connected"], what="the added node")
    [added] = b.call("getaddednodeinfo", address)
    assert added["addednode"] == address
    b.call("addnode", address, "remove")
    assert b.call("getaddednodeinfo") == []
    with pytest.raises(Exception, match="not been added"):
        b.call("addnode", address, "remove")
    assert b.call("setnetworkactive", False) is False
    assert b.call("getconnectioncount") == 0 and not b.call("getnetworkinfo")["networkactive"]
    b.call("addnode", address, "onetry")  # refused quietly while inactive
    assert b.call("getconnectioncount") == 0
    assert b.call("setnetworkactive", True) is True
    b.call("addnode", f"127.0.0.1:{b.p2p_port}", "onetry")  # type: ignore[attr-defined]
    wait_until(lambda: b.call("getconnectioncount") == 0, what="the self-connection to end")
    connect(b, a)
    b.call("ping")


def test_partitioned_halves_converge_on_the_longer_branch(nodes: list[NodeProcess]) -> None:
    """Split a | b–c, mine 2 blocks on a and 3 on c, join: everyone follows c's branch (a
    reorganises through blocks that came over P2P) and a's wallet follows the reorg."""
    a, b, c = nodes
    for peer in a.call("getpeerinfo"):
        a.call("disconnectnode", "", peer["id"])
    wait_until(lambda: a.call("getconnectioncount") == 0 and not any(
        p["subver"].endswith("(testnode0)/") for p in b.call("getpeerinfo")), what="a apart")
    connect(c, b)  # setnetworkactive(false) on b had cut c off too
    fork = a.call("getbestblockhash")
    # our chain's blocks are deterministic (same parent, same second, empty mempool, same
    # block), so a's branch carries a payment to make it a branch of its own
    paid = a.call("sendtoaddress", a.call("getnewaddress"), Decimal("0.75"))
    short = a.call("generatetoaddress", 2, a.call("getnewaddress"))
    long = c.call("generatetoaddress", 3, c.call("getnewaddress", path="/wallet/carol"))
    wait_until(lambda: b.call("getbestblockhash") == long[-1], what="b to follow c")
    assert a.call("getblock", fork)["confirmations"] == 3
    connect(a, b)
    wait_until(lambda: a.call("getbestblockhash") == long[-1], what="a to reorganise")
    assert a.call("getblockheader", short[-1])["confirmations"] == -1
    assert {t["status"] for t in a.call("getchaintips")} == {"active", "valid-fork"}
    # the payment left the chain with a's branch: back in a's mempool, unconfirmed in its
    # wallet, and relayed again (to b, which never saw it)
    assert a.call("gettransaction", paid)["confirmations"] == 0
    wait_until(lambda: paid in b.call("getrawmempool"), what="the payment to be relayed")


def test_added_nodes_after_a_restart_follow_core(tmp_path: Path, nodes: list[NodeProcess]
                                                ) -> None:
    """``-addnode`` is connected at start and listed by getaddednodeinfo after every restart;
    ``addnode add`` lasts until the node stops (Core keeps no added-node file)."""
    a = nodes[0]
    target = f"127.0.0.1:{a.p2p_port}"  # type: ignore[attr-defined]
    other = f"127.0.0.1:{free_port()}"
    node = p2p_node(tmp_path / "d", f"-addnode={target}", "-uacomment=testnode9")
    node.start()
    try:
        wait_until(lambda: node.call("getaddednodeinfo", target)[0]["connected"],
                   what="the -addnode connection")
        node.call("addnode", other, "add")
        assert [n["addednode"] for n in node.call("getaddednodeinfo")] == [target, other]
        node.stop()
        node.start()
        assert [n["addednode"] for n in node.call("getaddednodeinfo")] == [target]
        wait_until(lambda: node.call("getaddednodeinfo", target)[0]["connected"],
                   what="the -addnode connection after the restart")
        assert node.call("getpeerinfo")[0]["connection_type"] == "manual"
    finally:
        node.stop()


def test_zmq_publishes_peer_delivered_blocks_and_transactions(tmp_path: Path,
                                                               nodes: list[NodeProcess]) -> None:
    """hashblock / hashtx of a block and a transaction that arrived over P2P, as for local
    ones (the same ``Node.submit_block`` / ``accept_transaction`` path, the same listeners)."""
    import zmq

    a = nodes[0]
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    node = p2p_node(tmp_path / "z", f"-zmqpubhashblock={endpoint}", f"-zmqpubhashtx={endpoint}",
                    f"-zmqpubsequence={endpoint}", "-uacomment=testnode8")
    node.start()
    context = zmq.Context()
    sub = context.socket(zmq.SUB)
    try:
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.setsockopt(zmq.RCVTIMEO, 30_000)
        sub.connect(endpoint)
        time.sleep(0.3)  # ZMQ's slow joiner
        connect(node, a)
        wait_until(lambda: node.call("getbestblockhash") == a.call("getbestblockhash"),
                   what="the new node to sync")
        txid = a.call("sendtoaddress", a.call("getnewaddress"), Decimal("0.3"))
        seen = set()
        while txid not in seen:
            topic, body, _ = sub.recv_multipart()
            if topic == b"hashtx":
                seen.add(body.hex())
        [block] = a.call("generatetoaddress", 1, a.call("getnewaddress"))
        seen = set()
        while block not in seen:
            topic, body, _ = sub.recv_multipart()
            if topic == b"hashblock":
                seen.add(body.hex())
        # a reorganisation caused by blocks from a peer: the node's own block is disconnected
        # (sequence D), a's longer branch connected (C), as for a local invalidateblock
        for peer in node.call("getpeerinfo"):
            node.call("disconnectnode", "", peer["id"])
        wait_until(lambda: node.call("getconnectioncount") == 0, what="the node apart")
        # blocks are deterministic here (see the partition test), so the node's own block
        # carries a payment of its own
        node.call("sendtoaddress", node.call("getnewaddress"), Decimal("0.5"))
        [own] = node.call("generatetoaddress", 1, node.call("getnewaddress"))
        theirs = a.call("generatetoaddress", 2, a.call("getnewaddress"))
        connect(node, a)
        wait_until(lambda: node.call("getbestblockhash") == theirs[-1], what="the reorg")
        events = []
        while (theirs[-1], "C") not in events:
            topic, body, _ = sub.recv_multipart()
            if topic == b"sequence":
                events.append((body[:32].hex(), body[32:33].decode()))
        blocks = [e for e in events if e[1] in "CD"]
        assert blocks[-3:] == [(own, "D"), (theirs[0], "C"), (theirs[1], "C")]
    finally:
        sub.close(linger=0)
        context.term()
        node.stop()


def test_an_orphan_transactions_parent_is_fetched_by_txid(tmp_path: Path,
                                                          nodes: list[NodeProcess]) -> None:
    """Mempools are not exchanged on connect (Core): a child whose parent a new peer never saw
    is kept as an orphan there, the parent asked for by txid, then both accepted."""
    a = nodes[0]
    address = a.call("getnewaddress")
    parent = a.call("sendtoaddress", address, Decimal("5"))
    node = p2p_node(tmp_path / "o", "-uacomment=testnode7")
    node.start()
    try:
        connect(node, a)
        wait_until(lambda: node.call("getbestblockhash") == a.call("getbestblockhash"),
                   what="the new node to sync")
        assert parent not in node.call("getrawmempool")
        [vout] = [d["vout"] for d in a.call("gettransaction", parent)["details"]
                  if d["category"] == "receive" and d["amount"] == Decimal("5")]
        raw = a.call("createrawtransaction", [{"txid": parent, "vout": vout}],
                     [{a.call("getnewaddress"): Decimal("4.99")}, {"fee": Decimal("0.01")}])
        signed = a.call("signrawtransactionwithwallet", a.call("blindrawtransaction", raw))
        child = a.call("sendrawtransaction", signed["hex"])
        wait_until(lambda: {parent, child} <= set(node.call("getrawmempool")),
                   what="the child and its fetched parent")
    finally:
        node.stop()


# --- a raw connection, for what a well-behaved client never sends ------------------------------

class RawPeer:
    """A bare TCP connection speaking the framing of ``net.messages``."""

    def __init__(self, node: NodeProcess, magic: bytes) -> None:
        self.magic = magic
        # 60 s: an inbound peer's announcements wait for Core's shared 5 s Poisson timer,
        # which passes 10 s one time in eight and 60 s about once in 160,000
        self.sock = socket.create_connection(("127.0.0.1", node.p2p_port), timeout=60)  # type: ignore[attr-defined]
        self.buffer = b""

    def send(self, command: str, payload: bytes = b"") -> None:
        self.sock.sendall(m.encode_frame(self.magic, command, payload))

    def receive(self) -> tuple[str, bytes] | None:
        """The next message, or None once the node has closed the connection."""
        while True:
            if len(self.buffer) >= m.HEADER_SIZE:
                header = m.FrameHeader.parse(self.buffer[:m.HEADER_SIZE], self.magic)
                end = m.HEADER_SIZE + header.length
                if len(self.buffer) >= end:
                    payload, self.buffer = self.buffer[m.HEADER_SIZE:end], self.buffer[end:]
                    header.check_payload(payload)
                    return header.command, payload
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buffer += data

    def wait_for(self, command: str) -> bytes:
        while True:
            message = self.receive()
            assert message is not None, f"disconnected while waiting for {command}"
            if message[0] == command:
                return message[1]

    def handshake(self) -> None:
        version = m.Version(m.PROTOCOL_VERSION, m.NODE_NETWORK | m.NODE_WITNESS, int(time.time()),
                            12345, "/raw-test:0.1/", -1)
        self.send("version", version.serialize())
        self.wait_for("version")
        self.send("verack")
        self.wait_for("verack")

    def sync_with_ping(self, nonce: int = 77) -> None:
        self.send("ping", m.encode_u64(nonce))
        while m.decode_u64(self.wait_for("pong"), "pong") != nonce:
            pass

    def closed(self) -> bool:
        """True when the node ends the connection (the next read sees EOF)."""
        try:
            while self.receive() is not None:
                pass
        except ConnectionResetError:
            pass
        return True


def healthy(node: NodeProcess) -> None:
    assert node.call("getblockcount") >= 0
    assert all(p["subver"] != "/raw-test:0.1/" for p in node.call("getpeerinfo"))


@pytest.fixture()
def magic(nodes: list[NodeProcess]) -> bytes:
    from regtest.params import select_chain

    return select_chain(nodes[0].chain).network_magic


def test_garbage_and_another_networks_magic_end_the_connection(nodes: list[NodeProcess],
                                                               magic: bytes) -> None:
    a = nodes[0]
    peer = RawPeer(a, magic)
    peer.sock.sendall(b"\xde\xad\xbe\xef" * 16)
    assert peer.closed()
    peer = RawPeer(a, b"\xfa\xbf\xb5\xda")  # Bitcoin regtest's message start
    peer.send("version", b"")
    assert peer.closed()
    wait_until(lambda: healthy(a) is None, what="a healthy node")


def test_an_oversized_message_ends_the_connection(nodes: list[NodeProcess], magic: bytes
                                                  ) -> None:
    a = nodes[0]
    peer = RawPeer(a, magic)
    peer.handshake()
    header = (magic + b"block".ljust(12, b"\0")
              + struct.pack("<I", m.MAX_PROTOCOL_MESSAGE_LENGTH + 1) + bytes(4))
    peer.sock.sendall(header)  # the node must not wait for (or buffer) 16 MB
    assert peer.closed()
    healthy(a)


def test_a_bad_checksum_drops_the_message_and_keeps_the_peer(nodes: list[NodeProcess],
                                                             magic: bytes) -> None:
    """Core's V1Transport: the message is skipped, counted under ``*other*``."""
    a = nodes[0]
    peer = RawPeer(a, magic)
    peer.handshake()
    frame = bytearray(m.encode_frame(magic, "ping", m.encode_u64(5)))
    frame[20] ^= 0xFF
    peer.sock.sendall(bytes(frame))
    peer.sync_with_ping(6)  # still connected, the bad ping unanswered
    [info] = [p for p in a.call("getpeerinfo") if p["subver"] == "/raw-test:0.1/"]
    assert info["bytesrecv_per_msg"]["*other*"] == 32
    peer.sock.close()


def test_a_malformed_payload_or_invalid_block_disconnects_the_peer(nodes: list[NodeProcess],
                                                                   magic: bytes) -> None:
    a = nodes[0]
    peer = RawPeer(a, magic)
    peer.handshake()
    peer.send("inv", b"\x03")  # three entries announced, none there
    assert peer.closed()
    peer = RawPeer(a, magic)
    peer.handshake()
    a.call("sendtoaddress", a.call("getnewaddress"), Decimal("0.25"))  # a blinded spend
    raw = bytes.fromhex(a.call("getnewblockhex"))
    block = parse_block(raw)
    assert len(block.transactions) >= 2
    tampered = bytearray(raw)
    tampered[-40] ^= 0x01  # inside the spend's last proof: its witness commitment fails
    height = a.call("getblockcount")
    peer.send("block", bytes(tampered))
    assert peer.closed()
    assert a.call("getblockcount") == height
    healthy(a)
    assert a.call("submitblock", raw.hex()) is None  # the untampered block is fine
    # a transaction whose range proof is broken is a consensus failure: disconnected too
    peer = RawPeer(a, magic)
    peer.handshake()
    unsigned = a.call("createrawtransaction", [], [{a.call("getnewaddress"): Decimal("0.1")}])
    funded = a.call("fundrawtransaction", unsigned)["hex"]
    signed = a.call("signrawtransactionwithwallet", a.call("blindrawtransaction", funded))["hex"]
    tx = parse_transaction(bytes.fromhex(signed))
    proof = next(o.range_proof for o in tx.outputs if o.range_proof)
    raw_tx = bytes.fromhex(signed)
    at = raw_tx.index(proof) + len(proof) // 2
    peer.send("tx", raw_tx[:at] + bytes([raw_tx[at] ^ 1]) + raw_tx[at + 1:])
    assert peer.closed()
    assert a.call("getrawmempool") == []
    log = (a.netdir / "debug.log").read_text()
    assert f"misbehaving: invalid transaction {tx.txid_hex}" in log
    healthy(a)


def test_blocks_with_a_bad_range_proof_or_a_bad_signature_cost_their_sender(
        nodes: list[NodeProcess], magic: bytes) -> None:
    """Well-formed blocks (merkle root and witness commitment right: made by
    ``regtest.builder.make_block``) whose one transaction carries a broken range proof, or a
    broken signature: each goes through ``Node.submit_block`` like any block, fails there with
    its reason, and the sender is disconnected; the node keeps its tip and serves on."""
    from dataclasses import replace

    from regtest.builder import make_block
    from regtest.params import select_chain

    a = nodes[0]
    unsigned = a.call("createrawtransaction", [], [{a.call("getnewaddress"): Decimal("0.1")}])
    funded = a.call("fundrawtransaction", unsigned)["hex"]
    signed = a.call("signrawtransactionwithwallet", a.call("blindrawtransaction", funded))["hex"]
    tx = parse_transaction(bytes.fromhex(signed))
    j = next(i for i, o in enumerate(tx.outputs) if o.range_proof)
    proof = bytearray(tx.outputs[j].range_proof)
    proof[len(proof) // 2] ^= 1
    outputs = list(tx.outputs)
    outputs[j] = replace(outputs[j], range_proof=bytes(proof))
    witness = list(tx.inputs[0].script_witness)
    witness[0] = witness[0][:10] + bytes([witness[0][10] ^ 1]) + witness[0][11:]  # inside r
    inputs = [replace(tx.inputs[0], script_witness=tuple(witness)), *tx.inputs[1:]]
    height = a.call("getblockcount")
    tip = bytes.fromhex(a.call("getbestblockhash"))[::-1]
    params = select_chain(a.chain)
    reasons = []
    for bad in (replace(tx, outputs=tuple(outputs)), replace(tx, inputs=tuple(inputs))):
        block = make_block(tip, height + 1, int(time.time()), [bad], b"\x51", params=params)
        peer = RawPeer(a, magic)
        peer.handshake()
        peer.send("block", block.serialize())
        assert peer.closed()
        assert a.call("getblockcount") == height
        log = (a.netdir / "debug.log").read_text()
        [line, *_] = [li for li in log.splitlines()
                  if f"misbehaving: invalid block {block.header.hash_hex}" in li]
        reasons.append(line.rsplit(": ", 1)[1])
    assert reasons[0] == "bad-txns-rangeproof-invalid"
    assert reasons[1].startswith("mandatory-script-verify-flag-failed") and "DER" not in reasons[1]
    healthy(a)


def test_a_connection_without_a_version_is_closed_after_peertimeout_of_node_time(
        nodes: list[NodeProcess], magic: bytes) -> None:
    """Core's InactivityCheck on its mockable clock: a connection that sends nothing is kept
    within -peertimeout (60 s) and closed once setmocktime moves the node past it."""
    a = nodes[0]
    silent = RawPeer(a, magic)
    wait_until(lambda: any(p["version"] == 0 for p in a.call("getpeerinfo")),
               what="the silent connection")
    time.sleep(1)
    assert any(p["version"] == 0 for p in a.call("getpeerinfo"))  # not yet
    a.call("setmocktime", int(time.time()) + 61)
    try:
        assert silent.closed()
    finally:
        a.call("setmocktime", 0)
    log = (a.netdir / "debug.log").read_text()
    assert "(socket no message in first 60 seconds)" in log
    healthy(a)


def test_a_transaction_below_a_peers_feefilter_is_not_announced_to_it(
        nodes: list[NodeProcess], magic: bytes) -> None:
    """Core's SendMessages: a pool transaction paying less than the peer's feefilter (sat per
    1000 vbytes) is not announced to that peer; others hear of it."""
    a = nodes[0]
    picky, plain = RawPeer(a, magic), RawPeer(a, magic)
    for peer in (picky, plain):
        peer.handshake()
    picky.send("feefilter", struct.pack("<q", 10**8))  # 1 BTC/kvB
    picky.sync_with_ping()
    txid = a.call("sendtoaddress", a.call("getnewaddress"), Decimal("0.3"))
    assert m.decode_inv(plain.wait_for("inv"), "inv") == [(m.MSG_TX, bytes.fromhex(txid)[::-1])]
    picky.send("ping", m.encode_u64(9))  # everything queued before it arrives first
    heard = []
    while (message := picky.receive()) is not None and message[0] != "pong":
        heard.append(message[0])
    assert "inv" not in heard
    for peer in (picky, plain):
        peer.sock.close()


def test_setban_refuses_and_cuts_the_banned_and_banlist_json_survives_a_restart(
        tmp_path: Path, nodes: list[NodeProcess], magic: bytes) -> None:
    """Core's setban / listbanned / clearbanned (rpc/net.cpp) and banlist.json (banman.cpp):
    a ban disconnects the matching peers and refuses them inbound; it is kept across a
    restart; errors carry Core's codes."""
    import json

    from rpcclient import RPCError

    node = p2p_node(tmp_path / "ban", "-uacomment=testnode6")
    node.start()
    try:
        peer = RawPeer(node, magic)
        peer.handshake()
        node.call("setban", "127.0.0.1", "add", 3600)
        assert peer.closed()  # the ban cut the connection
        refused = RawPeer(node, magic)
        with contextlib.suppress(OSError):  # it may be closed before this is written
            refused.sock.sendall(m.encode_frame(magic, "ping", m.encode_u64(1)))
        assert refused.closed() and node.call("getconnectioncount") == 0
        [entry] = node.call("listbanned")
        assert entry["address"] == "127.0.0.1/32" and entry["ban_duration"] == 3600
        assert 3590 <= entry["time_remaining"] <= 3600
        node.call("setban", "10.0.0.0/255.0.0.0", "add")  # a netmask; 0 = the default 24 h
        for args, code, text in [
                (("127.0.0.1", "add"), -23, "Error: IP/Subnet already banned"),
                (("10.1.2.3", "add"), -23, "Error: IP/Subnet already banned"),
                (("300.0.0.1", "add"), -30, "Error: Invalid IP/Subnet"),
                (("1.2.3.4", "add", 1000, True), -8, "Error: Absolute timestamp is in the past"),
                (("1.2.3.4", "remove"), -30, "Error: Unban failed. Requested address/subnet "
                                             "was not previously manually banned."),
                (("1.2.3.4", "ban"), -1, None)]:
            with pytest.raises(RPCError) as error:
                node.call("setban", *args)
            assert error.value.code == code
            assert text is None or error.value.message == text
        node.stop()
        saved = json.loads((node.netdir / "banlist.json").read_text())["banned_nets"]
        assert [e["address"] for e in saved] == ["127.0.0.1/32", "10.0.0.0/8"]
        node.start()
        assert [e["address"] for e in node.call("listbanned")] == ["127.0.0.1/32",
                                                                    "10.0.0.0/8"]
        node.call("setban", "127.0.0.1", "remove")
        node.call("clearbanned")
        assert node.call("listbanned") == []
        peer = RawPeer(node, magic)
        peer.handshake()  # welcome again
        peer.sock.close()
    finally:
        node.stop()


def test_the_mempool_message_is_served_to_whitelisted_peers_only(
        tmp_path: Path, nodes: list[NodeProcess], magic: bytes) -> None:
    """BIP35: our node offers no bloom filters (NODE_BLOOM), so as elementsd it answers
    ``mempool`` only to a peer whitelisted with the mempool permission (an inv of the pool,
    by wtxid on a wtxidrelay connection) and disconnects any other that asks."""
    a = nodes[0]
    peer = RawPeer(a, magic)
    peer.handshake()
    peer.send("mempool")
    assert peer.closed()
    healthy(a)
    node = p2p_node(tmp_path / "pool", "-whitelist=mempool@127.0.0.1", "-uacomment=testnode5")
    node.start()
    try:
        connect(node, a)
        txid = a.call("sendtoaddress", a.call("getnewaddress"), Decimal("0.2"))
        wait_until(lambda: txid in node.call("getrawmempool"), what="the relayed transaction")
        wtxid = node.call("getmempoolentry", txid)["wtxid"]
        client = RawPeer(node, magic)
        client.handshake()
        [info] = [p for p in node.call("getpeerinfo") if p["subver"] == "/raw-test:0.1/"]
        assert info["permissions"] == ["mempool"]
        client.send("mempool")
        items = m.decode_inv(client.wait_for("inv"), "inv")
        pool = node.call("getrawmempool")  # with any unconfirmed parent fetched with it
        assert txid in pool
        # by txid: the raw peer did not send wtxidrelay
        assert sorted(items) == sorted((m.MSG_TX, bytes.fromhex(t)[::-1]) for t in pool)
        assert wtxid != txid  # its witness carries the proofs
        client.sock.close()
    finally:
        node.stop()


# --- the Elements test framework's own P2P client -----------------------------------------------

@pytest.fixture(scope="module")
def framework() -> Iterator[Any]:
    """``test_framework`` of ../shared/elements-functional on sys.path, its network thread
    running (skipped when absent, a failure under CI)."""
    root = shared_path("elements-functional", "test_framework").parent
    sys.path.insert(0, str(root))
    try:
        from test_framework import p2p

        thread = p2p.NetworkThread()
        thread.start()
        try:
            yield p2p
        finally:
            thread.close()
    finally:
        sys.path.remove(str(root))


@pytest.fixture(scope="module")
def elements_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    node = p2p_node(tmp_path_factory.mktemp("p2p-elements") / "node", "-chain=elementsregtest",
                    "-con_blocksubsidy=5000000000", "-validatepegin=0")
    node.start()
    try:
        node.call("createwallet", "w")  # elementsd makes no wallet until asked
        yield node
    finally:
        node.stop()


def test_the_frameworks_p2p_interface_syncs_with_our_node(framework: Any,
                                                          elements_node: NodeProcess) -> None:
    """``P2PInterface`` as ``add_p2p_connection`` drives it: handshake, then a block we
    announce is fetched by it, a block it sends and one it announces (headers, our getdata)
    are connected, and a transaction it sends is accepted."""
    from test_framework.messages import (
        CBlock,
        CBlockHeader,
        CTransaction,
        from_hex,
        msg_block,
        msg_headers,
        msg_tx,
    )

    node = elements_node
    client = framework.P2PInterface()
    client.peer_connect(dstaddr="127.0.0.1", dstport=node.p2p_port,  # type: ignore[attr-defined]
                        net="elementsregtest", timeout_factor=1, supports_v2_p2p=False,
                        send_version=True)()
    client.wait_until(lambda: client.is_connected, check_connected=False)
    client.wait_for_verack()
    client.sync_with_ping()
    [peer] = node.call("getpeerinfo")
    assert peer["subver"] == "/python-p2p-tester:0.0.3/" and peer["inbound"] is True
    assert peer["addrbind"] == f"127.0.0.1:{node.p2p_port}"  # type: ignore[attr-defined]
    assert peer["addr"] == f"127.0.0.1:{client._transport.get_extra_info('sockname')[1]}"
    # blocks mined here are announced (inv), fetched by the client's getdata, delivered;
    # 101 of them: the first coinbase matures for the transaction below
    mined = node.call("generatetoaddress", 101, node.call("getnewaddress"))
    client.wait_for_block(int(mined[-1], 16))
    # the client's own block (the node's template), sent unasked
    block = from_hex(CBlock(), node.call("getnewblockhex"))
    client.send_and_ping(msg_block(block))
    block.rehash()
    assert node.call("getbestblockhash") == block.hash
    # a block the client announces with headers: the node asks for it, then connects it
    announced = from_hex(CBlock(), node.call("getnewblockhex"))
    announced.rehash()
    client.send_and_ping(msg_headers([CBlockHeader(announced)]))
    client.wait_for_getdata([announced.sha256])
    client.send_and_ping(msg_block(announced))
    assert node.call("getbestblockhash") == announced.hash
    wallet = node.call("getnewaddress")
    raw = node.call("createrawtransaction", [], [{wallet: Decimal("0.5")}])
    funded = node.call("fundrawtransaction", raw)["hex"]
    signed = node.call("signrawtransactionwithwallet", node.call("blindrawtransaction", funded))
    tx = from_hex(CTransaction(), signed["hex"])
    client.send_and_ping(msg_tx(tx))
    assert node.call("getrawmempool") == [tx.rehash()]
    client.peer_disconnect()
    wait_until(lambda: node.call("getconnectioncount") == 0, what="the client to be gone")


def test_the_frameworks_connect_nodes_and_sync_helpers_work_with_our_nodes(tmp_path: Path
                                                                           ) -> None:
    """``tests/integration/functional/p2p_framework_sync.py``, a script in Elements' framework
    style, run as the framework's own tests are (test_elements_functional): its
    connect_nodes / sync_blocks / sync_mempools / disconnect_nodes against two of our nodes."""
    import shutil
    import subprocess

    from tests.integration.test_elements_functional import write_config_ini, write_wrappers

    framework = tmp_path / "functional"
    shutil.copytree(shared_path("elements-functional"), framework)
    script = "p2p_framework_sync.py"
    shutil.copy(Path(__file__).parent / "functional" / script, framework / script)
    config_ini = tmp_path / "config.ini"
    write_config_ini(framework / "config.ini.in", config_ini, framework, tmp_path / "build")
    env = dict(os.environ, **write_wrappers(tmp_path / "bin"))
    done = subprocess.run([sys.executable, script, f"--configfile={config_ini}",
                           f"--tmpdir={tmp_path / 'run'}"], cwd=framework, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "Tests successful" in done.stdout + done.stderr
