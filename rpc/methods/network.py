"""Network calls (docs/p2p.md §7.2–§7.3; Bitcoin Core ``src/rpc/net.cpp``): getnetworkinfo,
getpeerinfo, getconnectioncount, getnettotals, ping, addnode, disconnectnode,
getaddednodeinfo, setnetworkactive, setban, listbanned, clearbanned. They read and drive the
node's ``ConnectionManager`` (``call.context.net``) on its event loop."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from net import PROTOCOL_VERSION, ConnectionManager
from net.banman import subnet_string
from net.messages import LOCAL_SERVICES, service_names
from net.permissions import parse_network
from rpc.config import subversion
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.methods.mempool import INCREMENTAL_RELAY_FEE
from rpc.params import amount_json
from rpc.registry import Kind, Locking, optional, required, rpc

VERSION_NUMBER = 280000  # the bitcoind/elementsd behaviour we follow (v28 JSON-RPC rules)


_GETNETWORKINFO_RESULT = """\
{
  "version" : n,               (numeric) the server version
  "subversion" : "str",        (string) the server subversion string
  "protocolversion" : n,       (numeric) the protocol version
  "localservices" : "hex",     (string) the services we offer to the network
  "localservicesnames" : [ "str", ... ],  (json array) the same, by name
  "localrelay" : true|false,   (boolean) transaction relay is requested from peers
  "timeoffset" : n,            (numeric) the time offset
  "networkactive" : true|false,  (boolean) whether p2p networking is enabled
  "connections" : n,           (numeric) the total number of connections
  "connections_in" : n,        (numeric) the number of inbound connections
  "connections_out" : n,       (numeric) the number of outbound connections
  "networks" : [               (json array) information per network
    { "name", "limited", "reachable", "proxy", "proxy_randomize_credentials" }, ...
  ],
  "relayfee" : n,              (numeric) minimum relay fee rate in BTC/kvB
  "incrementalfee" : n,        (numeric) minimum fee rate increment in BTC/kvB
  "localaddresses" : [ ... ],  (json array) list of local addresses
  "warnings" : [ "str", ... ]  (json array) any network and blockchain warnings
}"""

_GETPEERINFO_RESULT = """\
[
  {
    "id" : n,                  (numeric) peer index
    "addr" : "host:port",      (string) the IP address and port of the peer
    "addrbind" : "ip:port",    (string) bind address of the connection to the peer
    "network" : "str",         (string) network (ipv4, ipv6, ...)
    "services" : "hex",        (string) the services offered
    "servicesnames" : [ "str", ... ],  (json array) the services offered, by name
    "relaytxes" : true|false,  (boolean) whether we relay transactions to this peer
    "lastsend" : n,            (numeric) UNIX epoch time of the last send
    "lastrecv" : n,            (numeric) UNIX epoch time of the last receive
    "bytessent" : n,           (numeric) the total bytes sent
    "bytesrecv" : n,           (numeric) the total bytes received
    "conntime" : n,            (numeric) UNIX epoch time of the connection
    "timeoffset" : n,          (numeric) the time offset in seconds
    "pingtime" : n,            (numeric, optional) the last ping time in seconds
    "minping" : n,             (numeric, optional) the minimum observed ping time
    "pingwait" : n,            (numeric, optional) the duration of an outstanding ping
    "version" : n,             (numeric) the peer version, such as 70001
    "subver" : "str",          (string) the string version
    "inbound" : true|false,    (boolean) inbound (true) or outbound (false)
    "startingheight" : n,      (numeric) the starting height (block) of the peer
    "synced_headers" : n,      (numeric) the last header we have in common with this peer
    "synced_blocks" : n,       (numeric) the last block we have in common with this peer
    "inflight" : [ n, ... ],   (json array) heights of blocks requested from this peer
    "permissions" : [ "str", ... ],  (json array) special permissions of this peer
    "minfeefilter" : n,        (numeric) the minimum fee rate this peer accepts
    "bytessent_per_msg" : { "msg" : n, ... },  (json object) bytes sent by message
    "bytesrecv_per_msg" : { "msg" : n, ... },  (json object) bytes received by message
    "connection_type" : "str", (string) outbound-full-relay, manual, inbound, ...
    "transport_protocol_type" : "str",  (string) v1 (the plaintext protocol)
    "session_id" : "str"       (string) empty for v1 connections
  },
  ...
]"""

_GETNETTOTALS_RESULT = """\
{
  "totalbytesrecv" : n,   (numeric) Total bytes received
  "totalbytessent" : n,   (numeric) Total bytes sent
  "timemillis" : n,       (numeric) Current system UNIX epoch time in milliseconds
  "uploadtarget" : {      (json object) no upload target is set
    "timeframe", "target", "target_reached", "serve_historical_blocks",
    "bytes_left_in_cycle", "time_left_in_cycle"
  }
}"""

_GETADDEDNODEINFO_RESULT = """\
[
  {
    "addednode" : "str",       (string) The node IP address or name (as given to addnode)
    "connected" : true|false,  (boolean) If connected
    "addresses" : [            (json array) Only when connected = true
      { "address" : "str", "connected" : "outbound" }
    ]
  },
  ...
]"""

_LISTBANNED_RESULT = """\
[
  {
    "address" : "str",    (string) The IP/Subnet of the banned node
    "ban_created" : n,    (numeric) The UNIX epoch time the ban was created
    "banned_until" : n,   (numeric) The UNIX epoch time the ban expires
    "ban_duration" : n,   (numeric) The ban duration, in seconds
    "time_remaining" : n  (numeric) The time remaining until the ban expires, in seconds
  },
  ...
]"""

def _net(call: Call) -> ConnectionManager:
    """The connection manager; -31 when the node runs without one (Core's words)."""
    manager = call.context.net
    if manager is None:
        raise RpcError(RpcCode.CLIENT_P2P_DISABLED,
                       "Error: Peer-to-peer functionality missing or disabled")
    return manager


@rpc("network", description="Returns an object containing various state info regarding P2P "
                            "networking.",
     result=_GETNETWORKINFO_RESULT,
     locking=Locking.SELF)
def getnetworkinfo(call: Call) -> dict[str, Any]:
    manager = call.context.net
    peers = manager.run(_peer_infos(manager)) if manager is not None else []
    inbound = sum(1 for p in peers if p["inbound"])
    relay = call.context.config.relay
    return {
        "version": VERSION_NUMBER,
        "subversion": subversion(call.context.config),
        "protocolversion": PROTOCOL_VERSION,
        "localservices": f"{LOCAL_SERVICES:016x}",
        "localservicesnames": service_names(LOCAL_SERVICES),
        "localrelay": True,
        "timeoffset": 0,
        "networkactive": manager.active if manager is not None else False,
        "connections": len(peers),
        "connections_in": inbound,
        "connections_out": len(peers) - inbound,
        "networks": [{"name": name, "limited": name != "ipv4", "reachable": name == "ipv4",
                      "proxy": "", "proxy_randomize_credentials": False}
                     for name in ("ipv4", "ipv6", "onion", "i2p", "cjdns")],
        "relayfee": amount_json(relay.minrelaytxfee),
        "incrementalfee": amount_json(INCREMENTAL_RELAY_FEE),  # getmempoolinfo's
        "localaddresses": [],
        "warnings": [],
    }


async def _peer_infos(manager: ConnectionManager) -> list[dict[str, Any]]:
    return manager.peer_infos()


@rpc("network", description="Returns data about each connected network peer as a json array "
                            "of objects.",
     result=_GETPEERINFO_RESULT,
     locking=Locking.SELF)
def getpeerinfo(call: Call) -> list[dict[str, Any]]:
    manager = _net(call)
    return manager.run(_peer_infos(manager))


@rpc("network", description="Returns the number of connections to other nodes.",
     result='n    (numeric) The connection count',
     locking=Locking.SELF)
def getconnectioncount(call: Call) -> int:
    manager = _net(call)
    return len(manager.run(_peer_infos(manager)))


@rpc("network", description="Returns information about network traffic, including bytes in, "
                            "bytes out, and current system time.",
     result=_GETNETTOTALS_RESULT,
     locking=Locking.SELF)
def getnettotals(call: Call) -> dict[str, Any]:
    manager = _net(call)

    async def totals() -> tuple[int, int]:
        return manager.totals()

    received, sent = manager.run(totals())
    return {"totalbytesrecv": received, "totalbytessent": sent,
            "timemillis": int(time.time() * 1000),
            "uploadtarget": {"timeframe": 86400, "target": 0, "target_reached": False,
                             "serve_historical_blocks": True, "bytes_left_in_cycle": 0,
                             "time_left_in_cycle": 0}}


@rpc("network", description="Requests that a ping be sent to all other nodes, to measure ping "
                            "time. Results are in getpeerinfo's pingtime and pingwait.",
     result='null    (json null)',
     locking=Locking.SELF)
def ping(call: Call) -> None:
    manager = _net(call)

    async def send() -> None:
        manager.ping_all()

    manager.run(send())


_ADDNODE_HELP = ("addnode \"node\" \"command\"\n\nAttempts to add or remove a node from the "
                 "addnode list.\nOr try a connection to a node once.")


@rpc("network", args=[required("node", Kind.STR, "The address of the peer to connect to"),
                      required("command", Kind.STR, "'add' to add a node to the list, "
                               "'remove' to remove a node from the list, 'onetry' to try a "
                               "connection to the node once"),
                      optional("v2transport", Kind.BOOL, False,
                               "Attempt to connect using BIP324 v2 transport protocol")],
     description="Attempts to add or remove a node from the addnode list, or tries a "
                 "connection to a node once.",
     result='null    (json null)', examples=('"192.168.0.6:8333" "onetry"',),
     locking=Locking.SELF)
def addnode(call: Call, node: str, command: str, v2transport: bool) -> None:
    if command not in ("add", "remove", "onetry"):
        raise RpcError(RpcCode.MISC_ERROR, _ADDNODE_HELP)
    manager = _net(call)
    if v2transport:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "Error: v2transport requested but not enabled (see -v2transport)")

    async def run() -> None:
        if command == "onetry":
            # Core returns null whether or not the connection could be opened
            with contextlib.suppress(OSError, ValueError, TimeoutError):
                await manager.connect(node, manual=True)
        elif command == "add":
            if node in manager.added:
                raise RpcError(RpcCode.CLIENT_NODE_ALREADY_ADDED, "Error: Node already added")
            manager.added.append(node)
            manager.connect_later(node)
        else:
            if node not in manager.added:
                raise RpcError(RpcCode.CLIENT_NODE_NOT_ADDED, "Error: Node could not be "
                               "removed. It has not been added previously.")
            manager.added.remove(node)

    manager.run(run())


@rpc("network", args=[optional("address", Kind.STR, "", "The IP address/port of the node"),
                      optional("nodeid", Kind.INT, None, "The node ID (see getpeerinfo for "
                               "node IDs)")],
     description="Immediately disconnects from the specified peer node.",
     result='null    (json null)', examples=('"192.168.0.6:8333"', '"" 1'),
     locking=Locking.SELF)
def disconnectnode(call: Call, address: str, nodeid: int | None) -> None:
    manager = _net(call)
    if (address != "") == (nodeid is not None):
        raise RpcError(RpcCode.INVALID_PARAMS,
                       "Only one of address and nodeid should be provided.")

    async def run() -> bool:
        if nodeid is not None:
            return manager.disconnect(nodeid)
        found = [p.id for p in manager.peers.values() if p.addr == address]
        for peer_id in found:
            manager.disconnect(peer_id)
        return bool(found)

    if not manager.run(run()):
        raise RpcError(RpcCode.CLIENT_NODE_NOT_CONNECTED, "Node not found in connected nodes")


@rpc("network", args=[optional("node", Kind.STR, None, "If provided, return information about "
                               "this specific node, otherwise all nodes are returned.")],
     description="Returns information about the given added node, or all added nodes (onetry "
                 "nodes are not listed here).",
     result=_GETADDEDNODEINFO_RESULT, examples=('"192.168.0.201"',),
     locking=Locking.SELF)
def getaddednodeinfo(call: Call, node: str | None) -> list[dict[str, Any]]:
    manager = _net(call)

    async def run() -> list[dict[str, Any]]:
        if node is not None and node not in manager.added:
            raise RpcError(RpcCode.CLIENT_NODE_NOT_ADDED,
                           "Error: Node has not been added.")
        out = []
        for added in manager.added:
            if node is not None and added != node:
                continue
            peers = [p for p in manager.peers.values() if not p.inbound and p.addr == added]
            out.append({"addednode": added, "connected": bool(peers),
                        "addresses": [{"address": p.addr, "connected": "outbound"}
                                      for p in peers]})
        return out

    return manager.run(run())


@rpc("network", args=[required("state", Kind.BOOL, "true to enable networking, false to "
                               "disable")],
     description="Disable/enable all p2p network activity.",
     result='true|false    (boolean) The value that was passed in', examples=('false',),
     locking=Locking.SELF)
def setnetworkactive(call: Call, state: bool) -> bool:
    manager = _net(call)

    async def run() -> bool:
        manager.set_active(state)
        return manager.active

    return manager.run(run())


_SETBAN_HELP = ("setban \"subnet\" \"command\" ( bantime absolute )\n\nAttempts to add or remove "
                "an IP/Subnet from the banned list.")


@rpc("network", args=[required("subnet", Kind.STR, "The IP/Subnet (see getpeerinfo for nodes "
                               "IP) with an optional netmask (default is /32 = single IP)"),
                      required("command", Kind.STR, "'add' to add an IP/Subnet to the list, "
                               "'remove' to remove an IP/Subnet from the list"),
                      optional("bantime", Kind.INT, 0, "time in seconds how long (or until "
                               "when if [absolute] is set) the IP is banned (0 or empty means "
                               "using the default time of 24h which can also be overwritten by "
                               "the -bantime startup argument)"),
                      optional("absolute", Kind.BOOL, False, "If set, the bantime must be an "
                               "absolute timestamp expressed in UNIX epoch time")],
     description="Attempts to add or remove an IP/Subnet from the banned list.",
     result='null    (json null)', examples=('"192.168.0.6" "add" 86400',),
     locking=Locking.SELF)
def setban(call: Call, subnet: str, command: str, bantime: int, absolute: bool) -> None:
    """Core's setban (``src/rpc/net.cpp``; docs/p2p.md §6.1): an address without ``/`` is one
    host (a /32 or /128), with ``/`` a subnet whose host bits are cleared."""
    if command not in ("add", "remove"):
        raise RpcError(RpcCode.MISC_ERROR, _SETBAN_HELP)
    manager = _net(call)
    try:
        network = parse_network(subnet)
    except ValueError:
        raise RpcError(RpcCode.CLIENT_INVALID_IP_OR_SUBNET, "Error: Invalid IP/Subnet") from None
    single = "/" not in subnet

    async def run() -> None:
        banman = manager.banman
        if command == "add":
            banned = (banman.is_banned(str(network.network_address)) if single
                      else banman.is_banned_subnet(network))
            if banned:
                raise RpcError(RpcCode.CLIENT_NODE_ALREADY_ADDED,
                               "Error: IP/Subnet already banned")
            if absolute and bantime < time.time():
                raise RpcError(RpcCode.INVALID_PARAMETER,
                               "Error: Absolute timestamp is in the past")
            banman.ban(network, bantime, absolute)
            manager.disconnect_subnet(network)
        elif not banman.unban(network):
            raise RpcError(RpcCode.CLIENT_INVALID_IP_OR_SUBNET, "Error: Unban failed. Requested "
                           "address/subnet was not previously manually banned.")

    manager.run(run())


@rpc("network", description="List all manually banned IPs/Subnets.",
     result=_LISTBANNED_RESULT,
     locking=Locking.SELF)
def listbanned(call: Call) -> list[dict[str, Any]]:
    manager = _net(call)

    async def run() -> list[dict[str, Any]]:
        now = int(time.time())
        return [{"address": subnet_string(network), "ban_created": entry.created,
                 "banned_until": entry.until, "ban_duration": entry.until - entry.created,
                 "time_remaining": entry.until - now}
                for network, entry in manager.banman.entries()]

    return manager.run(run())


@rpc("network", description="Clear all banned IPs.",
     result='null    (json null)',
     locking=Locking.SELF)
def clearbanned(call: Call) -> None:
    manager = _net(call)

    async def run() -> None:
        manager.banman.clear()

    manager.run(run())
