"""The configuration file the README's node session relies on (that session itself runs in
``tests/integration/test_readme.py``): ``ctplugin node`` and ``ctplugin cli`` both read
``DATADIR/elements.conf`` (its ``[ctregtest]`` section: docs/elements-regtest.md §4), and the
node keeps its files in ``DATADIR/ctregtest/``."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from apps.cli import main as cli_main
from rpc.config import ConfigFileError, parse_config, read_config_file
from rpc.process import free_port
from tests.conftest import REPO


def test_configuration_file_rules(tmp_path: Path) -> None:
    conf = tmp_path / "a.conf"
    conf.write_text("# comment\nrpcport=1 # trailing\n-txindex=1\n[liquidv1]\nrpcport=2\n"
                    "[regtest]\nrpcuser = u\nliquidv1.rpcpassword=x\nregtest.rpcpassword=p\n")
    # Core's rules: rpcport is network-only, so the top section's is ignored (with a warning);
    # the [regtest] section and the regtest.NAME spelling apply to regtest only.
    entries, warnings = read_config_file(str(conf)).for_chain("regtest")
    assert entries == [("rpcuser", "u"), ("rpcpassword", "p"), ("txindex", "1")]  # section first
    assert warnings == ["Warning: Config setting for -rpcport only applied on regtest network "
                        "when in [regtest] section."]
    assert read_config_file(str(conf)).for_chain("liquidv1")[0] == [
        ("rpcport", "2"), ("rpcpassword", "x"), ("txindex", "1")]
    conf.write_text("rpcport=1\njust words\n")
    with pytest.raises(ConfigFileError, match="parse error on line 2: just words"):
        read_config_file(str(conf))


def test_node_and_cli_read_the_configuration_file(tmp_path: Path) -> None:
    """A node whose port, credentials and options come from its file; the cli finds the port
    and credentials there too; the command line wins over the file."""
    datadir = tmp_path / "node"
    datadir.mkdir()
    port = free_port()
    (datadir / "elements.conf").write_text(
        f"[ctregtest]\nrpcport={port}\nrpcuser=alice\nrpcpassword=secret\ntxindex=1\n"
        "rpcconnect=127.0.0.1\n")
    netdir = datadir / "ctregtest"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        """``ctplugin cli`` in this process (its ``main`` with captured streams)."""
        out, err = io.StringIO(), io.StringIO()
        status = cli_main([f"-datadir={datadir}", *args], stdout=out, stderr=err)
        return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())

    process = subprocess.Popen([sys.executable, "-m", "apps.main", "node",
                                "--datadir", str(datadir)],
                               cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        result = cli("getblockcount")
        while result.returncode != 0 and time.monotonic() < deadline:
            time.sleep(0.2)
            result = cli("getblockcount")
        assert (result.returncode, result.stdout) == (0, "0\n")
        assert not (netdir / ".cookie").exists()  # rpcpassword from the file: no cookie
        # txindex=1 from the file: a confirmed transaction is found without its block hash.
        [block] = json.loads(cli("generatetoaddress", "1",
                                 cli("getnewaddress").stdout.strip()).stdout)
        coinbase = json.loads(cli("getblock", block).stdout)["tx"][0]
        assert cli("getrawtransaction", coinbase).returncode == 0
        result = cli("-rpcpassword=wrong", "getblockcount")  # the command line wins
        assert result.returncode == 1 and "Authorization failed" in result.stderr
        result = cli(f"-rpcport={free_port()}", "getblockcount")
        assert result.returncode == 1 and "Could not connect to the server" in result.stderr
        assert "Ignoring unknown configuration value rpcconnect" in (
            netdir / "debug.log").read_text()
        assert (netdir / "ctplugin.pid").read_text() == f"{process.pid}\n"
        assert cli("stop").stdout == "ctplugin stopping\n"
        assert process.wait(30) == 0
        assert not (netdir / "ctplugin.pid").exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stderr is not None
        process.stderr.close()
    (datadir / "elements.conf").write_text("[ctregtest]\nrpcport=nonsense\n")
    for argv, message, status in (([], "--rpcport: invalid int value", 2),
                                  (["--conf", "nosuch.conf"], "Error reading configuration file",
                                   1)):
        err = io.StringIO()
        with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stderr(err):
            parse_config(["--datadir", str(datadir), *argv], "ctplugin node", None)
        assert exit_info.value.code == status and message in err.getvalue()
    with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stderr(io.StringIO()):
        cli("getblockcount")  # the cli refuses the broken file too: a usage error
    assert exit_info.value.code == 2


def test_public_seed_default_wallet_is_documented_loudly() -> None:
    """QA: every node's default wallet "" is the same public regtest-seed wallet (two fresh
    nodes hand out the same addresses and own each other's coins). Until it gets a
    per-data-directory seed, the README and ``help getnewaddress`` say so."""
    import rpc.methods  # noqa: F401  (registers the calls)
    from rpc.registry import REGISTRY

    text = " ".join((REPO / "README.md").read_text().split())
    assert "the default wallet `\"\"` of EVERY node is the same public-seed wallet" in text
    help_text = " ".join(REGISTRY.methods["getnewaddress"].help_text().split())
    assert "of every node is the same public-seed wallet" in help_text
    assert "createwallet makes a wallet with a fresh random seed" in help_text
