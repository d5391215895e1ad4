"""ZMQ notifications as bitcoind publishes them (``--zmqpub<topic> tcp://127.0.0.1:PORT``).

Every message has three frames: the topic, the body, and a 4-byte little-endian sequence number
counted per topic (wrapping at 2^32). Bodies:

- ``hashblock`` / ``hashtx``: the 32-byte hash in RPC (reversed) byte order;
- ``rawblock`` / ``rawtx``: the serialized block / transaction;
- ``sequence``: hash ‖ label ``C`` (block connected) / ``D`` (disconnected) / ``A`` (added to
  the mempool) / ``R`` (removed from it, not by a block), with the 8-byte little-endian mempool
  sequence number after ``A`` and ``R``.

What publishes what, in bitcoind's order: a transaction entering the mempool → hashtx, rawtx,
sequence ``A``; leaving it for any reason but a block → sequence ``R``; a connected block → hashtx
and rawtx of each of its transactions, sequence ``C``, then hashblock and rawblock; a disconnected
block → hashtx and rawtx of each of its transactions, then sequence ``D``. Unlike bitcoind, which
announces hashblock/rawblock only for the final tip of a multi-block reorganisation, every
connected block is announced (subscribers see each block of the new branch, in order).

Topics sharing an address share one PUB socket (as bitcoind's notifiers do).
"""

from __future__ import annotations

import contextlib
import struct
import threading
from collections.abc import Callable
from typing import Any

import zmq

from ctplugin.closing import Closeable
from ctplugin.elements import Block, Transaction
from rpc.logs import category_logger
from validator import REMOVED_BLOCK, ChainListener

_U32 = struct.Struct("<I")
zmq_log = category_logger("zmq")
_U64 = struct.Struct("<Q")
TOPICS = ("hashblock", "hashtx", "rawblock", "rawtx", "sequence")


class ZmqPublisher(ChainListener, Closeable):
    def __init__(self, endpoints: dict[str, str], hwm: dict[str, int],
                 mempool_sequence: Callable[[], int]) -> None:
        unknown = set(endpoints) - set(TOPICS)
        if unknown:
            raise ValueError(f"unknown ZMQ topics: {sorted(unknown)}")
        self.endpoints = dict(endpoints)
        self.hwm = {topic: hwm.get(topic, 1000) for topic in endpoints}
        self._mempool_sequence = mempool_sequence
        self._context = zmq.Context()
        self._sockets: dict[str, zmq.Socket[Any]] = {}
        self._by_topic: dict[str, zmq.Socket[Any]] = {}
        self._sequence = dict.fromkeys(endpoints, 0)
        self._lock = threading.Lock()
        try:
            for topic in TOPICS:
                address = endpoints.get(topic)
                if address is None:
                    continue
                socket = self._sockets.get(address)
                if socket is None:
                    socket = self._context.socket(zmq.PUB)
                    self._sockets[address] = socket  # closed by close() even if bind fails
                    socket.setsockopt(zmq.SNDHWM, self.hwm[topic])
                    socket.setsockopt(zmq.TCP_KEEPALIVE, 1)
                    socket.setsockopt(zmq.LINGER, 0)
                    socket.bind(address)
                self._by_topic[topic] = socket
        except BaseException:
            self.close()
            raise

    def notifications(self) -> list[dict[str, Any]]:
        """getzmqnotifications' answer."""
        return [{"type": f"pub{topic}", "address": self.endpoints[topic], "hwm": self.hwm[topic]}
                for topic in TOPICS if topic in self.endpoints]

    def close(self) -> None:
        for socket in self._sockets.values():
            socket.close(linger=0)
        self._sockets.clear()
        self._by_topic.clear()
        if not self._context.closed:
            self._context.term()

    def _send(self, topic: str, body: bytes, hash_hex: str) -> None:
        socket = self._by_topic.get(topic)
        if socket is None:
            return
        zmq_log.debug("Publish %s %s to %s", topic, hash_hex, self.endpoints[topic])  # Core's
        with self._lock:
            sequence = self._sequence[topic]
            self._sequence[topic] = (sequence + 1) & 0xFFFFFFFF
            with contextlib.suppress(zmq.Again):  # over the high-water mark: dropped, as PUB does
                socket.send_multipart([topic.encode(), body, _U32.pack(sequence)],
                                      flags=zmq.NOBLOCK)

    def _transaction(self, tx: Transaction) -> None:
        if "hashtx" in self._by_topic:
            self._send("hashtx", tx.txid[::-1], tx.txid_hex)
        if "rawtx" in self._by_topic:
            self._send("rawtx", tx.serialize(), tx.txid_hex)

    # --- chain events -----------------------------------------------------------------------

    def transaction_added(self, tx: Transaction) -> None:
        self._transaction(tx)
        self._send("sequence", tx.txid[::-1] + b"A" + _U64.pack(self._mempool_sequence()),
                   tx.txid_hex)

    def transaction_removed(self, tx: Transaction, reason: str) -> None:
        if reason == REMOVED_BLOCK:
            return
        self._send("sequence", tx.txid[::-1] + b"R" + _U64.pack(self._mempool_sequence()),
                   tx.txid_hex)

    def block_connected(self, block: Block, height: int) -> None:
        for tx in block.transactions:
            self._transaction(tx)
        self._send("sequence", block.hash[::-1] + b"C", block.header.hash_hex)
        self._send("hashblock", block.hash[::-1], block.header.hash_hex)
        if "rawblock" in self._by_topic:
            self._send("rawblock", block.serialize(), block.header.hash_hex)

    def block_disconnected(self, block: Block, height: int) -> None:
        for tx in block.transactions:
            self._transaction(tx)
        self._send("sequence", block.hash[::-1] + b"D", block.header.hash_hex)
