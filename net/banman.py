"""Bans and discouragement (docs/p2p.md §6; Bitcoin Core / Elements ``src/banman.{h,cpp}``,
``src/addrdb.cpp`` CBanDB, ``src/net_types.cpp``).

- **Bans** are set by the operator (``setban``): a subnet and an expiry, kept in
  ``banlist.json`` in the chain's data directory as Core writes it
  (``{"banned_nets": [{"version": 1, "ban_created", "banned_until", "address"}]}``), written
  at every change and read at start (expired entries swept). A banned address cannot connect
  in (unless its whitelist gives ``noban``); setting a ban disconnects the matching peers.
- **Discouragement** is what misbehaviour costs a non-local peer: its address goes into a
  bounded in-memory filter (Core's rolling bloom filter of 50,000 entries; here the 50,000
  most recent addresses), never persisted and never listed; a discouraged address is refused
  inbound only when the inbound slots are (almost) full.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from net.permissions import Network, address_of, parse_network

log = logging.getLogger("ctplugin.net")

DEFAULT_BAN_TIME = 60 * 60 * 24  # Core's DEFAULT_MISBEHAVING_BANTIME: 24 h
BAN_ENTRY_VERSION = 1  # CBanEntry::CURRENT_VERSION
JSON_KEY = "banned_nets"  # CBanDB::JSON_KEY
BANLIST_FILE = "banlist.json"
MAX_DISCOURAGED = 50_000


@dataclass(frozen=True, slots=True)
class BanEntry:
    created: int
    until: int


def subnet_string(network: Network) -> str:
    """Core's CSubNet::ToString: ``addr/bits`` (``127.0.0.1/32`` for one address)."""
    return f"{network.network_address}/{network.prefixlen}"


def is_local(host: str) -> bool:
    """Core's CNetAddr::IsLocal: IPv4 127.0.0.0/8 or 0.0.0.0/8, IPv6 ::1."""
    try:
        ip = address_of(host)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv4Address):
        return ip.packed[0] in (0, 127)
    return ip == ipaddress.IPv6Address("::1")


class BanMan:
    """The banned subnets (persisted) and the discouraged addresses (memory only)."""

    def __init__(self, path: Path | None, default_ban_time: int = DEFAULT_BAN_TIME) -> None:
        self.path = path
        self.default_ban_time = default_ban_time
        self.banned: dict[Network, BanEntry] = {}
        self._discouraged: dict[ipaddress.IPv4Address | ipaddress.IPv6Address, None] = {}
        self._load()

    # --- persistence ------------------------------------------------------------------------

    def _load(self) -> None:
        """Read banlist.json; a missing or unreadable one is recreated (Core's LoadBanlist)."""
        if self.path is None:
            return
        try:
            entries = json.loads(self.path.read_text())[JSON_KEY]
            for entry in entries:
                if entry["version"] != BAN_ENTRY_VERSION:
                    log.info("Dropping entry with unknown version (%s) from ban list",
                             entry["version"])
                    continue
                try:
                    network = parse_network(entry["address"])
                except ValueError:
                    log.info("Dropping entry with unparseable address or subnet (%s) from ban "
                             "list", entry["address"])
                    continue
                self.banned[network] = BanEntry(int(entry["ban_created"]),
                                                int(entry["banned_until"]))
        except FileNotFoundError:
            log.info("Recreating the banlist database")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.info("Cannot parse banlist %s: %s", self.path, exc)
            self.banned = {}
        self._sweep()
        self._dump()

    def _dump(self) -> None:
        if self.path is None:
            return
        body = {JSON_KEY: [{"version": BAN_ENTRY_VERSION, "ban_created": e.created,
                            "banned_until": e.until, "address": subnet_string(n)}
                           for n, e in self.banned.items()]}
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(body, indent=4) + "\n")
            os.replace(tmp, self.path)
        except OSError as exc:  # a ban still holds in memory; the next change retries
            log.warning("Cannot write %s: %s", self.path, exc)
            with contextlib.suppress(OSError):
                tmp.unlink()

    def _sweep(self) -> bool:
        now = int(time.time())
        expired = [n for n, e in self.banned.items() if e.until <= now]
        for network in expired:
            del self.banned[network]
        return bool(expired)

    # --- bans -------------------------------------------------------------------------------

    def ban(self, network: Network, offset: int = 0, absolute: bool = False) -> None:
        """Core's BanMan::Ban: ``offset`` seconds from now, or until the timestamp ``offset``
        when ``absolute``; 0 or less means the default ban time from now. A ban never
        shortens an existing one."""
        now = int(time.time())
        if offset <= 0:
            offset, absolute = self.default_ban_time, False
        until = offset if absolute else now + offset
        current = self.banned.get(network)
        if current is not None and current.until >= until:
            return
        self.banned[network] = BanEntry(now, until)
        self._dump()

    def unban(self, network: Network) -> bool:
        if self.banned.pop(network, None) is None:
            return False
        self._dump()
        return True

    def clear(self) -> None:
        self.banned.clear()
        self._dump()

    def is_banned(self, host: str) -> bool:
        try:
            ip = address_of(host)
        except ValueError:
            return False
        now = int(time.time())
        return any(now < e.until and ip in n for n, e in self.banned.items())

    def is_banned_subnet(self, network: Network) -> bool:
        entry = self.banned.get(network)
        return entry is not None and int(time.time()) < entry.until

    def entries(self) -> list[tuple[Network, BanEntry]]:
        """The current bans (expired ones swept, the file rewritten if any were)."""
        if self._sweep():
            self._dump()
        return list(self.banned.items())

    # --- discouragement ---------------------------------------------------------------------

    def discourage(self, host: str) -> None:
        try:
            ip = address_of(host)
        except ValueError:
            return
        self._discouraged.pop(ip, None)
        self._discouraged[ip] = None
        if len(self._discouraged) > MAX_DISCOURAGED:
            del self._discouraged[next(iter(self._discouraged))]

    def is_discouraged(self, host: str) -> bool:
        try:
            return address_of(host) in self._discouraged
        except ValueError:
            return False
