"""``ctplugin cli``'s client-side commands against a node subprocess, in bitcoin-cli's output
shapes (Elements ``src/bitcoin-cli.cpp``): ``-getinfo`` (the human text of
``ParseGetInfoResult`` and, with ``-getinfo=0``, the JSON object of
``GetinfoRequestHandler``), ``-generate`` (``{"address", "blocks"}``), ``-netinfo`` (the peer
counts table), ``-rpcwait`` / ``-rpcwaittimeout``, ``-stdinrpcpass``, ``-color``."""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from apps.cli import main as cli_main
from apps.cli_info import NETINFO_HELP, _progress_bar, getinfo_text
from rpc.process import NodeProcess, free_port


class Run:
    def __init__(self, status: int, out: str, err: str) -> None:
        self.status, self.out, self.err = status, out, err


def cli(node: NodeProcess, *argv: str, stdin: str = "") -> Run:
    out, err = io.StringIO(), io.StringIO()
    status = cli_main(["-datadir=" + str(node.datadir), f"-rpcport={node.port}", *argv],
                      stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return Run(status, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeProcess]:
    process = NodeProcess(tmp_path_factory.mktemp("cli") / "node").start()
    try:
        yield process
    finally:
        process.stop()


# Elements' getblockchaininfo has no difficulty (signed blocks): the line is empty there too
GETINFO_LINES = [r"Chain: ctregtest", r"Blocks: \d+", r"Headers: \d+",
                 r"Verification progress: 100\.0000%", r"Difficulty: \S*", r"",
                 r"Network: in 0, out 0, total 0", r"Version: \d+", r"Time offset \(s\): 0",
                 r"Proxies: n/a", r"Min tx relay fee rate \(BTC/kvB\): 0\.\d+", r"",
                 r'Wallet: ""', r"Keypool size: \d+",
                 r"Transaction fee rate \(-paytxfee\) \(BTC/kvB\): 0\.0+", r"",
                 r'Balance: \{"bitcoin":[\d.]+\}', r"", r"Warnings: \(none\)"]


def test_getinfo_prints_bitcoin_clis_human_text(node: NodeProcess) -> None:
    run = cli(node, "-getinfo")
    assert (run.status, run.err) == (0, "")
    lines = run.out.rstrip("\n").split("\n")
    assert len(lines) == len(GETINFO_LINES), run.out
    for line, pattern in zip(lines, GETINFO_LINES, strict=True):
        assert re.fullmatch(pattern, line), (line, pattern)
    assert "\x1b[" not in run.out  # -color=auto and stdout is not a terminal


def test_getinfo_json_has_bitcoin_clis_keys_in_order(node: NodeProcess) -> None:
    run = cli(node, "-getinfo=0")
    assert run.status == 0
    info = json.loads(run.out)
    assert list(info) == ["version", "blocks", "headers", "verificationprogress", "timeoffset",
                          "connections", "networks", "difficulty", "chain", "has_wallet",
                          "keypoolsize", "walletname", "paytxfee", "balance", "relayfee",
                          "warnings"]
    assert info["connections"] == {"in": 0, "out": 0, "total": 0}
    assert info["blocks"] == node.call("getblockcount")
    assert cli(node, "-getinfo", "extra").err == "error: -getinfo takes no arguments\n"


def test_getinfo_colors_and_balances_of_several_wallets(node: NodeProcess) -> None:
    node.call("createwallet", "second")
    try:
        run = cli(node, "-getinfo", "-color=always")
        assert run.status == 0
        assert "\x1b[34mChain: ctregtest\x1b[0m" in run.out
        # several wallets and no -rpcwallet: no wallet section, a Balances table instead
        assert "Wallet:" not in run.out
        table = run.out[run.out.index("\x1b[36mBalances\x1b[0m"):].split("\n")
        assert re.fullmatch(r' *\{"bitcoin":[\d.]+\} ""', table[1]), table
        assert re.fullmatch(r' *\{"bitcoin":0\.0+\} second', table[2]), table
        one = cli(node, "-rpcwallet=second", "-getinfo")
        assert "Wallet: second" in one.out and "Balances" not in one.out
    finally:
        node.call("unloadwallet", "second")


def test_generate_mines_to_a_new_address(node: NodeProcess) -> None:
    before = node.call("getblockcount")
    run = cli(node, "-generate", "3")
    assert (run.status, run.err) == (0, "")
    result = json.loads(run.out)
    assert list(result) == ["address", "blocks"]
    assert len(result["blocks"]) == 3 and node.call("getblockcount") == before + 3
    assert node.call("getaddressinfo", result["address"])["ismine"] is True
    assert len(json.loads(cli(node, "-generate").out)["blocks"]) == 1  # default 1
    zero = cli(node, "-generate", "0")
    assert zero.status == 1 and zero.err.startswith("error: the first argument (number of "
                                                    "blocks to generate, default: 1) must be")
    assert cli(node, "-generate", "1", "2", "3").err == (
        "error: too many arguments (maximum 2 for nblocks and maxtries)\n")


def test_netinfo_prints_the_peer_counts_table(node: NodeProcess) -> None:
    run = cli(node, "-netinfo")
    assert run.status == 0, run.err
    lines = run.out.split("\n")
    assert re.fullmatch(r"ctplugin cli client v\S+ ctregtest - server \d+/\S+/", lines[0])
    assert lines[1] == ""
    assert lines[2] == "         ipv4   total   block"
    assert lines[3:6] == ["in          0       0", "out         0       0       0",
                          "total       0       0"]
    assert lines[7] == "Local addresses: n/a"
    assert cli(node, "-netinfo", "help").out.startswith(NETINFO_HELP.split("\n")[0])
    bad = cli(node, "-netinfo", "x")
    assert bad.status == 1 and bad.err.startswith("error: invalid -netinfo level argument: x")


def test_stdinrpcpass_reads_the_password(node: NodeProcess) -> None:
    user, password = node.credentials()
    ok = cli(node, f"-rpcuser={user}", "-stdinrpcpass", "getblockcount", stdin=password + "\n")
    assert ok.status == 0 and ok.out.strip().isdigit()
    bad = cli(node, f"-rpcuser={user}", "-stdinrpcpass", "getblockcount", stdin="wrong\n")
    assert bad.status == 1 and "Incorrect rpcuser or rpcpassword" in bad.err


def test_rpcwait_gives_up_after_rpcwaittimeout(tmp_path: Path) -> None:
    idle = NodeProcess(tmp_path / "never-started", port=free_port())
    start = time.monotonic()
    run = cli(idle, "-rpcwait", "-rpcwaittimeout=1", "getblockcount")
    assert run.status == 1 and "Could not connect to the server" in run.err
    assert 0.9 < time.monotonic() - start < 10


def test_progress_bar_has_twenty_steps() -> None:
    assert _progress_bar(0.5) == "\u2592" * 10 + "\u2591" * 10
    info = {"chain": "c", "blocks": 1, "headers": 1, "verificationprogress": 0.5,
            "difficulty": 0, "connections": {"in": 0, "out": 0, "total": 0}, "version": 1,
            "timeoffset": 0, "networks": [{"name": "ipv4", "proxy": "127.0.0.1:9050"}],
            "relayfee": 0, "warnings": "careful"}
    text = getinfo_text(info, colors=False)
    assert "Verification progress: " + _progress_bar(0.5) + " 50.0000%" in text
    assert "Proxies: 127.0.0.1:9050 (ipv4)" in text and text.endswith("Warnings: careful")
