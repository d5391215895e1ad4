"""The connection manager's timeouts, download bookkeeping and punishments (net.connman;
docs/p2p.md §5.2, §6), in process: a real ``Node`` on genesis, a manager listening on
127.0.0.1 and bare asyncio clients speaking ``net.messages``. What needs minutes of waiting
(or an address other than 127.0.0.1) is driven through ``check_timeouts`` and the peer's state
rather than by sleeping."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from net import connman as cm
from net import messages as m
from net.connman import ConnectionManager, NetSettings, Peer
from net.permissions import Whitelist
from regtest.params import DEFAULT_CHAIN, select_chain
from rpc.process import free_port
from validator import Node

PARAMS = select_chain(DEFAULT_CHAIN)


@pytest.fixture()
def node(tmp_path: Path) -> Iterator[Node]:
    with Node.open(tmp_path / "node", PARAMS) as n:
        yield n


def settings(port: int, **extra: Any) -> NetSettings:
    return NetSettings(magic=PARAMS.network_magic, user_agent="/test:0/", listen=True,
                       bind=(("127.0.0.1", port),), **extra)


async def until(predicate: Callable[[], Any], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def run(node: Node, body: Callable[[ConnectionManager, int], Awaitable[None]],
        **extra: Any) -> None:
    port = free_port()

    async def main() -> None:
        manager = ConnectionManager(node, threading.RLock(), settings(port, **extra), port)
        await manager.start()
        try:
            await body(manager, port)
        finally:
            await manager.close()

    asyncio.run(main())


class Client:
    """A bare client: version, then verack, nothing else unless told."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @staticmethod
    async def open(port: int, handshake: bool = True) -> Client:
        client = Client(*await asyncio.open_connection("127.0.0.1", port))
        if handshake:
            version = m.Version(m.PROTOCOL_VERSION, m.NODE_NETWORK | m.NODE_WITNESS,
                                int(time.time()), 99, "/client:0/", 0)
            client.send("version", version.serialize())
            client.send("verack")
        return client

    def send(self, command: str, payload: bytes = b"") -> None:
        self.writer.write(m.encode_frame(PARAMS.network_magic, command, payload))

    def close(self) -> None:
        self.writer.close()


def only_peer(manager: ConnectionManager) -> Peer:
    [peer] = manager.peers.values()
    return peer


def test_a_connection_that_never_sends_a_version_is_dropped_after_peertimeout(node: Node
                                                                               ) -> None:
    async def body(manager: ConnectionManager, port: int) -> None:
        silent = await Client.open(port, handshake=False)
        await until(lambda: len(manager.peers) == 1)
        peer = only_peer(manager)
        manager.check_timeouts(time.monotonic() + 5)  # within -peertimeout: kept
        assert not peer.closing
        manager.check_timeouts(time.monotonic() + 11)
        assert peer.closing and manager.peers == {}
        silent.close()

    run(node, body, peer_timeout=10)


def test_a_silent_peer_and_an_unanswered_ping_time_out_after_20_minutes(node: Node) -> None:
    async def body(manager: ConnectionManager, port: int) -> None:
        clients = [await Client.open(port), await Client.open(port)]
        await until(lambda: len(manager.peers) == 2
                    and all(p.got_verack for p in manager.peers.values()))
        quiet, unanswered = sorted(manager.peers.values(), key=lambda p: p.id)
        quiet.lastrecv = int(time.time()) - cm.TIMEOUT_INTERVAL - 1
        unanswered.ping_nonce, unanswered.ping_start = 7, time.monotonic() - cm.TIMEOUT_INTERVAL
        manager.check_timeouts(time.monotonic() + 1)
        assert quiet.closing and unanswered.closing
        for client in clients:
            client.close()

    run(node, body)


def test_a_block_is_asked_of_one_peer_and_of_another_once_that_one_goes(node: Node) -> None:
    async def body(manager: ConnectionManager, port: int) -> None:
        clients = [await Client.open(port), await Client.open(port)]
        await until(lambda: len(manager.peers) == 2
                    and all(p.got_verack for p in manager.peers.values()))
        first, second = sorted(manager.peers.values(), key=lambda p: p.id)
        wanted = bytes(range(32))
        for peer in (first, second):  # both announced it
            peer.to_fetch[wanted] = 1
            manager._request_blocks(peer)
        assert wanted in first.in_flight and wanted not in second.in_flight
        assert wanted in second.to_fetch  # kept: asked of second if first goes
        infos = {info["id"]: info for info in manager.peer_infos()}
        assert infos[first.id]["inflight"] == [1] and infos[second.id]["inflight"] == []
        assert first.sent_per_msg["getdata"] == 24 + 1 + 36
        assert "getdata" not in second.sent_per_msg
        # a requested block that does not come within one block interval costs the peer
        first.downloading_since = time.monotonic() - cm.BLOCK_SPACING - 1
        manager.check_timeouts(time.monotonic())
        assert first.closing
        assert wanted in second.in_flight and second.sent_per_msg["getdata"] == 24 + 1 + 36
        for client in clients:
            client.close()

    run(node, body)


def test_a_staller_is_dropped_and_the_next_one_gets_twice_the_time(node: Node) -> None:
    async def body(manager: ConnectionManager, port: int) -> None:
        clients = [await Client.open(port), await Client.open(port)]
        await until(lambda: len(manager.peers) == 2
                    and all(p.got_verack for p in manager.peers.values()))
        staller, waiting = sorted(manager.peers.values(), key=lambda p: p.id)
        block = bytes(32)
        staller.to_fetch[block] = 1
        manager._request_blocks(staller)
        # the other peer knows of more than a download window beyond our tip and has
        # nothing to ask for but what the staller holds: the window cannot move
        waiting.best_known_height = cm.BLOCK_DOWNLOAD_WINDOW + 5
        waiting.to_fetch[block] = 1
        manager._request_blocks(waiting)
        assert staller.stalling_since > 0 and not waiting.in_flight
        manager.check_timeouts(staller.stalling_since + 1)
        assert not staller.closing
        manager.check_timeouts(staller.stalling_since + cm.BLOCK_STALLING_TIMEOUT_DEFAULT + 0.1)
        assert staller.closing and manager._stalling_timeout == 4.0
        assert block in waiting.in_flight  # released to the other peer
        for client in clients:
            client.close()

    run(node, body)


def test_misbehaviour_discourages_remote_peers_and_spares_manual_noban_and_local(
        node: Node) -> None:
    async def body(manager: ConnectionManager, port: int) -> None:
        clients = [await Client.open(port) for _ in range(4)]
        await until(lambda: len(manager.peers) == 4)
        remote, local, manual, noban = sorted(manager.peers.values(), key=lambda p: p.id)
        remote.ip = "203.0.113.5"  # as if it came from another machine
        manual.manual = True
        noban.permissions = frozenset({"noban", "download"})
        for peer in (remote, local, manual, noban):
            peer.misbehaving = "invalid block"
        assert manager._punish(remote) and remote.closing
        assert manager.banman.is_discouraged("203.0.113.5")
        assert manager._punish(local) and local.closing
        assert not manager.banman.is_discouraged("127.0.0.1")  # local: disconnect only
        assert not manager._punish(manual) and not manual.closing
        assert not manager._punish(noban) and not noban.closing
        assert manager.banman.entries() == []  # discouragement is not a ban
        for client in clients:
            client.close()

    run(node, body, whitelist=(Whitelist.parse("mempool@10.0.0.0/8"),))


def test_a_banned_address_cannot_connect_unless_whitelisted_noban(node: Node) -> None:
    from net.permissions import parse_network

    async def body(manager: ConnectionManager, port: int) -> None:
        manager.banman.ban(parse_network("127.0.0.0/8"))
        refused = await Client.open(port)
        with contextlib.suppress(ConnectionResetError):  # a reset: our version was unread
            assert await refused.reader.read() == b""  # closed at once
        assert manager.peers == {}
        refused.close()

    run(node, body)

    async def whitelisted(manager: ConnectionManager, port: int) -> None:
        manager.banman.ban(parse_network("127.0.0.1"))
        client = await Client.open(port)
        await until(lambda: len(manager.peers) == 1 and only_peer(manager).got_verack)
        assert only_peer(manager).has("noban")
        client.close()

    run(node, whitelisted, whitelist=(Whitelist.parse("noban@127.0.0.1"),))


def test_an_added_node_that_is_down_is_tried_again(node: Node, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cm, "ADDED_NODE_RETRY", 0.2)
    target = free_port()

    async def body(manager: ConnectionManager, port: int) -> None:
        await asyncio.sleep(0.5)  # tried at least once, refused: nothing listens yet
        assert not manager.connected_to(f"127.0.0.1:{target}")
        with Node.open(tmp_path / "other", PARAMS) as other_node:
            other = ConnectionManager(other_node, threading.RLock(), settings(target), target)
            await other.start()
            try:
                await until(lambda: manager.connected_to(f"127.0.0.1:{target}"))
            finally:
                await other.close()

    run(node, body, addnode=(f"127.0.0.1:{target}",))


def test_a_connect_address_is_reconnected_when_it_comes_back(node: Node, tmp_path: Path
                                                             ) -> None:
    """-connect: tried again until connected (0.5 s, then 1 s... between tries), and again
    after the connection drops (Core's ThreadOpenConnections loop over the -connect list)."""
    target = free_port()
    address = f"127.0.0.1:{target}"

    async def body(manager: ConnectionManager, port: int) -> None:
        await asyncio.sleep(0.7)  # refused at least once: nothing listens yet
        assert not manager.connected_to(address)
        with Node.open(tmp_path / "other", PARAMS) as other_node:
            other = ConnectionManager(other_node, threading.RLock(), settings(target), target)
            await other.start()
            try:
                await until(lambda: manager.connected_to(address))
                [peer] = manager.peers.values()
                assert peer.connection_type == "manual"
                manager.disconnect(peer.id)
                await until(lambda: manager.connected_to(address)
                            and peer.id not in manager.peers)
            finally:
                await other.close()

    run(node, body, connect=(address,))


def test_a_huge_block_inv_costs_one_getheaders(node: Node) -> None:
    """Core answers a block inv with one getheaders up to its last unknown block, so 50,000
    announced hashes cost one locator, not 50,000."""
    async def body(manager: ConnectionManager, port: int) -> None:
        client = await Client.open(port)
        await until(lambda: len(manager.peers) == 1 and only_peer(manager).got_verack)
        peer = only_peer(manager)
        await until(lambda: "getheaders" in peer.sent_per_msg)  # the one after the handshake
        before = peer.sent_per_msg["getheaders"]
        items = [(m.MSG_BLOCK, i.to_bytes(32, "little")) for i in range(1, m.MAX_INV_SIZE + 1)]
        client.send("inv", m.encode_inv(items))
        client.send("ping", m.encode_u64(5))  # answered once the inv was handled
        await until(lambda: "pong" in peer.sent_per_msg)
        assert peer.sent_per_msg["getheaders"] == 2 * before  # one more, the same size
        client.close()

    run(node, body)


def test_inbound_slots_are_maxconnections_less_the_outbound_core_reserves(node: Node) -> None:
    """Core's CConnman::Init keeps 8 + 2 + 1 of -maxconnections for automatic outbound
    connections; a discouraged address is refused once the last inbound slot is reached."""
    assert [cm.max_inbound(n) for n in (0, 5, 11, 12, 94, 125)] == [0, 0, 0, 1, 83, 114]

    async def closed(client: Client) -> bool:
        with contextlib.suppress(ConnectionResetError):
            return await asyncio.wait_for(client.reader.read(), 5) == b""
        return True

    async def one_slot(manager: ConnectionManager, port: int) -> None:
        first = await Client.open(port)
        await until(lambda: len(manager.peers) == 1)
        second = await Client.open(port)
        assert await closed(second)  # full
        assert len(manager.peers) == 1
        for client in (first, second):
            client.close()

    run(node, one_slot, max_connections=12)

    async def discouraged(manager: ConnectionManager, port: int) -> None:
        manager.banman.discourage("127.0.0.1")
        first = await Client.open(port)  # two slots free: still welcome
        await until(lambda: len(manager.peers) == 1)
        second = await Client.open(port)  # it would take the last one
        assert await closed(second) and len(manager.peers) == 1
        for client in (first, second):
            client.close()

    run(node, discouraged, max_connections=13)


def test_transaction_announcements_wait_for_the_peers_poisson_timer(node: Node) -> None:
    """Core's trickle: an announcement to an inbound peer waits in its queue until the shared
    inbound timer passes, goes out at the first send pass after it (if the transaction is still
    in the mempool), and the timer is drawn again; one that left the mempool is never sent."""
    async def body(manager: ConnectionManager, port: int) -> None:
        client = await Client.open(port)
        await until(lambda: len(manager.peers) == 1 and only_peer(manager).got_verack)
        peer = only_peer(manager)
        now = manager.now()
        peer.next_inv_send = now + 60  # a timer far off: nothing goes out on its own
        sent = peer.sent_per_msg.get("inv", 0)
        manager._announce_tx(b"\x01" * 32, b"\x02" * 32, 10_000, 100)
        manager._announce_tx(b"\x03" * 32, b"\x04" * 32, 10_000, 100)
        manager._forget_txs([b"\x03" * 32])  # mined or evicted before its turn
        manager.send_queued_invs(now + 1)
        assert peer.sent_per_msg.get("inv", 0) == sent and len(peer.tx_queue) == 2
        manager.send_queued_invs(now + 61)
        assert peer.sent_per_msg["inv"] > sent and not peer.tx_queue
        assert peer.next_inv_send > now + 61  # drawn again
        client.close()

    run(node, body)


def test_a_timer_that_ran_out_in_a_quiet_spell_is_drawn_again(node: Node) -> None:
    """As Core's SendMessages, a pass redraws a timer that has passed even with nothing queued:
    a transaction announced after a quiet spell waits for the new timer, not the next pass."""
    async def body(manager: ConnectionManager, port: int) -> None:
        client = await Client.open(port)
        await until(lambda: len(manager.peers) == 1 and only_peer(manager).got_verack)
        peer = only_peer(manager)
        now = manager.now()
        peer.next_inv_send = manager._next_inv_inbound = now - 30  # ran out long ago
        manager.send_queued_invs(now)
        assert peer.next_inv_send > now and not peer.tx_queue
        sent = peer.sent_per_msg.get("inv", 0)
        manager._announce_tx(b"\x01" * 32, b"\x02" * 32, 10_000, 100)
        manager.send_queued_invs(now + 0.001)
        if peer.next_inv_send > now + 0.001:  # the draw was not (almost) zero
            assert peer.sent_per_msg.get("inv", 0) == sent and len(peer.tx_queue) == 1
        manager.send_queued_invs(peer.next_inv_send + 0.001)
        assert peer.sent_per_msg["inv"] > sent and not peer.tx_queue
        client.close()

    run(node, body)


def test_noban_peers_get_announcements_at_once(node: Node) -> None:
    async def body(manager: ConnectionManager, port: int) -> None:
        client = await Client.open(port)
        await until(lambda: len(manager.peers) == 1 and only_peer(manager).got_verack)
        peer = only_peer(manager)
        peer.next_inv_send = manager.now() + 60
        sent = peer.sent_per_msg.get("inv", 0)
        manager._announce_tx(b"\x01" * 32, b"\x02" * 32, 10_000, 100)
        assert peer.sent_per_msg["inv"] > sent and not peer.tx_queue
        client.close()

    run(node, body, whitelist=(Whitelist.parse("noban@127.0.0.1"),))
