"""Peer permissions from ``-whitelist`` (docs/p2p.md §6.2; Bitcoin Core / Elements
``src/net_permissions.{h,cpp}``).

``-whitelist=[perm,perm,...@]<IP or network>``: a peer connecting from (``in``, the default)
or to (``out``) a matching address gets those permissions; without ``@`` the implicit set
(relay, mempool, noban: Core's ``Implicit`` as ``AddWhitelistPermissionFlags`` expands it with
the default ``-whitelistrelay=1``). Flags imply others as in Core: ``noban`` → ``download``,
``forcerelay`` → ``relay``; ``all`` is every flag.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from ctplugin.errors import CtpluginError

BLOOMFILTER = "bloomfilter"
NOBAN = "noban"
FORCERELAY = "forcerelay"
RELAY = "relay"
MEMPOOL = "mempool"
DOWNLOAD = "download"
ADDR = "addr"
ORDER = (BLOOMFILTER, NOBAN, FORCERELAY, RELAY, MEMPOOL, DOWNLOAD, ADDR)
"""getpeerinfo's ``permissions`` order (Core's NetPermissions::ToStrings)."""

_IMPLIES = {NOBAN: (DOWNLOAD,), FORCERELAY: (RELAY,)}
_NAMES = {"bloomfilter": BLOOMFILTER, "bloom": BLOOMFILTER, "noban": NOBAN,
          "forcerelay": FORCERELAY, "mempool": MEMPOOL, "download": DOWNLOAD, "relay": RELAY,
          "addr": ADDR}
IMPLICIT = frozenset({RELAY, MEMPOOL, NOBAN, DOWNLOAD})

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class WhitelistError(CtpluginError):
    """A ``-whitelist`` value Core refuses (its message, as elementsd prints it)."""


def parse_network(text: str) -> Network:
    """An address or ``addr/bits`` / ``addr/netmask`` (Core's LookupSubNet: host bits are
    cleared); ``ValueError`` otherwise. A single address is a /32 (/128)."""
    return ipaddress.ip_network(text.strip("[]") if "/" not in text else text, strict=False)


def address_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The IP of ``host`` (an IPv4-mapped IPv6 address counts as its IPv4 one)."""
    ip = ipaddress.ip_address(host.strip("[]"))
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


@dataclass(frozen=True, slots=True)
class Whitelist:
    """One ``-whitelist`` entry."""

    network: Network
    flags: frozenset[str]
    inbound: bool
    outbound: bool

    @staticmethod
    def parse(text: str) -> Whitelist:
        """Core's NetWhitelistPermissions::TryParse, with its error messages."""
        perms, at, net = text.rpartition("@")
        if not at:
            flags: set[str] = set(IMPLICIT)
            inbound, outbound = True, False
        else:
            flags, inbound, outbound = set(), False, False
            for name in perms.split(","):
                if name == "all":
                    flags.update(ORDER)
                elif name in _NAMES:
                    flags.add(_NAMES[name])
                    flags.update(_IMPLIES.get(_NAMES[name], ()))
                elif name == "in":
                    inbound = True
                elif name == "out":
                    outbound = True
                elif name:
                    raise WhitelistError(f"Invalid P2P permission: '{name}'")
            if not (inbound or outbound):
                inbound = True  # by default a whitelist applies to incoming connections only
            elif not flags:
                raise WhitelistError(f"Only direction was set, no permissions: '{text}'")
        try:
            network = parse_network(net)
        except ValueError:
            raise WhitelistError(f"Invalid netmask specified in -whitelist: '{net}'") from None
        return Whitelist(network, frozenset(flags), inbound, outbound)


def permissions_for(whitelist: tuple[Whitelist, ...], host: str, inbound: bool) -> frozenset[str]:
    """The union of the flags of every entry matching ``host`` in the connection's direction."""
    try:
        ip = address_of(host)
    except ValueError:
        return frozenset()
    out: set[str] = set()
    for entry in whitelist:
        if (entry.inbound if inbound else entry.outbound) and ip in entry.network:
            out |= entry.flags
    return frozenset(out)


def to_strings(flags: frozenset[str]) -> list[str]:
    return [name for name in ORDER if name in flags]
