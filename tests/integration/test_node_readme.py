"""The README's five-line node session, pasted verbatim into a shell (only its data directory
moved to a fresh temporary one), and the configuration file that lets it run on a free port:
``ctplugin node`` and ``ctplugin cli`` both read ``DATADIR/elements.conf`` (its ``[ctregtest]``
section: docs/elements-regtest.md §4), and the node keeps its files in ``DATADIR/ctregtest/``."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest

from apps.cli import main as cli_main
from rpc.config import ConfigFileError, parse_config, read_config_file
from rpc.process import free_port
from tests.conftest import REPO

README_DATADIR = "/tmp/ctnode"


def readme_session() -> list[str]:
    """The shell block of the README's "Regtest node and JSON-RPC" section."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Regtest node and JSON-RPC"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return block.group(1).splitlines()


def _stop_leftover(datadir: Path) -> None:
    """If the session failed half-way, the daemon it started is stopped by its pid file."""
    pid_path = datadir / "ctregtest" / "ctplugin.pid"
    deadline = time.monotonic() + 30
    while pid_path.exists() and time.monotonic() < deadline:
        with contextlib.suppress(ValueError, OSError):
            os.kill(int(pid_path.read_text()), signal.SIGTERM)
        time.sleep(0.2)
    if pid_path.exists():
        with contextlib.suppress(ValueError, OSError):
            os.kill(int(pid_path.read_text()), signal.SIGKILL)


def test_readme_session_runs_verbatim(tmp_path: Path) -> None:
    lines = readme_session()
    assert len(lines) == 5
    assert lines[0].endswith("--daemon") and lines[-1].endswith(" stop")
    ctplugin = REPO / ".venv" / "bin" / "ctplugin"
    if not ctplugin.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{ctplugin} is missing (make test installs it)")
        pytest.skip(f"{ctplugin} is missing (make test installs it)")
    datadir = tmp_path / "ctnode"
    datadir.mkdir()
    (datadir / "elements.conf").write_text(f"# the README's node on a free port\n"
                                           f"[ctregtest]\nrpcport={free_port()}\n")
    outputs = []
    try:
        for line in lines:
            assert README_DATADIR in line
            result = subprocess.run(["bash", "-c", line.replace(README_DATADIR, str(datadir))],
                                    cwd=REPO, capture_output=True, text=True, timeout=300)
            assert (result.returncode, result.stderr) == (0, ""), line
            outputs.append(result.stdout)
        hashes = json.loads(outputs[1])
        assert len(hashes) == 101 and all(len(h) == 64 for h in hashes)
        txid = outputs[2].strip()
        assert re.fullmatch(r"[0-9a-f]{64}", txid)
        balance = json.loads(outputs[3], parse_float=Decimal)
        fee = Decimal("21000000") - balance["bitcoin"]  # sent to itself: only the fee is gone
        assert Decimal(0) < fee < Decimal("0.001")
        assert outputs[4] == "ctplugin stopping\n"
        deadline = time.monotonic() + 30
        netdir = datadir / "ctregtest"
        while (netdir / "ctplugin.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not (netdir / "ctplugin.pid").exists() and not (netdir / ".cookie").exists()
    finally:
        _stop_leftover(datadir)


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
