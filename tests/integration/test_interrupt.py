"""Ctrl-C (SIGINT) ends every long-running command with one line on stderr and status 130
(128 + SIGINT), never a traceback (apps/main.py; the node's clean shutdown, rpc/daemon.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from rpc.process import NodeProcess

REPO = Path(__file__).resolve().parents[2]


def _start(*args: str, tmpdir: Path | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    return subprocess.Popen([sys.executable, "-m", "apps.main", *args], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def _interrupt(proc: subprocess.Popen[str]) -> list[str]:
    """SIGINT, then its exit: the status must be 130 and stderr free of tracebacks; the
    stderr lines written after the signal."""
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    return err.splitlines()


def test_ctrl_c_in_chain(tmp_path: Path) -> None:
    proc = _start("chain", "--blocks", "100000", "--txs", "4", "--out", str(tmp_path / "c.dat"),
                  "--quiet")
    time.sleep(2)  # imports done, building blocks
    assert _interrupt(proc) == ["ctplugin chain: interrupted"]
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_ctrl_c_in_demo(tmp_path: Path) -> None:
    proc = _start("demo", "--blocks", "100000", tmpdir=tmp_path)
    assert proc.stdout is not None
    proc.stdout.readline()  # its header: the demo is under way
    deadline = time.monotonic() + 60
    while not any(tmp_path.iterdir()):  # its chain file and data directory, made next
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert _interrupt(proc) == ["ctplugin demo: interrupted"]
    assert not list(tmp_path.iterdir())  # removed on the way out


def test_ctrl_c_in_replay(tmp_path: Path) -> None:
    built = subprocess.run([sys.executable, "-m", "apps.main", "chain", "--blocks", "150",
                            "--txs", "2", "--out", str(tmp_path / "c.dat"), "--quiet"],
                           cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    proc = _start("replay", str(tmp_path / "c.dat"), "--datadir", str(tmp_path / "d"),
                  "--quiet", "--log-every", "0")
    assert proc.stderr is not None
    for line in proc.stderr:  # UpdateTip lines: blocks are being connected
        if "height=5 " in line:
            break
    lines = _interrupt(proc)
    assert lines and lines[-1].startswith("ctplugin replay: interrupted")
    assert not [line for line in lines if "interrupted" not in line and "height=" not in line]


def test_ctrl_c_stops_the_node_cleanly(tmp_path: Path) -> None:
    node = NodeProcess(tmp_path / "node").start()
    assert node.process is not None
    node.process.send_signal(signal.SIGINT)
    assert node.process.wait(60) == 130
    err = node.stderr_text()
    assert err.splitlines() == ["ctplugin node: interrupted; the node shut down cleanly"]
    assert not node.cookie_path.exists()  # the clean shutdown's work is done
    log = (node.netdir / "debug.log").read_text()
    assert "Shutdown: done" in log
    node.kill()  # closes its output files
