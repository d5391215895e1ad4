"""debug.log as bitcoind writes it (rpc/logs.py, rpc/chainlog.py; docs/elements-regtest.md §4):
a node session (start, mine, send, a reorg by invalidateblock + reconsiderblock, a refused
transaction, stop) read back from its debug.log, with and without the mempool category."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bitcoinrpc.authproxy import JSONRPCException

from rpc.process import NodeProcess

REPO = Path(__file__).resolve().parents[2]
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ")
UPDATE_TIP = re.compile(
    r"UpdateTip: new best=[0-9a-f]{64} height=(\d+) version=0x[0-9a-f]{8} "
    r"log2_work=\d+\.\d{6} tx=(\d+) date='\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ' "
    r"progress=1\.000000 cache=\d+\.\dMiB\(\d+txo\)$")


def _session(tmp_path: Path, *options: str) -> list[str]:
    """Run the session with ``options``; debug.log's lines."""
    node = NodeProcess(tmp_path / "node", *options).start()
    try:
        rpc = node.proxy("/")  # the default wallet holds the genesis coins
        address = rpc.getnewaddress()
        rpc.generatetoaddress(3, address)
        txid = rpc.sendtoaddress(rpc.getnewaddress(), 1)
        mined = rpc.generatetoaddress(1, address)
        rpc.invalidateblock(mined[0])  # the send returns to the mempool
        rpc.reconsiderblock(mined[0])
        raw = rpc.gettransaction(txid)["hex"]
        with pytest.raises(JSONRPCException):  # confirmed already: refused
            rpc.sendrawtransaction(raw)
    finally:
        assert node.stop() == 0
    return (node.netdir / "debug.log").read_text().splitlines()


def test_session_log_lines_utc_updatetip_mempool_and_reorg(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    before = time.time()
    lines = _session(tmp_path, "-debug=mempool", "-debug=mempoolrej", "-debug=validation")
    after = time.time()
    assert all(TIMESTAMP.match(line) for line in lines if line), lines[:5]
    stamps = [time.mktime(time.strptime(line[:20], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
              for line in lines if line]
    # strptime+mktime read the text as local time; corrected by time.timezone (TZ of this
    # test process, not Tokyo) it must fall within the session in UTC
    assert before - 2 <= min(stamps) and max(stamps) <= after + 2
    text = [line[21:] for line in lines]
    tips = [m for line in text if (m := UPDATE_TIP.match(line))]
    heights = [int(m.group(1)) for m in tips]
    assert heights == [1, 2, 3, 4, 3, 4]  # each block; invalidate: back to 3; reconsider
    assert int(tips[3].group(2)) == int(tips[2].group(2)) + 2  # the send and a coinbase
    accepted = [line for line in text
                if line.startswith("[mempool] AcceptToMemoryPool: peer=local: accepted ")]
    assert len(accepted) == 2  # sent, then returned by the reorg
    assert re.search(r"\(poolsz 1 txn, \d+ kB\)$", accepted[0])
    assert any(line.startswith("[validation] DisconnectTip: disconnect block=")
               and line.endswith("height=4") for line in text)
    assert any(line.startswith("InvalidChainFound: invalid block=") for line in text)
    assert any(line.startswith("InvalidChainFound:  current best=") and "height=3" in line
               for line in text)
    assert any(line.startswith("ReconsiderBlock: block=") for line in text)
    assert any(line.startswith("[mempoolrej] ") and "was not accepted: " in line
               for line in text)
    assert not [line for line in text if line.startswith(("[rpc] ", "[bench] "))]  # not on


def test_debugexclude_switches_the_mempool_lines_off(tmp_path: Path) -> None:
    lines = _session(tmp_path, "-debug", "-debugexclude=mempool", "-logtimemicros",
                     "-logthreadnames")
    assert not [line for line in lines if "AcceptToMemoryPool" in line]
    assert any("[validation] DisconnectTip" in line for line in lines)  # -debug: the others
    assert any(line.endswith("[rpc] ThreadRPCServer method=invalidateblock user=__cookie__")
               for line in lines)
    assert sum(re.search(r"\[bench\] - Connect block: \d+\.\d\dms$", line) is not None
               for line in lines) == 4  # each block mined
    assert any(re.search(r"\[bench\]   - msm: \d+\.\d\dms$", line) for line in lines)
    assert all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z \[[^\]]+\] ", line)
               for line in lines if line)


def test_a_data_directory_it_cannot_write_is_one_line(tmp_path: Path) -> None:
    netdir = tmp_path / "node" / "ctregtest"
    netdir.mkdir(parents=True)
    if os.geteuid() == 0:  # root writes anywhere: a debug.log it cannot open instead
        (netdir / "debug.log").mkdir()
    else:
        netdir.chmod(0o500)
    try:
        done = subprocess.run([sys.executable, "-m", "apps.main", "node", "--datadir",
                               str(tmp_path / "node")], capture_output=True, text=True,
                              timeout=120, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    finally:
        netdir.chmod(0o700)
    assert done.returncode == 1
    assert done.stderr.startswith(f"Error: Cannot write to data directory '{netdir}'; check "
                                  "permissions (")
    assert len(done.stderr.splitlines()) == 1, done.stderr


def test_unknown_category_or_level_is_cores_start_up_error(tmp_path: Path) -> None:
    for option, message in (
            ("-debug=nonsense", "Error: Unsupported logging category -debug=nonsense.\n"),
            ("-loglevel=loud", "Error: Unsupported global logging level -loglevel=loud. "
                               "Valid values: trace, debug, info, warning, error.\n"),
            ("-loglevel=mempool:loud", "Error: Unsupported category-specific logging level "
                                       "-loglevel=mempool:loud. Valid values: trace, debug, "
                                       "info, warning, error.\n")):
        done = subprocess.run([sys.executable, "-m", "apps.main", "node", "--datadir",
                               str(tmp_path), option], capture_output=True, text=True,
                              timeout=120, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert (done.returncode, done.stderr) == (1, message)
