"""Bans, discouragement and -whitelist permissions (net.banman, net.permissions; docs/p2p.md
§6): the rules and messages of Bitcoin Core's banman.cpp, net_types.cpp and
net_permissions.cpp, and banlist.json as Core writes it."""

from __future__ import annotations

import ipaddress
import json
import time
from pathlib import Path

import pytest

from net import banman as b
from net.banman import BanMan, is_local, subnet_string
from net.permissions import Whitelist, WhitelistError, parse_network, permissions_for, to_strings


def test_a_ban_is_written_to_banlist_json_as_core_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "banlist.json"
    bans = BanMan(path)
    assert json.loads(path.read_text()) == {"banned_nets": []}  # created at start, as Core
    before = int(time.time())
    bans.ban(parse_network("192.168.0.6"), 3600)
    bans.ban(parse_network("10.1.2.3/16"))  # host bits cleared; 0 = the default 24 h
    [one, net] = json.loads(path.read_text())["banned_nets"]
    assert one["address"] == "192.168.0.6/32" and one["version"] == 1
    assert one["banned_until"] - one["ban_created"] == 3600 and one["ban_created"] >= before
    assert net["address"] == "10.1.0.0/16"
    assert net["banned_until"] - net["ban_created"] == b.DEFAULT_BAN_TIME
    again = BanMan(path)  # what a restart reads
    assert [subnet_string(n) for n, _ in again.entries()] == ["192.168.0.6/32", "10.1.0.0/16"]
    assert again.is_banned("10.1.200.9") and again.is_banned("::ffff:192.168.0.6")
    assert not again.is_banned("10.2.0.1") and not again.is_banned("not an ip")


def test_expired_entries_are_swept_and_bad_ones_dropped(tmp_path: Path) -> None:
    path = tmp_path / "banlist.json"
    now = int(time.time())
    path.write_text(json.dumps({"banned_nets": [
        {"version": 1, "ban_created": now - 100, "banned_until": now - 1,
         "address": "1.2.3.4/32"},
        {"version": 2, "ban_created": now, "banned_until": now + 100, "address": "1.2.3.5/32"},
        {"version": 1, "ban_created": now, "banned_until": now + 100, "address": "nonsense"},
        {"version": 1, "ban_created": now, "banned_until": now + 100, "address": "1.2.3.6/32"},
    ]}))
    bans = BanMan(path)
    assert [subnet_string(n) for n, _ in bans.entries()] == ["1.2.3.6/32"]
    assert len(json.loads(path.read_text())["banned_nets"]) == 1
    path.write_text("{ not json")
    assert BanMan(path).entries() == []  # recreated, as Core's LoadBanlist


def test_an_absolute_ban_ends_at_its_timestamp_and_never_shortens_one(tmp_path: Path) -> None:
    bans = BanMan(None)
    net = parse_network("5.6.7.8")
    until = int(time.time()) + 10_000
    bans.ban(net, until, absolute=True)
    assert bans.banned[net].until == until
    bans.ban(net, 60)  # shorter: ignored
    assert bans.banned[net].until == until
    assert bans.unban(net) and not bans.unban(net)
    bans.ban(net, 60)
    bans.clear()
    assert bans.entries() == [] and not bans.is_banned("5.6.7.8")


def test_discouragement_is_bounded_and_not_persisted(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(b, "MAX_DISCOURAGED", 3)
    bans = BanMan(tmp_path / "banlist.json")
    for i in range(5):
        bans.discourage(f"10.0.0.{i}")
    assert [bans.is_discouraged(f"10.0.0.{i}") for i in range(5)] == [False, False, True, True,
                                                                      True]
    assert not bans.is_banned("10.0.0.4") and bans.entries() == []
    assert not BanMan(tmp_path / "banlist.json").is_discouraged("10.0.0.4")


def test_local_addresses_are_those_core_calls_local() -> None:
    assert is_local("127.0.0.1") and is_local("127.8.9.1") and is_local("0.0.0.0")
    assert is_local("::1") and is_local("::ffff:127.0.0.1")
    assert not is_local("10.0.0.1") and not is_local("::2") and not is_local("localhost")


def test_whitelist_flags_and_their_implications() -> None:
    implicit = Whitelist.parse("127.0.0.1")
    assert to_strings(implicit.flags) == ["noban", "relay", "mempool", "download"]
    assert (implicit.inbound, implicit.outbound) == (True, False)
    entry = Whitelist.parse("noban,in,out@127.0.0.0/8")  # the framework's noban_tx_relay
    assert to_strings(entry.flags) == ["noban", "download"]
    assert entry.inbound and entry.outbound
    assert to_strings(Whitelist.parse("forcerelay@::1").flags) == ["forcerelay", "relay"]
    assert len(Whitelist.parse("all@10.0.0.0/8").flags) == 7
    assert Whitelist.parse("bloom,@1.2.3.4").network == ipaddress.ip_network("1.2.3.4/32")


@pytest.mark.parametrize(("spec", "message"), [
    ("nonsense@127.0.0.1", "Invalid P2P permission: 'nonsense'"),
    ("in,out@127.0.0.1", "Only direction was set, no permissions: 'in,out@127.0.0.1'"),
    ("mempool@300.1.1.1", "Invalid netmask specified in -whitelist: '300.1.1.1'"),
])
def test_whitelist_errors_are_cores(spec: str, message: str) -> None:
    with pytest.raises(WhitelistError, match="^" + message.replace("(", r"\(") + "$"):
        Whitelist.parse(spec)


def test_permissions_follow_the_direction_of_the_connection() -> None:
    whitelist = (Whitelist.parse("mempool@127.0.0.1"), Whitelist.parse("noban,out@10.0.0.0/8"))
    assert to_strings(permissions_for(whitelist, "127.0.0.1", inbound=True)) == ["mempool"]
    assert permissions_for(whitelist, "127.0.0.1", inbound=False) == frozenset()
    assert to_strings(permissions_for(whitelist, "10.9.9.9", inbound=False)) == ["noban",
                                                                                 "download"]
    assert permissions_for(whitelist, "10.9.9.9", inbound=True) == frozenset()
    assert permissions_for(whitelist, "not-an-ip", inbound=True) == frozenset()
