"""The node's data directory and configuration as elementsd's (docs/elements-regtest.md §4,
§9): ``DATADIR/<chain>/`` for every chain, ``elements.conf`` with Core's section rules, Core's
words for options it does not know or cannot honour, the cookie found as elements-cli finds
it, and a clear message for the old layout."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from pathlib import Path

import pytest

from apps.cli import main as cli_main
from apps.elements_cli import main as elements_cli_main
from ctplugin.elements.chainparams import ChainOptionError
from rpc.config import ELEMENTSD, NodeConfig, parse_config
from rpc.daemon import StartupError, prepare_datadir
from rpc.process import free_port
from rpc.startup import chain_params
from rpcclient import Auth
from tests.conftest import REPO


def config(datadir: Path, *argv: str, program: str = "node") -> NodeConfig:
    if program == "elementsd":
        return parse_config([f"-datadir={datadir}", *argv], "ctplugin-elementsd", None,
                            ELEMENTSD)
    return parse_config([f"-datadir={datadir}", *argv], "ctplugin node", None)


def refused(capsys: pytest.CaptureFixture[str], datadir: Path, *argv: str,
            program: str = "node") -> tuple[int, str]:
    """(exit status, stderr) of a command line the parser refuses."""
    with pytest.raises(SystemExit) as info:
        config(datadir, *argv, program=program)
    code = info.value.code
    return code if isinstance(code, int) else -1, capsys.readouterr().err


def test_every_chain_has_its_own_directory(tmp_path: Path) -> None:
    default = config(tmp_path)
    assert default.netdir == str(tmp_path / "ctregtest")
    assert default.cookie_path == str(tmp_path / "ctregtest" / ".cookie")
    elements = config(tmp_path, "-chain=elementsregtest")
    assert elements.netdir == str(tmp_path / "elementsregtest")
    assert config(tmp_path, "-rpccookiefile=c").cookie_path == str(tmp_path / "ctregtest" / "c")
    # A first start makes the chain's directory with an empty wallets/ (even without a
    # wallet: Elements' framework removes it from its cache) and settings.json.
    disabled = config(tmp_path, "-chain=elementsregtest", "-disablewallet")
    prepare_datadir(disabled)
    assert sorted(p.name for p in (tmp_path / "elementsregtest").iterdir()) == [
        "settings.json", "wallets"]
    assert list((tmp_path / "elementsregtest" / "wallets").iterdir()) == []
    assert (tmp_path / "elementsregtest" / "settings.json").read_text() == "{\n}\n"


def test_elements_conf_sections_follow_cores_rules(tmp_path: Path) -> None:
    (tmp_path / "elements.conf").write_text(
        "chain=elementsregtest\n"
        "rpcport=1111\n"            # network-only: ignored in the top section
        "fallbackfee=0.0005\n"      # applies to every chain
        "txindex=1\n"
        "con_blocksubsidy=1\n"       # the chain's section wins over the top section
        "[ctregtest]\nrpcport=2222\nfallbackfee=0.0009\n"
        "[elementsregtest]\nrpcport=3333\nrpcport=4444\n"  # the first value in the file wins
        "chain=ctregtest\n"          # chain= is read from the top section only
        "con_blocksubsidy=5000000000\nvalidatepegin=0\n"
        "nosuchoption=1\n"           # unknown in the file: skipped, logged
        "ctregtest.maxtxfee=0.5\n")  # another network's, spelt with its prefix
    got = config(tmp_path)
    assert got.chain == "elementsregtest" and got.rpcport == 3333
    assert got.fallbackfee == "0.0005" and got.txindex and got.maxtxfee == "0.10"
    assert got.chain_options == (("con_blocksubsidy", "5000000000"), ("validatepegin", "0"))
    assert got.ignored_config == ("nosuchoption",)
    assert got.warnings == ()  # the chain's section sets rpcport itself: no warning
    # The command line wins; -chain there picks the other section, where rpcport=1111 in
    # the top section draws Core's warning when the section has none.
    assert config(tmp_path, "-rpcport=5555", "-fallbackfee=0.001").rpcport == 5555
    other = config(tmp_path, "-chain=ctregtest-borromean")
    assert other.rpcport == 7040 and other.warnings == (
        "Warning: Config setting for -rpcport only applied on ctregtest-borromean network "
        "when in [ctregtest-borromean] section.",)
    ours = config(tmp_path, "-chain=ctregtest")
    assert ours.rpcport == 2222 and ours.maxtxfee == "0.5" and ours.fallbackfee == "0.0009"
    assert ours.chain_options == (("con_blocksubsidy", "1"),)
    # -conf names another file, relative to the data directory.
    (tmp_path / "other.conf").write_text("[ctregtest]\nrpcport=6666\n")
    assert config(tmp_path, "-conf=other.conf").rpcport == 6666


def test_options_it_does_not_know_or_cannot_honour(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert refused(capsys, tmp_path, "-nosuchoption=1") == (
        1, "Error: Invalid parameter -nosuchoption\n")
    status, err = refused(capsys, tmp_path, "stray")
    assert status == 1 and err.startswith("Error: Command line contains unexpected token "
                                          "'stray'")
    status, err = refused(capsys, tmp_path, "-acceptunlimitedissuances=1")
    assert status == 1 and err.startswith("Error: -acceptunlimitedissuances is not supported")
    (tmp_path / "elements.conf").write_text("[ctregtest]\ncreatediscountct=1\n")
    status, err = refused(capsys, tmp_path)
    assert status == 1 and err.startswith("Error: -creatediscountct is not supported")
    (tmp_path / "elements.conf").unlink()
    # The mempool policy's options are honoured (validator.policy), not refused.
    relay = config(tmp_path, "-acceptnonstdtxn=1", "-dustrelayfee=0.00003").relay
    assert relay.acceptnonstdtxn and relay.dustrelayfee == 3000
    for argv, words in ((["-server=0"], "-server=0 is not supported"),
                        (["-walletrbf=1"], "-walletrbf=1 is not supported")):
        status, err = refused(capsys, tmp_path, *argv)
        assert status == 1 and words in err
    # elementsd's default chain is liquidv1, which this node does not run.
    status, err = refused(capsys, tmp_path, program="elementsd")
    assert status == 1 and "Unknown chain liquidv1" in err and "-chain=elementsregtest" in err
    # Logging options are accepted with no effect; -noX is -X=0. The P2P options are read
    # (docs/p2p.md §7.1): an explicit -listen=0 wins over -bind, -connect=0 is no connection.
    quiet = config(tmp_path, "-logtimemicros", "-debug", "-debugexclude=libevent",
                   "-loglevel=trace", "-v2transport=0", "-uacomment=testnode0", "-port=1",
                   "-bind=127.0.0.1", "-connect=0", "-listen=0", "-nolistenonion",
                   "-notxindex", "-printtoconsole=0")
    assert quiet.uacomment == ("testnode0",) and not quiet.txindex
    assert (quiet.port, quiet.bind, quiet.connect, quiet.listen) == (1, ("127.0.0.1",), (), False)
    assert config(tmp_path, "-bind=127.0.0.1").listen and not config(tmp_path).listen
    # Chain options are the elementsregtest profile's; our fixed chains refuse them.
    with pytest.raises(ChainOptionError, match="-con_blocksubsidy"):
        chain_params(config(tmp_path, "-con_blocksubsidy=1"))
    assert chain_params(config(tmp_path, "-validatepegin=0")).name == "ctregtest"
    params = chain_params(config(tmp_path, "-chain=elementsregtest", "-validatepegin=0",
                                 "-con_blocksubsidy=5000000000",
                                 "-nocon_connect_genesis_outputs"))
    assert params.block_subsidy == 5_000_000_000 and not params.connect_genesis_outputs
    with pytest.raises(ChainOptionError, match="validatepegin"):
        chain_params(config(tmp_path, "-chain=elementsregtest", "-validatepegin=1"))


def test_version_and_help_go_to_stdout(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    for argv in (["-version"], ["-?"], ["-h"], ["-help"]):
        with pytest.raises(SystemExit) as info:
            config(tmp_path, *argv, program="elementsd")
        captured = capsys.readouterr()
        assert info.value.code == 0 and captured.err == "" and captured.out, argv
    assert elements_cli_main(["-version"]) == 0
    assert capsys.readouterr().out.startswith("ctplugin-elements-cli version v")


def test_the_old_layout_gets_one_line_telling_how_to_move(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ctplugin.conf").write_text("rpcport=7041\n")
    status, err = refused(capsys, tmp_path)
    assert status == 1 and err.count("\n") == 1
    assert "ctplugin.conf is no longer read: rename it to elements.conf" in err
    out, errors = io.StringIO(), io.StringIO()
    assert cli_main([f"-datadir={tmp_path}", "getblockcount"], stdout=out,
                    stderr=errors) == 1
    assert "ctplugin.conf is no longer read" in errors.getvalue()
    (tmp_path / "ctplugin.conf").unlink()
    # A flat data directory (chain marker and chainstate directly in DATADIR): refused, with
    # the command that moves it, before anything is created.
    (tmp_path / "chain").write_text("ctregtest-borromean\n")
    (tmp_path / "chainstate").mkdir()
    with pytest.raises(StartupError) as info:
        prepare_datadir(config(tmp_path, "-chain=ctregtest-borromean"))
    message = str(info.value)
    assert "\n" not in message and "old flat layout" in message
    assert f"mkdir {tmp_path}/ctregtest-borromean && mv {tmp_path}/*" in message
    assert not (tmp_path / "ctregtest-borromean").exists()


def test_elementsd_as_the_framework_starts_it_and_the_cli_finds_its_cookie(
        tmp_path: Path) -> None:
    """The framework's elements.conf and command line (test_framework/util.py write_config,
    test_node.py); elements-cli's discovery: -datadir, the file's chain= and section, then
    DATADIR/<chain>/.cookie. At exit stderr is empty and the status 0."""
    datadir = tmp_path / "node0"
    datadir.mkdir()
    port = free_port()
    (datadir / "elements.conf").write_text(
        f"chain=elementsregtest\n[elementsregtest]\nport={free_port()}\nrpcport={port}\n"
        "rpcservertimeout=99000\nrpcdoccheck=1\nfallbackfee=0.0002\nserver=1\nkeypool=1\n"
        "discover=0\ndnsseed=0\nfixedseeds=0\nlistenonion=0\npeertimeout=999999999\n"
        "printtoconsole=0\nnatpmp=0\nshrinkdebugfile=0\ndeprecatedrpc=create_bdb\n"
        "unsafesqlitesync=1\nvalidatepegin=0\ncon_parent_pegged_asset="
        "b2e15d0d7a0c94e4e2ce0fe6e8691b9e451377f6e46e8045a86f7c4b5d4f0f23\n"
        "con_blocksubsidy=5000000000\ncon_connect_genesis_outputs=0\nanyonecanspendaremine=0\n"
        "walletrbf=0\ncon_bip34height=1\ncon_bip65height=1\ncon_bip66height=1\n"
        "blindedaddresses=0\nevbparams=dynafed:2147483648:::\nminrelaytxfee=0.00001\n"
        "connect=0\nmaxconnections=94\nbind=127.0.0.1\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "apps.elementsd", f"-datadir={datadir}", "-logtimemicros",
         "-debug", "-debugexclude=libevent", "-debugexclude=leveldb", "-debugexclude=rand",
         "-uacomment=testnode0", "-disablewallet", "-logthreadnames", "-logsourcelocations",
         "-loglevel=trace", "-v2transport=0"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def cli(*args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        status = elements_cli_main([f"-datadir={datadir}", *args], stdout=out, stderr=err)
        return status, out.getvalue(), err.getvalue()

    try:
        deadline = time.monotonic() + 60
        while (result := cli("getblockcount"))[0] != 0 and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()
            time.sleep(0.2)
        assert result == (0, "0\n", "")
        netdir = datadir / "elementsregtest"
        assert {"blocks", "chainstate", "wallets", "debug.log", "settings.json", ".cookie",
                "ctplugin.pid"} <= {p.name for p in netdir.iterdir()}
        user, _ = Auth.discover(datadir, chain_subdir="elementsregtest").credentials()
        assert user == "__cookie__"
        status, out, _ = cli("getnetworkinfo")
        assert status == 0 and '"subversion": "/ctplugin:' in out and "(testnode0)/" in out
        assert cli("calcfastmerkleroot", '["b66b041650db0f297b53f8d93c0e8706925bf3323f8c59c1'
                                         '4a6fac37bfdcd06f"]')[1].startswith("b66b0416")
        # python-elementstx's RPCCaller with Elements parameters: the conf's section for the
        # port, DATADIR/elementsregtest/.cookie for the credentials.
        import elementstx  # noqa: F401  (registers the Elements chain parameters)
        from bitcointx import ChainParams
        from bitcointx.rpc import RPCCaller

        with ChainParams("elements"):
            assert RPCCaller(conf_file=str(datadir / "elements.conf")).getblockcount() == 0
        assert cli("stop")[0] == 0
        stdout, stderr = process.communicate(timeout=60)
        assert (process.returncode, stdout, stderr) == (0, b"", b"")
        assert not (netdir / ".cookie").exists() and not (netdir / "ctplugin.pid").exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
