"""The replay's Dask pool on a LocalCluster: tasks as packed buffers, bounded futures, and a
KilledWorker surfacing as a clear error."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from regtest.params import CTREGTEST, select_chain
from replay.cluster import DaskError, DaskPool
from tests import replay_faults
from tests.conftest import REPO

FAULTS = "tests.replay_faults"


def test_tasks_run_on_an_in_process_local_cluster() -> None:
    payloads = {i: os.urandom(5000 + i) for i in range(10)}
    with DaskPool(f"{FAULTS}:digest", n_workers=2, processes=False, max_in_flight=3) as pool:
        got = {}
        for task_id, payload in payloads.items():
            pool.submit(task_id, payload)
            assert sum(1 for f in pool._live.values() if not f.done()) <= 3
            got.update((r.task_id, r.result) for r in pool.completed())
        got.update((r.task_id, r.result) for r in pool.drain())
        assert pool.in_flight == 0
    assert got == {i: hashlib.sha256(p).digest() for i, p in payloads.items()}


def test_a_task_raising_on_its_worker_is_named() -> None:
    with DaskPool(f"{FAULTS}:raises", n_workers=1, processes=False) as pool:
        pool.submit(5, b"")
        with pytest.raises(DaskError, match="task 5 raised on its worker: RuntimeError"):
            list(pool.drain())


def test_killed_worker_is_a_clear_error() -> None:
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            DaskPool(f"{FAULTS}:always_die", n_workers=1, processes=True,
                     warmup="replay.tasks:warm") as pool:
        # the worker process was prepared before any task: the task's module and the
        # replay's (warmup) imported
        assert list(pool.client.run(replay_faults.imported, FAULTS).values()) == [True]
        assert list(pool.client.run(replay_faults.imported, "replay.tasks").values()) == [True]
        pool.submit(8, b"x")
        with pytest.raises(DaskError, match="task 8 was lost: every worker that ran it died "
                                            r"\(KilledWorker"):
            list(pool.drain())


def test_a_local_clusters_workers_leave_ctrl_c_to_the_driver() -> None:
    """A terminal's Ctrl-C reaches the whole process group: a LocalCluster worker it killed
    left the replay waiting for verdicts no one computed (it hung). They ignore it now."""
    import signal
    import time

    with DaskPool(f"{FAULTS}:digest", n_workers=1, processes=True) as pool:
        pids = list(pool.client.run(os.getpid).values())
        for pid in pids:
            os.kill(pid, signal.SIGINT)
        time.sleep(1.0)  # a worker that took it would be gone by now
        assert all(_alive(pid) for pid in pids)
        pool.submit(1, b"abc")
        assert [r.result for r in pool.drain()] == [hashlib.sha256(b"abc").digest()]


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_replay_on_a_separate_dask_scheduler_and_workers(
        replay_blocks: list[bytes], tmp_path: Path) -> None:
    """The way a real cluster is used: `dask scheduler` and `dask worker` processes, the
    replay pointed at them with --scheduler tcp://HOST:PORT (everything on 127.0.0.1)."""
    from distributed import Client

    from ctplugin.elements import parse_block
    from regtest.params import NETWORK_MAGIC
    from replay.config import ReplayConfig
    from replay.driver import replay
    from replay.engine import Engine
    from replay.sources import ChainFileSource
    from validator import write_chain

    write_chain(tmp_path / "c.dat", [parse_block(b) for b in replay_blocks], NETWORK_MAGIC)
    with Engine.open(tmp_path / "ref", select_chain(CTREGTEST)) as engine:
        for raw in replay_blocks[1:]:
            engine.node.submit_block(raw).connected()
        expected = (engine.node.tip.hash[::-1].hex(), engine.utxo_summary().hash_hex)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env,
             "cwd": REPO}
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler",
                                  "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], **quiet)  # type: ignore[call-overload]
    worker: subprocess.Popen[bytes] | None = None
    try:
        with Client(address, timeout="60s"):  # the scheduler is up
            pass
        with pytest.raises(DaskError, match=f"the Dask scheduler {address} has no workers"):
            DaskPool(f"{FAULTS}:digest", scheduler=address, connect_timeout="1s")
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker",
                                   address, "--nthreads", "1", "--no-nanny", "--host",
                                   "127.0.0.1", "--no-dashboard"],
                                  **quiet)  # type: ignore[call-overload]
        with Client(address, timeout="60s") as client:
            client.wait_for_workers(1, timeout=60)
        report = replay(ChainFileSource(tmp_path / "c.dat"), tmp_path / "d",
                        ReplayConfig(mode="dask", scheduler=address, task_proofs=6,
                                     show_progress=False))
    finally:
        # Stopped as an operator stops a cluster, through the scheduler (a `dask worker`
        # that ran tasks takes over 30 s to close on a signal); kill if that fails.
        with contextlib.suppress(OSError, TimeoutError), Client(address, timeout="10s") as c:
            c.shutdown()
        for proc in (worker, scheduler):
            if proc is None:
                continue
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)
    assert (report.tip, report.utxo_set_hash) == expected
    assert report.workers == 1 and f"Dask cluster {address}" in report.source


def test_an_unreachable_scheduler_is_a_clear_error() -> None:
    address = f"tcp://127.0.0.1:{_free_port()}"
    with pytest.raises(DaskError, match=f"cannot reach the Dask scheduler {address}"):
        DaskPool(f"{FAULTS}:digest", scheduler=address, connect_timeout="1s")
