"""The README runs as written: every fenced ``sh`` block, pasted as is, top to bottom, into a
shell in one fresh temporary directory, with the checkout's virtual environment first on PATH
(what ``. .venv/bin/activate`` does).

- The one exception is the set-up block (``make demo`` / ``make test``): it is ``make test``
  itself, so it cannot run inside the test suite. The README marks it with the HTML comment
  ``<!-- not run by tests/integration/test_readme.py: ... -->`` on the line before it (invisible
  on GitHub); an unmarked block always runs, and there is exactly one marked block.
- The one concession: before the blocks run, ``ctnode/elements.conf`` gets a free ``rpcport``
  (the README's node would take 7040, which another node on this machine may hold). The README
  itself says that file is where the port goes, and both node and cli read it.
- The virtual environment is ``.venv`` of the checkout (``make test`` makes it), or the one
  ``CTPLUGIN_VENV`` names (a worktree sharing another checkout's environment). ``PYTHONPATH``
  points at this checkout, so its code is what runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from decimal import Decimal
from pathlib import Path

import pytest

from rpc.process import free_port
from tests.conftest import REPO

SKIP_MARK = "<!-- not run by tests/integration/test_readme.py:"
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)


def readme_blocks() -> list[tuple[bool, str]]:
    """(runs, text) of every ``sh`` block of the README, in order."""
    text = (REPO / "README.md").read_text()
    out = []
    for match in BLOCK.finditer(text):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        out.append((not before.startswith(SKIP_MARK), match.group(1)))
    return out


def venv_bin() -> Path:
    venv = Path(os.environ.get("CTPLUGIN_VENV", REPO / ".venv"))
    if not (venv / "bin" / "ctplugin").exists():
        message = f"{venv}/bin/ctplugin is missing (make test installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return venv / "bin"


def _stop_leftover(datadir: Path) -> None:
    """If a block failed half-way, the daemon it started is stopped by its pid file."""
    pid_path = datadir / "ctregtest" / "ctplugin.pid"
    deadline = time.monotonic() + 30
    while pid_path.exists() and time.monotonic() < deadline:
        with contextlib.suppress(ValueError, OSError):
            os.kill(int(pid_path.read_text()), signal.SIGTERM)
        time.sleep(0.2)


def test_exactly_one_block_is_not_run_and_it_is_make_test() -> None:
    skipped = [text for runs, text in readme_blocks() if not runs]
    assert len(skipped) == 1 and "make test" in skipped[0] and "make demo" in skipped[0]
    assert len(readme_blocks()) >= 6


def test_every_readme_shell_block_runs_as_written(tmp_path: Path) -> None:
    bin_dir = venv_bin()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(REPO), "COLUMNS": "100"}
    env.pop("VIRTUAL_ENV", None)
    (tmp_path / "ctnode").mkdir()
    (tmp_path / "ctnode" / "elements.conf").write_text(
        f"# the README's node on a free port\n[ctregtest]\nrpcport={free_port()}\n")
    outputs = []
    started = time.monotonic()
    try:
        for runs, block in readme_blocks():
            if not runs:
                continue
            result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=tmp_path,
                                    env=env, capture_output=True, text=True, timeout=300)
            assert result.returncode == 0, f"{block}\n--- stdout\n{result.stdout}\n" \
                                           f"--- stderr\n{result.stderr}"
            assert "Traceback" not in result.stderr, block
            outputs.append((block, result.stdout))
    finally:
        _stop_leftover(tmp_path / "ctnode")
    assert time.monotonic() - started < 120  # the README's sizes stay small
    by_first_command = {block.split()[1] + " " + block.split()[2]: out
                        for block, out in outputs}
    node = by_first_command["node --datadir"]
    _check_node_session(node, tmp_path / "ctnode")
    replay = by_first_command["chain --shape"]
    assert replay.count("UTXO set hash") == 3
    assert len({line for line in replay.splitlines() if line.startswith("UTXO set hash")}) == 1
    assert "wrote modes.png (3 reports)" in replay
    assert re.search(r"^nothing to replay: replay-block is already at height 11 ", replay, re.M)
    assert (tmp_path / "modes.png").read_bytes().startswith(b"\x89PNG")
    audit = by_first_command["audit ramp.dat"]
    assert "0 transactions with failures" in audit and "utxo_set_hash" in audit


def _check_node_session(out: str, datadir: Path) -> None:
    """The node block's output, command by command: the daemon's start line, -generate's
    object, a txid, the balance (sent to itself: only the fee is gone), -getinfo, stop."""
    assert out.startswith("ctplugin node starting\n")
    generated = json.loads(out[out.index("{"):out.index("}") + 1])
    assert list(generated) == ["address", "blocks"] and len(generated["blocks"]) == 101
    assert re.search(r"^[0-9a-f]{64}$", out, re.M)  # sendtoaddress's txid
    balance = json.loads(re.search(r'^\{\n  "bitcoin": [\d.]+\n\}$', out, re.M).group(0),
                         parse_float=Decimal)
    block_reward = Decimal("21000000")  # the genesis coins of the default wallet, plus fees
    assert Decimal(0) < block_reward - balance["bitcoin"] < Decimal("0.001")
    assert "Chain: ctregtest\nBlocks: 102\n" in out and "Warnings: (none)" in out
    assert out.endswith("ctplugin stopping\n")
    deadline = time.monotonic() + 30
    while (datadir / "ctregtest" / "ctplugin.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (datadir / "ctregtest" / ".cookie").exists()
