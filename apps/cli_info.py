"""bitcoin-cli's client-side commands for ``ctplugin cli``: ``-getinfo``, ``-netinfo`` and
``-generate``, built from ordinary calls and printed as bitcoin-cli prints them (Bitcoin Core /
Elements ``src/bitcoin-cli.cpp``: ``GetinfoRequestHandler``, ``ParseGetInfoResult``,
``GetWalletBalances``, ``NetinfoRequestHandler``, ``GenerateToAddressRequestHandler``,
``SetGenerateToAddressArgs``; restated in docs/node-rpc.md §3).

Each function takes a connected client and returns the text to print; the calls' errors
(``RPCError`` ...) propagate, so ``apps.cli`` reports them and waits (``-rpcwait``) exactly
as for a plain call.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from rpc.convert import build_params, univalue_write
from rpcclient import RPCClient, RPCError

DEFAULT_NBLOCKS = "1"  # bitcoin-cli.cpp DEFAULT_NBLOCKS
NETINFO_MAX_LEVEL = 4
NETWORKS = ("not_publicly_routable", "ipv4", "ipv6", "onion", "i2p", "cjdns", "internal")
NETWORK_SHORT_NAMES = ("npr", "ipv4", "ipv6", "onion", "i2p", "cjdns", "int")
UNREACHABLE_NETWORK_IDS = (0, 6)
COLOR_CHOICES = ("always", "auto", "never")


class CliUsageError(Exception):
    """A client-side command given bad arguments: ``error: <message>``, exit status 1."""


def compact(value: Any) -> str:
    """UniValue::write() without indentation: ``{"bitcoin":1.00000000}``."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{univalue_write(str(k))}:{compact(v)}"
                              for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(compact(v) for v in value) + "]"
    return univalue_write(value)


def _optional(client: RPCClient, method: str) -> Any:
    """The result, or None when the call fails (no wallet loaded, several without
    -rpcwallet): bitcoin-cli lets getwalletinfo and getbalances fail."""
    try:
        return client.request(method, [])
    except RPCError:
        return None


# --- -getinfo ---------------------------------------------------------------------------------

def getinfo(client: RPCClient, wallet_client: Callable[[str], RPCClient] | None) -> dict[str, Any]:
    """The -getinfo object (``GetinfoRequestHandler::ProcessReply``); ``wallet_client`` (None
    with -rpcwallet) opens a client per loaded wallet for the ``balances`` of several."""
    network = client.request("getnetworkinfo", [])
    chain = client.request("getblockchaininfo", [])
    walletinfo = _optional(client, "getwalletinfo")
    balances = _optional(client, "getbalances")
    result: dict[str, Any] = {
        "version": network.get("version"),
        "blocks": chain.get("blocks"),
        "headers": chain.get("headers"),
        "verificationprogress": chain.get("verificationprogress"),
        "timeoffset": network.get("timeoffset"),
        "connections": {"in": network.get("connections_in"),
                        "out": network.get("connections_out"),
                        "total": network.get("connections")},
        "networks": network.get("networks"),
        "difficulty": chain.get("difficulty"),
        "chain": chain.get("chain"),
    }
    if isinstance(walletinfo, dict):
        result["has_wallet"] = True
        result["keypoolsize"] = walletinfo.get("keypoolsize")
        result["walletname"] = walletinfo.get("walletname")
        if walletinfo.get("unlocked_until") is not None:
            result["unlocked_until"] = walletinfo["unlocked_until"]
        result["paytxfee"] = walletinfo.get("paytxfee")
    if isinstance(balances, dict):
        result["balance"] = balances["mine"]["trusted"]
    result["relayfee"] = network.get("relayfee")
    result["warnings"] = network.get("warnings")
    if wallet_client is not None:  # GetWalletBalances: only when several wallets are loaded
        wallets = _optional(client, "listwallets")
        if isinstance(wallets, list) and len(wallets) > 1:
            per_wallet = {}
            for name in wallets:
                with wallet_client(name) as one:
                    per_wallet[name] = one.request("getbalances", [])["mine"]["trusted"]
            result["balances"] = per_wallet
    return result


def _progress_bar(progress: float) -> str:
    """GetProgressBar: 5 % steps of ▒ (done) and ░ (to do)."""
    if not 0 <= progress <= 1:
        return ""
    # Core's loops "for (i = 0; i < x; ++i)" run ceil(x) times
    done = math.ceil(progress / 0.05)
    todo = math.ceil((1 - progress) / 0.05)
    return "\u2592" * done + "\u2591" * todo


def _text(value: Any) -> str:
    """UniValue::getValStr(): a string or number's text, "" for null and containers."""
    if value is None or isinstance(value, dict | list):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else univalue_write(value)


def getinfo_text(info: dict[str, Any], colors: bool, currency: str = "BTC") -> str:
    """ParseGetInfoResult: the human-readable -getinfo."""
    reset, green, blue, yellow, magenta, cyan = (
        ("\x1b[0m", "\x1b[32m", "\x1b[34m", "\x1b[33m", "\x1b[35m", "\x1b[36m") if colors
        else ("",) * 6)
    out = [f"{blue}Chain: {_text(info['chain'])}{reset}",
           f"Blocks: {_text(info['blocks'])}",
           f"Headers: {_text(info['headers'])}"]
    progress = float(info.get("verificationprogress") or 0)
    bar = _progress_bar(progress) + " " if progress < 0.99 else ""
    out.append(f"Verification progress: {bar}{progress * 100:.4f}%")
    out.append(f"Difficulty: {_text(info['difficulty'])}")
    out.append("")
    connections = info["connections"]
    out.append(f"{green}Network: in {_text(connections['in'])}, out "
               f"{_text(connections['out'])}, total {_text(connections['total'])}{reset}")
    out.append(f"Version: {_text(info['version'])}")
    out.append(f"Time offset (s): {_text(info['timeoffset'])}")
    proxies: dict[str, list[str]] = {}
    for network in info.get("networks") or []:
        if proxy := _text(network.get("proxy")):
            proxies.setdefault(proxy, []).append(_text(network.get("name")))
    shown = ", ".join(f"{proxy} ({', '.join(names)})" for proxy, names in proxies.items())
    out.append(f"Proxies: {shown or 'n/a'}")
    out.append(f"Min tx relay fee rate ({currency}/kvB): {_text(info['relayfee'])}")
    out.append("")
    if info.get("has_wallet"):
        name = _text(info.get("walletname"))
        out.append(f"{magenta}Wallet: {name or chr(34) * 2}{reset}")
        out.append(f"Keypool size: {_text(info.get('keypoolsize'))}")
        if info.get("unlocked_until") is not None:
            out.append(f"Unlocked until: {_text(info['unlocked_until'])}")
        out.append(f"Transaction fee rate (-paytxfee) ({currency}/kvB): "
                   f"{_text(info.get('paytxfee'))}")
        out.append("")
    if info.get("balance") is not None:
        out.append(f"{cyan}Balance:{reset} {compact(info['balance'])}")
        out.append("")
    if info.get("balances") is not None:
        out.append(f"{cyan}Balances{reset}")
        width = max([10, *(len(compact(b)) for b in info["balances"].values())])
        out += [f"{compact(balance):>{width}} {name or chr(34) * 2}"
                for name, balance in info["balances"].items()]
        out.append("")
    warnings = info.get("warnings")
    # Core prints getValStr(), the text of a string; v28's array of warnings is joined here
    text = "; ".join(map(str, warnings)) if isinstance(warnings, list) else _text(warnings)
    out.append(f"{yellow}Warnings:{reset} {text or '(none)'}")
    return "\n".join(out)


# --- -generate --------------------------------------------------------------------------------

def generate(client: RPCClient, args: Sequence[str]) -> str:
    """-generate [NBLOCKS] [MAXTRIES]: getnewaddress, then generatetoaddress to it; prints
    ``{"address": ..., "blocks": [...]}``."""
    if len(args) > 2:
        raise CliUsageError("too many arguments (maximum 2 for nblocks and maxtries)")
    words = list(args) or [DEFAULT_NBLOCKS]
    if words[0] == "0":
        raise CliUsageError("the first argument (number of blocks to generate, default: "
                            f"{DEFAULT_NBLOCKS}) must be an integer value greater than zero")
    address = client.request("getnewaddress", [])
    words.insert(1, address)
    blocks = client.request("generatetoaddress", build_params("generatetoaddress", words, False))
    return univalue_write({"address": address, "blocks": blocks})


# --- -netinfo ---------------------------------------------------------------------------------

def netinfo_level(args: Sequence[str]) -> tuple[int, bool]:
    """(details level, outbound only) of ``-netinfo [LEVEL [outonly]]``."""
    if not args:
        return 0, False
    word = args[0]
    if not word.isdigit() or int(word) > 255:
        raise CliUsageError(f"invalid -netinfo level argument: {word}\nFor more information, "
                            "run: ctplugin cli -netinfo help")
    level = min(int(word), NETINFO_MAX_LEVEL)
    if len(args) > 1:
        if level and args[1] in ("o", "outonly"):
            return level, True
        if level:
            raise CliUsageError(f"invalid -netinfo outonly argument: {args[1]}\nFor more "
                                "information, run: ctplugin cli -netinfo help")
        raise CliUsageError(f"invalid -netinfo outonly argument: {args[1]}\nThe outonly "
                            "argument is only valid for a level greater than 0 (the first "
                            "argument). For more information, run: ctplugin cli -netinfo help")
    return level, False


NETINFO_HELP = """\
-netinfo (level [outonly]) | help

Returns a network peer connections dashboard with information from the remote server,
from getpeerinfo and getnetworkinfo. It is for people, not a stable interface.

Arguments:
1. level (integer 0-4, optional)  the dashboard's detail (default 0):
     0 - peer counts for each reachable network, block relay and manual peers, and the
         local addresses and ports
     1 - like 0 but preceded by a peers listing (without address and version columns)
     2 - like 1 but with an address column
     3 - like 1 but with a version column
     4 - like 1 but with both address and version columns
2. outonly ("outonly" or "o", optional)  list outbound peers only (with a level above 0)

Columns of the peers listing: <-> direction, type (full, block, manual, feeler, addr), net,
serv (services: n network, b bloom, w witness, c compact filters, l limited, 2 v2 transport),
v (transport version), mping / ping (ms), send / recv (seconds since the last message),
txn / blk (minutes since the last new transaction / block), hb (BIP152 high bandwidth),
addrp / addrl (addresses processed / rate limited), age (minutes), id, address, version.

Examples:
> ctplugin cli -netinfo
> ctplugin cli -netinfo 4 outonly"""


def _ping(seconds: float | None) -> str:
    if seconds is None or seconds < 0:
        return ""
    milliseconds = round(1000 * seconds)
    return "-" if milliseconds > 999999 else str(milliseconds)


def _conn_type(kind: str) -> str:
    return {"outbound-full-relay": "full", "block-relay-only": "block", "manual": "manual",
            "feeler": "feeler", "addr-fetch": "addr"}.get(kind, "")


def _services(names: Sequence[str]) -> str:
    return "".join("l" if s == "NETWORK_LIMITED" else "2" if s == "P2P_V2" else s[:1].lower()
                   for s in names)


def netinfo(client: RPCClient, args: Sequence[str], header: str,
            now: Callable[[], float] = time.time) -> str:
    """The -netinfo dashboard (``NetinfoRequestHandler::ProcessReply``); ``header`` names the
    client and its chain (``ctplugin cli client v0.1.0 ctregtest``)."""
    level, outonly = netinfo_level(args)
    peers = client.request("getpeerinfo", [])
    network = client.request("getnetworkinfo", [])
    time_now = int(now())
    counts = [[0] * (len(NETWORKS) + 1) for _ in range(3)]
    block_relay = manual = 0
    rows: list[dict[str, Any]] = []
    for peer in peers:
        name = peer.get("network", "")
        if name not in NETWORKS:
            continue
        net = NETWORKS.index(name)
        outbound = not peer.get("inbound", False)
        for row in (int(outbound), 2):
            counts[row][net] += 1
            counts[row][len(NETWORKS)] += 1
        kind = peer.get("connection_type", "")
        block_relay += kind == "block-relay-only"
        manual += kind == "manual"
        if level == 0 or (outonly and not outbound):
            continue
        conntime = int(peer.get("conntime", 0))
        rows.append({
            "outbound": outbound, "type": _conn_type(kind), "net": NETWORK_SHORT_NAMES[net],
            "serv": _services(peer.get("servicesnames", [])),
            "v": (lambda t: t[1] if len(t) == 2 and t[0] == "v" else " ")(
                str(peer.get("transport_protocol_type", "v1"))),
            "minping": peer.get("minping", -1), "ping": peer.get("pingtime", -1),
            "send": int(peer.get("lastsend", 0)), "recv": int(peer.get("lastrecv", 0)),
            "txn": int(peer.get("last_transaction", 0)), "blk": int(peer.get("last_block", 0)),
            "relay": peer.get("relaytxes", True) is not False,
            "hb": ("." if peer.get("bip152_hb_to") else " ")
                  + ("*" if peer.get("bip152_hb_from") else " "),
            "addrp": int(peer.get("addr_processed", 0)),
            "addr_relay": bool(peer.get("addr_relay_enabled", False)),
            "addrl": int(peer.get("addr_rate_limited", 0)),
            "age": "" if conntime == 0 else str((time_now - conntime) // 60),
            "id": int(peer.get("id", 0)), "addr": str(peer.get("addr", "")),
            "version": f"{peer.get('version', 0)}{peer.get('subver', '')}",
        })
    text = (f"{header} - server {network.get('protocolversion')}"
            f"{network.get('subversion', '')}\n\n")
    if rows:
        rows.sort(key=lambda r: (r["outbound"], float(r["minping"])))
        with_addr, with_version = level in (2, 4), level in (3, 4)
        w_serv = max([6, *(len(r["serv"]) for r in rows)])
        w_addrp = max([5, *(len(str(r["addrp"])) for r in rows)])
        w_addrl = max([6, *(len(str(r["addrl"])) for r in rows)])
        w_age = max([5, *(len(r["age"]) for r in rows)])
        w_id = max([2, *(len(str(r["id"])) for r in rows)])
        w_addr = max(len(r["addr"]) + 1 for r in rows) if with_addr else 0
        text += (f"<->   type   net {'serv':>{w_serv}}  v  mping   ping send recv  txn  blk  "
                 f"hb {'addrp':>{w_addrp}}{'addrl':>{w_addrl}}{'age':>{w_age}} ")
        text += f"{'id':>{w_id}} {'address' if with_addr else '':<{w_addr}}"
        text += f"{'version' if with_version else ''}\n"
        def since(moment: int, unit: int = 1) -> str:
            return str((time_now - moment) // unit) if moment else ""

        for r in rows:
            txn = since(r["txn"], 60) if r["txn"] else ("" if r["relay"] else "*")
            addrp = str(r["addrp"]) if r["addrp"] else ("" if r["addr_relay"] else ".")
            text += (f"{'out' if r['outbound'] else 'in':>3} {r['type']:>6} {r['net']:>5} "
                     f"{r['serv']:>{w_serv}} {r['v']:>2}{_ping(r['minping']):>7}"
                     f"{_ping(r['ping']):>7}{since(r['send']):>5}{since(r['recv']):>5}"
                     f"{txn:>5}{since(r['blk'], 60):>5}  {r['hb']:>2} {addrp:>{w_addrp}}"
                     f"{(str(r['addrl']) if r['addrl'] else ''):>{w_addrl}}"
                     f"{r['age']:>{w_age}}{'':>0}{r['id']:>{w_id}} "
                     f"{r['addr'] if with_addr else '':<{w_addr}}"
                     f"{r['version'] if with_version and r['version'] != '0' else ''}\n")
        text += (f"                {'':>{w_serv}}         ms     ms  sec  sec  min  min"
                 f"                {'min':>{w_age}}\n\n")
    text += "     "
    shown: list[int] = []
    for entry in network.get("networks") or []:
        if entry.get("reachable") and entry.get("name") in NETWORKS:
            text += f"{entry['name']:>8}"
            shown.append(NETWORKS.index(entry["name"]))
    for net in UNREACHABLE_NETWORK_IDS:
        if counts[2][net]:
            text += f"{NETWORK_SHORT_NAMES[net]:>8}"
            shown.append(net)
    text += "   total   block"
    if manual:
        text += "  manual"
    for i, row_name in enumerate(("in", "out", "total")):
        text += f"\n{row_name:<5}" + "".join(f"{counts[i][n]:>8}" for n in shown)
        text += f"   {counts[i][len(NETWORKS)]:>5}"
        if i == 1:
            text += f"   {block_relay:>5}" + (f"   {manual:>5}" if manual else "")
    text += "\n\nLocal addresses"
    local = network.get("localaddresses") or []
    if not local:
        text += ": n/a\n"
    else:
        width = max(len(a["address"]) + 1 for a in local)
        text += "".join(f"\n{a['address']:<{width}}    port {a['port']:>6}    score "
                        f"{a['score']:>6}" for a in local)
    return text
