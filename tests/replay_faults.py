"""Task functions for the replay worker tests (imported by name in worker processes)."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def digest(payload: bytes) -> bytes:
    return hashlib.sha256(payload).digest()


def slow_digest(payload: bytes) -> bytes:
    """Sleep ``payload[0]`` centiseconds, then the digest."""
    if payload:
        time.sleep(payload[0] / 100)
    return digest(payload)


def die_once(payload: bytes) -> bytes:
    """``payload`` = marker path: the first call (no marker yet) kills its worker."""
    marker = Path(payload.decode())
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(7)
    return digest(payload)


def always_die(payload: bytes) -> bytes:
    os._exit(9)


def raises(payload: bytes) -> bytes:
    raise RuntimeError("task function bug")


def imported(module: str) -> bool:
    """Run on a Dask worker: has this process imported ``module``?"""
    return module in sys.modules


# --- faults inside a replay's workers ---------------------------------------------------------

# One directory per checkout (several worktrees may run these tests at once).
DIE_ONCE_DIR = Path(tempfile.gettempdir()) / (
    "ctplugin-replay-die-once-" + hashlib.sha256(str(Path(__file__).resolve()).encode())
    .hexdigest()[:12])


START_MARKER = DIE_ONCE_DIR.with_name(DIE_ONCE_DIR.name + "-start")


def die_once_at_start(_: bytes = b"") -> bytes:
    """A warmup: the first worker to run it (it creates ``START_MARKER``) dies before it is
    ready, as a worker killed during its start-up."""
    try:
        os.close(os.open(START_MARKER, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return b""
    os._exit(11)


def always_die_at_start(_: bytes = b"") -> bytes:
    os._exit(12)


def die_once_verify_task(payload: bytes) -> bytes:
    """``replay.tasks.verify_task``, except that while ``DIE_ONCE_DIR`` exists the first
    attempt at each task kills its worker (a marker per task content records it)."""
    from replay.tasks import verify_task

    if DIE_ONCE_DIR.is_dir():
        marker = DIE_ONCE_DIR / hashlib.sha256(payload).hexdigest()
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            os._exit(13)
    return verify_task(payload)


def slow_verify_task(payload: bytes) -> bytes:
    from replay.tasks import verify_task

    time.sleep(0.3)
    return verify_task(payload)


# --- a replay run to be killed: ``python -m tests.replay_faults SOURCE DATADIR MODE`` -------------


def main(argv: list[str]) -> int:
    from regtest.params import CTREGTEST, select_chain
    from replay.config import ReplayConfig
    from replay.driver import replay
    from replay.sources import open_source
    from validator import Node

    source_spec, datadir, mode = argv
    source = open_source(source_spec, select_chain(CTREGTEST).genesis_hash)
    inner = source.blocks

    def paced(start_height: int):  # type: ignore[no-untyped-def]
        for block in inner(start_height):
            time.sleep(0.05)  # so a kill lands mid-run
            yield block

    source.blocks = paced  # type: ignore[method-assign]
    commit, submit = Node.commit_block, Node.submit_block

    def committing(self: Node, prepared: Any, **options: Any) -> Any:  # tell the test
        report = commit(self, prepared, **options)
        print(f"committed {prepared.block.header.height}", file=sys.stderr, flush=True)
        return report

    def submitting(self: Node, raw: bytes, block: Any = None) -> Any:
        result = submit(self, raw, block)
        if result.accepted:
            print(f"committed {result.report.height}", file=sys.stderr, flush=True)
        return result

    Node.commit_block = committing  # type: ignore[method-assign]
    Node.submit_block = submitting  # type: ignore[method-assign]
    config = ReplayConfig(mode=mode, window=3, workers=2, quiet=True, log_every=0,
                          task_proofs=6, task_target="tests.replay_faults:slow_verify_task",
                          dask_processes=False)
    replay(source, datadir, config)
    print("finished", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
