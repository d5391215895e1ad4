"""ZMQ notifications in-process: bitcoind's three frames, per-topic sequence numbers, every
topic's body, and what each chain event publishes (the node subprocess test checks the same
over a running node)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import zmq

from ctplugin.elements import Transaction
from regtest.builder import make_block
from regtest.params import CTREGTEST, REGTEST_SEED, select_chain
from regtest.wallet import Payment, Wallet
from rpc.process import free_port
from rpc.zmqpub import ZmqPublisher


@pytest.fixture
def pubsub() -> Iterator[tuple[ZmqPublisher, zmq.Socket, int]]:  # type: ignore[type-arg]
    address = f"tcp://127.0.0.1:{free_port()}"
    sequence = [41]
    publisher = ZmqPublisher({topic: address for topic in ("hashblock", "hashtx", "rawblock",
                                                            "rawtx", "sequence")},
                             {"rawtx": 5000}, lambda: sequence[0])
    context = zmq.Context()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.setsockopt(zmq.RCVTIMEO, 5000)
    sub.connect(address)
    time.sleep(0.3)  # slow joiner
    try:
        yield publisher, sub, sequence[0]
    finally:
        sub.close(linger=0)
        context.term()
        publisher.close()


def _receive(sub: zmq.Socket, n: int) -> list[tuple[str, bytes, int]]:  # type: ignore[type-arg]
    out = []
    for _ in range(n):
        frames = sub.recv_multipart()
        assert len(frames) == 3 and len(frames[2]) == 4
        out.append((frames[0].decode(), frames[1], int.from_bytes(frames[2], "little")))
    return out


def _transaction() -> Transaction:
    wallet = Wallet(REGTEST_SEED)
    wallet.scan_block(select_chain(CTREGTEST).genesis)
    return wallet.build_transaction([Payment(1000, script_pubkey=b"\x51")], fee=500, height=1)


def test_frames_bodies_and_counters(pubsub: tuple[ZmqPublisher, zmq.Socket, int]) -> None:
    publisher, sub, mempool_sequence = pubsub
    tx = _transaction()
    publisher.transaction_added(tx)
    assert _receive(sub, 3) == [
        ("hashtx", tx.txid[::-1], 0),
        ("rawtx", tx.serialize(), 0),
        ("sequence", tx.txid[::-1] + b"A" + mempool_sequence.to_bytes(8, "little"), 0)]
    genesis = select_chain(CTREGTEST).genesis
    block = make_block(genesis.hash, 1, genesis.header.time + 1, [tx], b"\x51")
    publisher.transaction_removed(tx, "block")  # confirmed: no "R" (bitcoind)
    publisher.block_connected(block, 1)
    coinbase = block.transactions[0]
    assert _receive(sub, 7) == [
        ("hashtx", coinbase.txid[::-1], 1), ("rawtx", coinbase.serialize(), 1),
        ("hashtx", tx.txid[::-1], 2), ("rawtx", tx.serialize(), 2),
        ("sequence", block.hash[::-1] + b"C", 1),
        ("hashblock", block.hash[::-1], 0),
        ("rawblock", block.serialize(), 0)]
    publisher.block_disconnected(block, 1)
    publisher.transaction_removed(tx, "conflict")
    got = _receive(sub, 6)
    assert got[4] == ("sequence", block.hash[::-1] + b"D", 2)
    assert got[5] == ("sequence", tx.txid[::-1] + b"R" + mempool_sequence.to_bytes(8, "little"),
                      3)
    assert publisher.notifications()[0] == {"type": "pubhashblock",
                                            "address": publisher.endpoints["hashblock"],
                                            "hwm": 1000}
    assert [n["type"] for n in publisher.notifications()] == [
        "pubhashblock", "pubhashtx", "pubrawblock", "pubrawtx", "pubsequence"]
    assert publisher.notifications()[3]["hwm"] == 5000


def test_unknown_topics_and_bad_endpoints_are_refused() -> None:
    with pytest.raises(ValueError):
        ZmqPublisher({"rawnothing": "tcp://127.0.0.1:1"}, {}, lambda: 0)
    with pytest.raises(zmq.ZMQError):
        ZmqPublisher({"hashblock": "nonsense://x"}, {}, lambda: 0)
