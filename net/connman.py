"""Peers and the connection manager (docs/p2p.md §2, §4–§7; Core's ``src/net.cpp``,
``src/net_processing.cpp``): asyncio streams on the node's event loop.

- ``ConnectionManager(node, lock, settings)``: ``start()`` listens (``NetSettings.listen``,
  ``bind``) and connects to ``connect`` / ``addnode``; ``connect(address, manual=True)``
  opens an outbound connection; ``disconnect``; ``set_active``; ``peers``.
- One task per peer reads messages and handles them strictly in order (a ping is answered only
  once every earlier message has been processed: the framework's ``sync_with_ping`` barrier).
- The validator is called on a worker thread under ``lock`` (the RPC layer's chain lock), through
  the same entry points as RPC: ``Node.submit_block(raw, block)`` and
  ``Node.accept_transaction(tx)``. The manager is a ``ChainListener``: connected blocks and
  mempool additions are announced to peers (``inv``, or ``headers`` after ``sendheaders``).
- Framing errors that make the stream unreadable (another network's magic, an invalid command,
  an oversized length) end the connection; a bad checksum drops that one message (Core's
  V1Transport); a malformed payload, an invalid block or a consensus-invalid transaction marks
  the peer misbehaving: it is disconnected, and discouraged unless local, except manual and
  noban peers (Core's MaybeDiscourageAndDisconnect; ``net.banman``, ``net.permissions``).
- A block is downloaded from one peer at a time; ``check_timeouts`` (every half second) closes
  connections that do not complete their handshake, fall silent, stall the block download or
  do not deliver a requested block (docs/p2p.md §5.2, §6.3).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import random
import secrets
import threading
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ctplugin.elements import Block, BlockHeader, Transaction
from ctplugin.elements.model import parse_block, parse_transaction
from ctplugin.errors import CtpluginError, ValidationError
from net import messages as m
from net import permissions as perms
from net.banman import DEFAULT_BAN_TIME, BanMan, is_local
from net.permissions import Network, Whitelist
from validator import POLICY_REASONS, ChainListener, Node, reasons

log = logging.getLogger("ctplugin.net")

T = TypeVar("T")
MAX_BLOCKS_IN_FLIGHT_PER_PEER = 16  # Core's MAX_BLOCKS_IN_TRANSIT_PER_PEER
DEFAULT_MAX_CONNECTIONS = 125
MAX_ADDNODE_CONNECTIONS = 8
PING_INTERVAL = 120.0  # seconds (net_processing.cpp)
READ_BUFFER = 1 << 20  # bytes read ahead of the message being handled, per peer
MAX_SEND_BUFFER = 2 * m.MAX_PROTOCOL_MESSAGE_LENGTH
"""Bytes queued to a peer that does not read: beyond this it is disconnected, so a peer cannot
make the node hold its replies without bound (Core stops serving it at -maxsendbuffer)."""
MAX_ORPHANS = 100  # Core's DEFAULT_MAX_ORPHAN_TRANSACTIONS
GETDATA_CHUNK = 16  # getdata entries served between waits for the peer to read
MAX_KNOWN_INVENTORY = 50_000  # bounds a peer's memory in us, as Core's rolling filters
MAX_PEER_TX_ANNOUNCEMENTS = 5000  # Core's txrequest bound on one peer's announcements
MAX_ORPHAN_TX_WEIGHT = 400_000
"""Core's TxOrphanage keeps no transaction above MAX_STANDARD_TX_WEIGHT: with at most 100
orphans a peer can make us hold at most 100 x 400,000 weight units."""
BLOCK_DOWNLOAD_WINDOW = 1024
"""Blocks queued for download per peer (Core's BLOCK_DOWNLOAD_WINDOW): headers beyond it are
not remembered; once the queue drains the peer is asked for headers again (docs/p2p.md §5.2)."""
DEFAULT_PEER_TIMEOUT = 60  # -peertimeout: seconds a new connection has to complete its handshake
TIMEOUT_INTERVAL = 20 * 60  # Core's TIMEOUT_INTERVAL: silence or an unanswered ping this long
BLOCK_STALLING_TIMEOUT_DEFAULT = 2.0  # seconds (net_processing.cpp), doubled per staller
BLOCK_STALLING_TIMEOUT_MAX = 64.0
BLOCK_SPACING = 600
"""Elements' nPowTargetSpacing on elementsregtest (-con_npowtargetspacing, default 10 min):
the unit of the block download timeout."""
BLOCK_DOWNLOAD_TIMEOUT_BASE = 1.0
BLOCK_DOWNLOAD_TIMEOUT_PER_PEER = 0.5
STALE_CHECK_INTERVAL = 10 * 60  # Core's: how often the tip is checked for staleness
ADDED_NODE_RETRY = 60.0  # Core's ThreadOpenAddedConnections: 60 s after a try, else 2 s
ADDED_NODE_IDLE = 2.0
CONNECT_RETRY = 0.5  # Core's ThreadOpenConnections with -connect: its 500 ms pause
MAINTENANCE_INTERVAL = 0.5  # seconds between the timeout checks
INBOUND_INVENTORY_BROADCAST_INTERVAL = 5.0
OUTBOUND_INVENTORY_BROADCAST_INTERVAL = 2.0
"""Core's mean delays (net_processing.cpp) before queued transaction announcements go out: a
Poisson timer per outbound peer and one shared by all inbound peers, so a transaction's origin
is harder to tell by timing; noban peers get them at the next send pass."""
SEND_INTERVAL = 0.1  # Core's message handler wakes every 100 ms
OTHER = "*other*"


@dataclass(frozen=True, slots=True)
class NetSettings:
    """The P2P options (docs/p2p.md §7.1)."""

    magic: bytes
    user_agent: str
    listen: bool = False
    bind: tuple[tuple[str, int], ...] = ()
    connect: tuple[str, ...] = ()
    addnode: tuple[str, ...] = ()
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    min_fee_rate: int = 1000  # sat/kvB: the feefilter we send
    active: bool = True
    whitelist: tuple[Whitelist, ...] = ()  # -whitelist (net.permissions)
    peer_timeout: int = DEFAULT_PEER_TIMEOUT  # -peertimeout
    banlist: Path | None = None  # where banlist.json lives; None: bans kept in memory only
    ban_time: int = DEFAULT_BAN_TIME  # -bantime: setban's default duration


MAX_OUTBOUND_FULL_RELAY_CONNECTIONS = 8
MAX_BLOCK_RELAY_ONLY_CONNECTIONS = 2
MAX_FEELER_CONNECTIONS = 1


def max_inbound(max_connections: int) -> int:
    """The inbound slots of -maxconnections: what is left after the automatic outbound ones
    Core reserves (8 full-relay, 2 block-relay-only, 1 feeler; ``CConnman::Init``), even
    though we open no automatic connections: 114 of the default 125, 83 of the framework's
    94."""
    full = min(MAX_OUTBOUND_FULL_RELAY_CONNECTIONS, max_connections)
    block = min(MAX_BLOCK_RELAY_ONLY_CONNECTIONS, max_connections - full)
    return max(0, max_connections - (full + block + MAX_FEELER_CONNECTIONS))


def split_address(text: str, default_port: int) -> tuple[str, int]:
    """``host``, ``host:port`` or ``[v6]:port``; ``ValueError`` for a bad port."""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    number = int(port) if port else default_port
    if not host or not 1 <= number <= 65535:
        raise ValueError(f"invalid address {text!r}")
    return host, number


@dataclass(slots=True)
class Peer:
    """One connection and what is known of the other side (getpeerinfo's fields)."""

    id: int
    addr: str
    addrbind: str
    inbound: bool
    manual: bool
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    ip: str = ""  # the other side's IP, as the socket reports it
    permissions: frozenset[str] = frozenset()  # from -whitelist (net.permissions)
    conntime: int = 0  # the node's clock when connected (``ConnectionManager.clock``)
    connected_at: float = 0.0  # ``ConnectionManager.now`` when connected
    version: int = 0
    services: int = 0
    subver: str = ""
    startingheight: int = -1
    relaytxes: bool = False
    nonce: int = 0
    got_version: bool = False
    got_verack: bool = False
    wtxidrelay: bool = False
    sendheaders: bool = False
    feefilter: int = 0
    lastsend: int = 0
    lastrecv: int = 0
    bytessent: int = 0
    bytesrecv: int = 0
    sent_per_msg: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    recv_per_msg: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    ping_nonce: int = 0
    ping_start: float = 0.0
    pingtime: float | None = None
    minping: float | None = None
    best_known_height: int = -1
    in_flight: dict[bytes, int] = field(default_factory=dict)
    """Blocks asked of this peer -> their heights (getpeerinfo's ``inflight``)."""
    to_fetch: dict[bytes, int] = field(default_factory=dict)
    """Blocks to ask this peer for -> their heights, oldest first (at most
    ``BLOCK_DOWNLOAD_WINDOW``)."""
    downloading_since: float = 0.0  # monotonic: when the oldest block in flight was asked for
    stalling_since: float = 0.0  # monotonic: since when it holds up another peer's download
    known: dict[bytes, None] = field(default_factory=dict)
    """Blocks and transactions the peer is known to have (announced by it or to it), the
    oldest forgotten beyond ``MAX_KNOWN_INVENTORY``: not announced to it again."""
    misbehaving: str | None = None
    closing: bool = False
    tx_queue: dict[bytes, tuple[int, bytes]] = field(default_factory=dict)
    """Transactions to announce, wtxid -> inv item (Core's m_tx_inventory_to_send)."""
    next_inv_send: float = 0.0  # ``ConnectionManager.now`` when the queue may go out next

    def has(self, permission: str) -> bool:
        return permission in self.permissions

    def learn(self, hash_: bytes) -> bool:
        """Note that the peer has ``hash_``; False if that was known already."""
        if hash_ in self.known:
            return False
        self.known[hash_] = None
        if len(self.known) > MAX_KNOWN_INVENTORY:
            with contextlib.suppress(KeyError, StopIteration, RuntimeError):
                del self.known[next(iter(self.known))]
        return True

    @property
    def connection_type(self) -> str:
        if self.inbound:
            return "inbound"
        return "manual" if self.manual else "outbound-full-relay"

    def info(self, tip_height: int, now: float) -> dict[str, Any]:
        """getpeerinfo's object (docs/p2p.md §7.3); ``now``: ``ConnectionManager.now``."""
        out: dict[str, Any] = {
            "id": self.id, "addr": self.addr, "addrbind": self.addrbind, "network": "ipv4",
            "services": f"{self.services:016x}",
            "servicesnames": m.service_names(self.services),
            "relaytxes": self.relaytxes, "lastsend": self.lastsend, "lastrecv": self.lastrecv,
            "bytessent": self.bytessent, "bytesrecv": self.bytesrecv, "conntime": self.conntime,
            "timeoffset": 0,
        }
        if self.pingtime is not None:
            out["pingtime"] = self.pingtime
            out["minping"] = self.minping
        if self.ping_nonce:
            out["pingwait"] = now - self.ping_start
        synced = min(self.best_known_height, tip_height)
        out.update({
            "version": self.version, "subver": self.subver, "inbound": self.inbound,
            "bip152_hb_to": False, "bip152_hb_from": False,
            "startingheight": self.startingheight, "presynced_headers": -1,
            "synced_headers": self.best_known_height, "synced_blocks": synced,
            "inflight": sorted(self.in_flight.values()),
            "permissions": perms.to_strings(self.permissions),
            "minfeefilter": self.feefilter / 1e8,
            "bytessent_per_msg": dict(self.sent_per_msg),
            "bytesrecv_per_msg": dict(self.recv_per_msg),
            "connection_type": self.connection_type, "transport_protocol_type": "v1",
            "session_id": "",
        })
        return out


class ConnectionManager(ChainListener):
    """The node's P2P side (module docstring)."""

    def __init__(self, node: Node, lock: threading.RLock, settings: NetSettings,
                 default_port: int, clock: Callable[[], float] = time.time) -> None:
        """``clock``: the node's time in Unix seconds (setmocktime's, as Core's mockable
        GetTime): it stamps conntime / lastsend / lastrecv and the version message, and moving
        it forward brings every timeout (§6.3, §5.2) forward by as much."""
        self.node = node
        self.clock = clock
        self.lock = lock
        self.settings = settings
        self.default_port = default_port
        self.active = settings.active
        self.peers: dict[int, Peer] = {}
        self.added: list[str] = list(settings.addnode)
        self._next_id = 0
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        # node events for the loop, in order; one wake-up of the loop per batch, not per event
        # (a 1000-transaction block removes 1000 pool transactions: 1000 self-pipe writes)
        self._inbox: list[tuple[Callable[..., None], tuple[Any, ...]]] = []
        self._inbox_lock = threading.Lock()
        self._inbox_scheduled = False
        self._orphans: dict[bytes, Transaction] = {}  # txid -> tx, under the chain lock
        self._wtxids: dict[bytes, bytes] = {}  # wtxid -> txid of the mempool's transactions
        self._rng = random.SystemRandom()  # announcement timers: not predictable by peers
        self._next_inv_inbound = 0.0  # the one timer of all inbound peers
        self._in_flight: dict[bytes, int] = {}  # block hash -> the peer it is asked of
        self._connecting: set[str] = set()  # added nodes being connected to right now
        self._stalling_timeout = BLOCK_STALLING_TIMEOUT_DEFAULT
        self._last_tip_update = self.now()
        self._next_stale_check = self._last_tip_update + STALE_CHECK_INTERVAL
        self.banman = BanMan(settings.banlist, settings.ban_time)
        self.listening: list[tuple[str, int]] = []

    # --- lifetime ------------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self.node.subscribe(self)
        for tx in self.node.mempool.transactions():
            self._wtxids[tx.wtxid] = tx.txid
        if self.settings.listen:
            for host, port in self.settings.bind or (("127.0.0.1", self.default_port),):
                server = await asyncio.start_server(self._accept, host, port,
                                                    limit=READ_BUFFER)
                self._servers.append(server)
                self.listening.append((host, port))
                log.info("P2P: listening on %s:%d", host, port)
        self._spawn(self._ping_loop())
        if self.settings.connect:
            self._spawn(self._connect_loop())
        self._spawn(self._added_nodes_loop())
        self._spawn(self._maintenance_loop())
        self._spawn(self._trickle_loop())

    async def _ping_loop(self) -> None:
        """Core's PING_INTERVAL: every peer is pinged every 2 minutes (pingtime stays fresh and
        a dead connection shows as a growing pingwait)."""
        while True:
            await asyncio.sleep(PING_INTERVAL)
            for peer in list(self.peers.values()):
                if peer.got_verack and not peer.ping_nonce:
                    self._send_ping(peer)

    async def _connect_loop(self) -> None:
        """Core's ThreadOpenConnections with -connect: round after round, every -connect
        address not connected is tried, each followed by a pause of min(round, 10) × 500 ms,
        each round by 500 ms (failures are logged once per address until it connects)."""
        failed: set[str] = set()
        for round_ in itertools.count():
            for address in self.settings.connect:
                if self.connected_to(address):
                    failed.discard(address)
                elif self.active and address not in self._connecting:
                    await self._connect_logged(address, quiet=address in failed)
                    if not self.connected_to(address):
                        failed.add(address)
                await asyncio.sleep(CONNECT_RETRY * min(round_, 10))
            await asyncio.sleep(CONNECT_RETRY)

    async def _added_nodes_loop(self) -> None:
        """Core's ThreadOpenAddedConnections: every added node (-addnode, ``addnode add``)
        not connected is tried, at most ``MAX_ADDNODE_CONNECTIONS`` at once; then wait 60 s
        after a round that tried one, 2 s otherwise (a node added meanwhile is tried soon)."""
        while True:
            tried = False
            open_added = sum(1 for a in self.added if self.connected_to(a))
            for address in list(self.added):
                if open_added >= MAX_ADDNODE_CONNECTIONS:
                    break
                if self.active and not self.connected_to(address) \
                        and address not in self._connecting:
                    tried = True
                    await self._connect_logged(address)
                    open_added += self.connected_to(address)
            await asyncio.sleep(ADDED_NODE_RETRY if tried else ADDED_NODE_IDLE)

    def now(self) -> float:
        """Monotonic seconds moved by as much as ``clock`` is ahead of the wall clock: what
        the timeouts measure against (steady, yet setmocktime brings them forward; under a
        mock clock they stand still, as Core's mockable GetTime). ``clock`` must keep
        sub-second steps (an int clock would make every interval within a second 0)."""
        return time.monotonic() + self.clock() - time.time()

    async def _maintenance_loop(self) -> None:
        """The timeouts of Core's InactivityCheck and SendMessages (docs/p2p.md §6.3)."""
        while True:
            await asyncio.sleep(MAINTENANCE_INTERVAL)
            try:
                self.check_timeouts(self.now())
            except Exception:  # a bug here must not stop the checks for good
                log.exception("P2P: timeout checks")

    async def _trickle_loop(self) -> None:
        while True:
            await asyncio.sleep(SEND_INTERVAL)
            try:
                self.send_queued_invs(self.now())
            except Exception:  # a bug here must not stop relay for good
                log.exception("P2P: transaction announcements")

    def send_queued_invs(self, now: float) -> None:
        """Core's SendMessages trickle: every pass, a peer whose timer has passed draws it again
        (exponentially distributed around 2 s for an outbound peer; 5 s, one timer for all of
        them, for inbound ones) and its queued announcements, those still in the mempool, go
        out (noban peers get them at once: ``_announce_tx``).

        The timer is redrawn whether or not anything waits, as in Core: a transaction queued
        after a quiet spell then waits the timer's remainder (memoryless, so the same mean),
        never goes out at the next pass because the timer ran out long ago."""
        for peer in list(self.peers.values()):
            if now < peer.next_inv_send or not peer.got_verack:
                continue
            if peer.inbound:
                if now >= self._next_inv_inbound:
                    self._next_inv_inbound = now + self._rng.expovariate(
                        1 / INBOUND_INVENTORY_BROADCAST_INTERVAL)
                peer.next_inv_send = self._next_inv_inbound
            else:
                peer.next_inv_send = now + self._rng.expovariate(
                    1 / OUTBOUND_INVENTORY_BROADCAST_INTERVAL)
            if not peer.tx_queue:
                continue
            items = [item for wtxid, item in peer.tx_queue.items() if wtxid in self._wtxids]
            peer.tx_queue.clear()
            for start in range(0, len(items), m.MAX_INV_SIZE):
                self.send(peer, "inv", m.encode_inv(items[start:start + m.MAX_INV_SIZE]))

    def check_timeouts(self, now: float) -> None:
        """Disconnect peers that do not finish their handshake within -peertimeout, stay
        silent or leave a ping unanswered for 20 minutes, stall the block download, or do not
        deliver a requested block in time; and look for a stale tip."""
        downloading = sum(1 for p in self.peers.values() if p.in_flight)
        for peer in list(self.peers.values()):
            why = self._timed_out(peer, now, downloading)
            if why is not None:
                self._drop(peer, why)
        if now >= self._next_stale_check:
            self._next_stale_check = now + STALE_CHECK_INTERVAL
            if now - self._last_tip_update > 3 * BLOCK_SPACING and not self._in_flight:
                # Core would try an extra outbound peer; we have no address manager, so we
                # ask the peers we have whether they know a better chain
                log.info("Potential stale tip detected (last tip update: %d seconds ago)",
                         now - self._last_tip_update)
                for peer in self.peers.values():
                    if peer.got_verack and peer.services & (m.NODE_NETWORK
                                                            | m.NODE_NETWORK_LIMITED):
                        self._locator_request(peer)

    def _timed_out(self, peer: Peer, now: float, downloading: int) -> str | None:
        timeout = self.settings.peer_timeout
        if now > peer.connected_at + timeout:
            if not peer.lastsend or not peer.lastrecv:
                return f"socket no message in first {timeout} seconds"
            if not peer.got_verack:
                return "version handshake timeout"
        wall = self.clock()
        if peer.lastsend and wall > peer.lastsend + TIMEOUT_INTERVAL:
            return "socket sending timeout"
        if peer.lastrecv and wall > peer.lastrecv + TIMEOUT_INTERVAL:
            return "socket receive timeout"
        if peer.ping_nonce and now > peer.ping_start + TIMEOUT_INTERVAL:
            return f"ping timeout: {now - peer.ping_start:.0f}s"
        if peer.stalling_since and peer.in_flight \
                and now > peer.stalling_since + self._stalling_timeout:
            # the next staller gets longer, in case it is our own bandwidth that is short
            self._stalling_timeout = min(2 * self._stalling_timeout, BLOCK_STALLING_TIMEOUT_MAX)
            return "Peer is stalling block download"
        if peer.in_flight:
            others = max(downloading - 1, 0)
            limit = BLOCK_SPACING * (BLOCK_DOWNLOAD_TIMEOUT_BASE
                                     + BLOCK_DOWNLOAD_TIMEOUT_PER_PEER * others)
            if now > peer.downloading_since + limit:
                return "Timeout downloading block"
        return None

    async def close(self) -> None:
        self.node.unsubscribe(self)
        for server in self._servers:
            server.close()
        for peer in list(self.peers.values()):
            self._drop(peer, "shutdown")
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()

    def run(self, coro: Awaitable[T], timeout: float = 30) -> T:
        """Run ``coro`` on the manager's loop from another thread (an RPC worker)."""
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(_as_coroutine(coro), self._loop)
        return future.result(timeout)

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- connections -----------------------------------------------------------------------

    def connect_later(self, address: str) -> None:
        """Connect to ``address`` in the background (an added node)."""
        self._spawn(self._connect_logged(address))

    def connected_to(self, address: str) -> bool:
        return any(p.addr == address for p in self.peers.values() if not p.inbound)

    async def _connect_logged(self, address: str, quiet: bool = False) -> None:
        if address in self._connecting:
            return
        self._connecting.add(address)
        try:
            await self.connect(address, manual=True)
        except (OSError, ValueError, TimeoutError) as exc:
            log.log(logging.DEBUG if quiet else logging.INFO, "P2P: cannot connect to %s: %s",
                    address, exc)
        finally:
            self._connecting.discard(address)

    def _locator_request(self, peer: Peer) -> None:
        """A getheaders from our tip, built under the chain lock (from the loop thread)."""
        async def send() -> None:
            await self._locked(lambda: self._send_getheaders(peer))
        self._spawn(send())

    async def connect(self, address: str, manual: bool = True) -> Peer | None:
        """Open an outbound connection and send our version; None when the network is off,
        we are connected to ``address`` already, or ``max_connections`` + 8 outbound
        connections are open (a bound on what RPC callers can open).
        ``OSError`` / ``ValueError`` when it cannot be opened."""
        if not self.active or self.connected_to(address):
            return None
        outbound = sum(1 for p in self.peers.values() if not p.inbound)
        if outbound >= MAX_ADDNODE_CONNECTIONS + self.settings.max_connections:
            return None
        host, port = split_address(address, self.default_port)
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, limit=READ_BUFFER), 5)
        if self.connected_to(address):  # another caller won the race while we connected
            writer.close()
            return None
        peer = self._add_peer(reader, writer, address, inbound=False, manual=manual)
        self._send_version(peer)
        self._spawn(self._serve(peer))
        return peer

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Core's CreateNodeFromAcceptedSocket: banned addresses are refused, discouraged
        ones when the inbound slots are (almost) full, unless their whitelist says noban."""
        inbound = sum(1 for p in self.peers.values() if p.inbound)
        slots = max_inbound(self.settings.max_connections)
        host, port = writer.get_extra_info("peername")[:2]
        granted = perms.permissions_for(self.settings.whitelist, host, inbound=True)
        noban = perms.NOBAN in granted
        refused = None
        if not self.active:
            refused = "network inactive"
        elif not noban and self.banman.is_banned(host):
            refused = "banned"
        elif not noban and self.banman.is_discouraged(host) and inbound + 1 >= slots:
            refused = "discouraged"
        elif inbound >= slots:  # Core would first try to evict an inbound peer; we do not
            refused = "full"
        if refused is not None:
            log.info("P2P: connection from %s:%s dropped (%s)", host, port, refused)
            writer.close()
            return
        peer = self._add_peer(reader, writer, f"{host}:{port}", inbound=True, manual=False)
        await self._serve(peer)

    def _add_peer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, addr: str,
                  inbound: bool, manual: bool) -> Peer:
        local = writer.get_extra_info("sockname")
        ip = str(writer.get_extra_info("peername")[0])
        peer = Peer(self._next_id, addr, f"{local[0]}:{local[1]}", inbound, manual, reader,
                    writer, ip=ip,
                    permissions=perms.permissions_for(self.settings.whitelist, ip, inbound),
                    conntime=int(self.clock()), connected_at=self.now())
        self._next_id += 1
        self.peers[peer.id] = peer
        log.info("P2P: peer %d %s %s", peer.id, "from" if inbound else "to", addr)
        return peer

    def disconnect(self, peer_id: int) -> bool:
        peer = self.peers.get(peer_id)
        if peer is None:
            return False
        self._drop(peer, "disconnectnode")
        return True

    def disconnect_subnet(self, network: Network) -> None:
        """Every peer whose address is in ``network`` (setban; Core's DisconnectNode(subnet))."""
        for peer in list(self.peers.values()):
            try:
                inside = perms.address_of(peer.ip) in network
            except ValueError:
                continue
            if inside:
                self._drop(peer, "banned")

    def set_active(self, active: bool) -> None:
        self.active = active
        if not active:
            for peer in list(self.peers.values()):
                self._drop(peer, "network disabled")

    def _drop(self, peer: Peer, why: str) -> None:
        if peer.closing:
            return
        peer.closing = True
        self.peers.pop(peer.id, None)
        log.info("P2P: disconnecting peer %d (%s)", peer.id, why)
        with contextlib.suppress(Exception):
            peer.writer.close()
        # its requested blocks go back to the others that announced them
        released = [h for h, owner in self._in_flight.items() if owner == peer.id]
        for hash_ in released:
            del self._in_flight[hash_]
        if released:
            for other in self.peers.values():
                self._request_blocks(other)

    # --- reading -------------------------------------------------------------------------

    async def _serve(self, peer: Peer) -> None:
        """Read and handle ``peer``'s messages in order until the connection ends."""
        magic = self.settings.magic
        try:
            while not peer.closing:
                raw = await peer.reader.readexactly(m.HEADER_SIZE)
                try:
                    header = m.FrameHeader.parse(raw, magic)
                except m.ProtocolError as exc:
                    self._drop(peer, f"framing: {exc}")
                    return
                payload = await peer.reader.readexactly(header.length)
                peer.lastrecv = int(self.clock())
                size = m.HEADER_SIZE + header.length
                peer.bytesrecv += size
                try:
                    header.check_payload(payload)
                except m.ProtocolError as exc:  # Core drops the message, keeps the peer
                    peer.recv_per_msg[OTHER] += size
                    log.info("P2P: peer %d: %s", peer.id, exc)
                    continue
                peer.recv_per_msg[header.command] += size
                try:
                    await self._handle(peer, header.command, payload)
                except m.ProtocolError as exc:
                    self._misbehaving(peer, f"malformed {header.command}: {exc}")
                if peer.misbehaving is not None and self._punish(peer):
                    return
                await peer.writer.drain()  # a peer that does not read waits for itself
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug must cost one connection, never the node
            log.exception("P2P: peer %d", peer.id)
        finally:
            self._drop(peer, "connection closed")

    def _misbehaving(self, peer: Peer, why: str) -> None:
        log.info("P2P: peer %d misbehaving: %s", peer.id, why)
        peer.misbehaving = why

    def _punish(self, peer: Peer) -> bool:
        """Core's MaybeDiscourageAndDisconnect: noban and manual peers are kept (a warning
        logged), a local peer is disconnected, any other is disconnected and its address
        discouraged (every connection from it closed). True when ``peer`` was disconnected."""
        why, peer.misbehaving = peer.misbehaving, None
        if peer.has(perms.NOBAN):
            log.info("Warning: not punishing noban peer %d!", peer.id)
            return False
        if peer.manual:
            log.info("Warning: not punishing manually connected peer %d!", peer.id)
            return False
        if is_local(peer.ip):
            self._drop(peer, f"misbehaving: {why}; local, so not discouraged")
            return True
        self.banman.discourage(peer.ip)
        for other in list(self.peers.values()):
            if other.ip == peer.ip:
                self._drop(other, f"misbehaving: {why}; address discouraged")
        return True

    # --- writing -------------------------------------------------------------------------

    def send(self, peer: Peer, command: str, payload: bytes = b"") -> None:
        """Queue a message to ``peer``; from a worker thread (a handler running under the
        chain lock) it is handed to the loop, which keeps the order of the sends and puts
        them before the handler's completion, so replies stay in order."""
        if self._loop is not None and threading.get_ident() != self._loop_thread:
            self._loop.call_soon_threadsafe(self._write, peer, command, payload)
        else:
            self._write(peer, command, payload)

    def _write(self, peer: Peer, command: str, payload: bytes) -> None:
        if peer.closing:
            return
        frame = m.encode_frame(self.settings.magic, command, payload)
        if peer.writer.transport.get_write_buffer_size() + len(frame) > MAX_SEND_BUFFER:
            self._drop(peer, "send buffer full: the peer does not read")
            return
        peer.writer.write(frame)
        peer.lastsend = int(self.clock())
        peer.bytessent += len(frame)
        peer.sent_per_msg[command] += len(frame)

    def _send_version(self, peer: Peer) -> None:
        peer.nonce = secrets.randbits(64)
        version = m.Version(m.PROTOCOL_VERSION, m.LOCAL_SERVICES, int(self.clock()), peer.nonce,
                            self.settings.user_agent, self.node.tip.height, True)
        self.send(peer, "version", version.serialize())

    def _send_ping(self, peer: Peer) -> None:
        peer.ping_nonce = secrets.randbits(64) or 1
        peer.ping_start = self.now()
        self.send(peer, "ping", m.encode_u64(peer.ping_nonce))

    def ping_all(self) -> None:
        for peer in self.peers.values():
            if peer.got_verack:
                self._send_ping(peer)

    # --- the validator, on a worker thread under the chain lock -------------------------

    async def _locked(self, fn: Callable[[], T]) -> T:
        def call() -> T:
            with self.lock:
                return fn()
        return await asyncio.get_running_loop().run_in_executor(None, call)

    # --- messages ------------------------------------------------------------------------

    async def _handle(self, peer: Peer, command: str, payload: bytes) -> None:
        if command == "version":
            self._on_version(peer, payload)
            return
        if not peer.got_version:
            return  # Core ignores everything before the version
        if command == "verack":
            await self._on_verack(peer)
        elif command in ("wtxidrelay", "sendaddrv2"):
            if peer.got_verack:  # only valid between version and verack: Core disconnects
                self._drop(peer, f"{command} received after verack")  # even manual peers
            elif command == "wtxidrelay" and peer.version >= m.WTXID_RELAY_VERSION:
                peer.wtxidrelay = True
        elif not peer.got_verack:
            if command == "sendheaders":
                peer.sendheaders = True
        else:
            await self._after_handshake(peer, command, payload)

    def _on_version(self, peer: Peer, payload: bytes) -> None:
        if peer.got_version:
            return  # a second version is ignored
        version = m.Version.parse(payload)
        if version.version < m.MIN_PEER_PROTO_VERSION:
            self._drop(peer, f"obsolete version {version.version}")
            return
        if peer.inbound and any(p.nonce == version.nonce for p in self.peers.values()
                                if not p.inbound and p.nonce):
            self._drop(peer, "connected to self")
            return
        peer.got_version = True
        peer.version = min(version.version, m.PROTOCOL_VERSION)
        peer.services = version.services
        peer.subver = version.user_agent
        peer.startingheight = version.start_height
        peer.relaytxes = version.relay
        if peer.inbound:
            self._send_version(peer)
        if peer.version >= m.WTXID_RELAY_VERSION:
            self.send(peer, "wtxidrelay")
            # BIP155 support, as elementsd announces it; addr/addrv2 are ignored here anyway
            self.send(peer, "sendaddrv2")
        self.send(peer, "verack")

    async def _on_verack(self, peer: Peer) -> None:
        if peer.got_verack:
            return
        peer.got_verack = True
        self._send_ping(peer)
        if peer.version >= m.SENDHEADERS_VERSION:
            self.send(peer, "sendheaders")
        if peer.version >= m.FEEFILTER_VERSION:
            self.send(peer, "feefilter", self.settings.min_fee_rate.to_bytes(8, "little"))
        if peer.services & (m.NODE_NETWORK | m.NODE_NETWORK_LIMITED):
            await self._locked(lambda: self._send_getheaders(peer, from_parent=True))

    def _locator(self, from_parent: bool = False) -> list[bytes]:
        """Core's CChain::GetLocator: the tip back 10 blocks one by one, then doubling steps,
        then genesis."""
        height = self.node.tip.height - (1 if from_parent else 0)
        height = max(height, 0)
        out, step = [], 1
        while height > 0:
            hash_ = self.node.block_hash(height)
            if hash_ is not None:
                out.append(hash_)
            if len(out) >= 10:
                step *= 2
            height -= step
        genesis = self.node.block_hash(0)
        if genesis is not None:
            out.append(genesis)
        return out

    def _send_getheaders(self, peer: Peer, from_parent: bool = False,
                         stop: bytes = bytes(32)) -> None:
        self.send(peer, "getheaders", m.encode_getheaders(self._locator(from_parent), stop))

    async def _after_handshake(self, peer: Peer, command: str, payload: bytes) -> None:
        if command == "ping":
            self.send(peer, "pong", m.encode_u64(m.decode_u64(payload, "ping")))
        elif command == "pong":
            nonce = m.decode_u64(payload, "pong")
            if nonce == peer.ping_nonce and nonce:
                elapsed = self.now() - peer.ping_start
                peer.pingtime = elapsed
                peer.minping = elapsed if peer.minping is None else min(peer.minping, elapsed)
                peer.ping_nonce = 0
        elif command == "sendheaders":
            peer.sendheaders = True
        elif command == "feefilter":
            peer.feefilter = m.decode_feefilter(payload)
        # These read the chain (and the mempool): under the chain lock, on a worker thread.
        elif command == "getheaders":
            locator, stop = m.decode_getheaders(payload)
            await self._locked(lambda: self._on_getheaders(peer, locator, stop))
        elif command == "headers":
            headers = m.decode_headers(payload)
            missing = await self._locked(lambda: self._on_headers(peer, headers))
            if missing is not None:
                self._queue_blocks(peer, headers, missing)
        elif command == "inv":
            items = m.decode_inv(payload, "inv")
            await self._locked(lambda: self._on_inv(peer, items))
        elif command == "getdata":
            wanted = m.decode_inv(payload, "getdata")
            for start in range(0, len(wanted), GETDATA_CHUNK):
                chunk = wanted[start:start + GETDATA_CHUNK]
                await self._locked(functools.partial(self._on_getdata, peer, chunk))
                await peer.writer.drain()
        elif command == "notfound":
            for _, hash_ in m.decode_inv(payload, "notfound"):
                self._block_arrived(peer, hash_)
            self._request_blocks(peer)
        elif command == "block":
            await self._on_block(peer, payload)
        elif command == "tx":
            await self._on_tx(peer, payload)
        elif command == "mempool":
            if not m.LOCAL_SERVICES & m.NODE_BLOOM and not peer.has(perms.MEMPOOL):
                # BIP35 is served with bloom filters (which we do not offer) or to whitelisted
                # peers only; Core disconnects any other that asks, noban peers excepted
                if not peer.has(perms.NOBAN):
                    self._drop(peer, "mempool request with bloom filters disabled")
                return
            await self._locked(lambda: self._send_mempool(peer))
        # addr, addrv2, getaddr, sendcmpct and the rest: ignored (docs/p2p.md §9.2)

    def _send_mempool(self, peer: Peer) -> None:
        """BIP35's answer (Core's m_send_mempool): every pool transaction paying at least the
        peer's feefilter, announced by wtxid or txid as the connection relays, in inv messages
        of at most 50,000 entries (chain lock held)."""
        policy_asset = self.node.params.policy_asset
        items = []
        for entry in self.node.mempool.entries.values():
            tx = entry.tx
            if not pays_feefilter(peer, entry.fees.get(policy_asset, 0), entry.vsize):
                continue
            hash_ = tx.wtxid if peer.wtxidrelay else tx.txid
            self._wtxids[tx.wtxid] = tx.txid
            peer.learn(hash_)
            items.append((m.MSG_WTX if peer.wtxidrelay else m.MSG_TX, hash_))
        for start in range(0, len(items), m.MAX_INV_SIZE):
            self.send(peer, "inv", m.encode_inv(items[start:start + m.MAX_INV_SIZE]))

    def _on_getheaders(self, peer: Peer, locator: list[bytes], stop: bytes) -> None:
        """Up to 2000 headers after the first locator entry on our active chain."""
        start = 0
        for hash_ in locator:
            info = self.node.block_info(hash_)
            if info is not None and info.in_active_chain:
                start = info.height + 1
                break
        headers: list[BlockHeader] = []
        tip = self.node.tip.height
        for height in range(start, min(tip, start + m.MAX_HEADERS_RESULTS - 1) + 1):
            at = self.node.block_hash(height)
            info = self.node.block_info(at) if at is not None else None
            if info is None:
                break
            headers.append(info.header)
            if at == stop:
                break
        self.send(peer, "headers", m.encode_headers(headers))

    def _known(self, hash_: bytes) -> bool:
        info = self.node.block_info(hash_)
        return info is not None and info.has_data

    def _on_headers(self, peer: Peer, headers: list[BlockHeader]) -> list[BlockHeader] | None:
        """Those of ``headers`` whose blocks we lack (chain lock held); None when there
        is nothing to queue: no headers, a broken sequence (misbehaviour) or headers that do
        not connect (we ask from our tip instead, no penalty: Core's
        HandleUnconnectingHeaders, which keeps nothing of them, so they cost no memory)."""
        if not headers:
            return None
        for prev, header in itertools.pairwise(headers):
            if header.prev_hash != prev.hash:
                self._misbehaving(peer, "non-continuous headers sequence")
                return None
        first = headers[0]
        if not self._known(first.prev_hash) and first.prev_hash not in peer.to_fetch \
                and first.prev_hash not in self._in_flight:
            self._send_getheaders(peer)
            return None
        return [h for h in headers if not self._known(h.hash)]

    def _queue_blocks(self, peer: Peer, headers: list[BlockHeader],
                      wanted: list[BlockHeader]) -> None:
        """Queue ``wanted`` for download from ``peer`` (at most ``BLOCK_DOWNLOAD_WINDOW``
        queued; the rest is asked for again once the queue drains) and ask for the next
        headers after a full reply."""
        peer.best_known_height = max(peer.best_known_height, headers[-1].height)
        for header in headers:
            peer.learn(header.hash)
        for header in wanted:
            if len(peer.to_fetch) >= BLOCK_DOWNLOAD_WINDOW:
                break
            if header.hash not in peer.in_flight:
                peer.to_fetch[header.hash] = header.height
        self._request_blocks(peer)
        if len(headers) == m.MAX_HEADERS_RESULTS and len(peer.to_fetch) < BLOCK_DOWNLOAD_WINDOW:
            self.send(peer, "getheaders", m.encode_getheaders([headers[-1].hash]))

    def _request_blocks(self, peer: Peer) -> None:
        """Ask ``peer`` for queued blocks, oldest first, up to 16 in flight; a block already
        asked of another peer stays queued here (it is asked of this one if that peer goes).
        When this peer has nothing to fetch but blocks held by another while it knows of
        more than a download window beyond our tip, that other peer stalls the download
        (Core's FindNextBlocksToDownload staller)."""
        if peer.closing or not peer.got_verack:
            return
        room = MAX_BLOCKS_IN_FLIGHT_PER_PEER - len(peer.in_flight)
        batch: dict[bytes, int] = {}
        waiting_for: int | None = None
        for hash_ in list(peer.to_fetch):
            if len(batch) >= room:
                break
            owner = self._in_flight.get(hash_)
            if owner is None:
                batch[hash_] = peer.to_fetch.pop(hash_)
            elif owner != peer.id and waiting_for is None:
                waiting_for = owner
        now = self.now()
        if batch:
            if not peer.in_flight:
                peer.downloading_since = now
            peer.in_flight.update(batch)
            self._in_flight.update(dict.fromkeys(batch, peer.id))
            self.send(peer, "getdata", m.encode_inv([(m.MSG_WITNESS_BLOCK, h) for h in batch]))
        elif waiting_for is not None and not peer.in_flight \
                and peer.best_known_height > self.node.tip.height + BLOCK_DOWNLOAD_WINDOW:
            staller = self.peers.get(waiting_for)
            if staller is not None and not staller.stalling_since:
                staller.stalling_since = now

    def _block_arrived(self, peer: Peer, hash_: bytes) -> None:
        """A block (or its notfound) came from ``peer``: its download slot is free, no other
        peer is asked for it, and the peer no longer stalls."""
        if peer.in_flight.pop(hash_, None) is not None:
            peer.downloading_since = self.now()
            peer.stalling_since = 0.0
            self._stalling_timeout = max(self._stalling_timeout * 0.85,
                                         BLOCK_STALLING_TIMEOUT_DEFAULT)
        if self._in_flight.get(hash_) == peer.id:
            del self._in_flight[hash_]

    def _on_inv(self, peer: Peer, items: list[tuple[int, bytes]]) -> None:
        """Unknown transactions are asked for (at most ``MAX_PEER_TX_ANNOUNCEMENTS`` of one
        inv); for unknown blocks one getheaders up to the last of them, as Core answers a
        block inv (so a 50,000-entry inv costs one locator, not 50,000)."""
        wanted: list[tuple[int, bytes]] = []
        last_block: bytes | None = None
        for kind, hash_ in items:
            peer.learn(hash_)
            if kind & ~m.MSG_WITNESS_FLAG == m.MSG_BLOCK:
                if not self._known(hash_):
                    last_block = hash_
            elif len(wanted) >= MAX_PEER_TX_ANNOUNCEMENTS:
                continue
            elif kind == m.MSG_WTX and peer.wtxidrelay:
                if hash_ not in self._wtxids:
                    wanted.append((m.MSG_WTX, hash_))
            elif kind == m.MSG_TX and not peer.wtxidrelay and hash_ not in self.node.mempool:
                wanted.append((m.MSG_WITNESS_TX, hash_))
        if last_block is not None:
            self._send_getheaders(peer, stop=last_block)
        if wanted:
            self.send(peer, "getdata", m.encode_inv(wanted))

    def _on_getdata(self, peer: Peer, items: list[tuple[int, bytes]]) -> None:
        missing = []
        for kind, hash_ in items:
            base = kind & ~m.MSG_WITNESS_FLAG
            if base == m.MSG_BLOCK:
                info = self.node.block_info(hash_)
                if info is not None and info.has_data:
                    # Elements blocks always go with their witnesses: a dynafed header without
                    # its signblock witness fails its proof (docs/p2p.md §5.1)
                    self.send(peer, "block", self.node.read_block(hash_))
            elif base in (m.MSG_TX, m.MSG_WTX):
                txid = self._wtxids.get(hash_) if base == m.MSG_WTX else hash_
                entry = self.node.mempool.entries.get(txid) if txid is not None else None
                if entry is None:
                    missing.append((kind, hash_))
                else:
                    self.send(peer, "tx", entry.tx.serialize())
        if missing:
            self.send(peer, "notfound", m.encode_inv(missing))

    async def _on_block(self, peer: Peer, payload: bytes) -> None:
        try:
            block = parse_block(payload)
        except CtpluginError as exc:
            self._misbehaving(peer, f"unreadable block: {exc}")
            return
        self._block_arrived(peer, block.hash)
        peer.learn(block.hash)

        def submit() -> tuple[str, str, int]:
            result = self.node.submit_block(payload, block)
            return result.status, result.bip22 or "", self.node.tip.height

        status, bip22, tip_height = await self._locked(submit)
        for other in self.peers.values():  # nobody needs to send it any more
            other.to_fetch.pop(block.hash, None)
        if status == "invalid" and bip22 == reasons.PREV_BLK_NOT_FOUND:
            # Core's MaybePunishNodeForBlock (src/net_processing.cpp) punishes a block whose
            # parent is unknown from an outbound peer only (a manual one is spared anyway):
            # blocks can overtake each other; the headers from our tip fill the gap
            if not peer.inbound:
                self._misbehaving(peer, f"invalid block {block.header.hash_hex}: {bip22}")
            self._locator_request(peer)
            return
        if status == "invalid":
            self._misbehaving(peer, f"invalid block {block.header.hash_hex}: {bip22}")
            return
        peer.best_known_height = max(peer.best_known_height, block.header.height)
        self._request_blocks(peer)
        if not peer.to_fetch and not peer.in_flight and peer.best_known_height > tip_height:
            self._locator_request(peer)  # the download window drained: the next headers

    async def _on_tx(self, peer: Peer, payload: bytes) -> None:
        try:
            tx = parse_transaction(payload)
        except CtpluginError as exc:
            self._misbehaving(peer, f"unreadable transaction: {exc}")
            return
        peer.learn(tx.wtxid)
        await self._locked(lambda: self._accept_tx(peer, tx))

    def _accept_tx(self, peer: Peer, tx: Transaction) -> None:
        """Mempool acceptance of ``tx`` and of the orphans it unlocks (chain lock held). A
        transaction with missing inputs is kept as an orphan (at most ``MAX_ORPHANS``, the
        oldest forgotten) and its missing parents are asked of the peer by txid, as Core
        does even on a wtxid-relay connection (docs/p2p.md §4)."""
        queue = [tx]
        while queue:
            candidate = queue.pop(0)
            try:
                self.node.accept_transaction(candidate)
            except ValidationError as exc:
                if exc.reason == reasons.BAD_TXNS_INPUTS_MISSINGORSPENT and candidate is tx:
                    self._keep_orphan(peer, tx)
                elif exc.reason not in POLICY_REASONS and not exc.reason.startswith("txn-") \
                        and exc.reason != reasons.BAD_TXNS_INPUTS_MISSINGORSPENT \
                        and candidate is tx:
                    self._misbehaving(peer, f"invalid transaction {tx.txid_hex}: {exc.reason}")
                else:
                    log.info("P2P: peer %d: transaction %s not accepted: %s", peer.id,
                             candidate.txid_hex, exc.reason)
                if candidate is not tx:  # an orphan that still fails: forgotten
                    self._orphans.pop(candidate.txid, None)
                continue
            self._orphans.pop(candidate.txid, None)
            queue.extend(o for o in list(self._orphans.values())
                         if any(i.prevout_hash == candidate.txid for i in o.inputs))

    def _keep_orphan(self, peer: Peer, tx: Transaction) -> None:
        missing = {i.prevout_hash for i in tx.inputs
                   if i.prevout_hash not in self.node.mempool
                   and self.node.utxo((i.prevout_hash, i.prevout_index)) is None}
        if not missing:
            return  # spent outputs, not missing ones: nothing to wait for
        if tx.weight > MAX_ORPHAN_TX_WEIGHT:
            log.info("P2P: ignoring large orphan transaction %s", tx.txid_hex)
            return
        self._orphans[tx.txid] = tx
        if len(self._orphans) > MAX_ORPHANS:
            del self._orphans[next(iter(self._orphans))]
        self.send(peer, "getdata", m.encode_inv([(m.MSG_WITNESS_TX, h) for h in sorted(missing)]))

    # --- announcements (ChainListener: the node's thread, chain lock held) ----------------

    def _from_node(self, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn(*args)`` on the loop, after the node events queued before it."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with self._inbox_lock:
            self._inbox.append((fn, args))
            if self._inbox_scheduled:
                return
            self._inbox_scheduled = True
        try:
            loop.call_soon_threadsafe(self._drain_inbox)
        except RuntimeError:  # the loop closed meanwhile: nobody is left to tell
            with self._inbox_lock:
                self._inbox.clear()
                self._inbox_scheduled = False

    def _drain_inbox(self) -> None:
        with self._inbox_lock:
            batch, self._inbox = self._inbox, []
            self._inbox_scheduled = False
        for fn, args in batch:
            try:
                fn(*args)
            except Exception:  # one bad event must not lose the others
                log.exception("P2P: node event %s", getattr(fn, "__name__", fn))

    def block_connected(self, block: Block, height: int) -> None:
        self._from_node(self._announce_block, block.header, height)

    def transaction_added(self, tx: Transaction) -> None:
        fee = tx.fees().get(self.node.params.policy_asset, 0)
        self._from_node(self._announce_tx, tx.wtxid, tx.txid, fee, tx.vsize)

    def transaction_removed(self, tx: Transaction, reason: str) -> None:
        self._from_node(self._forget_txs, [tx.wtxid])

    def mempool_removed_for_block(self, txs: Sequence[Transaction], height: int) -> None:
        self._from_node(self._forget_txs, [tx.wtxid for tx in txs])

    def _forget_txs(self, wtxids: list[bytes]) -> None:
        for wtxid in wtxids:
            self._wtxids.pop(wtxid, None)

    def _announce_block(self, header: BlockHeader, height: int) -> None:
        self._last_tip_update = self.now()
        for peer in list(self.peers.values()):
            if not peer.got_verack or not peer.learn(header.hash):
                continue
            if peer.sendheaders:
                self.send(peer, "headers", m.encode_headers([header]))
            else:
                self.send(peer, "inv", m.encode_inv([(m.MSG_BLOCK, header.hash)]))

    def _announce_tx(self, wtxid: bytes, txid: bytes, fee: int, vsize: int) -> None:
        """Queued for every peer that relays, does not know it and whose feefilter it meets
        (Core skips a transaction paying less than the peer's feefilter for its vsize); sent
        by ``send_queued_invs``."""
        self._wtxids[wtxid] = txid
        for peer in list(self.peers.values()):
            if peer.got_verack and peer.relaytxes and pays_feefilter(peer, fee, vsize) \
                    and peer.learn(wtxid):
                item = (m.MSG_WTX, wtxid) if peer.wtxidrelay else (m.MSG_TX, txid)
                if peer.has(perms.NOBAN):  # Core trickles to them at its next send pass
                    self.send(peer, "inv", m.encode_inv([item]))
                else:
                    peer.tx_queue[wtxid] = item

    # --- RPC views -----------------------------------------------------------------------

    def peer_infos(self) -> list[dict[str, Any]]:
        tip = self.node.tip.height
        now = self.now()
        return [p.info(tip, now) for p in sorted(self.peers.values(), key=lambda p: p.id)]

    def totals(self) -> tuple[int, int]:
        """(bytes received, bytes sent) over the open connections."""
        return (sum(p.bytesrecv for p in self.peers.values()),
                sum(p.bytessent for p in self.peers.values()))


def pays_feefilter(peer: Peer, fee: int, vsize: int) -> bool:
    """``fee`` (policy asset, sat) for ``vsize`` meets the peer's feefilter (sat per 1000
    vbytes; Core's CFeeRate::GetFee)."""
    return fee * 1000 >= peer.feefilter * vsize


async def _as_coroutine(awaitable: Awaitable[T]) -> T:
    return await awaitable
